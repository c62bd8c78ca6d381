"""Prompts of the knowledge-graph query agent, and the schema sections of its prompts.

A prompt line that ends in a backslash goes on with the next one: the backslash joins them, no newline.

The draft is sent the whole kg_prompt: the schema with typed properties and example values, the
dialect notes and the rules. A revision judging rows is sent only `compact_schema_text`, the
names it may use (labels, relationship patterns, property names): the draft's query already fits
the schema, and the full text, resent at every revision, would cost more than the rows it judges
(benchmarks/prompt_growth.py). A revision judging an error is sent the dialect notes too, and a
kg_prompt the user gave, since that is when the dialect and the user's rules matter most.
"""

from __future__ import annotations

from dataclasses import dataclass

from reflexion_agents.nodes.common.schema_text import DIALECT_NOTES, schema_text
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, PropertyInfo

QUERY_SYSTEM_PROMPT = (
    "As a senior researcher and graph database expert, your task is to generate '{query_lang}' "
    "queries to extract data from our graph database based on the user's question. "
    "Current time {time}. {instruction}"
)

DRAFT_INSTRUCTION = "Call `GenerateQuery` with one read-only query that answers the user's question."

#: A revision's whole system prompt, before the schema's names: no role (the draft gave it), the
#: time (a question may say "this year"), what to do with the result judged, and what the score means.
REVISE_SYSTEM_PROMPT = (
    "Current time {time}. Revise your {query_lang} query using its result: fix what a database error or the "
    "check against the graph names; if results keep coming back empty, loosen the query; if the result answers "
    "the question, keep the query. Call `ReviseQuery`; its `score` rates the result shown (not your revision), "
    "0 to 10."
)

COMPACT_SCHEMA_HEADER = "Labels and relationship types, with their properties (use only these):"


def build_kg_prompt(schema: GraphSchema, question: str | None = None, dialect: Dialect | None = None) -> str:
    """The kg_prompt (biochatter's `BioCypherPromptEngine.generate_query_prompt`): the schema, the dialect,
    the rules, and the question."""
    parts = [
        "The graph database has this schema. Use only these labels, relationship types "
        "(in the direction shown) and properties; property values must match the examples' spelling and case.",
        schema_text(schema),
    ]
    chosen = dialect or schema.dialect
    if chosen:
        parts.append(DIALECT_NOTES[chosen])
    parts.append(
        "Return only the properties the question asks for, with readable column aliases; nulls sort "
        "first or last depending on the database, so filter them out when ordering."
    )
    if question:
        parts.append(f"Question: {question}")
    return "\n\n".join(parts)


def _names(properties: list[PropertyInfo]) -> str:
    return " {" + ", ".join(p.name for p in properties) + "}" if properties else ""


def compact_schema_text(schema: GraphSchema) -> str:
    """The schema's names only, in Cypher pattern form: `(:Label {a, b})` and
    `(:Start)-[:TYPE {c}]->(:End)`, without types, example values or dialect notes."""
    lines = [COMPACT_SCHEMA_HEADER]
    lines += [f"(:{node.label}{_names(node.properties)})" for node in schema.nodes]
    for rel in schema.relationships:
        for start, end in rel.patterns or [("?", "?")]:
            lines.append(f"(:{start})-[:{rel.type}{_names(rel.properties)}]->(:{end})")
    return "\n".join(lines)


@dataclass(frozen=True)
class SchemaPrompts:
    """What the agent reads from a database's schema once: the kg_prompt, its compact form, and the
    schema itself (the schema check reads it)."""

    full: str
    compact: str
    schema: GraphSchema


def schema_prompts(schema: GraphSchema, dialect: Dialect | None = None) -> SchemaPrompts:
    return SchemaPrompts(
        full=build_kg_prompt(schema, dialect=dialect), compact=compact_schema_text(schema), schema=schema
    )
