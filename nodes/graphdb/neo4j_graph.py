"""Neo4j backend through the official driver.

Read-only is enforced twice: an `EXPLAIN` whose query type must be `r`
(read), and sessions opened in READ access mode. The row cap is applied by
pulling at most cap + 1 records from the server's stream and discarding the
rest, so the database stops producing rows beyond the cap.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import neo4j
from neo4j import exceptions as neo4j_errors

from nodes.graphdb.cypher_text import reads_server_files, refuse_unsendable
from nodes.graphdb.introspect import sample_schema
from nodes.graphdb.protocol import DEFAULT_QUERY_TIMEOUT_S, DEFAULT_ROW_CAP
from nodes.graphdb.values import to_plain
from schemas.errors import (
    ConfigurationError,
    CypherSyntaxError,
    DatabaseUnavailableError,
    GraphNotFoundError,
    QueryError,
    QueryTimeoutError,
    WriteQueryRefusedError,
)
from schemas.graphdb import GraphSchema, QueryResult

# The driver logs a warning for each failed routing attempt, which Python's last-resort handler
# prints on stderr next to the error this adapter raises with the same text. A NullHandler keeps
# that quiet; applications that configure logging still receive the records through propagation.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

_UNAVAILABLE = (
    neo4j_errors.ServiceUnavailable,
    neo4j_errors.SessionExpired,
    neo4j_errors.AuthError,
    neo4j_errors.DatabaseUnavailable,
    OSError,
)

BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def neo4j_uri(host: str, port: int | str | None = None, scheme: str = "bolt") -> str:
    """A driver URI from the seed's `host`/`port` pair; a full URI passes through."""
    if "://" in host:
        return host
    return f"{scheme}://{host}:{port or 7687}"


class Neo4jGraph:
    """One Neo4j database, reached by URI with the official driver."""

    dialect = "neo4j"

    def __init__(
        self,
        uri: str = "bolt://127.0.0.1:7687",
        *,
        user: str | None = "neo4j",
        password: str | None = None,
        db_name: str | None = None,
        driver: Any = None,
        fetch_size: int = 200,
    ) -> None:
        self.uri, self.db_name, self.fetch_size = uri, db_name, fetch_size
        if driver is None:
            if uri.split("://", 1)[0] not in BOLT_SCHEMES:
                raise ConfigurationError(
                    f"bad Neo4j URI {uri!r}: the scheme must be one of {', '.join(BOLT_SCHEMES)}"
                )
            auth = (user, password) if user and password is not None else None
            try:
                driver = neo4j.GraphDatabase.driver(uri, auth=auth)
            except (ValueError, neo4j_errors.ConfigurationError) as e:
                raise ConfigurationError(f"bad Neo4j URI or settings {uri!r}: {e}") from e
        self._driver = driver

    def __repr__(self) -> str:
        return f"Neo4jGraph(uri={self.uri!r}, db_name={self.db_name!r})"

    def _session(self, write: bool = False) -> Any:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self.db_name, default_access_mode=mode, fetch_size=self.fetch_size)

    def _translate(self, error: Exception, cypher: str) -> Exception:
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
        cypher = cypher.strip().rstrip(";").strip()
        if not cypher:
            raise CypherSyntaxError("the query is empty", cypher)
        refuse_unsendable(cypher)
        if reads_server_files(cypher) and not allow_writes:  # EXPLAIN reports LOAD CSV as a read
            raise WriteQueryRefusedError("LOAD CSV reads files on the database server and is not allowed", cypher)
        try:
            with self._session() as session:
                summary = session.run(f"EXPLAIN {cypher}", params or {}).consume()
        except Exception as e:
            raise self._translate(e, cypher) from e
        if summary.query_type != "r" and not allow_writes:
            raise WriteQueryRefusedError(
                f"the query would change the graph (query type {summary.query_type!r}) "
                "and writes are not enabled",
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
        self.validate(cypher, params, allow_writes=allow_writes)
        started = time.perf_counter()
        rows: list[list[Any]] = []
        truncated = False
        try:
            with self._session(write=allow_writes) as session:
                result = session.run(neo4j.Query(cypher, timeout=timeout), params or {})
                columns = list(result.keys())
                for record in result:
                    if row_cap is not None and len(rows) >= row_cap:
                        truncated = True
                        break
                    rows.append([to_plain(v) for v in record.values()])
                result.consume()
        except Exception as e:
            raise self._translate(e, cypher) from e
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

    def _catalogue(self, procedure: str, column: str) -> list[str]:
        return sorted(r[0] for r in self.query(f"CALL {procedure}() YIELD {column} RETURN {column}", row_cap=None).rows)

    def labels(self) -> list[str]:
        return self._catalogue("db.labels", "label")

    def relationship_types(self) -> list[str]:
        return self._catalogue("db.relationshipTypes", "relationshipType")

    def schema(self, sample_size: int = 50) -> GraphSchema:
        return sample_schema(self, sample_size)

    def close(self) -> None:
        self._driver.close()
