"""Map literal values in a generated query to values the database really stores.

"sci-fi" where the graph stores "Sci-Fi", or a misspelt name, makes a correct query
return nothing. Each string literal compared with a node property (`{name: 'x'}`,
`n.name = 'x'`, `n.name IN ['x', 'y']`) is looked up; one that matches no stored
value is replaced by the stored value it unmistakably means, and the mapping is
recorded so the model (and the result) says so.

Mapping must never invent: a question about a record that does not exist must not
get another record's data. So a literal that looks like an identifier (it has a
digit, or it is an upper-case code) is never rewritten; a literal that matches a
stored value ignoring case and punctuation maps to that value only; and a fuzzy
match is for free-text names alone: the same number of words, each at most one
typo away (none for words under four letters, and never in the first letter), and only when exactly one stored
value is that close. Distinct names such as "Ana Petersen" and "Hanna Petersen"
are two typos apart, so neither is ever mapped onto the other.
"""

from __future__ import annotations

import json
import re

from nodes.graphdb.cypher_text import quote_name
from nodes.graphdb.protocol import GraphDatabase
from schemas.errors import GraphDatabaseError
from schemas.text2cypher import ValueMapping

MAX_DISTINCT_VALUES = 5000
MAX_TYPOS_PER_WORD = 1
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
            found += [(label, e.group(1), e.group(2), node.start(3) + e.start(2)) for e in _MAP_ENTRY.finditer(node.group(3))]
    for m in _EQUALS.finditer(cypher):
        var, prop, at = (m.group(1), m.group(2), 3) if m.group(1) else (m.group(5), m.group(6), 4)
        if var in labels:
            found.append((labels[var], prop, m.group(at), m.start(at)))
    for m in _IN_LIST.finditer(cypher):
        if m.group(1) in labels:
            found += [(labels[m.group(1)], m.group(2), item.group(0), m.start(3) + item.start()) for item in re.finditer(_STRING, m.group(3))]
    return sorted(set(found), key=lambda item: item[3])


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def looks_like_identifier(text: str) -> bool:
    """An ID, number or code ('10248', 'A-12', 'LARSA'): a near miss is another record, not a typo."""
    return any(ch.isdigit() for ch in text) or bool(_CODE.fullmatch(text.strip()))


def typos(a: str, b: str, limit: int) -> int:
    """The edit distance (insertions, deletions, substitutions, swaps of neighbours) of two words,
    or `limit + 1` once it is known to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


def name_typos(given: str, stored: str) -> int | None:
    """How many typos turn the name `given` into `stored`, word by word; None if they are not the
    same name (another word count, a short word changed, a word more than one typo away)."""
    words, targets = given.lower().split(), stored.lower().split()
    if len(words) != len(targets):
        return None
    total = 0
    for word, target in zip(words, targets, strict=True):
        # Short words and first letters are where distinct names differ (Tim/Tom, Hanks/Banks).
        allowed = MAX_TYPOS_PER_WORD if min(len(word), len(target)) >= 4 and word[0] == target[0] else 0
        distance = typos(word, target, allowed)
        if distance > allowed:
            return None
        total += distance
    return total if total <= MAX_TYPOS else None


def closest_value(given: str, stored: list[str]) -> str | None:
    """The stored value `given` unmistakably means, or None (see the module's rules)."""
    if looks_like_identifier(given):
        return None
    squashed = _squash(given)
    same = [value for value in stored if squashed and _squash(value) == squashed]
    if same:
        return same[0] if len(set(same)) == 1 else None
    scored = [(distance, value) for value in stored if (distance := name_typos(given, value)) is not None]
    if not scored:
        return None
    best = min(distance for distance, _ in scored)
    closest = [value for distance, value in scored if distance == best]
    return closest[0] if len(closest) == 1 else None


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
        """The stored value `given` stands for, if it is not stored itself; None to leave it."""
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
    return "; ".join(
        f"{m.label}.{m.property}: {json.dumps(m.given, ensure_ascii=False)} -> {json.dumps(m.mapped, ensure_ascii=False)}"
        for m in mappings
    )
