"""FalkorDB backend: read-only queries with `GRAPH.RO_QUERY`, validation with `GRAPH.EXPLAIN`.

An `EXPLAIN` prefix sent as a query *executes* the query on FalkorDB, so validation always goes
through the client's `Graph.explain()`. The way of a query to the server (planning, the capped
read-only round trip, refusals, errors) is `nodes.graphdb.falkordb_session`; this is the graph's
API (the database protocol, and what loaders and the command line ask of a FalkorDB graph).
"""

from __future__ import annotations

import copy
import time
from typing import Any

import redis
import redis.exceptions

from reflexion_agents.nodes.graphdb.crash_forms import refuse_crashing_forms
from reflexion_agents.nodes.graphdb.cypher_text import refuse_unsendable, return_columns
from reflexion_agents.nodes.graphdb.deadline import deadline_after
from reflexion_agents.nodes.graphdb.falkordb_graph_ops import GraphOperations
from reflexion_agents.nodes.graphdb.falkordb_link import shared_link
from reflexion_agents.nodes.graphdb.falkordb_session import (
    WRITE_OPERATIONS,
    FalkorDBSession,
    MissingGraph,
    refuse_lexical_writes,
    refuse_planned_writes,
)
from reflexion_agents.nodes.graphdb.growth_guards import guard_runtime_ranges, refuse_self_growing_reduce
from reflexion_agents.nodes.graphdb.id_ranges import guard_id_ranges
from reflexion_agents.nodes.graphdb.index_expressions import guard_index_expressions
from reflexion_agents.nodes.graphdb.introspect import sample_schema
from reflexion_agents.nodes.graphdb.neo4j_dialect import falkordb_dialect
from reflexion_agents.nodes.graphdb.protocol import DEFAULT_QUERY_TIMEOUT_S, DEFAULT_ROW_CAP
from reflexion_agents.nodes.graphdb.schema_cache import forget_schemas, shared_schema
from reflexion_agents.nodes.graphdb.values import to_plain
from reflexion_agents.schemas.errors import DatabaseUnavailableError
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, QueryResult

__all__ = ["WRITE_OPERATIONS", "FalkorDBGraph"]


def _strip(cypher: str) -> str:
    return cypher.strip().rstrip(";").strip()


