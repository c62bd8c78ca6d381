"""The gold queries' own results on the chosen database: the reference each answer is scored
against, and the list of gold queries the backend cannot run (reported, never scored)."""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from reflexion_agents.nodes.evaluation.dataset import EvalItem
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.schemas.errors import QueryError

#: Gold queries in flight at once: the client reads one result while the server runs the next (one at
#: a time, the two took turns: 1.1 s for the 767 movies questions, about half of it waiting).
GOLD_THREADS = 4
GOLD_WINDOW = 64  # gold queries sent before the first of them is stored: results held at most


@dataclass
class GoldResult:
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    error: str | None = None  # why the backend could not run it; such items are excluded
    reason: str | None = None  # the error's kind, to group the excluded items
    truncated: bool = False


# (reason, pattern in the query) checked in order; the first match names the failure.
REASONS = [
    ("EXISTS {} / COUNT {} subquery", re.compile(r"\b(EXISTS|COUNT)\s*\{", re.I)),
    ("APOC procedure or function", re.compile(r"\bapoc\.", re.I)),
    (
        "temporal function (datetime, duration, date arithmetic)",
        re.compile(r"\b(datetime|duration|date|localdatetime|time)\s*[.(]", re.I),
    ),
    ("=~ regular expression", re.compile(r"=~")),
    ("shortestPath / allShortestPaths in MATCH", re.compile(r"\b(all)?shortestPath\s*\(", re.I)),
    ("label expression (:A|B, :!A, :%)", re.compile(r":\s*!?\w+\s*\||:\s*!\w|:%")),
    ("CALL {} subquery", re.compile(r"\bCALL\s*\{", re.I)),
    (
        "SQL-style or scalar subquery (SELECT ... FROM, GROUP BY, = (MATCH ...)): not Cypher",
        re.compile(r"\bSELECT\b|\bGROUP\s+BY\b|=\s*\(\s*MATCH", re.I),
    ),
    ("'' quote escape inside a string literal", re.compile(r"\w''\w")),
]
PATTERN_AS_VALUE = "pattern expression used as a value (size((a)-->()), pattern comprehension)"
_ALIAS = re.compile(r"(?:filtered alias '(.*)'|value with alias (.*) within)")
_PATTERN = re.compile(r"\)\s*<?-|-\s*>?\s*\(|\[\s*\(")


def reason_for(query: str, error: QueryError) -> str:
    """Why the backend refused a gold query, named by the construct responsible where one is
    recognised (FalkorDB lacks several Neo4j features), else by the error itself."""
    for reason, pattern in REASONS:
        if pattern.search(query):
            return reason
    alias = _ALIAS.search(error.message)
    if alias:
        if _PATTERN.search(alias.group(1) or alias.group(2)):
            return PATTERN_AS_VALUE
        return "a value FalkorDB cannot filter on here (a list or aggregate filtered after WITH)"
    if error.message.startswith("ORDER BY cannot reference variables not projected"):
        return "ORDER BY on a variable not projected after aggregation"
    return f"{type(error).__name__}: {re.sub(r'line: .*', '', error.message)[:70]}"


def run_gold(
    db: GraphDatabase,
    items: list[EvalItem],
    *,
    timeout: float,
    row_cap: int,
    into: MutableMapping[int, GoldResult] | None = None,
) -> MutableMapping[int, GoldResult]:
    """Each item's gold result, read-only, in `into` (a new dict by default; a `GoldStore` keeps
    them on disk); a gold result larger than `row_cap` is excluded too, since a capped answer could
    not be compared with it. `GOLD_THREADS` run at once, stored in the items' order from this thread."""
    results: MutableMapping[int, GoldResult] = {} if into is None else into
    with ThreadPoolExecutor(GOLD_THREADS, thread_name_prefix="gold") as pool:
        for start in range(0, len(items), GOLD_WINDOW):
            window = items[start : start + GOLD_WINDOW]
            for item, gold in zip(window, pool.map(partial(_gold_of, db, timeout, row_cap), window), strict=True):
                results[item.index] = gold
    return results


def _gold_of(db: GraphDatabase, timeout: float, row_cap: int, item: EvalItem) -> GoldResult:
    try:
        result = db.query(item.cypher, timeout=timeout, row_cap=row_cap)
    except QueryError as e:
        return GoldResult(error=f"{type(e).__name__}: {e.message}"[:300], reason=reason_for(item.cypher, e))
    gold = GoldResult(result.columns, [list(r) for r in result.rows], truncated=result.truncated)
    if result.truncated:
        gold.error = gold.reason = f"the gold result has more than {row_cap} rows"
    return gold
