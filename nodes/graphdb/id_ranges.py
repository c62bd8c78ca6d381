"""Keep FalkorDB from seeking node ids by a range: `id(n) < 0` never returns.

FalkorDB plans `WHERE id(n) < x` (and `<=`, `>`, `>=`, either side) as a `NodeByIdSeek` over an id
range. With an upper bound below 1 the range wraps around (ids are unsigned there) and the seek walks
the whole id space: the query ignores its timeout, and the server thread it runs on stays busy until
the server stops, so a few such queries, which any model may write ("ids below zero" is a plausible
guard), tie up the embedded server. Negative bounds also give wrong rows (`id(n) <= -1` returns every
node). The value can come at run time (`WITH 0 AS z ... id(n) < z`), so no check of the query text
can tell which ranges are safe.

`guard_id_ranges` writes each `id(...)` that is compared by order as `(id(...) + 0)`: the same value,
which the planner does not turn into a seek, so the comparison is an ordinary filter. Equality and
`IN` keep their seek, which is correct. Only the text sent to the server changes.
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import LITERAL, code_depths, code_only

#: `id(` in code, or `` `id`( ``: FalkorDB takes a function name in backticks too.
_ID_CALL = re.compile(r"(?<![\w.$`])(?:id|`id`)\s*\(", re.IGNORECASE)


def guard_id_ranges(cypher: str) -> str:
    """`cypher` with every `id(...)` compared by `<`, `<=`, `>` or `>=` (also inside brackets that hold
    only the call, as in `(id(n)) < 0`) written as `(id(...) + 0)`; text in strings and comments is
    never touched."""
    code = code_only(cypher)
    if "id" not in code.lower() and "`id`" not in cypher.lower():
        return cypher
    depths = code_depths(cypher)
    spans: list[tuple[int, int]] = []
    for call in _ID_CALL.finditer(_with_backtick_names(cypher, code, depths)):
        opening = call.end() - 1
        after = range(opening + 1, len(code))
        closing = next((j for j in after if code[j] == ")" and depths[j] == depths[opening]), -1)
        if closing < 0:
            continue  # unbalanced: the server's parser will say so
        nested = bool(spans) and call.start() < spans[-1][1]  # inside one already guarded
        if not nested and _ordered(code, depths, call.start(), closing + 1):
            spans.append((call.start(), closing + 1))
    for start, end in reversed(spans):
        cypher = f"{cypher[:start]}({cypher[start:end]} + 0){cypher[end:]}"
    return cypher


def _with_backtick_names(cypher: str, code: str, depths: tuple[int, ...]) -> str:
    """`code`, with each backtick name that starts in code (not inside a string) shown as written, so
    `` `id`( `` is found; everything else inside strings and comments stays blank."""
    if "`" not in cypher:
        return code
    shown = list(code)
    i = 0
    while i < len(cypher):
        if cypher[i] == "`" and depths[i] == LITERAL and (i == 0 or depths[i - 1] != LITERAL):
            end = cypher.find("`", i + 1)
            end = len(cypher) - 1 if end < 0 else end
            shown[i : end + 1] = cypher[i : end + 1]
            i = end + 1
        else:
            i += 1
    return "".join(shown)


def _ordered(code: str, depths: tuple[int, ...], start: int, end: int) -> bool:
    """Whether the call at `code[start:end]` (or the brackets that hold only it) is compared by order.
    Each look steps over whitespace only, so a query's calls cost time in proportion to its length."""
    while True:
        before, after = _previous(code, start), _next(code, end)
        wrapped = before >= 0 and after < len(code) and code[before] == "(" and code[after] == ")"
        if not (wrapped and depths[before] == depths[after]):
            break
        start, end = before, after + 1
    if after < len(code) and (code[after] == ">" or (code[after] == "<" and code[after + 1 : after + 2] != ">")):
        return True  # `id(n) < 0`, `<= `, `<-1` (FalkorDB reads `<-` after a value as `< -`), `>`, `>=`
    if before < 0:
        return False
    if code[before] == "<" or code[before - 1 : before + 1] in ("<=", ">="):
        return True
    return code[before] == ">" and code[before - 1 : before] not in ("<", "-")  # not `<>`, not an arrow


def _previous(code: str, index: int) -> int:
    """The index of the last character before `index` that is not whitespace (-1 if none)."""
    index -= 1
    while index >= 0 and code[index].isspace():
        index -= 1
    return index


def _next(code: str, index: int) -> int:
    """The index of the first character from `index` on that is not whitespace (len(code) if none)."""
    while index < len(code) and code[index].isspace():
        index += 1
    return index
