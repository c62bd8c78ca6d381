"""The Cypher tool: run one model-written query and describe the outcome for the model.

Database errors are returned to the model in the database's own words so the
revise step can fix them; only an unreachable database is raised.

Rows are shown as JSON arrays under a line naming the columns (a JSON array too: a column may be
named `coalesce(p.born, 0)`), as a table is read and as LangChain's graph QA chains show them: keyed
objects repeated every column name in every row, a third of a two-column result's tokens, and a
result with two columns of one name lost one.
"""

from __future__ import annotations

import json

from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.schemas.errors import QueryError, QueryTimeoutError, WriteQueryRefusedError
from reflexion_agents.schemas.graphdb import QueryResult
from reflexion_agents.schemas.reflexion import ToolOutcome
from reflexion_agents.schemas.settings import KG_QUERY_DEFAULTS

DEFAULT_ROWS_IN_MESSAGE = KG_QUERY_DEFAULTS.rows_in_message  # the setting's default (`KGQuerySettings`)


def describe_result(result: QueryResult, rows_in_message: int = DEFAULT_ROWS_IN_MESSAGE) -> str:
    """The rows as the model sees them: a count, the columns, and up to `rows_in_message` rows, one JSON
    array a line, its values in the columns' order."""
    count = len(result.rows)
    if count == 0:
        return f"Query: {result.query}\nResult: no rows."
    shown = result.rows[:rows_in_message]
    more = " or more (the result was cut at the row cap)" if result.truncated else ""
    columns = json.dumps(result.columns, ensure_ascii=False)
    header = f"Query: {result.query}\nResult: {count}{more} row(s), columns: {columns}."
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
        step=0,
        action=query,
        executed=True,
        content=f"Query: {query}\n{_error_text(error, timeout)}",
        error=error.message,
        error_type=type(error).__name__,
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
