"""Neo4j 5's `EXISTS { pattern }` in a WHERE clause, sent to FalkorDB as the pattern predicate it means.

FalkorDB has no `EXISTS {}` subquery, and the public question sets (and models trained on them)
write it: 43 of the 767 movies gold queries failed on it alone. Where the braces hold one pattern
and nothing else, `WHERE ... EXISTS { (p)-[:DIRECTED]->(:Movie) }` means exactly what the pattern
predicate `WHERE ... (p)-[:DIRECTED]->(:Movie)` means (true when the pattern has a match), which
FalkorDB takes, `NOT` and property maps included. Anything else is left as written, so FalkorDB's own
error still names it: a subquery with its own `MATCH`, `WHERE` or `RETURN`, several patterns (they
must match together, which `AND` of predicates does not say), `EXISTS {}` outside a WHERE clause,
and `COUNT {}`.
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import code_depths, code_only

_EXISTS = re.compile(r"\bEXISTS\s*\{", re.IGNORECASE)
_CLAUSE = re.compile(
    r"\b(WHERE|MATCH|WITH|RETURN|UNWIND|CALL|UNION|ORDER|CREATE|MERGE|SET|DELETE|REMOVE|FOREACH|LIMIT|SKIP)\b",
    re.IGNORECASE,
)
_SUBQUERY_WORDS = re.compile(r"\b(MATCH|WHERE|RETURN|WITH|CALL|UNION|OPTIONAL)\b", re.IGNORECASE)


def _closing_brace(code: str, opening: int) -> int | None:
    """Where the brace at `opening` closes, in code with its strings blanked; None if it never does."""
    depth = 0
    for i in range(opening, len(code)):
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return None


def _one_pattern(body: str) -> bool:
    """Whether `body` (code only) is a single pattern: brackets around it, no clause, no comma at its
    own level."""
    text = body.strip()
    if not (text.startswith("(") and text.endswith(")")) or _SUBQUERY_WORDS.search(text):
        return False
    depth = 0
    for ch in text:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            return False
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
        closing = _closing_brace(code, opening)
        if closing is None or not _one_pattern(code[opening + 1 : closing]) or not _in_where(code, depths, start):
            continue
        pieces += [cypher[done:start], "(", cypher[opening + 1 : closing].strip(), ")"]
        done = closing + 1
    return "".join(pieces) + cypher[done:] if pieces else cypher
