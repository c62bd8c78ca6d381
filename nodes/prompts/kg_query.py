"""Prompts of the knowledge-graph query agent, and the schema section of the kg_prompt.

A prompt line that ends in a backslash goes on with the next one: the backslash joins them, no newline.
"""

from __future__ import annotations

from nodes.common.schema_text import DIALECT_NOTES, schema_text
from schemas.graphdb import Dialect, GraphSchema

QUERY_SYSTEM_PROMPT = (
    "As a senior researcher and graph database expert, your task is to generate '{query_lang}' "
    "queries to extract data from our graph database based on the user's question. "
    "Current time {time}. {instruction}"
)

DRAFT_INSTRUCTION = (
    "Only generate query according to the user's question. Call the `GenerateQuery` tool: "
    "`answer` is one read-only query, `reflection` your critique of it, `search_queries` "
    "what the query looks up."
)

REVISE_INSTRUCTION = """Revise your previous query using the query result and follow the guidelines:
1. If you consistently obtain empty results, please consider removing constraints such as relationship constraints to \
try to obtain a result.
2. You should use previous critique to improve your query.
3. If the database returned an error, fix exactly what the error names, in the dialect described below.
4. Only generate a query without returning any other text.
Call the `ReviseQuery` tool: `answer` is the previous query, `reflection` your critique of its result, `revised_query` \
the improved query, and `score` how well the previous query's result answers the question, from 0 (not at all) to 10 \
(fully)."""


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
