"""A session with one named graph on a FalkorDB server: what `FalkorDBGraph` runs its queries through.

It owns the parts of a query's way to the server that the graph's public methods share: selecting
the graph again after the embedded server was restarted (`reconnecting`), planning a query with
GRAPH.EXPLAIN (never `EXPLAIN ...` sent as a query: FalkorDB executes that), the read-only round
trip with the row cap applied by the server, the refusals a plan or the query's text shows, the
quarantine of queries the server crashed on, and FalkorDB's errors translated into the project's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import redis
import redis.exceptions

from reflexion_agents.nodes.graphdb.cypher_text import (
    WRITE_PROCEDURE,
    called_procedures,
    code_only,
    quote_name,
    reads_server_files,
    return_columns,
)
from reflexion_agents.nodes.graphdb.falkordb_link import FalkorDBLink
from reflexion_agents.nodes.graphdb.growth_guards import runtime_range_error
from reflexion_agents.schemas.errors import (
    CypherSyntaxError,
    DatabaseUnavailableError,
    GraphNotFoundError,
    QueryError,
    QueryTimeoutError,
    WriteQueryRefusedError,
)

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
_ON_REPLICA = "You can't write against a read only replica"  # Redis, to GRAPH.QUERY and GRAPH.EXPLAIN alike
NOT_RUN = object()  # `FalkorDBSession.run_read`: the read did not run; plan it


def _compile_error(error: Exception) -> bool:
    """An error FalkorDB gives before running anything (the query, or its capping wrapper, does not
    compile): running the query again as written repeats no work."""
    message = str(error)
    return "errMsg" in message or "Unknown function" in message or "not defined" in message


def _while_running(error: Exception) -> bool:
    """An error of a query the server accepted (a timeout, memory, a full queue), not of compiling
    it: planning the query cannot explain it, and running it again would repeat the cost."""
    return str(error).startswith((_TIMED_OUT, _QUEUE_FULL)) or _OUT_OF_MEMORY in str(error)


T = TypeVar("T")

RETURN_CLAUSE = re.compile(r"\bRETURN\b", re.IGNORECASE)
_LOAD = re.compile(r"\bLOAD\b", re.IGNORECASE)


class MissingGraph(Exception):
    """The named graph does not exist (yet): reads fail, a write creates it."""


def plan_operations(plan: Any) -> set[str]:
    """The operation names of a GRAPH.EXPLAIN plan, read from its raw lines: the client's own
    `str(plan)` walks the operation tree recursively, and a deep query (500 chained WITH) raised
    RecursionError there."""
    lines = getattr(plan, "plan", None)
    lines = lines if isinstance(lines, list) else str(plan or "").splitlines()
    return {str(line).strip().split(" | ")[0].strip() for line in lines if str(line).strip()}


def refuse_planned_writes(plan: Any, cypher: str) -> None:
    writes = plan_operations(plan) & WRITE_OPERATIONS
    if writes:
        raise WriteQueryRefusedError(
            "the query would change the graph or read server files "
            f"({', '.join(sorted(writes))}) and writes are not enabled",
            cypher,
        )


def refuse_lexical_writes(cypher: str) -> None:
    """Refusals the plan cannot show: server file reads and index-changing procedures."""
    if reads_server_files(cypher):
        raise WriteQueryRefusedError("LOAD CSV reads files on the database server and is not allowed", cypher)
    writing = [p for p in called_procedures(cypher) if WRITE_PROCEDURE.search(p.rsplit(".", 1)[-1])]
    if writing:
        raise WriteQueryRefusedError(f"the procedure {writing[0]} would change the graph or its indexes", cypher)


def capped_query(cypher: str, row_cap: int | None) -> str | None:
    """`cypher` wrapped so the database stops at row_cap + 1 rows, or None when it cannot be (no
    cap, no RETURN: a write or a bare CALL, whose cap is applied on the client). Columns that
    cannot be named (`RETURN *`) pass through as `*`: a client-side cap would fetch and decode
    the whole result first (1M rows: 14 s, 0.5 GB; benchmarks/result_memory.py)."""
    if row_cap is None or not RETURN_CLAUSE.search(code_only(cypher)):
        return None
    columns = return_columns(cypher)
    projection = ", ".join(quote_name(c) for c in columns) if columns else "*"
    return f"CALL {{\n{cypher}\n}} RETURN {projection} LIMIT {int(row_cap) + 1}"


class FalkorDBSession:
    """One graph on one server, through the server's shared link (`nodes.graphdb.falkordb_link`)."""

    def __init__(self, link: FalkorDBLink, graph_name: str) -> None:
        self._link, self.graph_name = link, graph_name
        self._graph_at: tuple[int, Any] = (link.generation, link.client.select_graph(graph_name))

    @property
    def host(self) -> str:
        return self._link.host

    @property
    def port(self) -> int:
        return self._link.port

    @property
    def graph(self) -> Any:
        """The client's graph, selected again after the link reconnected to a restarted server."""
        generation, graph = self._graph_at
        if generation != self._link.generation:
            graph = self._link.client.select_graph(self.graph_name)
            self._graph_at = (self._link.generation, graph)
        return graph

    def translate(self, error: Exception, cypher: str, *, compiling: bool = False) -> Exception:
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
        if isinstance(error, redis.exceptions.ResponseError) and str(error) == _MISSING_GRAPH:
            return GraphNotFoundError(
                f"graph {self.graph_name!r} does not exist on FalkorDB at {self.host}:{self.port} "
                f"(graphs there: {', '.join(self.graphs()) or 'none'})"
            )
        if isinstance(error, redis.exceptions.ResponseError) and str(error).startswith(_ON_REPLICA):
            return WriteQueryRefusedError(
                f"FalkorDB at {self.host}:{self.port} is a read-only replica: send writes to its primary", cypher
            )
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

    def plan(self, cypher: str, params: dict[str, Any] | None, *, allow_writes: bool) -> Any:
        """Compile `cypher` with GRAPH.EXPLAIN (never runs it); None for plan-less DDL the caller allowed,
        and for a read on a read-only replica, which cannot plan."""
        if not cypher:
            raise CypherSyntaxError("the query is empty", cypher)
        if not allow_writes:
            refuse_lexical_writes(cypher)
        try:
            self.refuse_quarantined(cypher, params, cypher)
            return self.graph.explain(cypher, params)
        except Exception as e:
            if str(e) == _MISSING_GRAPH and self.graph_name not in self.graphs():
                raise MissingGraph from e
            if str(e).startswith(_ON_REPLICA) and not allow_writes:
                # A replica plans nothing (Redis counts GRAPH.EXPLAIN as a write there): the read goes
                # unplanned to GRAPH.RO_QUERY, which refuses a query that would write before it runs.
                # GRAPH.RO_QUERY runs LOAD CSV, which the plan would have shown: any LOAD is refused.
                if _LOAD.search(code_only(cypher)):
                    raise WriteQueryRefusedError(
                        "LOAD CSV reads files on the database server and is not allowed", cypher
                    ) from e
                return None
            error = self.translate(e, cypher, compiling=True)
            if allow_writes and isinstance(error, WriteQueryRefusedError):
                return None  # schema statements have no plan; they are writes the caller allowed
            raise error from e

    def refuse_quarantined(self, text: str, params: dict[str, Any] | None, cypher: str) -> None:
        """Refuse to send `text` if the embedded server crashed on it before (nodes/graphdb/quarantine.py)."""
        quarantine = self._link.quarantine
        if quarantine is None:
            return
        header = getattr(self.graph, "_build_params_header", lambda _: "")(params)
        if quarantine.holds([header + text]):
            raise QueryError(
                "the database crashed on this query before (it was restarted), so it is not sent again: "
                "write the query another way",
                cypher,
            )

    def run_read(self, cypher: str, params: dict[str, Any] | None, timeout_ms: int | None, wrapped: str) -> Any:
        """A read in one round trip: the capped query straight to GRAPH.RO_QUERY, which the server
        refuses before running anything if the query would write (LOAD CSV, which reads files, never
        comes here). Only when it fails is it planned,
        to say why: a write is refused with the operations the plan shows (as a planned query is),
        an error the plan does not show happened while running and is reported as it is (nothing
        runs twice), and a wrapper or query that does not compile returns `NOT_RUN`, for the
        planned path to report. The lexical refusals (`refuse_lexical_writes`) ran before."""
        try:
            self.refuse_quarantined(wrapped, params, cypher)
            return self.graph.ro_query(wrapped, params, timeout=timeout_ms)
        except redis.exceptions.ResponseError as e:
            if _while_running(e):
                raise self.translate(e, cypher) from e
            failure = e
        except Exception as e:
            raise self.translate(e, cypher) from e
        try:
            plan = self.graph.explain(wrapped, params)
        except redis.exceptions.ResponseError as e:
            if _while_running(e):
                raise self.translate(failure, cypher) from failure  # not a compile error: never run it again
            if str(e).startswith(_ON_REPLICA) and not _compile_error(failure):
                raise self.translate(failure, cypher) from failure  # a replica cannot say more; never run it again
            return NOT_RUN
        except Exception as e:
            raise self.translate(e, cypher) from e
        refuse_planned_writes(plan, cypher)
        raise self.translate(failure, cypher) from failure

    def run(
        self,
        cypher: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        row_cap: int | None,
        allow_writes: bool,
    ) -> Any:
        """Run `cypher`: FalkorDB's raw result, or None after a write that created the graph. A capped
        read goes in one round trip (`run_read`); anything else is planned first (GRAPH.EXPLAIN),
        refused if the plan writes and writes are not allowed, then run."""
        timeout_ms = None if timeout is None else max(1, int(timeout * 1000))
        wrapped = capped_query(cypher, row_cap)
        # GRAPH.RO_QUERY runs LOAD CSV (it reads files, it does not write): such a query is always
        # planned, so its plan's refusal backs the lexical one.
        if wrapped is not None and not allow_writes and not _LOAD.search(code_only(cypher)):
            raw = self.run_read(cypher, params, timeout_ms, wrapped)
            if raw is not NOT_RUN:
                return raw
            wrapped = None  # it does not compile wrapped: plan and run it as written
        try:
            if wrapped:
                self.refuse_quarantined(wrapped, params, cypher)
            to_run, plan = (wrapped, self.graph.explain(wrapped, params)) if wrapped else (None, None)
        except redis.exceptions.ResponseError:
            to_run, plan = None, None
        except Exception as e:
            raise self.translate(e, cypher) from e
        try:
            if to_run is None:
                to_run, plan = cypher, self.plan(cypher, params, allow_writes=allow_writes)
        except MissingGraph:
            if not allow_writes:
                raise GraphNotFoundError(
                    f"graph {self.graph_name!r} does not exist on FalkorDB at {self.host}:{self.port} "
                    f"(graphs there: {', '.join(self.graphs()) or 'none'})"
                ) from None
            raise  # a write creates the graph: `FalkorDBGraph.query` sends it as one
        if not allow_writes:
            refuse_planned_writes(plan, cypher)
        try:
            self.refuse_quarantined(to_run, params, cypher)
            run = self.graph.query if allow_writes else self.graph.ro_query
            return run(to_run, params, timeout=timeout_ms)
        except Exception as e:
            raise self.translate(e, cypher) from e

    def reconnecting(self, operation: Callable[[], T], cypher: str = "") -> T:
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

    def graphs(self) -> list[str]:
        """Names of the graphs on this server."""

        def attempt() -> list[str]:
            try:
                return sorted(self._link.client.list_graphs())
            except Exception as e:
                raise self.translate(e, "") from e

        return self.reconnecting(attempt)
