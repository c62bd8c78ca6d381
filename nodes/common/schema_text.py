"""A graph's schema as prompt text, and what each database dialect does not support: shared by the
knowledge-graph agent's kg_prompt and the text-to-Cypher flows."""

from __future__ import annotations

import json

from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, PropertyInfo

DIALECT_NOTES: dict[Dialect, str] = {
    "falkordb": (
        "The database is FalkorDB (openCypher). It does NOT support: EXISTS {...} or COUNT {...} "
        "over more than one pattern or with their own RETURN (one pattern, with a WHERE, is fine); "
        "datetime() with an offset or a zone, duration.between() and other temporal arithmetic; the =~ "
        "regular-expression operator (use STARTS WITH, ENDS WITH, CONTAINS, toLower()); APOC procedures; "
        "label expressions such as "
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
