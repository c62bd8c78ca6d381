"""Neo4j backend through the official driver.

Read-only is enforced twice: an `EXPLAIN` whose query type must be `r`
(read), and sessions opened in READ access mode. The row cap is applied by
pulling at most cap + 1 records from the server's stream and discarding the
rest, so the database stops producing rows beyond the cap.

Deadlines. A query's timeout goes to the server (`neo4j.Query(timeout=...)`, the transaction
timeout), which ends the query itself. The driver has no client-side timeout once a connection is
open (it reads until the server answers, unless the server sends a `recv_timeout` hint), so a server
that hangs, or a peer that is no server at all, would hold the caller forever: each query, its
validating `EXPLAIN` included, runs under one client deadline (its timeout plus 4% and 30 ms,
inside the 10% or 100 ms promised), at which `_Watchdog` closes the session's connection and the
query fails with `QueryTimeoutError`. Opening a connection (TCP, the Bolt handshake, HELLO) is bounded
by `connect_timeout` (5 s, and never past the query's deadline): a peer that accepts TCP and says
nothing, or answers something that is not Bolt (HTTP, a Redis reply, another Bolt version), is a
`DatabaseUnavailableError` within it. Queries go through `session.run` (auto-commit, not retried by
the driver), never managed transactions, whose retries (`max_transaction_retry_time`, 30 s by
default) would outlast any timeout.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Collection
from contextlib import suppress
from typing import Any

import neo4j
from neo4j import exceptions as neo4j_errors

from reflexion_agents.nodes.graphdb.cypher_text import reads_server_files, refuse_unsendable, unlisted_procedures
from reflexion_agents.nodes.graphdb.introspect import sample_schema
from reflexion_agents.nodes.graphdb.protocol import DEFAULT_QUERY_TIMEOUT_S, DEFAULT_ROW_CAP
from reflexion_agents.nodes.graphdb.schema_cache import forget_schemas, shared_schema
from reflexion_agents.nodes.graphdb.values import to_plain
from reflexion_agents.schemas.errors import (
    ConfigurationError,
    CypherSyntaxError,
    DatabaseUnavailableError,
    GraphNotFoundError,
    QueryError,
    QueryTimeoutError,
    WriteQueryRefusedError,
)
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, QueryResult

# The driver logs a warning for each failed routing attempt, which Python's last-resort handler
# prints on stderr next to the error this adapter raises with the same text. A NullHandler keeps
# that quiet; applications that configure logging still receive the records through propagation.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

_UNAVAILABLE = (
    neo4j_errors.ServiceUnavailable,
    neo4j_errors.SessionExpired,
    neo4j_errors.AuthError,
    neo4j_errors.DatabaseUnavailable,
    neo4j_errors.ConnectionPoolError,  # no connection within the acquisition timeout
    neo4j_errors.UnsupportedServerProduct,  # the peer answered the handshake with no Bolt version we speak
    OSError,
)
#: TCP connect, Bolt handshake and HELLO together: a server answers these in milliseconds.
DEFAULT_CONNECT_TIMEOUT_S = 5.0


def client_grace_s(timeout_s: float) -> float:
    """How long past its own timeout a query may hold the caller before the client gives up: 4% + 30 ms,
    inside the promised 10% (or 100 ms) with room for closing the connection. The server's transaction
    timeout ends most queries first (Neo4j checks it every couple of seconds, so not always)."""
    return 0.04 * timeout_s + 0.03


class _Watchdog:
    """Closes a session's connection at `deadline` (`time.monotonic()`), unblocking a read the server
    never answers; `fired` tells the caller that the failure it sees is the deadline's. The driver's
    public API has no way to interrupt a read, so this reaches the session's connection (`_connection`,
    `kill()`); `tests/test_hostile_peers.py` fails if a driver version moves them."""

    def __init__(self, session: Any, deadline: float | None) -> None:
        self._session, self._deadline = session, deadline
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None
        self.fired = False

    def __enter__(self) -> _Watchdog:
        if self._deadline is not None:
            self._timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _fire(self) -> None:
        with self._lock:  # never after `__exit__`: the connection may be back in the pool, another query's
            connection = getattr(self._session, "_connection", None)
            if self._done or connection is None:  # none yet: the acquisition timeout ends the wait
                return
            self.fired = True
            with suppress(Exception):
                connection.kill()

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()


BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def neo4j_uri(host: str, port: int | str | None = None, scheme: str = "bolt") -> str:
    """A driver URI from the `host`/`port` pair of biochatter's `connection_args`; a full URI passes through."""
    if "://" in host:
        return host
    return f"{scheme}://{host}:{port or 7687}"


