"""FalkorDB backend: read-only queries with `GRAPH.RO_QUERY`, validation with `GRAPH.EXPLAIN`.

An `EXPLAIN` prefix sent as a query *executes* the query on FalkorDB, so
validation always goes through the client's `Graph.explain()`.
"""

from __future__ import annotations

import contextlib
import copy
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
import redis.exceptions
from falkordb import FalkorDB

from reflexion_agents.nodes.graphdb.crash_forms import refuse_crashing_forms
from reflexion_agents.nodes.graphdb.cypher_text import (
    WRITE_PROCEDURE,
    called_procedures,
    code_only,
    quote_name,
    reads_server_files,
    refuse_unsendable,
    return_columns,
)
from reflexion_agents.nodes.graphdb.deadline import deadline_after
from reflexion_agents.nodes.graphdb.falkordb_link import shared_link
from reflexion_agents.nodes.graphdb.growth_guards import (
    guard_runtime_ranges,
    refuse_self_growing_reduce,
    runtime_range_error,
)
from reflexion_agents.nodes.graphdb.id_ranges import guard_id_ranges
from reflexion_agents.nodes.graphdb.index_expressions import guard_index_expressions
from reflexion_agents.nodes.graphdb.introspect import sample_schema
from reflexion_agents.nodes.graphdb.protocol import DEFAULT_QUERY_TIMEOUT_S, DEFAULT_ROW_CAP
from reflexion_agents.nodes.graphdb.values import to_plain
from reflexion_agents.schemas.errors import (
    CypherSyntaxError,
    DatabaseUnavailableError,
    GraphNotFoundError,
    QueryError,
    QueryTimeoutError,
    WriteQueryRefusedError,
)
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, QueryResult

# Plan operations that change the graph, or read files on the database server.
WRITE_OPERATIONS = {"Create", "Delete", "Update", "Merge", "MergeCreate", "Foreach", "Load CSV"}
# Procedures whose names say they change the graph or its indexes (db.idx.*.create*, ...).
# FalkorDB's own error texts, matched at the start so a query cannot forge them in a literal.
_READ_ONLY_REFUSAL = "graph.RO_QUERY is to be executed only on read-only queries"
_MISSING_GRAPH = "Invalid graph operation on empty key"
_TIMED_OUT = "Query timed out"
_NO_PLAN = "plan must be an array"
_QUEUE_FULL = "Max pending queries exceeded"  # MAX_QUEUED_QUERIES
_NO_SUCH_COMMAND = "unknown command"  # a Redis without the module
_OUT_OF_MEMORY = "mem consumption exceeded capacity"  # QUERY_MEM_CAPACITY
_NOT_RUN = object()  # `_run_read`: the read did not run; plan it


def _while_running(error: Exception) -> bool:
    """An error of a query the server accepted (a timeout, memory, a full queue), not of compiling
    it: planning the query cannot explain it, and running it again would repeat the cost."""
    return str(error).startswith((_TIMED_OUT, _QUEUE_FULL)) or _OUT_OF_MEMORY in str(error)


T = TypeVar("T")

RETURN_CLAUSE = re.compile(r"\bRETURN\b", re.IGNORECASE)
_LOAD = re.compile(r"\bLOAD\b", re.IGNORECASE)


class _MissingGraph(Exception):
    """The named graph does not exist (yet): reads fail, a write creates it."""


def _strip(cypher: str) -> str:
    return cypher.strip().rstrip(";").strip()


def _plan_operations(plan: Any) -> set[str]:
    """The operation names of a GRAPH.EXPLAIN plan, read from its raw lines: the client's own
    `str(plan)` walks the operation tree recursively, and a deep query (500 chained WITH) raised
    RecursionError there."""
    lines = getattr(plan, "plan", None)
    lines = lines if isinstance(lines, list) else str(plan or "").splitlines()
    return {str(line).strip().split(" | ")[0].strip() for line in lines if str(line).strip()}


