"""Prompts of the knowledge-graph query agent, and the schema section of the kg_prompt."""

from __future__ import annotations

import json

from schemas.graphdb import Dialect, GraphSchema, PropertyInfo

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
1. If you consistently obtain empty results, please consider removing constraints such as relationship constraints to try to obtain a result.
2. You should use previous critique to improve your query.
3. If the database returned an error, fix exactly what the error names, in the dialect described below.
4. Only generate a query without returning any other text.
Call the `ReviseQuery` tool: `answer` is the previous query, `reflection` your critique of its result, `revised_query` the improved query, and `score` how well the previous query's result answers the question, from 0 (not at all) to 10 (fully)."""

DIALECT_NOTES: dict[Dialect, str] = {
    "falkordb": (
        "The database is FalkorDB (openCypher). It does NOT support: EXISTS {...} or COUNT {...} "
        "subqueries (use a pattern predicate in WHERE, or OPTIONAL MATCH with count()); datetime(), "
        "duration.between() and other temporal arithmetic; the =~ regular-expression operator (use "
        "STARTS WITH, ENDS WITH, CONTAINS, toLower()); APOC procedures; label expressions such as "
        "(n:A|B); shortestPath() inside MATCH (compute it in WITH or RETURN). Only read queries are allowed."
    ),
    "neo4j": ("The database is Neo4j 5 (Cypher 5). Do not use APOC procedures. Only read queries are allowed."),
}


def _property_text(prop: PropertyInfo) -> str:
    kinds = "|".join(prop.types) or "ANY"
    if not prop.examples:
        return f"{prop.name}: {kinds}"
    examples = ", ".join(json.dumps(e, ensure_ascii=False) for e in prop.examples)
    return f"{prop.name}: {kinds} (e.g. {examples})"


def schema_text(schema: GraphSchema) -> str:
    """The graph's labels, relationship patterns and typed properties, as prompt text."""
    lines = ["Node labels and their properties:"]
    for node in schema.nodes:
        props = "; ".join(_property_text(p) for p in node.properties) or "no properties"
        lines.append(f"- (:{node.label}) {props}")
    lines.append("Relationship types, with their direction and properties:")
    for rel in schema.relationships:
        props = "; ".join(_property_text(p) for p in rel.properties)
        for start, end in rel.patterns or [("?", "?")]:
            lines.append(f"- (:{start})-[:{rel.type}]->(:{end})" + (f" {props}" if props else ""))
    return "\n".join(lines)


def build_kg_prompt(schema: GraphSchema, question: str | None = None, dialect: Dialect | None = None) -> str:
    """The seed's kg_prompt: the schema, the dialect, the rules, and the question."""
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
