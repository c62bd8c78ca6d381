"""Neo4j 5's `EXISTS { ... }` and `COUNT { ... }` subqueries, sent to FalkorDB as what they mean.

FalkorDB has neither subquery, and the public question sets (and models trained on them) write
both: 43 of the 767 movies gold queries failed on `EXISTS {}` alone. Two exact rewrites:

- `EXISTS { <one pattern> }` in a WHERE clause is the pattern predicate `(<pattern>)`, which
  FalkorDB takes, `NOT` and property maps included (`exists_as_patterns`).
- A subquery of one pattern with its own WHERE (`EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating >
  75 }`, a leading MATCH allowed) counts that pattern's matches: `COUNT { ... }` is the size of the
  pattern comprehension `[(m)<-[r:REVIEWED]-() WHERE r.rating > 75 | 1]`, `EXISTS { ... }` that
  size above 0 (`subqueries_as_comprehensions`). FalkorDB evaluates a pattern comprehension in a
  projection but not in a WHERE, so in a WHERE the comprehension is computed just before it,
  `WITH *, size([...]) > 0 AS __subquery_0 WHERE ... __subquery_0 ...`, which filters the same
  rows after a MATCH (not an OPTIONAL MATCH, whose WHERE decides what matches) or a WITH. A pattern
  comprehension written in a WHERE (`WHERE size([(p)-[:REVIEWED]->(m) | p]) > 2`) is moved the
  same way. Neo4j 4's `size(<pattern>)` is that comprehension's size, and its `exists(<pattern>)`
  in a WHERE the pattern predicate.

Anything else is left as written, so FalkorDB's own error still names it: a subquery of several
patterns (they must match together), with its own RETURN, WITH or CALL, in a query that returns
`*` (it would return the computed column too), or inside a list comprehension or a CALL body.
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import closing_bracket, code_depths, code_only

_EXISTS = re.compile(r"\bEXISTS\s*\{", re.IGNORECASE)
_CLAUSE = re.compile(  # not after a dot: `m.order` is a property
    r"(?<!\.)\b(WHERE|MATCH|WITH|RETURN|UNWIND|CALL|UNION|ORDER|CREATE|MERGE|SET|DELETE|REMOVE|FOREACH|LIMIT|SKIP)\b",
    re.IGNORECASE,
)
_SUBQUERY_WORDS = re.compile(r"\b(MATCH|WHERE|RETURN|WITH|CALL|UNION|OPTIONAL)\b", re.IGNORECASE)


def _one_pattern(body: str) -> bool:
    """Whether `body` (code only) is a single pattern: brackets around it, no clause, no comma at its
    own level."""
    text = body.strip()
    if not (text.startswith("(") and text.endswith(")")) or _SUBQUERY_WORDS.search(text):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            return False
        if ch == ")" and depth == 0 and text[i + 1 :].strip()[:1] not in ("-", "<", ""):
            return False  # another pattern written beside it (Neo4j 5's juxtaposed patterns)
    return True


def _in_where(code: str, depths: tuple[int, ...], at: int) -> bool:
    """Whether the clause around position `at` (at its bracket depth) is a WHERE."""
    level = depths[at]
    clauses = [m for m in _CLAUSE.finditer(code, 0, at) if depths[m.start()] == level]
    return bool(clauses) and clauses[-1].group(1).upper() == "WHERE"


def exists_as_patterns(cypher: str) -> str:
    """`cypher` with each `EXISTS { <one pattern> }` of a WHERE clause written as that pattern."""
    if "{" not in cypher or not _EXISTS.search(cypher):
        return cypher
    code, depths = code_only(cypher), code_depths(cypher)
    pieces, done = [], 0
    for found in _EXISTS.finditer(code):
        start, opening = found.start(), found.end() - 1
        if start < done:
            continue  # inside a subquery already written out
        closing = closing_bracket(code, depths, opening)
        if closing is None or not _one_pattern(code[opening + 1 : closing]) or not _in_where(code, depths, start):
            continue
        pieces += [cypher[done:start], "(", cypher[opening + 1 : closing].strip(), ")"]
        done = closing + 1
    return "".join(pieces) + cypher[done:] if pieces else cypher


_SUBQUERY = re.compile(r"\b(EXISTS|COUNT)\s*\{", re.IGNORECASE)
_LEADING_MATCH = re.compile(r"^\s*MATCH\b", re.IGNORECASE)
_OWN_WHERE = re.compile(r"\bWHERE\b", re.IGNORECASE)
_RETURNS_ALL = re.compile(r"\bRETURN\s+(DISTINCT\s+)?\*", re.IGNORECASE)
_OPTIONAL = re.compile(r"\bOPTIONAL\s+$", re.IGNORECASE)
_HOISTED = "__subquery_"
_HOISTED_NAME = re.compile(rf"\b{_HOISTED}\d+")
#: What every form rewritten here holds (a subquery's brace, a comprehension's bracket, Neo4j 4's
#: `size((a)-->(b))`, which may hold neither): a query without it is sent at once.
_ANY_FORM = re.compile(r"[{\[]|\b(size|exists)\s*\(", re.IGNORECASE)
_PATTERN_FUNCTION = re.compile(r"(?<![.\w])(size|exists)\s*\(", re.IGNORECASE)
_PATTERN_PREDICATE = re.compile(r"\)\s*<?-")
#: Clauses a pattern comprehension is evaluated in by FalkorDB, where a subquery is written in place.
_PROJECTIONS = ("RETURN", "WITH", "ORDER", "UNWIND", "SET")
MAX_REWRITES = 16  # subqueries in one query: past this, the query is sent as written


def subqueries_as_comprehensions(cypher: str) -> str:
    """`cypher` with each `EXISTS {}`/`COUNT {}` of one pattern (and its own WHERE) written as the
    pattern comprehension it counts, and pattern comprehensions moved out of WHERE clauses."""
    if not _ANY_FORM.search(cypher):
        return cypher
    hoisting = not _RETURNS_ALL.search(code_only(cypher))  # `RETURN *` would return the computed column
    for _ in range(MAX_REWRITES):
        rewritten = _rewrite_one(cypher, hoisting)
        if rewritten is None:
            return cypher
        cypher = rewritten
    return cypher


def _rewrite_one(cypher: str, hoisting: bool) -> str | None:
    code, depths = code_only(cypher), code_depths(cypher)
    for found in _PATTERN_FUNCTION.finditer(code):  # Neo4j 4's size(pattern) and exists(pattern)
        opening = found.end() - 1
        closing = closing_bracket(code, depths, opening)
        argument = code[opening + 1 : closing] if closing is not None else ""
        if closing is None or not _one_pattern(argument) or not _PATTERN_PREDICATE.search(argument):
            continue
        if not _binds_nothing(argument, code[: found.start()]):
            continue  # Neo4j refuses a pattern expression that introduces a variable: so does FalkorDB
        pattern = cypher[opening + 1 : closing].strip()
        if found.group(1).lower() == "size":
            return cypher[: opening + 1] + f"[{pattern} | 1]" + cypher[closing:]
        if _in_where(code, depths, found.start()):
            return cypher[: found.start()] + f"({pattern})" + cypher[closing + 1 :]
    for found in _SUBQUERY.finditer(code):
        opening = found.end() - 1
        closing = closing_bracket(code, depths, opening)
        if closing is None:
            continue
        comprehension = _comprehension(code, cypher, opening, closing)
        if comprehension is None:
            continue
        value = f"size({comprehension})" + (" > 0" if found.group(1).upper() == "EXISTS" else "")
        placed = _placed(cypher, code, depths, found.start(), closing + 1, value, hoisting=hoisting)
        if placed is not None:
            return placed
    for start, end in _pattern_comprehensions(code, depths):
        placed = _placed(cypher, code, depths, start, end, cypher[start:end], hoisting=hoisting, hoist_only=True)
        if placed is not None:
            return placed
    return None


def _comprehension(code: str, cypher: str, opening: int, closing: int) -> str | None:
    """`[<pattern> WHERE <condition> | 1]` for a subquery body of one pattern (its own WHERE and a
    leading MATCH allowed), or None."""
    body = code[opening + 1 : closing]
    lead = _LEADING_MATCH.match(body)
    start = opening + 1 + (lead.end() if lead else 0)
    body = code[start:closing]
    where = next((m for m in _OWN_WHERE.finditer(body) if _level(body, m.start()) == 0), None)
    pattern_end = start + (where.start() if where else len(body))
    if not _one_pattern(code[start:pattern_end]):
        return None
    pattern = cypher[start:pattern_end].strip()
    if where is None:
        return f"[{pattern} | 1]"
    condition = cypher[pattern_end + len(where.group()) : closing].strip()
    said = code[pattern_end + len(where.group()) : closing]
    if not condition or any(_level(said, m.start()) == 0 for m in _SUBQUERY_WORDS.finditer(said)):
        return None  # a subquery of its own (a WHERE inside any(...) is the condition's)
    if _PATTERN_PREDICATE.search(said):
        return None  # FalkorDB takes no pattern predicate inside a comprehension's WHERE
    return f"[{pattern} WHERE {condition} | 1]"


def _level(text: str, at: int) -> int:
    depth = 0
    for ch in text[:at]:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
    return depth


def _pattern_comprehensions(code: str, depths: tuple[int, ...]) -> list[tuple[int, int]]:
    """Spans of `[(a)-->(b) ... | x]`: a list that opens on a node and has a `|` at its own level."""
    found = []
    for i, ch in enumerate(code):
        if ch != "[" or not code[i + 1 :].lstrip().startswith("("):
            continue
        end = closing_bracket(code, depths, i)
        if end is not None and any(code[j] == "|" and depths[j] == depths[i] + 1 for j in range(i + 1, end)):
            found.append((i, end + 1))
    return found


def _placed(
    cypher: str,
    code: str,
    depths: tuple[int, ...],
    start: int,
    end: int,
    value: str,
    *,
    hoisting: bool,
    hoist_only: bool = False,
) -> str | None:
    """`cypher` with `cypher[start:end]` replaced by `value`: in place in a projection, or computed
    just before the top-level WHERE it stands in (`WITH *, value AS __subquery_n`); None when
    neither is exact."""
    clause = _enclosing_clause(code, depths, start)
    if clause is None:
        return None
    if clause.group(1).upper() in _PROJECTIONS and not hoist_only:
        return cypher[:start] + f"({value})" + cypher[end:]
    if clause.group(1).upper() != "WHERE":
        return None
    where = clause.start()
    before = [m for m in _CLAUSE.finditer(code, 0, where) if depths[m.start()] == 0]
    if depths[where] != 0 or not before or before[-1].group(1).upper() not in ("MATCH", "WITH"):
        return None
    if before[-1].group(1).upper() == "MATCH" and _OPTIONAL.search(code, 0, before[-1].start()):
        return None  # an OPTIONAL MATCH's WHERE decides what matches: moved after it, it would drop rows
    if before[-1].group(1).upper() == "WITH" and re.search(
        r"\b(ORDER|SKIP|LIMIT)\b", code[before[-1].end() : where], re.I
    ):
        return None
    if not hoisting or _bound_within(code, where, start, end):
        return None
    taken = set(_HOISTED_NAME.findall(code))
    name = next(f"{_HOISTED}{n}" for n in range(len(taken) + 1) if f"{_HOISTED}{n}" not in taken)
    return cypher[:where] + f"WITH *, {value} AS {name} " + cypher[where:start] + name + cypher[end:]


def _enclosing_clause(code: str, depths: tuple[int, ...], at: int) -> re.Match[str] | None:
    """The last clause word before `at` at its depth or shallower: the clause `at` stands in (a
    list comprehension's own WHERE, deeper than the query's, is found first and is not the query's)."""
    clauses = [m for m in _CLAUSE.finditer(code, 0, at) if depths[m.start()] <= depths[at]]
    return clauses[-1] if clauses else None


def neo4j_subqueries(cypher: str) -> str:
    """`cypher` with its `EXISTS {}` and `COUNT {}` subqueries in the forms FalkorDB runs (see above)."""
    return subqueries_as_comprehensions(exists_as_patterns(cypher))


_PATTERN_VARIABLE = re.compile(r"[(\[]\s*(\w+)")


def _binds_nothing(pattern: str, before: str) -> bool:
    """Whether every variable `pattern` names is bound before it (written in `before`, the code up
    to the expression): a pattern expression only tests variables it is given."""
    return all(re.search(rf"\b{re.escape(name)}\b", before) for name in _PATTERN_VARIABLE.findall(pattern))


#: A name in a variable's place: not a property, label or type (after `.` or `:`), not a map key
#: (`{key: ...}`: a name before `:` after `{` or `,`; `(m:Movie)` is the variable m).
_NAME = re.compile(r"(?<![.:\w$])([A-Za-z_]\w*)\b")
_MAP_KEY = re.compile(r"[{,]\s*$")
_KEYWORDS = frozenset(
    (
        *("WHERE", "AND", "OR", "XOR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "EXISTS", "COUNT", "MATCH"),
        *("OPTIONAL", "CASE", "WHEN", "THEN", "ELSE", "END", "STARTS", "ENDS", "WITH", "CONTAINS", "DISTINCT"),
        *("AS", "RETURN", "ALL", "ANY", "NONE", "SINGLE", "REDUCE", "SIZE"),
    )
)


def _names(code: str) -> set[str]:
    found = set()
    for m in _NAME.finditer(code):
        key = code[m.end() :].lstrip().startswith(":") and _MAP_KEY.search(code, 0, m.start())
        if not key and m.group(1).upper() not in _KEYWORDS:
            found.add(m.group(1))
    return found


def _bound_within(code: str, where: int, start: int, end: int) -> bool:
    """Whether the expression at `code[start:end]` names a variable bound inside the WHERE before it
    (a list comprehension's, a reduce's, a pattern comprehension's): moved before the WHERE, it would
    name nothing, and count over the whole graph. A name first written inside the expression is its
    own (a subquery's new variable); one written before the WHERE is the query's."""
    before, inside = _names(code[:where]), _names(code[where:start])
    return any(name in inside and name not in before for name in _names(code[start:end]))
