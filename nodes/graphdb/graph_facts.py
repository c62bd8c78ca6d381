"""What a graph holds, as the schema check asks it: labels, relationship types and the labels they
join in each direction, properties per label or type, and stored values.

The schema an agent already read answers most questions: its label and type catalogues are exact,
its relationship patterns and property names come from samples. Whatever the samples do not show
is looked up in the database, read-only, once (the answer is kept), with a short timeout: a look-up
that times out or fails answers None, "not known", and the check then claims nothing. A database
that is down raises `DatabaseUnavailableError`, as the query itself would.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from reflexion_agents.nodes.graphdb.cypher_patterns import TextTest
from reflexion_agents.nodes.graphdb.cypher_text import quote_name
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.value_matching import MAX_DISTINCT_VALUES, closest_value
from reflexion_agents.nodes.models.wire import LONE_SURROGATE
from reflexion_agents.schemas.errors import QueryError
from reflexion_agents.schemas.graphdb import GraphSchema, PropertyInfo

T = TypeVar("T")

LOOKUP_TIMEOUT_S = 2.0  # one look-up; past it the fact is not known
TEXT_FORMS_READ = 50  # stored texts read to find the case a CONTAINS / STARTS WITH / ENDS WITH text has
MAX_ANSWERS = 4096  # look-ups kept per graph
_NUMBER_TEXT = re.compile(r"-?\d{1,18}(?:\.\d+)?")


@dataclass(frozen=True)
class ValueFact:
    """What the graph stores of a literal a query filters on.

    `stored`: the literal itself is stored. `means`: it is not, but `value` is the stored value it
    unmistakably means (another casing, spacing or a typo of a name, the text of a number; the rules of
    `nodes.graphdb.value_matching.closest_value`). `others`: it is not, but several forms of it are
    (`value` lists them): which one is meant cannot be told. `absent`: neither it nor anything close
    is stored. `unknown`: the look-up could not be made."""

    kind: Literal["stored", "means", "others", "absent", "unknown"]
    value: Any = None


class GraphFacts:
    """Answers about one graph (see the module docstring); safe to share between threads."""

    def __init__(self, db: GraphDatabase, schema: GraphSchema, *, timeout: float = LOOKUP_TIMEOUT_S) -> None:
        self.db, self.timeout = db, timeout
        self.created_at = time.monotonic()
        self.labels = [n.label for n in schema.nodes]
        self.types = [r.type for r in schema.relationships]
        self.patterns = {r.type: list(r.patterns) for r in schema.relationships}
        self.node_properties = {n.label: {p.name: p for p in n.properties} for n in schema.nodes}
        self.relationship_properties = {r.type: {p.name: p for p in r.properties} for r in schema.relationships}
        self._answers: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()

    # -- names ---------------------------------------------------------------------------------

    @staticmethod
    def same_but_case(name: str, names: list[str]) -> list[str]:
        """The names equal to `name` but for their case."""
        return [n for n in names if n.casefold() == name.casefold() and n != name]

    def properties_of(self, kind: Literal["node", "relationship"], owner: str) -> dict[str, PropertyInfo]:
        """The properties the schema's samples show on a label or relationship type."""
        table = self.node_properties if kind == "node" else self.relationship_properties
        return table.get(owner, {})

    # -- look-ups ------------------------------------------------------------------------------

    def _remembered(self, key: tuple[Any, ...], find: Callable[[], T]) -> T:
        with self._lock:
            if key in self._answers:
                return cast(T, self._answers[key])
        answer = find()
        with self._lock:
            if len(self._answers) >= MAX_ANSWERS:
                self._answers.clear()
            self._answers[key] = answer
        return answer

    def _rows(self, cypher: str, params: dict[str, Any] | None = None, cap: int = 1) -> list[list[Any]] | None:
        """The rows of a look-up, or None when it failed or timed out (a database that is down raises)."""
        try:
            return self.db.query(cypher, params, timeout=self.timeout, row_cap=cap).rows
        except QueryError:
            return None

    def _property_keys(self) -> set[str] | None:
        """Every property name in the graph (its catalogue), or None when it cannot be read."""

        def read() -> set[str] | None:
            rows = self._rows("CALL db.propertyKeys()", cap=100_000)
            return None if rows is None else {str(r[0]) for r in rows}

        return self._remembered(("keys",), read)

    def has_property(self, kind: Literal["node", "relationship"], owner: str, prop: str) -> bool | None:
        """Whether some node of a label (or relationship of a type) has the property; None if not known."""
        if prop in self.properties_of(kind, owner):
            return True
        keys = self._property_keys()
        if keys is not None and prop not in keys:
            return False

        def look() -> bool | None:
            pattern = f"(x:{quote_name(owner)})" if kind == "node" else f"()-[x:{quote_name(owner)}]->()"
            rows = self._rows(f"MATCH {pattern} WHERE x.{quote_name(prop)} IS NOT NULL RETURN 1 LIMIT 1")
            return None if rows is None else bool(rows)

        return self._remembered(("property", kind, owner, prop), look)

    def connects(self, start: str | None, rel_type: str, end: str | None) -> bool | None:
        """Whether some `rel_type` relationship goes from a `start` node to an `end` node (None: any
        label); None when it is not known."""
        for seen_start, seen_end in self.patterns.get(rel_type, []):
            if start in (None, seen_start) and end in (None, seen_end):
                return True

        def look() -> bool | None:
            left = f"(:{quote_name(start)})" if start else "()"
            right = f"(:{quote_name(end)})" if end else "()"
            rows = self._rows(f"MATCH {left}-[:{quote_name(rel_type)}]->{right} RETURN 1 LIMIT 1")
            return None if rows is None else bool(rows)

        return self._remembered(("connects", start, rel_type, end), look)

    def value(
        self, owner: str, prop: str, literal: Any, test: TextTest = "=", kind: Literal["node", "relationship"] = "node"
    ) -> ValueFact:
        """What the graph stores of `literal` as `owner.prop`, `owner` a label (or, with `kind`
        "relationship", a relationship type): see `ValueFact`; with a text `test` (CONTAINS, STARTS
        WITH, ENDS WITH), whether some stored text passes it."""
        key = ("value", kind, owner, prop, type(literal).__name__, literal, test)
        if isinstance(literal, str) and LONE_SURROGATE.search(literal):
            return ValueFact("unknown")  # no client can send it; the query's own run says why
        match = _match(kind, owner)
        if test != "=" and isinstance(literal, str):
            return self._remembered(key, lambda: self._text(match, prop, literal, test))
        return self._remembered(key, lambda: self._value(match, prop, literal))

    def _passes(self, match: str, prop: str, test: TextTest, value: Any) -> bool | None:
        """Whether some `x` of `match` has a `prop` that passes `test` with `value`; None when it cannot be told."""
        rows = self._rows(f"{match} WHERE x.{quote_name(prop)} {test} $value RETURN 1 LIMIT 1", {"value": value})
        return None if rows is None else bool(rows)

    def _text(self, match: str, prop: str, text: str, test: TextTest) -> ValueFact:
        """Some stored text passes `test` with `text`; else the one form it has in another case."""
        passes = self._passes(match, prop, test, text)
        if passes is None:
            return ValueFact("unknown")
        if passes:
            return ValueFact("stored")
        key = quote_name(prop)
        rows = self._rows(
            f"{match} WHERE toLower(x.{key}) {test} toLower($value) RETURN x.{key} LIMIT {TEXT_FORMS_READ}",
            {"value": text},
            cap=TEXT_FORMS_READ,
        )
        if rows is None:
            return ValueFact("unknown")
        forms = {form for (stored,) in rows if isinstance(stored, str) and (form := _form_in(stored, text, test))}
        if len(forms) == 1:
            return ValueFact("means", forms.pop())
        return ValueFact("others", sorted(forms)) if forms else ValueFact("absent")

    def _value(self, match: str, prop: str, literal: Any) -> ValueFact:
        passes = self._passes(match, prop, "=", literal)
        if passes is None:
            return ValueFact("unknown")
        if passes:
            return ValueFact("stored")
        other = self.other_type(literal)
        if other is not None and self._passes(match, prop, "=", other):
            return ValueFact("means", other)
        if not isinstance(literal, str):
            return ValueFact("absent")
        stored = self._distinct(match, prop)
        if stored is None:
            return ValueFact("unknown")
        texts = [value for value in stored if isinstance(value, str)]
        same_but_case = sorted({t for t in texts if t.casefold() == literal.casefold()})
        if len(same_but_case) > 1:
            return ValueFact("others", same_but_case)
        meant = closest_value(literal, texts)
        if meant is not None and meant != literal:
            return ValueFact("means", meant)
        # past the distinct values read, a value close to it may still be stored
        return ValueFact("unknown" if len(stored) >= MAX_DISTINCT_VALUES else "absent")

    def _distinct(self, match: str, prop: str) -> list[Any] | None:
        """The distinct values of a property (the first `MAX_DISTINCT_VALUES`), read once per property."""

        def read() -> list[Any] | None:
            key = quote_name(prop)
            rows = self._rows(
                f"{match} WHERE x.{key} IS NOT NULL RETURN DISTINCT x.{key} LIMIT {MAX_DISTINCT_VALUES}",
                cap=MAX_DISTINCT_VALUES,
            )
            return None if rows is None else [row[0] for row in rows]

        return self._remembered(("distinct", match, prop), read)

    @staticmethod
    def other_type(literal: Any) -> Any:
        """The literal as the other kind of value a model confuses it with: '42' and 42, 'true' and
        true; None when there is none."""
        if isinstance(literal, str):
            text = literal.strip()
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            if not _NUMBER_TEXT.fullmatch(text):
                return None
            return float(text) if "." in text else int(text)
        if isinstance(literal, bool):
            return str(literal).lower()
        if isinstance(literal, (int, float)):
            return str(literal)
        return None


def _match(kind: Literal["node", "relationship"], owner: str) -> str:
    """The MATCH clause binding `x` to the nodes of a label, or the relationships of a type."""
    return f"MATCH (x:{quote_name(owner)})" if kind == "node" else f"MATCH ()-[x:{quote_name(owner)}]->()"


def _form_in(stored: str, text: str, test: TextTest) -> str | None:
    """The part of `stored` that `text` matches ignoring case, as `stored` writes it."""
    folded, wanted = stored.lower(), text.lower()
    if test == "STARTS WITH":
        at: int | None = 0 if folded.startswith(wanted) else None
    elif test == "ENDS WITH":
        at = len(stored) - len(text) if folded.endswith(wanted) else None
    else:
        found = folded.find(wanted)
        at = found if found >= 0 else None
    return None if at is None or len(folded) != len(stored) else stored[at : at + len(text)]