class FalkorDBGraph(GraphOperations):
    """One named graph on a FalkorDB server (embedded or remote)."""

    dialect: Dialect = "falkordb"

    def __init__(
        self,
        graph: str = "movies",
        *,
        host: str = "127.0.0.1",
        port: int = 6379,
        username: str | None = None,
        password: str | None = None,
        socket_timeout: float = 120.0,
        server: Any = None,
    ) -> None:
        self.graph_name = graph
        try:
            self._link = shared_link(
                host,
                int(port),
                server,
                username=username,
                password=password,
                socket_timeout=socket_timeout,
                socket_connect_timeout=5.0,
            )
        except (redis.exceptions.RedisError, AttributeError, TypeError, ValueError) as e:
            # AttributeError and the like: redis-py's handshake reading a peer that is not Redis (`+OK`, `:1`)
            raise DatabaseUnavailableError(f"FalkorDB at {host}:{port} is unreachable or not FalkorDB: {e}") from e
        self._session = FalkorDBSession(self._link, graph)

    @property
    def host(self) -> str:
        return self._link.host

    @property
    def port(self) -> int:
        return self._link.port

    @property
    def server(self) -> Any:
        """The EmbeddedFalkorDB this graph lives on (kept in use as long as this object), or None."""
        return self._link.server

    @classmethod
    def embedded(cls, graph: str = "movies", data_dir: str | None = None) -> FalkorDBGraph:
        """Start (or reuse) the embedded server for `data_dir` and open `graph` on it."""
        from reflexion_agents.nodes.graphdb.embedded import shared_server

        server = shared_server(data_dir)
        return cls(graph, host=server.host, port=server.port, server=server)

    def __repr__(self) -> str:
        return f"FalkorDBGraph(graph={self.graph_name!r}, host={self.host!r}, port={self.port})"

    @property
    def connection_args(self) -> dict[str, Any]:
        """How another process reaches this graph: `FalkorDBGraph(**graph.connection_args)` (by address,
        credentials included; the embedded server stays this process's)."""
        options = getattr(self._link, "_options", {}) or {}
        credentials = {k: options[k] for k in ("username", "password") if options.get(k) is not None}
        return {"graph": self.graph_name, "host": self.host, "port": self.port, **credentials}

    @property
    def schema_key(self) -> str:
        """What names this graph's schema among those a process keeps: the server and the graph,
        whichever client asks."""
        return repr(self)

    def sibling_key(self, graph: str) -> str:
        """The `schema_key` of the graph `graph` on the same server."""
        return f"FalkorDBGraph(graph={graph!r}, host={self.host!r}, port={self.port})"

    def sibling(self, graph: str) -> FalkorDBGraph:
        """Another graph on the same server, over the same connection (close only the original)."""
        other = copy.copy(self)
        other.graph_name, other._session = graph, FalkorDBSession(self._link, graph)
        return other

    def validate(self, cypher: str, params: dict[str, Any] | None = None, *, allow_writes: bool = False) -> None:
        cypher = _strip(cypher)
        if cypher:
            refuse_unsendable(cypher)
            refuse_crashing_forms(cypher)
            refuse_self_growing_reduce(cypher)

        def compile_only() -> Any:
            with deadline_after(DEFAULT_QUERY_TIMEOUT_S):  # compiling alone can take minutes (deep nesting)
                return self._session.plan(falkordb_dialect(cypher), params, allow_writes=allow_writes)

        plan = self._session.reconnecting(compile_only, cypher)
        if not allow_writes:
            refuse_planned_writes(plan, cypher)

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT_QUERY_TIMEOUT_S,
        row_cap: int | None = DEFAULT_ROW_CAP,
        allow_writes: bool = False,
    ) -> QueryResult:
        cypher = _strip(cypher)
        if cypher:
            refuse_unsendable(cypher)  # before anything, the wrapper's EXPLAIN included, reaches the server
            refuse_crashing_forms(cypher)
            refuse_self_growing_reduce(cypher)
        if not allow_writes and cypher:
            refuse_lexical_writes(cypher)
        started = time.perf_counter()
        sent = guard_runtime_ranges(
            guard_index_expressions(guard_id_ranges(falkordb_dialect(cypher)))
        )  # Neo4j's dialect as FalkorDB's (neo4j_dialect); seeks that never return; misused indexes

        def attempt() -> Any:
            with deadline_after(timeout):  # one deadline for the EXPLAINs and the query together
                try:
                    return self._session.run(sent, params, timeout=timeout, row_cap=row_cap, allow_writes=allow_writes)
                except MissingGraph:  # a write, allowed, on a graph that does not exist yet: it creates it
                    self.write(sent, params)
                    return None

        try:
            raw = self._session.reconnecting(attempt, cypher)
        finally:
            if allow_writes:  # it may have changed the graph: the next schema is read anew
                forget_schemas(self.schema_key)
        if raw is None:
            return QueryResult(query=cypher)
        elapsed = (time.perf_counter() - started) * 1000
        columns = [h[1] if isinstance(h, (list, tuple)) else str(h) for h in (raw.header or [])]
        if sent != cypher:  # the columns are named as the query was written, not as it was sent
            written = return_columns(cypher)
            columns = written if written and len(written) == len(columns) else columns
        rows = raw.result_set or []
        truncated = row_cap is not None and len(rows) > row_cap
        if truncated:
            rows = rows[:row_cap]
        return QueryResult(
            query=cypher,
            columns=columns,
            rows=[[to_plain(v) for v in row] for row in rows],
            truncated=truncated,
            elapsed_ms=elapsed,
        )

    def write(self, cypher: str, params: dict[str, Any] | None = None) -> None:
        try:
            self._write(cypher, params)
        finally:  # whatever it changed, the next schema is read anew
            forget_schemas(self.schema_key)

    def _write(self, cypher: str, params: dict[str, Any] | None) -> None:
        refuse_crashing_forms(cypher)
        refuse_self_growing_reduce(cypher)

        def attempt() -> None:
            try:
                sent = guard_runtime_ranges(guard_index_expressions(guard_id_ranges(_strip(cypher))))
                self._session.refuse_quarantined(sent, params, cypher)
                self._session.graph.query(sent, params)
            except Exception as e:
                raise self._session.translate(e, cypher) from e

        self._session.reconnecting(attempt, cypher)

    def labels(self) -> list[str]:
        return sorted(row[0] for row in self.query("CALL db.labels()", row_cap=None).rows)

    def relationship_types(self) -> list[str]:
        return sorted(row[0] for row in self.query("CALL db.relationshipTypes()", row_cap=None).rows)

    def schema(self, sample_size: int = 50) -> GraphSchema:
        """The graph's schema from bounded samples (nodes/graphdb/introspect.py: its cost on FalkorDB,
        and why a relationship type is searched for as it is), read once per graph in a process and
        again when the graph changes (nodes/graphdb/schema_cache.py)."""
        return shared_schema(self, sample_size, lambda: sample_schema(self, sample_size))

    def graphs(self) -> list[str]:
        """Names of the graphs on this server."""
        return self._session.graphs()

    def close(self) -> None:
        self._link.close()
