"""Check a query against the graph before it runs, with no model call.

A query that names what the graph does not hold runs without error and returns wrong rows or none:
a label or property in the wrong case, a relationship turned round, a property the graph does not
have, a value spelt otherwise than it is stored. Such a result looks like an answer; a model that
praises its own revision ends the run on it. So every query is checked first against what the graph
holds (`nodes.graphdb.graph_facts`): its labels, its relationship types and the direction of each
between the labels it gives, the properties it reads on each label or type, the literal values it
filters on, and whether a value compared by order is of the property's kind.

What the check finds becomes either a repair or a finding:

- A **repair** is applied without asking the model when it is certain: the name exists in the graph
  in another case only (`:movie` is `:Movie`, `m.Title` is `m.title`), a relationship exists from
  or to the labels the query gives only the other way round, or a value is stored in a form it
  unmistakably means (another case or spacing, a typo in a name, '42' for 42, 'true' for true).
  The query that runs has the repair; the model and the result are told what was repaired. A part
  of a text (CONTAINS, STARTS WITH, ENDS WITH) found only in another case is told, not repaired:
  whether its case matters is the question's to say.
- A **finding** is told to the model with the result: what the graph does not hold and what it holds
  instead ("Movie has no property `rating`; it has: released, tagline, title"). A finding that the
  query is wrong as written blocks: the stop rules do not take such a result as the answer. A value
  that is not stored in any form is a fact, not a mistake: "no Movie has title 'Inception'" explains
  a result without rows, which is then the answer.
- What it does not read or cannot look up (see `nodes.graphdb.cypher_patterns`; a variable whose
  label is not known; more than `MAX_VALUE_LOOKUPS` values; a look-up that times out) it claims
  nothing about: the check is then not `verified`.

`repair=False` turns the structural repairs into findings; `map_values=False` turns value repairs
into findings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from reflexion_agents.nodes.graphdb.cypher_patterns import (
    Literal_,
    Name,
    NodePattern,
    ReadQuery,
    RelPattern,
    Span,
    ValueFilter,
    read_query,
)
from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
from reflexion_agents.schemas.query_check import QueryCheck, ValueMapping

Kind = Literal["node", "relationship"]
MAX_VALUE_LOOKUPS = 25  # values one check looks up; a query comparing more is not claimed verified
NUMERIC = frozenset({"INTEGER", "FLOAT"})


@dataclass
class _Check:
    """One check's working state: the query read, the graph's names for what it names, the edits to
    make, what to say, and whether anything was unknown."""

    cypher: str
    query: ReadQuery
    labels: dict[str, str] = field(default_factory=dict)  # a label as written -> the graph's, when it differs
    types: dict[str, str] = field(default_factory=dict)  # the same for relationship types
    node_vars: dict[str, set[str]] = field(default_factory=dict)  # a node variable -> the graph's labels
    rel_vars: dict[str, set[str]] = field(default_factory=dict)  # a relationship variable -> the graph's types
    edits: dict[Span, str] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    blocking: bool = False
    missing: bool = False  # a label, type, property or relationship the graph does not hold
    unknown: bool = False
    lookups: int = 0  # values looked up in this check
    mappings: list[ValueMapping] = field(default_factory=list)

    def repair(self, span: Span, text: str, said: str) -> None:
        self.edits[span] = text
        if said not in self.repairs:
            self.repairs.append(said)

    def find(self, said: str, *, blocking: bool = True, missing: bool = False) -> None:
        """Tell the model `said`; `blocking`: the query is wrong as written; `missing`: because it names
        what the graph does not hold."""
        if said not in self.findings:
            self.findings.append(said)
        self.blocking = self.blocking or blocking or missing
        self.missing = self.missing or missing

    def repaired_query(self) -> str:
        """The query with every edit made, the later ones first so earlier spans stay where they are;
        an edit overlapping one already made is left out."""
        text, last_start = self.cypher, len(self.cypher) + 1
        for (start, end), new in sorted(self.edits.items(), reverse=True):
            if end > last_start:
                continue
            text = text[:start] + new + text[end:]
            last_start = start
        return text


def _listed(names: Iterable[str], limit: int = 12) -> str:
    shown = sorted(set(names))
    more = f" and {len(shown) - limit} more" if len(shown) > limit else ""
    return ", ".join(shown[:limit]) + more if shown else "none"


def _literal_text(value: Any, like: str) -> str:
    """`value` written as a Cypher literal, a string in the quotes of `like` when that was one."""
    if isinstance(value, str):
        quote = like[0] if like[:1] in "'\"" else "'"
        return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote
    return json.dumps(value)


class QueryChecker:
    """Checks queries against one graph (see the module docstring)."""

    def __init__(self, facts: GraphFacts, *, repair: bool = True, map_values: bool = True) -> None:
        self.facts, self.repair, self.map_values = facts, repair, map_values

    def check(self, cypher: str) -> QueryCheck:
        query = read_query(cypher)
        work = _Check(cypher, query)
        written_labels = [n for node in query.nodes for n in node.labels] + [n for _, n in query.label_tests]
        work.labels = self._names(work, written_labels, "label", self.facts.labels)
        written_types = [t for rel in query.relationships for t in rel.types]
        work.types = self._names(work, written_types, "relationship type", self.facts.types)
        work.node_vars = {v: {work.labels.get(x, x) for x in ls} for v, ls in query.node_labels().items()}
        work.rel_vars = {v: {work.types.get(x, x) for x in ts} for v, ts in query.relationship_types().items()}
        for rel in query.relationships:
            self._direction(work, rel)
        self._properties(work)
        self._values(work)
        return QueryCheck(
            written=cypher,
            query=work.repaired_query(),
            repairs=work.repairs,
            findings=work.findings,
            blocking=work.blocking,
            missing=work.missing,
            verified=not work.unknown and not query.unread and not work.blocking,
            mappings=work.mappings,
        )

    # -- names ---------------------------------------------------------------------------------

    def _names(self, work: _Check, written: list[Name], noun: str, known: list[str]) -> dict[str, str]:
        """Each name the graph lacks, repaired to the one it has in another case (or found): the map
        from the name as written to the graph's, which the later checks read."""
        fixed: dict[str, str] = {}
        for name in written:
            if name.text in known:
                continue
            same = GraphFacts.same_but_case(name.text, known)
            if len(same) == 1:
                fixed[name.text] = same[0]  # what the later checks read it as, repaired or not
            if len(same) == 1 and self.repair:
                work.repair(name.span, same[0], f"the {noun} {name.text} is {same[0]} in the graph")
            elif len(same) == 1:
                work.find(f"the graph has no {noun} {name.text}; it has {same[0]}")
            else:
                work.find(f"the graph has no {noun} {name.text}; its {noun}s are: {_listed(known)}", missing=True)
        return fixed

    # -- relationships -------------------------------------------------------------------------

    def _side(self, work: _Check, node: NodePattern) -> list[str | None]:
        """The graph's labels of one end of a relationship ([None] when it names none it has)."""
        named = {work.labels.get(n.text, n.text) for n in node.labels}
        if not named and node.var:
            named = work.node_vars.get(node.var, set())
        known: list[str | None] = [n for n in sorted(named) if n in self.facts.labels]
        return known or [None]

    def _joins(self, starts: list[str | None], rel_type: str, ends: list[str | None]) -> bool | None:
        """Whether `rel_type` goes from one of `starts` to one of `ends`; None if that is not known."""
        answers = [self.facts.connects(s, rel_type, e) for s in starts for e in ends]
        return True if True in answers else (None if None in answers else False)

    def _direction(self, work: _Check, rel: RelPattern) -> None:
        """The relationship joins the labels at its ends in the direction written; else it is turned
        round when the graph has it only the other way, or found."""
        left, right = self._side(work, rel.left), self._side(work, rel.right)
        if left == [None] and right == [None]:
            return  # nothing to join: any direction may hold
        if len(rel.types) != 1 or rel.variable_length:
            work.unknown = True  # several types, none, or a path: its ends are not checked
            return
        rel_type = work.types.get(rel.types[0].text, rel.types[0].text)
        if rel_type not in self.facts.types:
            return  # found already
        if rel.direction == "both":
            joined = self._joins(left, rel_type, right)
            if joined is False:
                joined = self._joins(right, rel_type, left)
            if joined is None:
                work.unknown = True
            elif not joined:
                work.find(self._no_join(rel_type, left, right), missing=True)
            return
        start, end = (left, right) if rel.direction == "out" else (right, left)
        forward = self._joins(start, rel_type, end)
        if forward:
            return
        backward = self._joins(end, rel_type, start) if forward is False else None
        if forward is None or backward is None:
            work.unknown = True
            return
        if not backward:
            work.find(self._no_join(rel_type, left, right), missing=True)
            return
        pattern = f"(:{end[0] or ''})-[:{rel_type}]->(:{start[0] or ''})".replace("(:)", "()")
        said = f"the graph has {pattern}; the query had it the other way round"
        if self.repair:  # the arrow's two ends change; the type between them may be repaired too
            begin, finish = rel.span
            if rel.direction == "out":  # -[...]->  becomes  <-[...]-
                work.repair((begin, begin + 1), "<-", said)
                work.repair((finish - 2, finish), "-", said)
            else:  # <-[...]-  becomes  -[...]->
                work.repair((begin, begin + 2), "-", said)
                work.repair((finish - 1, finish), "->", said)
        else:
            work.find(said + ": turn it round")

    def _no_join(self, rel_type: str, left: list[str | None], right: list[str | None]) -> str:
        ends = " and ".join(f":{'/'.join(str(x) for x in side)}" for side in (left, right) if side != [None])
        seen = [f"(:{s})-[:{rel_type}]->(:{e})" for s, e in self.facts.patterns.get(rel_type, [])]
        return f"no :{rel_type} relationship joins {ends} in either direction; the graph has {_listed(seen, 6)}"

    # -- properties ----------------------------------------------------------------------------

    def _properties(self, work: _Check) -> None:
        """Each property the query reads or matches on exists on a label (or type) it is read from;
        else it is repaired to the one property of that name in another case, or found."""
        query, wanted = work.query, list[tuple[Kind, set[str], Name]]()
        for read in query.reads:
            if read.var in query.rebound:
                continue
            if read.var in work.node_vars:
                wanted.append(("node", work.node_vars[read.var], read.prop))
            elif read.var in work.rel_vars:
                wanted.append(("relationship", work.rel_vars[read.var], read.prop))
            else:  # a variable whose labels are not known: its property cannot be looked up
                work.unknown = True
        for node in query.nodes:
            owners = {work.labels.get(n.text, n.text) for n in node.labels}
            wanted += [("node", owners, key) for key, _ in node.properties]
        for rel in query.relationships:
            owners = {work.types.get(t.text, t.text) for t in rel.types}
            wanted += [("relationship", owners, key) for key, _ in rel.properties]
        for kind, owners, prop in wanted:
            self._property(work, kind, owners, prop)

    def _property(self, work: _Check, kind: Kind, owners: set[str], prop: Name) -> None:
        known = self.facts.labels if kind == "node" else self.facts.types
        owners = {o for o in owners if o in known}
        if not owners:
            return
        answers = [self.facts.has_property(kind, owner, prop.text) for owner in sorted(owners)]
        if True in answers:
            return
        if None in answers:
            work.unknown = True
            return
        has = {p for owner in owners for p in self.facts.properties_of(kind, owner)}
        same = GraphFacts.same_but_case(prop.text, sorted(has))
        whose = "/".join(sorted(owners))
        if len(same) == 1 and self.repair:
            work.repair(prop.span, same[0], f"{whose} has no property {prop.text}; it has {same[0]}")
        else:
            work.find(f"{whose} has no property {prop.text}; it has: {_listed(has)}", missing=True)

    # -- values --------------------------------------------------------------------------------

    def _values(self, work: _Check) -> None:
        """Each literal a property is compared with is stored; else it is repaired to the stored value
        it means, or found absent. What is not looked up (a list property, a variable whose label or
        type is not known, past `MAX_VALUE_LOOKUPS`) leaves the check unverified."""
        for found in work.query.filters:
            owner = self._owner_of(work, found)
            prop = work.edits.get(found.prop.span, found.prop.text)
            if owner is None or self.facts.has_property(owner[0], owner[1], prop) is not True:
                work.unknown = work.unknown or owner is None  # a missing property is found already
                continue
            if "LIST" in self._types(owner, prop) or work.lookups >= MAX_VALUE_LOOKUPS:
                work.unknown = True
                continue
            work.lookups += 1
            self._value(work, owner, prop, found)
        for var, name, _, literal in work.query.ranges:
            owner = self._owner_of(work, ValueFilter(var, name, literal))
            if owner is not None:
                self._comparable(work, owner, work.edits.get(name.span, name.text), literal)

    def _owner_of(self, work: _Check, found: ValueFilter) -> tuple[Kind, str] | None:
        """The one label (or relationship type) of the graph a filtered property belongs to, or None
        when it is not known."""
        if found.in_relationship_map or (found.var in work.rel_vars and not found.labels):
            kind: Kind = "relationship"
            owners = {work.types.get(x, x) for x in found.labels} or work.rel_vars.get(found.var or "", set())
            known = self.facts.types
        else:
            kind = "node"
            owners = {work.labels.get(x, x) for x in found.labels}
            if not owners and found.var and found.var not in work.query.rebound:
                owners = work.node_vars.get(found.var, set())
            known = self.facts.labels
        owners = {o for o in owners if o in known}
        return (kind, owners.pop()) if len(owners) == 1 else None

    def _types(self, owner: tuple[Kind, str], prop: str) -> set[str]:
        info = self.facts.properties_of(*owner).get(prop)
        return set(info.types) if info is not None else set()

    def _comparable(self, work: _Check, owner: tuple[Kind, str], prop: str, literal: Literal_) -> None:
        """A property compared by order (`<`, `>`, `<>`) with a literal of another kind compares nothing:
        '1990' with a number, 1990 with a text. The literal is written as the property's kind (a value
        repair), or that is told."""
        types, given, label = self._types(owner, prop), literal.value, owner[1]
        if isinstance(given, str) and types and types <= NUMERIC:
            kind, other = "numbers", GraphFacts.other_type(given)
        elif isinstance(given, (int, float)) and types == {"STRING"}:
            kind, other = "text", GraphFacts.other_type(given)
        else:
            return
        shown = json.dumps(given, ensure_ascii=False)
        said = f"{label}.{prop} holds {kind}; the query compares it with {shown}"
        if other is not None and self.map_values:
            work.repair(literal.span, _literal_text(other, work.cypher[literal.span[0] : literal.span[1]]), said)
        else:
            work.find(said)

    def _value(self, work: _Check, owner: tuple[Kind, str], prop: str, found: ValueFilter) -> None:
        given, span, label = found.literal.value, found.literal.span, owner[1]
        fact = self.facts.value(label, prop, given, found.test, kind=owner[0])
        if fact.kind == "stored":
            return
        if fact.kind == "unknown":
            work.unknown = True
            return
        shown = json.dumps(given, ensure_ascii=False)
        test = found.test.lower()
        if fact.kind == "absent":
            said = (
                f"no {label} has {prop} {shown} (nor a close value)"
                if found.test == "="
                else f"no {label} has a {prop} that {test} {shown}, in any case"
            )
            work.find(said, blocking=False)
            return
        if fact.kind == "others":
            forms = ", ".join(json.dumps(v, ensure_ascii=False) for v in fact.value)
            work.find(f"{label}.{prop} holds {forms}, not {shown}: say which is meant")
            return
        stored = json.dumps(fact.value, ensure_ascii=False)
        if found.test != "=":  # a part of a text: whether its case matters is the question's to say
            work.find(f"{label}.{prop} holds {stored} in another case than the query's {shown}")
            return
        said = f"{label}.{prop} {shown} is stored as {stored}"
        if self.map_values:
            work.repair(span, _literal_text(fact.value, work.cypher[span[0] : span[1]]), said)
            work.mappings.append(ValueMapping(label=label, property=prop, given=str(given), mapped=str(fact.value)))
        else:
            work.find(said)
