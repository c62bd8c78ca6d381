"""How deeply a query nests expressions, as FalkorDB's parser recurses into them.

The parser's time grows about 1.8-fold with each level, and it is the same recursion whatever
opens the level: a bracket, a CASE, or a prefix operator (`NOT`, unary `-` or `+`). Measured on
GRAPH.EXPLAIN alone: 18 brackets 0.6 s, 20 NOTs 1 s, 20 CASEs 2.8 s, 24 NOTs past 10 s, and 12
brackets holding 12 NOTs 18 s, all while one of the server's threads does nothing else and no
query timeout applies (it starts when the query runs). Counting only brackets let `NOT NOT ...`
through, so the depth counted here is brackets + open CASEs + the prefix operators in a row.
Binary operators do not nest this way (500 `+` in a row compile in 10 ms).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[()\[\]{}]|[A-Za-z_$][\w$]*|\d[\w.]*|[-+]|\S")
# Words after which a `-` or `+` starts an operand (is unary), as after an operator or a comma.
_LEADING = frozenset(
    {
        "RETURN",
        "WITH",
        "WHERE",
        "AND",
        "OR",
        "XOR",
        "NOT",
        "WHEN",
        "THEN",
        "ELSE",
        "IN",
        "IS",
        "UNWIND",
        "SET",
        "BY",
        "SKIP",
        "LIMIT",
        "CONTAINS",
        "STARTS",
        "ENDS",
        "CASE",
    }
)


def expression_depth(code: str) -> int:
    """The deepest nesting in `code` (a query with its strings and comments blanked out)."""
    brackets = cases = prefixes = deepest = 0
    after_operand = False
    for match in _TOKEN.finditer(code):
        token = match.group()
        word = token.upper()
        if token in "([{":
            brackets += 1
            after_operand = False
        elif token in ")]}":
            brackets = max(0, brackets - 1)
            prefixes, after_operand = 0, True
        elif word == "CASE":
            cases += 1
            prefixes, after_operand = 0, False
        elif word == "END":
            cases = max(0, cases - 1)
            prefixes, after_operand = 0, True
        elif word == "NOT" or (token in "-+" and not after_operand):
            prefixes += 1
            after_operand = False
        elif token[0].isalnum() or token[0] in "_$":
            if word in _LEADING:
                after_operand = False
            else:
                prefixes, after_operand = 0, True
        else:
            after_operand = False
        deepest = max(deepest, brackets + cases + prefixes)
    return deepest
