"""A biochatter subclass's own database (`_connect_db` / `_query_graph_database`) behind the
project's database protocol, so the agent's one Cypher tool runs on it as on any adapter.

No plan can be asked of such a database, so writes are refused from the query's text first
(`lexical_write`), before the hook ever sees the query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis.exceptions
from neo4j import exceptions as neo4j_errors

from reflexion_agents.nodes.graphdb.cypher_text import lexical_write, refuse_unsendable
from reflexion_agents.nodes.graphdb.values import to_plain
from reflexion_agents.schemas.errors import DatabaseUnavailableError, QueryError, WriteQueryRefusedError
from reflexion_agents.schemas.graphdb import QueryResult

#: What a user's own database client raises when it cannot reach the database at all.
_UNREACHABLE: tuple[type[BaseException], ...] = (
    OSError,
    neo4j_errors.ServiceUnavailable,
    neo4j_errors.SessionExpired,
    neo4j_errors.AuthError,
    redis.exceptions.ConnectionError,
)


def connect_hook(connect: Callable[[], Any]) -> None:
    """Call a subclass's `_connect_db`; a failure to connect is `DatabaseUnavailableError`."""
    try:
        connect()
    except DatabaseUnavailableError:
        raise
    except Exception as e:
        raise DatabaseUnavailableError(f"_connect_db failed: {type(e).__name__}: {e}") from e


def _rows_of(returned: Any) -> list[dict[str, Any]]:
    """The rows in what biochatter's `_query_graph_database` returns: a list whose first element is
    the list of row dicts (`[]` or `[[]]` for none); a bare list of row dicts is taken too."""
    if not returned:
        return []
    if isinstance(returned[0], dict):
        return list(returned)
    return list(returned[0] or [])


class HookDatabase:
    """`query` through the hooks; the rest of the protocol is what a hook-backed database can say."""

    dialect = "neo4j"  # biochatter's databases are Neo4j

    def __init__(self, connect: Callable[[], Any], query_graph_database: Callable[[str], Any]) -> None:
        self._connect, self._query = connect, query_graph_database

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        row_cap: int | None = None,
        allow_writes: bool = False,
    ) -> QueryResult:
        """Run `cypher` through the hook (read-only unless `allow_writes`); the hook's own failure
        on the query is a `QueryError`, an unreachable database `DatabaseUnavailableError`."""
        refuse_unsendable(cypher)
        writes = None if allow_writes else lexical_write(cypher)
        if writes is not None:
            raise WriteQueryRefusedError(
                f"the query would change the graph ({writes}) and writes are not enabled", cypher
            )
        connect_hook(self._connect)
        try:
            records = _rows_of(self._query(cypher))
        except _UNREACHABLE as e:
            raise DatabaseUnavailableError(f"the database is unreachable: {type(e).__name__}: {e}") from e
        except Exception as e:
            raise QueryError(f"{type(e).__name__}: {e}", cypher) from e
        if not all(isinstance(r, dict) for r in records):
            raise QueryError(
                f"_query_graph_database must return [rows] with rows as dicts, got {type(records[0]).__name__} rows",
                cypher,
            )
        columns = list(dict.fromkeys(k for r in records for k in r))
        kept = records[:row_cap] if row_cap is not None else records
        return QueryResult(
            query=cypher,
            columns=columns,
            rows=[[to_plain(r.get(c)) for c in columns] for r in kept],
            truncated=row_cap is not None and len(records) > row_cap,
        )
