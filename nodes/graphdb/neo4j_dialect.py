"""Queries in Neo4j's dialect, sent to FalkorDB as what they mean where an exact rewrite exists.

Models and public question sets write Neo4j's Cypher. Each rewrite here gives FalkorDB a query that
answers what the written one answers on Neo4j; anything else is sent as written, so FalkorDB's
own error still names what it lacks (the prompt says what that is):

- `EXISTS {}` and `COUNT {}` subqueries, Neo4j 4's pattern expressions (`nodes.graphdb.exists_patterns`);
- `datetime()`, `datetime('2019-03-07T09:30:00')` (a text without an offset or a zone) and
  `datetime({year: 2019, ...})` (a map without a timezone) are FalkorDB's `localdatetime`, which
  holds the instant in UTC, as Neo4j's `datetime` does when none is given (and as the loader stores
  a script's datetimes, `nodes.graphdb.row_functions`): the same instant, compared and ordered the
  same, though FalkorDB writes it without Neo4j's `Z` and has no `epochMillis` or `timezone`
  component. A text with an offset is left: FalkorDB's `localdatetime` would drop it and name
  another instant.

`duration.between` has no exact rewrite (FalkorDB subtracts no dates) and is left to FalkorDB's error.
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import closing_bracket, code_depths, code_only
from reflexion_agents.nodes.graphdb.exists_patterns import neo4j_subqueries

_DATETIME = re.compile(r"(?<![.\w])datetime(\s*\()", re.IGNORECASE)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_OFFSET = re.compile(r"(Z|[+-]\d{2}(:?\d{2})?|\[[^\]]*\])$", re.IGNORECASE)
_MAP_KEY = re.compile(r"[{,]\s*`?(\w+)`?\s*:")
_LOCAL_KEYS = {"year", "month", "day", "week", "dayofweek", "quarter", "dayofquarter", "ordinalday"} | {
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "nanosecond",
}


def falkordb_dialect(cypher: str) -> str:
    """`cypher` with every exact rewrite above applied."""
    return datetimes_as_local(neo4j_subqueries(cypher))


def datetimes_as_local(cypher: str) -> str:
    """`cypher` with each `datetime(...)` that names a UTC instant written as FalkorDB's `localdatetime`."""
    if "datetime" not in cypher.lower():
        return cypher
    code, depths = code_only(cypher), code_depths(cypher)
    for found in reversed(list(_DATETIME.finditer(code))):
        opening = found.end() - 1
        closing = closing_bracket(code, depths, opening)
        if closing is not None and _utc(cypher[opening + 1 : closing].strip()):
            cypher = cypher[: found.start()] + "localdatetime" + cypher[found.start() + len("datetime") :]
    return cypher


def _utc(argument: str) -> bool:
    """Whether `datetime(argument)` is an instant in UTC that `localdatetime(argument)` reads the same."""
    if not argument:
        return True  # now
    if _STRING.fullmatch(argument):
        text = argument[1:-1].strip()
        clock = re.split(r"[T ]", text, maxsplit=1)[1] if re.search(r"[T ]", text) else ""
        return _OFFSET.search(clock) is None  # a date alone has none (its "-07" is the day)
    if argument.startswith("{") and argument.endswith("}"):
        keys = {k.lower() for k in _MAP_KEY.findall(code_only(argument))}
        return bool(keys) and keys <= _LOCAL_KEYS
    return False
