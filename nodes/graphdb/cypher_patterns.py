"""What a Cypher query names, read from its text: node and relationship patterns, the variables they
bind, the properties it reads, and the literal values it filters on, each with where it is written.

Just enough reading for the schema check (`nodes.graphdb.query_check`), which needs to know what a
query anchors on and where to repair it. It reads code only (strings, comments and backtick names
are skipped; `nodes.graphdb.cypher_text.code_only`), so a name inside a string is never taken for a
label. What it cannot read (label expressions such as `:A|B`, backtick names, Neo4j 5's `(n IS Label)` and
`(n:Label WHERE ...)`, map projections, a value compared in a form other than `var.prop <op>
literal`) it says in `unread`: the check then does not claim to have verified the query. A variable
bound again (by `AS`, `UNWIND`, `YIELD` or a list comprehension), or bound to other labels in
another pattern (a UNION's branches), is given no labels at all (`node_labels`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from reflexion_agents.nodes.graphdb.cypher_text import code_depths, code_only, comments_blanked

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
_LABEL_TEST = re.compile(rf"\b(WHERE|AND|OR|XOR|NOT)\s+({_NAME})\s*:\s*({_NAME})\b", re.IGNORECASE)
_CLAUSE = re.compile(r"\b(?:RETURN|WITH|MATCH|OPTIONAL|UNWIND|CALL|ORDER|UNION|SKIP|LIMIT|WHERE)\b", re.IGNORECASE)
_NOT_PLAIN = re.compile(r"\b(?:OR|XOR|NOT)\b", re.IGNORECASE)
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
_RANGE = re.compile(rf"(?<![\w.$])({_NAME})\.({_NAME})\s*(<>|<=|>=|<|>)\s*({_LITERAL})")
_COMPARED = re.compile(
    rf"(?:(?:<>|<=|>=|=|<|>|\bIN\s*\[|\bCONTAINS|\bSTARTS\s+WITH|\bENDS\s+WITH)\s*({_LITERAL}))"
    rf"|(?:({_LITERAL})\s*(?:<>|<=|>=|=|<|>))",
    re.IGNORECASE,
)
_UNREADABLE_LABELS = re.compile(r"\(\s*\w*\s*:\s*(?:`|!|%)|:\s*\w+\s*[|&]\s*!?\s*\w+\s*[){]")
_NEO4J_5_PATTERN = re.compile(rf"\(\s*{_NAME}\s+IS\s+{_NAME}|\(\s*{_NAME}?\s*(?::\s*{_NAME}\s*)+WHERE\b", re.IGNORECASE)
_MAP_PROJECTION = re.compile(rf"\b{_NAME}\s*\{{\s*\.{_NAME}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


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
Comparison = Literal["<>", "<", ">", "<=", ">="]


@dataclass(frozen=True)
class ValueFilter:
    """`var.prop = literal`, `literal = var.prop`, `var.prop IN [literals]`, `var.prop CONTAINS 'text'`
    (or STARTS WITH, ENDS WITH), or `{prop: literal}` in a node or relationship pattern bound to `var`
    (or to no variable: `var` None, `labels` then from the pattern)."""

    var: str | None
    prop: Name
    literal: Literal_
    labels: tuple[str, ...] = ()  # of the pattern whose map holds it (a relationship's: its types)
    test: TextTest = "="
    in_relationship_map: bool = False


@dataclass
class ReadQuery:
    """What a query names (see the module docstring)."""

    nodes: list[NodePattern] = field(default_factory=list)
    relationships: list[RelPattern] = field(default_factory=list)
    label_tests: list[tuple[str, Name]] = field(default_factory=list)  # WHERE n:Label, NOT n:Label, ...
    binding_tests: list[tuple[str, Name]] = field(default_factory=list)  # those that say what `n` is
    reads: list[PropertyRead] = field(default_factory=list)
    filters: list[ValueFilter] = field(default_factory=list)
    ranges: list[tuple[str, Name, Comparison, Literal_]] = field(default_factory=list)  # var.prop > literal
    rebound: set[str] = field(default_factory=set)  # bound again (AS, UNWIND, YIELD, IN), or in two UNION branches
    unread: list[str] = field(default_factory=list)  # what could not be read, in words

    def node_labels(self) -> dict[str, set[str]]:
        """The labels each node variable is certainly bound to: those of its patterns and of the label
        tests that say what it is (`WHERE n:Label` joined by AND only). A variable bound again, or
        given other labels in another pattern (two branches of a UNION), gets none."""
        named = [(n.var, {x.text for x in n.labels}) for n in self.nodes if n.var]
        return _bound(named + [(v, {label.text}) for v, label in self.binding_tests], self.rebound)

    def relationship_types(self) -> dict[str, set[str]]:
        """The types each relationship variable is certainly bound to (as `node_labels`)."""
        return _bound([(r.var, {t.text for t in r.types}) for r in self.relationships if r.var], self.rebound)


def _bound(named: list[tuple[str, set[str]]], rebound: set[str]) -> dict[str, set[str]]:
    """Each variable's names, from the places that give it some; a variable given different ones in two
    places, or bound again, is left out (its names are not known)."""
    bound: dict[str, set[str]] = {}
    unsure = set(rebound)
    for var, names in named:
        if not names:
            continue
        if var in bound and bound[var] != names:
            unsure.add(var)
        bound.setdefault(var, set()).update(names)
    return {var: names for var, names in bound.items() if var not in unsure}


def literal_value(text: str) -> Any:
    """The value of a literal as written: a string without its quotes, its escapes read as Cypher
    reads them (`\\n` a new line, `\\'` a quote, `\\u00e9` a letter), or a number."""
    if text[:1] in "'\"":
        return re.sub(r"\\(u[0-9A-Fa-f]{4}|.)", _unescape, text[1:-1])
    return float(text) if "." in text else int(text)


def _unescape(match: re.Match[str]) -> str:
    escaped = match.group(1)
    if len(escaped) == 5:
        return chr(int(escaped[1:], 16))
    return _ESCAPES.get(escaped, escaped)


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
    for rel in query.relationships:
        types = tuple(t.text for t in rel.types)
        found += [ValueFilter(rel.var, key, literal, types, "=", True) for key, literal in rel.properties if literal]
    shaped = comments_blanked(cypher)

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
    for m in filter(in_code(1), _RANGE.finditer(shaped)):
        literal = Literal_(literal_value(m.group(4)), m.span(4))
        query.ranges.append((m.group(1), Name(m.group(2), m.span(2)), cast(Comparison, m.group(3)), literal))
    for m in filter(in_code(1), _IN_LIST.finditer(shaped)):
        offset = m.start(3)
        for item in re.finditer(_LITERAL, m.group(3)):
            literal = Literal_(literal_value(item.group()), (offset + item.start(), offset + item.end()))
            found.append(ValueFilter(m.group(1), Name(m.group(2), m.span(2)), literal))
    return found


def _binding_tests(code: str, tests: list[re.Match[str]]) -> list[tuple[str, Name]]:
    """The label tests that say what a variable is: after WHERE or AND, in a WHERE clause with no OR,
    XOR or NOT (`WHERE NOT n:Movie` and `WHERE n:Movie OR n:Person` say nothing certain)."""
    wheres = [m.start() for m in re.finditer(r"\bWHERE\b", code, re.IGNORECASE)]
    found = []
    for m in tests:
        starts = [w for w in wheres if w <= m.start(1)]
        if m.group(1).upper() not in ("WHERE", "AND") or not starts:
            continue
        following = next((c.start() for c in _CLAUSE.finditer(code, m.end())), len(code))
        if not _NOT_PLAIN.search(code, starts[-1], following):
            found.append((m.group(2), Name(m.group(3), m.span(3))))
    return found


def _unread_comparisons(cypher: str, depths: tuple[int, ...], query: ReadQuery) -> bool:
    """Whether a value is compared in a form the check does not read (`toLower(m.title) = 'x'`, `t = 'x'`
    after `WITH m.title AS t`): no rows could then come from a value never looked up."""
    shaped = comments_blanked(cypher)
    read = {f.literal.span for f in query.filters} | {literal.span for _, _, _, literal in query.ranges}
    for m in _COMPARED.finditer(shaped):
        span = m.span(1) if m.group(1) else m.span(2)
        operator = m.start() if m.group(1) else len(shaped) - len(shaped[m.end(2) :].lstrip())
        if depths[operator] >= 0 and span not in read:
            return True
    return False


def _branch_vars(code: str, depths: tuple[int, ...], query: ReadQuery) -> set[str]:
    """The variables named in more than one branch of a UNION: each branch binds its own."""
    unions = [m.start() for m in re.finditer(r"\bUNION\b", code, re.IGNORECASE) if depths[m.start()] == 0]
    if not unions:
        return set()
    seen: dict[str, set[int]] = {}
    places = [(n.var, n.span[0]) for n in query.nodes] + [(r.var, r.span[0]) for r in query.relationships]
    places += [(read.var, read.prop.span[0]) for read in query.reads]
    for var, at in places:
        if var:
            seen.setdefault(var, set()).add(sum(u < at for u in unions))
    return {var for var, branches in seen.items() if len(branches) > 1}


def read_query(cypher: str) -> ReadQuery:
    """What `cypher` names (see the module docstring)."""
    code = code_only(cypher)
    query = ReadQuery()
    query.nodes = [_node(cypher, code, m) for m in _NODE.finditer(code)]
    query.relationships = _relationships(cypher, code, query.nodes)
    tests = list(_LABEL_TEST.finditer(code))
    query.label_tests = [(m.group(2), Name(m.group(3), m.span(3))) for m in tests]
    query.binding_tests = _binding_tests(code, tests)
    query.reads = [PropertyRead(m.group(1), Name(m.group(2), m.span(2))) for m in _ACCESS.finditer(code)]
    query.rebound = {m.group(1) or m.group(2) for m in _REBOUND.finditer(code)}
    depths = code_depths(cypher)
    query.rebound |= _branch_vars(code, depths, query)
    query.filters = _filters(cypher, depths, query)
    if "`" in cypher:
        query.unread.append("a backtick-quoted name")
    if _UNREADABLE_LABELS.search(code):
        query.unread.append("a label expression")
    if _NEO4J_5_PATTERN.search(code):
        query.unread.append("a pattern with IS or WHERE inside it")
    if _MAP_PROJECTION.search(code):
        query.unread.append("a map projection")
    if _unread_comparisons(cypher, depths, query):
        query.unread.append("a value compared in a form the check does not read")
    return query