class FalkorDBGraph:
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
        self._graph_at: tuple[int, Any] = (0, self._link.client.select_graph(graph))

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

    @property
    def _client(self) -> FalkorDB:
        return self._link.client

    @property
    def _graph(self) -> Any:
        generation, graph = self._graph_at
        if generation != self._link.generation:  # the link reconnected to a restarted server
            graph = self._link.client.select_graph(self.graph_name)
            self._graph_at = (self._link.generation, graph)
        return graph

    def _reconnecting(self, operation: Callable[[], T], cypher: str = "") -> T:
        """Run `operation`; if the embedded server has died, start it again and retry once, unless it
        died out of memory while `cypher` ran: that query is not sent to the new server."""
        generation = self._link.generation
        try:
            return operation()
        except DatabaseUnavailableError:
            if not self._link.reconnect_embedded(generation):
                raise
        quarantine = self._link.quarantine
        if cypher and quarantine is not None and quarantine.died_out_of_memory:
            raise QueryError(
                "the database ran out of memory while this query ran and was restarted (nothing written is "
                "lost); the query was not sent again: fetch less, filter or aggregate earlier",
                cypher,
            )
        return operation()

    @classmethod
    def embedded(cls, graph: str = "movies", data_dir: str | None = None) -> FalkorDBGraph:
        """Start (or reuse) the embedded server for `data_dir` and open `graph` on it."""
        from reflexion_agents.nodes.graphdb.embedded import shared_server

        server = shared_server(data_dir)
        return cls(graph, host=server.host, port=server.port, server=server)

    def __repr__(self) -> str:
        return f"FalkorDBGraph(graph={self.graph_name!r}, host={self.host!r}, port={self.port})"

    def sibling(self, graph: str) -> FalkorDBGraph:
        """Another graph on the same server, over the same connection (close only the original)."""
        other = copy.copy(self)
        other.graph_name = graph
        other._graph_at = (self._link.generation, self._client.select_graph(graph))
        return other

    # -- errors ---------------------------------------------------------------

    def _translate(self, error: Exception, cypher: str, *, compiling: bool = False) -> Exception:
        if isinstance(error, RecursionError):  # the client reads plans and values recursively
            return QueryError(
                "the query, its plan or its result nests too deeply for the client to read; write it flatter",
                cypher,
            )
        if isinstance(error, redis.exceptions.TimeoutError) and cypher:
            return QueryTimeoutError(
                f"no answer within the query's time limit; the server was still working, so the client gave up "
                f"and will use a fresh connection ({error})",
                cypher,
            )
        if str(error).startswith(_QUEUE_FULL):
            return DatabaseUnavailableError(
                f"FalkorDB at {self.host}:{self.port} is too busy: its queue of waiting queries is full ({error}); "
                "try again later"
            )
        if _OUT_OF_MEMORY in str(error):
            return QueryError(
                f"the query used more memory than one query may ({error}); "
                "fetch less: filter earlier, aggregate, add LIMIT",
                cypher,
            )
        if isinstance(error, redis.exceptions.InvalidResponse):
            return DatabaseUnavailableError(f"{self.host}:{self.port} is not a FalkorDB server: {error}")
        if isinstance(error, redis.exceptions.ResponseError) and str(error).startswith(_NO_SUCH_COMMAND):
            return DatabaseUnavailableError(
                f"{self.host}:{self.port} is a Redis server without the FalkorDB module ({error})"
            )
        if isinstance(error, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
            return DatabaseUnavailableError(f"FalkorDB at {self.host}:{self.port} is unreachable: {error}")
        message = str(error) or type(error).__name__
        if message.startswith(_NO_PLAN):  # the client's reaction to index DDL, which has no plan
            return WriteQueryRefusedError(
                "the query would change the graph's indexes and writes are not enabled", cypher
            )
        if not isinstance(error, redis.exceptions.RedisError):
            return error  # a programming error: let it surface as itself
        limited = runtime_range_error(str(error), cypher)
        if limited is not None:
            return limited
        if message.startswith(_TIMED_OUT):
            return QueryTimeoutError(message, cypher)
        if message.startswith(_READ_ONLY_REFUSAL):
            return WriteQueryRefusedError("the query would change the graph and writes are not enabled", cypher)
        if compiling or "errMsg" in message or "Unknown function" in message:
            return CypherSyntaxError(message, cypher)
        return QueryError(message, cypher)

    # -- protocol -------------------------------------------------------------

    def _plan(self, cypher: str, params: dict[str, Any] | None, *, allow_writes: bool) -> Any:
        """Compile `cypher` with GRAPH.EXPLAIN (never runs it); None for plan-less DDL the caller allowed."""
        if not cypher:
            raise CypherSyntaxError("the query is empty", cypher)
        if not allow_writes:
            self._refuse_lexical_writes(cypher)
        try:
            self._refuse_quarantined(cypher, params, cypher)
            return self._graph.explain(cypher, params)
        except Exception as e:
            if str(e) == _MISSING_GRAPH and self.graph_name not in self.graphs():
                raise _MissingGraph from e
            error = self._translate(e, cypher, compiling=True)
            if allow_writes and isinstance(error, WriteQueryRefusedError):
                return None  # schema statements have no plan; they are writes the caller allowed
            raise error from e

    def _refuse_quarantined(self, text: str, params: dict[str, Any] | None, cypher: str) -> None:
        """Refuse to send `text` if the embedded server crashed on it before (nodes/graphdb/quarantine.py)."""
        quarantine = self._link.quarantine
        if quarantine is None:
            return
        header = getattr(self._graph, "_build_params_header", lambda _: "")(params)
        if quarantine.holds([header + text]):
            raise QueryError(
                "the database crashed on this query before (it was restarted), so it is not sent again: "
                "write the query another way",
                cypher,
            )

    @staticmethod
    def _refuse_planned_writes(plan: Any, cypher: str) -> None:
        writes = _plan_operations(plan) & WRITE_OPERATIONS
        if writes:
            raise WriteQueryRefusedError(
                "the query would change the graph or read server files "
                f"({', '.join(sorted(writes))}) and writes are not enabled",
                cypher,
            )

    def validate(self, cypher: str, params: dict[str, Any] | None = None, *, allow_writes: bool = False) -> None:
        cypher = _strip(cypher)
        if cypher:
            refuse_unsendable(cypher)
            refuse_crashing_forms(cypher)
            refuse_self_growing_reduce(cypher)

        def compile_only() -> Any:
            with deadline_after(DEFAULT_QUERY_TIMEOUT_S):  # compiling alone can take minutes (deep nesting)
                return self._plan(cypher, params, allow_writes=allow_writes)

        plan = self._reconnecting(compile_only, cypher)
        if not allow_writes:
            self._refuse_planned_writes(plan, cypher)

    @staticmethod
    def _refuse_lexical_writes(cypher: str) -> None:
        """Refusals the plan cannot show: server file reads and index-changing procedures."""
        if reads_server_files(cypher):
            raise WriteQueryRefusedError("LOAD CSV reads files on the database server and is not allowed", cypher)
        writing = [p for p in called_procedures(cypher) if WRITE_PROCEDURE.search(p.rsplit(".", 1)[-1])]
        if writing:
            raise WriteQueryRefusedError(f"the procedure {writing[0]} would change the graph or its indexes", cypher)

    @staticmethod
    def _wrapped(cypher: str, row_cap: int | None) -> str | None:
        """`cypher` wrapped so the database stops at row_cap + 1 rows, or None when it cannot be (no
        cap, no RETURN: a write or a bare CALL, whose cap is applied on the client). Columns that
        cannot be named (`RETURN *`) pass through as `*`: a client-side cap would fetch and decode
        the whole result first (1M rows: 14 s, 0.5 GB; benchmarks/result_memory.py)."""
        if row_cap is None or not RETURN_CLAUSE.search(code_only(cypher)):
            return None
        columns = return_columns(cypher)
        projection = ", ".join(quote_name(c) for c in columns) if columns else "*"
        return f"CALL {{\n{cypher}\n}} RETURN {projection} LIMIT {int(row_cap) + 1}"

    def _run_read(self, cypher: str, params: dict[str, Any] | None, timeout_ms: int | None, wrapped: str) -> Any:
        """A read in one round trip: the capped query straight to GRAPH.RO_QUERY, which the server
        refuses before running anything if the query would write (LOAD CSV, which reads files, never
        comes here). Only when it fails is it planned,
        to say why: a write is refused with the operations the plan shows (as a planned query is),
        an error the plan does not show happened while running and is reported as it is (nothing
        runs twice), and a wrapper or query that does not compile returns `_NOT_RUN`, for the
        planned path to report. The lexical refusals (`_refuse_lexical_writes`) ran before."""
        try:
            self._refuse_quarantined(wrapped, params, cypher)
            return self._graph.ro_query(wrapped, params, timeout=timeout_ms)
        except redis.exceptions.ResponseError as e:
            if _while_running(e):
                raise self._translate(e, cypher) from e
            failure = e
        except Exception as e:
            raise self._translate(e, cypher) from e
        try:
            plan = self._graph.explain(wrapped, params)
        except redis.exceptions.ResponseError as e:
            if _while_running(e):
                raise self._translate(failure, cypher) from failure  # not a compile error: never run it again
            return _NOT_RUN
        except Exception as e:
            raise self._translate(e, cypher) from e
        self._refuse_planned_writes(plan, cypher)
        raise self._translate(failure, cypher) from failure

    def _run(
        self,
        cypher: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        row_cap: int | None,
        allow_writes: bool,
    ) -> Any:
        """Run `cypher`: FalkorDB's raw result, or None after a write that created the graph. A capped
        read goes in one round trip (`_run_read`); anything else is planned first (GRAPH.EXPLAIN),
        refused if the plan writes and writes are not allowed, then run."""
        timeout_ms = None if timeout is None else max(1, int(timeout * 1000))
        wrapped = self._wrapped(cypher, row_cap)
        # GRAPH.RO_QUERY runs LOAD CSV (it reads files, it does not write): such a query is always
        # planned, so its plan's refusal backs the lexical one.
        if wrapped is not None and not allow_writes and not _LOAD.search(code_only(cypher)):
            raw = self._run_read(cypher, params, timeout_ms, wrapped)
            if raw is not _NOT_RUN:
                return raw
            wrapped = None  # it does not compile wrapped: plan and run it as written
        try:
            if wrapped:
                self._refuse_quarantined(wrapped, params, cypher)
            to_run, plan = (wrapped, self._graph.explain(wrapped, params)) if wrapped else (None, None)
        except redis.exceptions.ResponseError:
            to_run, plan = None, None
        except Exception as e:
            raise self._translate(e, cypher) from e
        try:
            if to_run is None:
                to_run, plan = cypher, self._plan(cypher, params, allow_writes=allow_writes)
        except _MissingGraph:
            if not allow_writes:
                raise GraphNotFoundError(
                    f"graph {self.graph_name!r} does not exist on FalkorDB at {self.host}:{self.port} "
                    f"(graphs there: {', '.join(self.graphs()) or 'none'})"
                ) from None
            self.write(cypher, params)  # a write creates the graph
            return None
        if not allow_writes:
            self._refuse_planned_writes(plan, cypher)
        try:
            self._refuse_quarantined(to_run, params, cypher)
            run = self._graph.query if allow_writes else self._graph.ro_query
            return run(to_run, params, timeout=timeout_ms)
        except Exception as e:
            raise self._translate(e, cypher) from e

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
            self._refuse_lexical_writes(cypher)
        started = time.perf_counter()
        sent = guard_runtime_ranges(
            guard_index_expressions(guard_id_ranges(cypher))
        )  # seeks that never return; misused indexes

        def attempt() -> Any:
            with deadline_after(timeout):  # one deadline for the EXPLAINs and the query together
                return self._run(sent, params, timeout=timeout, row_cap=row_cap, allow_writes=allow_writes)

        raw = self._reconnecting(attempt, cypher)
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
        refuse_crashing_forms(cypher)
        refuse_self_growing_reduce(cypher)

        def attempt() -> None:
            try:
                sent = guard_runtime_ranges(guard_index_expressions(guard_id_ranges(_strip(cypher))))
                self._refuse_quarantined(sent, params, cypher)
                self._graph.query(sent, params)
            except Exception as e:
                raise self._translate(e, cypher) from e

        self._reconnecting(attempt, cypher)

    def _catalogue(self, procedure: str) -> list[str]:
        return sorted(row[0] for row in self.query(f"CALL {procedure}()", row_cap=None).rows)

    def labels(self) -> list[str]:
        return self._catalogue("db.labels")

    def relationship_types(self) -> list[str]:
        return self._catalogue("db.relationshipTypes")

    def schema(self, sample_size: int = 50) -> GraphSchema:
        """The graph's schema from bounded samples, read anew at each call (nodes/graphdb/introspect.py:
        its cost on FalkorDB, and why a relationship type is searched for as it is)."""
        return sample_schema(self, sample_size)

    def graphs(self) -> list[str]:
        """Names of the graphs on this server."""

        def attempt() -> list[str]:
            try:
                return sorted(self._client.list_graphs())
            except Exception as e:
                raise self._translate(e, "") from e

        return self._reconnecting(attempt)

    def copy_to(self, graph: str) -> None:
        """Copy this graph, indexes included, to a new graph `graph` on the same server."""
        try:
            self._graph.copy(graph)
        except Exception as e:
            raise self._translate(e, "") from e

    def replace(self, graph: str) -> None:
        """Become the graph `graph` on the same server, replacing it if it exists, in one step
        (Redis RENAME: readers see the old graph or the new one, never none)."""
        try:
            self._client.connection.rename(self.graph_name, graph)
        except Exception as e:
            raise self._translate(e, "") from e

    def rebuild_range_indexes(self) -> None:
        """Drop and recreate every node range index. FalkorDB's GRAPH.COPY leaves the copy's range
        indexes without their entries for 0, 0.0 and false (equality lookups then miss those nodes)."""
        rows = self.query(
            "CALL db.indexes() YIELD label, types, entitytype RETURN label, types, entitytype", row_cap=None
        ).rows
        for label, types, entity in rows:
            for prop, kinds in (types or {}).items():
                if entity == "NODE" and "RANGE" in kinds:
                    self.write(f"DROP INDEX ON :{quote_name(label)}({quote_name(prop)})")
                    self.write(f"CREATE INDEX FOR (n:{quote_name(label)}) ON (n.{quote_name(prop)})")

    def counts(self) -> tuple[int, int]:
        """(nodes, relationships) of this graph; (0, 0) for a graph that does not exist."""
        if self.graph_name not in self.graphs():
            return 0, 0
        nodes = self.query("MATCH (n) RETURN count(n)", row_cap=None).rows[0][0]
        relationships = self.query("MATCH ()-[r]->() RETURN count(r)", row_cap=None).rows[0][0]
        return int(nodes), int(relationships)

    def clear(self) -> None:
        """Delete this graph entirely (an explicit write, for loaders and tests)."""
        with contextlib.suppress(redis.exceptions.ResponseError):  # the graph did not exist
            self._graph.delete()

    def close(self) -> None:
        self._link.close()
