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

from nodes.graphdb.cypher_text import code_depths, code_only

_ID_CALL = re.compile(r"(?<![\w.$`])id\s*\(", re.IGNORECASE)
_ORDER_AFTER = re.compile(r"\s*(?:<=|>=|<(?![>-])|>)")  # not `<>`, not an arrow `<-`
_ORDER_BEFORE = re.compile(r"(?:<=|>=|<|(?<![<-])>)\s*$")  # not `<>`, not an arrow `->`


def guard_id_ranges(cypher: str) -> str:
    """`cypher` with every `id(...)` compared by `<`, `<=`, `>` or `>=` written as `(id(...) + 0)`;
    text in strings and comments is never touched."""
    code = code_only(cypher)
    if "id" not in code.lower():
        return cypher
    depths = code_depths(cypher)
    spans: list[tuple[int, int]] = []
    for call in _ID_CALL.finditer(code):
        opening = call.end() - 1
        after = range(opening + 1, len(code))
        closing = next((j for j in after if code[j] == ")" and depths[j] == depths[opening]), -1)
        if closing < 0:
            continue  # unbalanced: the server's parser will say so
        nested = bool(spans) and call.start() < spans[-1][1]  # inside one already guarded
        if not nested and (_ORDER_AFTER.match(code, closing + 1) or _ORDER_BEFORE.search(code, 0, call.start())):
            spans.append((call.start(), closing + 1))
    for start, end in reversed(spans):
        cypher = f"{cypher[:start]}({cypher[start:end]} + 0){cypher[end:]}"
    return cypher
