"""What a Cypher query names, read from its text: node and relationship patterns, the variables they
bind, the properties it reads, and the literal values it filters on, each with where it is written.

Just enough reading for the schema check (`nodes.graphdb.query_check`), which needs to know what a
query anchors on and where to repair it. It reads code only (strings, comments and backtick names
are skipped; `nodes.graphdb.cypher_text.code_only`), so a name inside a string is never taken for a
label. What it cannot read (label expressions such as `:A|B`, backtick names, a variable bound again
by `AS`, `UNWIND` or a list comprehension) it leaves out, and says so in `unread`: the check then
does not claim to have verified the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from nodes.graphdb.cypher_text import COMMENT, code_depths, code_only

Span = tuple[int, int]
Direction = Literal["out", "in", "both"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_NODE = re.compile(
    rf"(?<![\w.$])\(\s*(?P<var>{_NAME})?\s*(?P<labels>(?::\s*{_NAME}\s*)+)?(?P<map>\{{[^{{}}]*\}})?\s*\)"
)
_LABEL = re.compile(rf":\s*({_NAME})")
_REL = re.compile(
    rf"\s*(?P<left><)?-\s*(?:\[\s*(?P<var>{_NAME})?\s*(?P<types>:\s*{_NAME}(?:\s*\|\s*:?\s*{_NAME})*)?\s*"
    rf"(?P<length>\*[\d.\s]*)?\s*(?P<map>\{{[^{{}}]*\}})?\s*\])?\s*-(?P<right>>)?\s*"
)
_TYPE = re.compile(_NAME)
_MAP_ENTRY = re.compile(rf"({_NAME})\s*:")
_ACCESS = re.compile(rf"(?<![\w.$])({_NAME})\.({_NAME})\b(?!\s*\()")
_LABEL_TEST = re.compile(rf"\b(?:WHERE|AND|OR|NOT)\s+({_NAME})\s*:\s*({_NAME})\b", re.IGNORECASE)
_REBOUND = re.compile(rf"\b(?:AS|UNWIND\s+.+?\s+AS|YIELD)\s+({_NAME})\b|[\[(]\s*({_NAME})\s+IN\b", re.IGNORECASE)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?![\w.])")
_LITERAL = rf"(?:{_STRING.pattern}|{_NUMBER.pattern})"
_EQUALS_RIGHT = re.compile(rf"(?<![\w.$])({_NAME})\.({_NAME})\s*=\s*({_LITERAL})")
_EQUALS_LEFT = re.compile(rf"({_LITERAL})\s*=\s*({_NAME})\.({_NAME})\b(?!\s*\()")
_TEXT_TEST = re.compile(
    rf"(?<![\w.$])({_NAME})\.({_NAME})\s+(CONTAINS|STARTS\s+WITH|ENDS\s+WITH)\s+({_STRING.pattern})", re.IGNORECASE
)
_IN_LIST = re.compile(rf"(?<![\w.$])({_NAME})\.({_NAME})\s+IN\s*\[([^\[\]]*)\]", re.IGNORECASE)
_UNREADABLE_LABELS = re.compile(r"\(\s*\w*\s*:\s*(?:`|!|%)|:\s*\w+\s*[|&]\s*!?\s*\w+\s*[){]")


@dataclass(frozen=True)
class Name:
    """A label, relationship type or property name as written, and where."""

    text: str
    span: Span


@dataclass(frozen=True)
class Literal_:
    """A literal value as written (quotes included) and what it is."""

    value: Any  # str, int or float
    span: Span


@dataclass(frozen=True)
class NodePattern:
    var: str | None
    labels: tuple[Name, ...]
    properties: tuple[tuple[Name, Literal_ | None], ...]  # inline map entries, with their literal if plain
    span: Span


@dataclass(frozen=True)
class RelPattern:
    var: str | None
    types: tuple[Name, ...]
    direction: Direction
    variable_length: bool
    properties: tuple[tuple[Name, Literal_ | None], ...]
    span: Span  # the whole arrow, from its first dash (or `<`) to its last dash (or `>`)
    left: NodePattern
    right: NodePattern


@dataclass(frozen=True)
class PropertyRead:
    """`var.prop` in the query's code."""

    var: str
    prop: Name