class Neo4jGraph:
    """One Neo4j database, reached by URI with the official driver."""

    dialect: Dialect = "neo4j"

    def __init__(
        self,
        uri: str = "bolt://127.0.0.1:7687",
        *,
        user: str | None = "neo4j",
        password: str | None = None,
        db_name: str | None = None,
        driver: Any = None,
        fetch_size: int = 200,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
        allowed_procedures: Collection[str] = (),
    ) -> None:
        self.uri, self.db_name, self.fetch_size = uri, db_name, fetch_size
        # whose schema this is (a user sees what the server lets it see); a driver handed in names none
        self._schema_user = user if driver is None else f"driver-{uuid.uuid4().hex}"
        #: Procedures a read query may call besides those known to only read (`READ_PROCEDURES`).
        self.allowed_procedures = frozenset(allowed_procedures)
        self.connect_timeout = connect_timeout
        if driver is None:
            if uri.split("://", 1)[0] not in BOLT_SCHEMES:
                raise ConfigurationError(f"bad Neo4j URI {uri!r}: the scheme must be one of {', '.join(BOLT_SCHEMES)}")
            auth = (user, password) if user and password is not None else None
            try:
                driver = neo4j.GraphDatabase.driver(
                    uri,
                    auth=auth,
                    connection_timeout=connect_timeout,
                    connection_acquisition_timeout=connect_timeout,
                    # managed transactions are not used here; none may retry past a query's deadline
                    max_transaction_retry_time=0.0,
                )
            except (ValueError, neo4j_errors.ConfigurationError) as e:
                raise ConfigurationError(f"bad Neo4j URI or settings {uri!r}: {e}") from e
        self._driver = driver

    def __repr__(self) -> str:
        return f"Neo4jGraph(uri={self.uri!r}, db_name={self.db_name!r})"

    @property
    def schema_key(self) -> str:
        """What names this database's schema among those a process keeps: its address and database,
        and the user (what it may see); a driver handed in is a user of its own."""
        return f"{self!r} as {self._schema_user!r}"

    def _session(self, write: bool = False, deadline: float | None = None) -> Any:
        """A session whose connection must be acquired (opened, if need be) within the connect timeout,
        and before `deadline`: a peer that never completes the handshake cannot hold a query past it."""
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        acquisition = self.connect_timeout
        if deadline is not None:
            acquisition = max(0.001, min(acquisition, deadline - time.monotonic()))
        return self._driver.session(
            database=self.db_name,
            default_access_mode=mode,
            fetch_size=self.fetch_size,
            connection_acquisition_timeout=acquisition,
        )

    @staticmethod
    def _deadline(timeout: float | None) -> float | None:
        return None if timeout is None else time.monotonic() + timeout + client_grace_s(timeout)

    @staticmethod
    def _server_timeout(deadline: float | None, timeout: float | None, cypher: str) -> float | None:
        """The transaction timeout the server gets: what is left of the query's own timeout (the client
        deadline is later by the grace), at least 1 ms (the driver sends 0 as "no timeout").
        None: no limit."""
        if deadline is None or timeout is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise QueryTimeoutError(f"the query's time limit ({timeout:g} s) passed before it could be sent", cypher)
        return max(0.001, left - client_grace_s(timeout))

    def _translate(self, error: Exception, cypher: str, *, timed_out: float | None = None) -> Exception:
        if timed_out is not None:  # the watchdog closed the connection: whatever the driver says, it was that
            return QueryTimeoutError(
                f"no answer within the query's time limit ({timed_out:g} s); "
                "the client closed the connection "
                f"and the next query opens a new one ({error})",
                cypher,
            )
        if isinstance(error, neo4j_errors.UnsupportedServerProduct):
            return DatabaseUnavailableError(
                f"Neo4j at {self.uri} is unreachable: the peer is not a Neo4j server this driver can talk to "
                f"(the Bolt handshake failed: {error})"
            )
        if isinstance(error, _UNAVAILABLE):
            return DatabaseUnavailableError(f"Neo4j at {self.uri} is unreachable: {error}")
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        code = getattr(error, "code", "") or ""
        if "DatabaseNotFound" in code:
            return GraphNotFoundError(f"Neo4j at {self.uri} has no database {self.db_name!r}: {message}")
        if isinstance(error, neo4j_errors.CypherSyntaxError) or "SyntaxError" in code:
            return CypherSyntaxError(message, cypher)
        if "TimedOut" in code or "Terminated" in code:
            return QueryTimeoutError(message, cypher)
        if isinstance(error, neo4j_errors.Forbidden) or "AccessMode" in code or "ReadOnly" in code:
            return WriteQueryRefusedError(message, cypher)
        return QueryError(message, cypher)

    def validate(self, cypher: str, params: dict[str, Any] | None = None, *, allow_writes: bool = False) -> None:
        """Compile the query with `EXPLAIN` (never runs it) within the default query timeout."""
        self._validate(cypher, params, allow_writes=allow_writes, timeout=DEFAULT_QUERY_TIMEOUT_S)

    def _validate(
        self,
        cypher: str,
        params: dict[str, Any] | None,
        *,
        allow_writes: bool,
        timeout: float | None,
        deadline: float | None = None,
    ) -> None:
        cypher = cypher.strip().rstrip(";").strip()
        if not cypher:
            raise CypherSyntaxError("the query is empty", cypher)
        refuse_unsendable(cypher)
        if reads_server_files(cypher) and not allow_writes:  # EXPLAIN reports LOAD CSV as a read
            raise WriteQueryRefusedError("LOAD CSV reads files on the database server and is not allowed", cypher)
        unlisted = [] if allow_writes else unlisted_procedures(cypher, self.allowed_procedures)
        if unlisted:  # EXPLAIN calls every procedure a read, apoc.load.json (the server's files) included
            raise WriteQueryRefusedError(
                f"the procedure {unlisted[0]} is not one known to only read the graph (Neo4j calls procedures that "
                "read files, export or run Cypher reads too); a read query may call the schema and full-text "
                "procedures, and those the adapter is given in allowed_procedures",
                cypher,
            )
        deadline = deadline if deadline is not None else self._deadline(timeout)
        session = self._session(deadline=deadline)
        watchdog = _Watchdog(session, deadline)
        try:
            with session, watchdog:
                server_timeout = self._server_timeout(deadline, timeout, cypher)
                explain = neo4j.Query(f"EXPLAIN {cypher}", timeout=server_timeout)
                summary = session.run(explain, params or {}).consume()
        except QueryTimeoutError:
            raise
        except Exception as e:
            raise self._translate(e, cypher, timed_out=timeout if watchdog.fired else None) from e
        if summary.query_type != "r" and not allow_writes:
            raise WriteQueryRefusedError(
                f"the query would change the graph (query type {summary.query_type!r}) and writes are not enabled",
                cypher,
            )

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT_QUERY_TIMEOUT_S,
        row_cap: int | None = DEFAULT_ROW_CAP,
        allow_writes: bool = False,
    ) -> QueryResult:
        cypher = cypher.strip().rstrip(";").strip()
        deadline = self._deadline(timeout)  # one deadline for the EXPLAIN and the query together
        self._validate(cypher, params, allow_writes=allow_writes, timeout=timeout, deadline=deadline)
        started = time.perf_counter()
        rows: list[list[Any]] = []
        truncated = False
        session = self._session(write=allow_writes, deadline=deadline)
        watchdog = _Watchdog(session, deadline)
        try:
            with session, watchdog:
                query = neo4j.Query(cypher, timeout=self._server_timeout(deadline, timeout, cypher))
                result = session.run(query, params or {})
                columns = list(result.keys())
                for record in result:
                    if row_cap is not None and len(rows) >= row_cap:
                        truncated = True
                        break
                    rows.append([to_plain(v) for v in record.values()])
                result.consume()
        except QueryTimeoutError:
            raise
        except Exception as e:
            raise self._translate(e, cypher, timed_out=timeout if watchdog.fired else None) from e
        finally:
            if allow_writes:  # it may have changed the graph: the next schema is read anew
                forget_schemas(self.schema_key)
        return QueryResult(
            query=cypher,
            columns=columns,
            rows=rows,
            truncated=truncated,
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )

    def write(self, cypher: str, params: dict[str, Any] | None = None) -> None:
        try:
            with self._session(write=True) as session:
                session.run(cypher.strip().rstrip(";"), params or {}).consume()
        except Exception as e:
            raise self._translate(e, cypher) from e
        finally:  # whatever it changed, the next schema is read anew
            forget_schemas(self.schema_key)

    def _catalogue(self, procedure: str, column: str) -> list[str]:
        return sorted(r[0] for r in self.query(f"CALL {procedure}() YIELD {column} RETURN {column}", row_cap=None).rows)

    def labels(self) -> list[str]:
        return self._catalogue("db.labels", "label")

    def relationship_types(self) -> list[str]:
        return self._catalogue("db.relationshipTypes", "relationshipType")

    def schema(self, sample_size: int = 50) -> GraphSchema:
        """Read once per database in a process, and again when it changes (nodes/graphdb/schema_cache.py)."""
        return shared_schema(self, sample_size, lambda: sample_schema(self, sample_size))

    def close(self) -> None:
        self._driver.close()
