"""The Cypher tool: run one model-written query and describe the outcome for the model.

Database errors are returned to the model in the database's own words so the
revise step can fix them; only an unreachable database is raised.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import redis.exceptions
from neo4j import exceptions as neo4j_errors

from nodes.graphdb.cypher_text import lexical_write
from nodes.graphdb.protocol import GraphDatabase
from nodes.graphdb.values import to_plain
from schemas.errors import DatabaseUnavailableError, QueryError, QueryTimeoutError, WriteQueryRefusedError
from schemas.graphdb import QueryResult
from schemas.reflexion import ToolOutcome

DEFAULT_ROWS_IN_MESSAGE = 20


def describe_result(result: QueryResult, rows_in_message: int = DEFAULT_ROWS_IN_MESSAGE) -> str:
    """The rows as the model sees them: a count, the columns, and up to `rows_in_message` records."""
    count = len(result.rows)
    if count == 0:
        return f"Query: {result.query}\nResult: no rows."
    shown = result.records()[:rows_in_message]
    more = " or more (the result was cut at the row cap)" if result.truncated else ""
    header = f"Query: {result.query}\nResult: {count}{more} row(s), columns: {', '.join(result.columns)}."
    if result.is_empty:
        header += " Every value is null or empty, so this answers nothing."
    if count > len(shown):
        header += f" Showing the first {len(shown)}."
    body = "\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in shown)
    return f"{header}\n{body}"


def _error_text(error: QueryError, timeout: float | None) -> str:
    if isinstance(error, WriteQueryRefusedError):
        return f"Refused, not run: {error.message}. Only read queries are allowed."
    if isinstance(error, QueryTimeoutError):
        return (
            f"The query ran past its timeout of {timeout} s and was stopped ({error.message}). Write a cheaper "
            "query: anchor on specific property values, bound variable-length paths, add LIMIT."
        )
    return f"The database rejected the query ({type(error).__name__}): {error.message}"


def run_cypher(
    db: GraphDatabase,
    query: str,
    *,
    timeout: float | None,
    row_cap: int | None,
    rows_in_message: int = DEFAULT_ROWS_IN_MESSAGE,
    allow_writes: bool = False,
) -> ToolOutcome:
    """Run `query` read-only (unless `allow_writes`) and return its outcome; raises only if the database is down."""
    try:
        result = db.query(query, timeout=timeout, row_cap=row_cap, allow_writes=allow_writes)
    except QueryError as e:  # an unreachable database is not a QueryError: it propagates
        return _error_outcome(query, e, timeout)
    return _result_outcome(query, result, rows_in_message)


def _error_outcome(query: str, error: QueryError, timeout: float | None) -> ToolOutcome:
    return ToolOutcome(
        step=0, action=query, executed=True, content=f"Query: {query}\n{_error_text(error, timeout)}",
        error=error.message, error_type=type(error).__name__,
    )


def _result_outcome(query: str, result: QueryResult, rows_in_message: int) -> ToolOutcome:
    return ToolOutcome(
        step=0,
        action=query,
        executed=True,
        non_empty=not result.is_empty,
        content=describe_result(result, rows_in_message),
        columns=result.columns,
        rows=result.rows,
        truncated=result.truncated,
    )


def _rows_of(returned: Any) -> list[dict[str, Any]]:
    """The rows in what biochatter's `_query_graph_database` returns: a list whose first element is
    the list of row dicts (`[]` or `[[]]` for none)."""
    if not returned:
        return []
    first = returned[0]
    if isinstance(first, dict):  # a bare list of rows
        return list(returned)
    return list(first or [])


def _hook_result(query: str, returned: Any, row_cap: int | None) -> QueryResult:
    records = _rows_of(returned)
    if not all(isinstance(r, dict) for r in records):
        raise QueryError(f"_query_graph_database must return [rows] with rows as dicts, got {type(records[0]).__name__} rows", query)
    columns = list(dict.fromkeys(k for r in records for k in r))
    truncated = row_cap is not None and len(records) > row_cap
    kept = records[:row_cap] if row_cap is not None else records
    rows = [[to_plain(r.get(c)) for c in columns] for r in kept]
    return QueryResult(query=query, columns=columns, rows=rows, truncated=truncated)


#: What a user's own database client raises when it cannot reach the database at all.
_UNREACHABLE: tuple[type[BaseException], ...] = (
    OSError, neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, neo4j_errors.AuthError,
    redis.exceptions.ConnectionError,
)


def connect_hook(connect: Callable[[], Any]) -> None:
    """Call a subclass's `_connect_db`; a failure to connect is `DatabaseUnavailableError`."""
    try:
        connect()
    except DatabaseUnavailableError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever the user's client raises when it cannot connect
        raise DatabaseUnavailableError(f"_connect_db failed: {type(e).__name__}: {e}") from e


def run_query_hook(
    connect: Callable[[], Any],
    query_graph_database: Callable[[str], Any],
    query: str,
    *,
    timeout: float | None,
    row_cap: int | None,
    rows_in_message: int = DEFAULT_ROWS_IN_MESSAGE,
    allow_writes: bool = False,
) -> ToolOutcome:
    """`run_cypher` for a subclass's own database (biochatter's `_connect_db` /
    `_query_graph_database` hooks). Writes are refused from the query text before the hook sees
    the query, as no plan can be asked for; an exception from the hook is the query's error,
    except an unreachable database, which propagates as with the agent's own database."""
    try:
        writes = None if allow_writes else lexical_write(query)
        if writes is not None:
            raise WriteQueryRefusedError(f"the query would change the graph ({writes}) and writes are not enabled", query)
        connect_hook(connect)
        result = _hook_result(query, query_graph_database(query), row_cap)
    except DatabaseUnavailableError:
        raise
    except _UNREACHABLE as e:
        raise DatabaseUnavailableError(f"the database is unreachable: {type(e).__name__}: {e}") from e
    except QueryError as e:
        return _error_outcome(query, e, timeout)
    except Exception as e:  # noqa: BLE001 - the user's hook failed on this query: the model is told why
        return _error_outcome(query, QueryError(f"{type(e).__name__}: {e}", query), timeout)
    return _result_outcome(query, result, rows_in_message)