TextTest = Literal["=", "CONTAINS", "STARTS WITH", "ENDS WITH"]


@dataclass(frozen=True)
class ValueFilter:
    """`var.prop = literal`, `literal = var.prop`, `var.prop IN [literals]`, `var.prop CONTAINS 'text'`
    (or STARTS WITH, ENDS WITH), or `{prop: literal}` in a node pattern bound to `var` (or to no
    variable: `var` None, `labels` then from the pattern)."""

    var: str | None
    prop: Name
    literal: Literal_
    labels: tuple[str, ...] = ()
    test: TextTest = "="


@dataclass
class ReadQuery:
    """What a query names (see the module docstring)."""

    nodes: list[NodePattern] = field(default_factory=list)
    relationships: list[RelPattern] = field(default_factory=list)
    label_tests: list[tuple[str, Name]] = field(default_factory=list)  # WHERE n:Label
    reads: list[PropertyRead] = field(default_factory=list)
    filters: list[ValueFilter] = field(default_factory=list)
    rebound: set[str] = field(default_factory=set)  # variables bound again by AS, UNWIND, YIELD or IN
    unread: list[str] = field(default_factory=list)  # what could not be read, in words

    def node_labels(self) -> dict[str, set[str]]:
        """The labels each node variable is bound to, in any pattern or label test of the query."""
        bound: dict[str, set[str]] = {}
        for node in self.nodes:
            if node.var:
                bound.setdefault(node.var, set()).update(n.text for n in node.labels)
        for var, label in self.label_tests:
            bound.setdefault(var, set()).add(label.text)
        return bound

    def relationship_types(self) -> dict[str, set[str]]:
        """The types each relationship variable is bound to."""
        bound: dict[str, set[str]] = {}
        for rel in self.relationships:
            if rel.var:
                bound.setdefault(rel.var, set()).update(t.text for t in rel.types)
        return bound


def literal_value(text: str) -> Any:
    """The value of a literal as written: a string without its quotes (escapes read), or a number."""
    if text[:1] in "'\"":
        body = text[1:-1]
        if text[0] == '"':
            try:
                return json.loads(text)
            except ValueError:
                pass
        return re.sub(r"\\(.)", r"\1", body)
    return float(text) if "." in text else int(text)


def _map_entries(cypher: str, code: str, span: Span | None) -> tuple[tuple[Name, Literal_ | None], ...]:
    """The entries of an inline property map: each key, with its value when that is a plain literal."""
    if span is None:
        return ()
    start, end = span
    entries = []
    for entry in _MAP_ENTRY.finditer(code, start + 1, end - 1):
        key = Name(entry.group(1), entry.span(1))
        at = entry.end() + len(cypher[entry.end() :]) - len(cypher[entry.end() :].lstrip())
        value = _STRING.match(cypher, at) or _NUMBER.match(cypher, at)
        followed = code[value.end() :].lstrip()[:1] if value else ""
        plain = value is not None and value.end() <= end - 1 and followed in (",", "}")
        literal = Literal_(literal_value(value.group()), value.span()) if plain and value else None
        entries.append((key, literal))
    return tuple(entries)


def _node(cypher: str, code: str, match: re.Match[str]) -> NodePattern:
    labels: tuple[Name, ...] = ()
    if match.group("labels"):
        offset = match.start("labels")
        labels = tuple(
            Name(m.group(1), (offset + m.start(1), offset + m.end(1))) for m in _LABEL.finditer(match.group("labels"))
        )
    map_span = match.span("map") if match.group("map") else None
    return NodePattern(match.group("var"), labels, _map_entries(cypher, code, map_span), match.span())


