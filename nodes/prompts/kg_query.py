"""Prompts of the knowledge-graph query agent, and the schema sections of its prompts.

A prompt line that ends in a backslash goes on with the next one: the backslash joins them, no newline.

The draft is sent the whole kg_prompt: the schema with typed properties and example values (two a
property, none of prose), what the dialect lacks (named only: `DIALECT_SUMMARY`) and the rules.
A revision judging rows is sent only `compact_schema_text`, the names it may use (labels,
relationship patterns, property names): the draft's query already fits the schema, and the full
text, resent at every revision, would cost more than the rows it judges
(benchmarks/prompt_growth.py). A revision judging an error is sent the whole dialect notes (what to
write instead) too, and a kg_prompt the user gave, since that is when the dialect and the user's
rules matter most. Relationship types without properties between the same labels share one pattern,
`(:Person)-[:DIRECTED|PRODUCED|WROTE]->(:Movie)`, in both. Every part is said shortly: a one-query
question costs at most 1.2x the tokens of LangChain's FalkorDBQAChain (benchmarks/qa_chain_tokens.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from reflexion_agents.nodes.common.schema_text import DIALECT_SUMMARY, relationship_patterns, schema_text
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, PropertyInfo

#: The draft's system prompt, before the schema: biochatter's role and time, said shortly (the prompt
#: is sent with every draft).
QUERY_SYSTEM_PROMPT = (
    "You are a graph database expert who answers questions with '{query_lang}' queries. Current time {time}. "
    "{instruction}"
)

DRAFT_INSTRUCTION = "Call `GenerateQuery` with one read-only query that answers the user's question."

#: A revision's whole system prompt, before the schema's names: no role (the draft gave it), the
#: time (a question may say "this year"), what to do with the result judged, and what the score rates
#: (said in the `ReviseQuery` tool's fields too, which a model without tool calling never sees).
REVISE_SYSTEM_PROMPT = (
    "Current time {time}. Revise your {query_lang} query from its result: fix a database error or what the "
    "check against the graph names; loosen a query whose results keep coming back empty; keep one whose "
    "result answers the question. Call `ReviseQuery`; its `score` rates the result shown, not your revision."
)

COMPACT_SCHEMA_HEADER = "Use only these labels, relationship types and properties:"


def build_kg_prompt(schema: GraphSchema, question: str | None = None, dialect: Dialect | None = None) -> str:
    """The kg_prompt (biochatter's `BioCypherPromptEngine.generate_query_prompt`): the schema, the dialect,
    the rules, and the question."""
    parts = [
        "Use only these labels, relationship types (in the direction shown) and properties; values must "
        "match the examples' spelling and case.",
        schema_text(schema),
    ]
    chosen = dialect or schema.dialect
    if chosen:
        parts.append(DIALECT_SUMMARY[chosen])
    parts.append(
        "Return only what the question asks for, with readable column aliases; filter out nulls when ordering."
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
    return "\n".join(lines + relationship_patterns(schema, _names, inside=True))


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
