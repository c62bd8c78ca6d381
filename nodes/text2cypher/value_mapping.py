"""Map literal values in a generated query to values the database really stores.

"sci-fi" where the graph stores "Sci-Fi", or a misspelt name, makes a correct query
return nothing. Each string literal compared with a node property (`{name: 'x'}`,
`n.name = 'x'`, `n.name IN ['x', 'y']`) is looked up; one that matches no stored
value is replaced by the stored value it unmistakably means, and the mapping is
recorded so the model (and the result) says so.

Mapping must never invent: a question about a record that does not exist must not
get another record's data. So a literal that matches a stored value ignoring case
maps to that value only; a literal that looks like an identifier (it has a digit,
'@', '/' or ':', or it is an upper-case code) is otherwise never rewritten; a
match ignoring punctuation and spacing maps to that value only; and a fuzzy match
is for free-text names alone, never onto a stored identifier: the same words,
each at most one typo away of the kinds that do not make another name (two
neighbouring letters swapped, a letter dropped or added inside a word of four
letters or more, never a letter replaced or one at either end), and only when
exactly one stored value is that close. So "Keanu Reves" is Keanu Reeves, but
"Joan Cusack" is not John Cusack and "Paul Smith" is not Paula Smith.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nodes.graphdb.cypher_text import quote_name
from nodes.graphdb.protocol import GraphDatabase
from nodes.models.wire import LONE_SURROGATE
from schemas.errors import GraphDatabaseError
from schemas.text2cypher import ValueMapping

MAX_DISTINCT_VALUES = 5000
MIN_FUZZY_WORD = 4
MAX_TYPOS = 2
_CODE = re.compile(r"[A-Z][A-Z_-]+")

_STRING = r"(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
_NODE = re.compile(r"\(\s*(\w+)?\s*:\s*`?(\w+)`?\s*(\{[^}]*\})?")
_MAP_ENTRY = re.compile(rf"(\w+)\s*:\s*({_STRING})")
_EQUALS = re.compile(rf"\b(\w+)\.(\w+)\s*=\s*({_STRING})|({_STRING})\s*=\s*(\w+)\.(\w+)\b")
_IN_LIST = re.compile(rf"\b(\w+)\.(\w+)\s+IN\s*\[((?:\s*{_STRING}\s*,?)+)\]", re.IGNORECASE)


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


def _quote(value: str, like: str) -> str:
    quote = like[0]
    return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


def literals_in(cypher: str) -> list[tuple[str, str, str, int]]:
    """(label, property, quoted literal, where it starts) for each string compared with a node property."""
    labels: dict[str, str] = {}
    found: list[tuple[str, str, str, int]] = []
    for node in _NODE.finditer(cypher):
        var, label = node.group(1), node.group(2)
        if var:
            labels.setdefault(var, label)
        if node.group(3):
            found += [
                (label, e.group(1), e.group(2), node.start(3) + e.start(2)) for e in _MAP_ENTRY.finditer(node.group(3))
            ]
    for m in _EQUALS.finditer(cypher):
        var, prop, at = (m.group(1), m.group(2), 3) if m.group(1) else (m.group(5), m.group(6), 4)
        if var in labels:
            found.append((labels[var], prop, m.group(at), m.start(at)))
    for m in _IN_LIST.finditer(cypher):
        if m.group(1) in labels:
            found += [
                (labels[m.group(1)], m.group(2), item.group(0), m.start(3) + item.start())
                for item in re.finditer(_STRING, m.group(3))
            ]
    return sorted(set(found), key=lambda item: item[3])


def _squash(text: str) -> str:
    """The text without case, spaces and punctuation (letters of every script kept)."""
    return re.sub(r"[\W_]+", "", text.casefold())


def looks_like_identifier(text: str) -> bool:
    """An ID, number, code or address ('10248', 'A-12', 'LARSA', 'bob@acme.com'): a near miss is
    another record, not a typo."""
    return any(ch.isdigit() or ch in "@/:" for ch in text) or bool(_CODE.fullmatch(text.strip()))


def one_typo(word: str, target: str) -> bool:
    """`word` is `target` with one typo of the kinds that do not make another name: two neighbouring
    letters swapped, or a letter dropped or added inside the word. Never a letter replaced (Joan,
    John), and never at either end (Paul, Paula; Hank, Hanks)."""
    if len(word) == len(target):
        diffs = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        return (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and diffs[0] > 0
            and word[diffs[0]] == target[diffs[1]]
            and word[diffs[1]] == target[diffs[0]]
        )
    short, long = sorted((word, target), key=len)
    if len(long) - len(short) != 1:
        return False
    return any(long[:i] + long[i + 1 :] == short for i in range(1, len(long) - 1))


def name_typos(given: str, stored: str) -> int | None:
    """How many typos turn the name `given` into `stored`, word by word; None if they are not the
    same name (another word count, a short word changed, a change `one_typo` does not allow)."""
    words, targets = given.casefold().split(), stored.casefold().split()
    if len(words) != len(targets):
        return None
    total = 0
    for word, target in zip(words, targets, strict=True):
        if word == target:
            continue
        if min(len(word), len(target)) < MIN_FUZZY_WORD or not one_typo(word, target):
            return None
        total += 1
    return total if total <= MAX_TYPOS else None


def _unique(values: list[str]) -> str | None:
    return values[0] if len(set(values)) == 1 else None


def closest_value(given: str, stored: list[str]) -> str | None:
    """The stored value `given` unmistakably means, or None (see the module's rules)."""
    same = [value for value in stored if value.casefold() == given.casefold()]
    if same:
        return _unique(same)
    if looks_like_identifier(given):
        return None
    squashed = _squash(given)
    same = [value for value in stored if squashed and _squash(value) == squashed and not looks_like_identifier(value)]
    if same:
        return _unique(same)
    scored = [
        (d, value)
        for value in stored
        if not looks_like_identifier(value) and (d := name_typos(given, value)) is not None
    ]
    if not scored:
        return None
    best = min(d for d, _ in scored)
    return _unique([value for d, value in scored if d == best])


class ValueMapper:
    """Looks literals up in the database; distinct values of a property are read once and cached."""

    def __init__(self, db: GraphDatabase, *, enabled: bool = True) -> None:
        self.db, self.enabled = db, enabled
        self._values: dict[tuple[str, str], list[str]] = {}
        # Decisions per (label, property, literal): a correction usually repeats the same literals.
        self._decided: dict[tuple[str, str, str], str | None] = {}

    def _exists(self, label: str, prop: str, value: str) -> bool:
        cypher = f"MATCH (n:{quote_name(label)}) WHERE n.{quote_name(prop)} = $value RETURN count(n) AS found"
        return bool(self.db.query(cypher, {"value": value}, row_cap=1).rows[0][0])

    def _stored(self, label: str, prop: str) -> list[str]:
        key = (label, prop)
        if key not in self._values:
            cypher = (
                f"MATCH (n:{quote_name(label)}) WHERE n.{quote_name(prop)} IS NOT NULL "
                f"RETURN DISTINCT n.{quote_name(prop)} AS value LIMIT {MAX_DISTINCT_VALUES}"
            )
            rows = self.db.query(cypher, row_cap=MAX_DISTINCT_VALUES).rows
            self._values[key] = [row[0] for row in rows if isinstance(row[0], str)]
        return self._values[key]

    def _stored_value_for(self, label: str, prop: str, given: str) -> str | None:
        """The stored value `given` stands for, if it is not stored itself; None to leave it. A literal
        no client can send (a lone surrogate) is not looked up: the query's own run refuses it, saying why."""
        if LONE_SURROGATE.search(given):
            return None
        key = (label, prop, given)
        if key not in self._decided:
            try:
                mapped = None if self._exists(label, prop, given) else closest_value(given, self._stored(label, prop))
            except GraphDatabaseError:  # an unknown property, a slow or lost database: the query's own run reports
                return None  # not remembered: the next query may find the database back
            self._decided[key] = mapped if mapped != given else None
        return self._decided[key]

    def map(self, cypher: str) -> tuple[str, list[ValueMapping]]:
        """(the query with unmatched literals replaced where they are compared, the mappings made)."""
        if not self.enabled:
            return cypher, []
        mappings: dict[tuple[str, str, str], ValueMapping | None] = {}
        pieces, end = [], 0
        for label, prop, literal, start in literals_in(cypher):
            given = _unquote(literal)
            key = (label, prop, given)
            if key not in mappings:
                mapped = self._stored_value_for(label, prop, given)
                mappings[key] = ValueMapping(label=label, property=prop, given=given, mapped=mapped) if mapped else None
            if mappings[key] is not None and start >= end:
                pieces += [cypher[end:start], _quote(mappings[key].mapped, literal)]  # type: ignore[union-attr]
                end = start + len(literal)
        return "".join(pieces) + cypher[end:], [m for m in mappings.values() if m is not None]


def describe_mappings(mappings: list[ValueMapping]) -> str:
    def shown(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    return "; ".join(f"{m.label}.{m.property}: {shown(m.given)} -> {shown(m.mapped)}" for m in mappings)
