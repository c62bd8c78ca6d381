"""Prune a schema that is too big for a prompt to what the question needs, with no model call.

Labels, relationship types and properties are scored by the words they share
with the question (names split at case changes and underscores, plus the sampled
example values); the best labels are kept with the relationships between them,
then the schema is cut to fit a character budget. A small schema is kept whole.
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.common.schema_text import schema_text
from reflexion_agents.schemas.graphdb import GraphSchema, NodeLabelInfo, RelationshipInfo
from reflexion_agents.schemas.settings import FLOW_DEFAULTS

DEFAULT_SCHEMA_CHARS = FLOW_DEFAULTS.schema_chars  # the setting's default (`FlowSettings`)
_WORD = re.compile(r"[A-Za-z0-9]+")


def words(text: str) -> set[str]:
    """Lower-case words of `text`, with camelCase and snake_case split and a plural `s` dropped."""
    split = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    found = {w.lower() for w in _WORD.findall(split)}
    return found | {w[:-1] for w in found if len(w) > 3 and w.endswith("s")}


def _label_score(node: NodeLabelInfo, asked: set[str]) -> int:
    score = 3 * len(words(node.label) & asked)
    for prop in node.properties:
        score += len(words(prop.name) & asked)
        score += 2 * sum(len(words(str(example)) & asked) for example in prop.examples)
    return score


def _rel_score(rel: RelationshipInfo, asked: set[str]) -> int:
    return 3 * len(words(rel.type) & asked) + sum(len(words(p.name) & asked) for p in rel.properties)


def prune_schema(schema: GraphSchema, question: str, max_chars: int = DEFAULT_SCHEMA_CHARS) -> GraphSchema:
    """The part of `schema` the question needs, at most about `max_chars` of prompt text."""
    if len(schema_text(schema)) <= max_chars:
        return schema
    asked = words(question)
    ranked = sorted(schema.nodes, key=lambda n: -_label_score(n, asked))
    relevant_rels = [r for r in schema.relationships if _rel_score(r, asked) > 0]
    wanted = {n.label for n in ranked if _label_score(n, asked) > 0}
    wanted |= {label for r in relevant_rels for pair in r.patterns for label in pair}
    if not wanted:  # nothing matched: the most connected labels are the best guess
        degree: dict[str, int] = {}
        for rel in schema.relationships:
            for start, end in rel.patterns:
                degree[start] = degree.get(start, 0) + 1
                degree[end] = degree.get(end, 0) + 1
        wanted = set(sorted(degree, key=lambda label: -degree[label])[:5])
    kept: list[NodeLabelInfo] = []
    for node in ranked:
        if node.label not in wanted:
            continue
        candidate = schema.model_copy(
            update={"nodes": [*kept, node], "relationships": _between(schema, {n.label for n in [*kept, node]})}
        )
        if kept and len(schema_text(candidate)) > max_chars:
            break
        kept.append(node)
    return schema.model_copy(update={"nodes": kept, "relationships": _between(schema, {n.label for n in kept})})


def _between(schema: GraphSchema, labels: set[str]) -> list[RelationshipInfo]:
    """Relationships whose patterns join kept labels, with only those patterns; a type whose
    endpoints the schema sample could not find is kept as it is (it may join any of them)."""
    kept = []
    for rel in schema.relationships:
        patterns = [p for p in rel.patterns if p[0] in labels and p[1] in labels]
        if patterns or not rel.patterns:
            kept.append(rel.model_copy(update={"patterns": patterns}))
    return kept