def _relationships(cypher: str, code: str, nodes: list[NodePattern]) -> list[RelPattern]:
    """Each relationship written between two node patterns that follow each other."""
    by_start = {node.span[0]: node for node in nodes}
    found = []
    for node in nodes:
        arrow = _REL.match(code, node.span[1])
        if arrow is None or arrow.end() not in by_start:
            continue
        right = by_start[arrow.end()]
        left_arrow, right_arrow = bool(arrow.group("left")), bool(arrow.group("right"))
        direction: Direction = "both" if left_arrow == right_arrow else ("in" if left_arrow else "out")
        types: tuple[Name, ...] = ()
        if arrow.group("types"):
            offset = arrow.start("types")
            types = tuple(
                Name(m.group(), (offset + m.start(), offset + m.end())) for m in _TYPE.finditer(arrow.group("types"))
            )
        map_span = arrow.span("map") if arrow.group("map") else None
        body = code[arrow.start() : arrow.end()]
        lead, trail = len(body) - len(body.lstrip()), len(body) - len(body.rstrip())
        found.append(
            RelPattern(
                var=arrow.group("var"),
                types=types,
                direction=direction,
                variable_length=bool(arrow.group("length")),
                properties=_map_entries(cypher, code, map_span),
                span=(arrow.start() + lead, arrow.end() - trail),
                left=node,
                right=right,
            )
        )
    return found


def _filters(cypher: str, depths: tuple[int, ...], query: ReadQuery) -> list[ValueFilter]:
    """Literal values compared with a property. They are matched on the query with its comments
    blanked and its strings kept, each match starting in code (never inside a string)."""
    found: list[ValueFilter] = []
    for node in query.nodes:
        labels = tuple(n.text for n in node.labels)
        found += [ValueFilter(node.var, key, literal, labels) for key, literal in node.properties if literal]
    shaped = "".join(ch if depths[i] != COMMENT else " " for i, ch in enumerate(cypher))

    def in_code(group: int) -> Callable[[re.Match[str]], bool]:
        return lambda match: depths[match.start(group)] >= 0

    for m in filter(in_code(1), _EQUALS_RIGHT.finditer(shaped)):
        literal = Literal_(literal_value(m.group(3)), m.span(3))
        found.append(ValueFilter(m.group(1), Name(m.group(2), m.span(2)), literal))
    for m in filter(in_code(2), _EQUALS_LEFT.finditer(shaped)):
        literal = Literal_(literal_value(m.group(1)), m.span(1))
        found.append(ValueFilter(m.group(2), Name(m.group(3), m.span(3)), literal))
    for m in filter(in_code(1), _TEXT_TEST.finditer(shaped)):
        literal = Literal_(literal_value(m.group(4)), m.span(4))
        test = cast(TextTest, " ".join(m.group(3).upper().split()))
        found.append(ValueFilter(m.group(1), Name(m.group(2), m.span(2)), literal, test=test))
    for m in filter(in_code(1), _IN_LIST.finditer(shaped)):
        offset = m.start(3)
        for item in re.finditer(_LITERAL, m.group(3)):
            literal = Literal_(literal_value(item.group()), (offset + item.start(), offset + item.end()))
            found.append(ValueFilter(m.group(1), Name(m.group(2), m.span(2)), literal))
    return found


def read_query(cypher: str) -> ReadQuery:
    """What `cypher` names (see the module docstring)."""
    code = code_only(cypher)
    query = ReadQuery()
    query.nodes = [_node(cypher, code, m) for m in _NODE.finditer(code)]
    query.relationships = _relationships(cypher, code, query.nodes)
    query.label_tests = [(m.group(1), Name(m.group(2), m.span(2))) for m in _LABEL_TEST.finditer(code)]
    query.reads = [PropertyRead(m.group(1), Name(m.group(2), m.span(2))) for m in _ACCESS.finditer(code)]
    query.rebound = {m.group(1) or m.group(2) for m in _REBOUND.finditer(code)}
    query.filters = _filters(cypher, code_depths(cypher), query)
    if "`" in cypher:
        query.unread.append("a backtick-quoted name")
    if _UNREADABLE_LABELS.search(code):
        query.unread.append("a label expression")
    return query
