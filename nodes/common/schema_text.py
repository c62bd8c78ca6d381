"""A graph's schema as prompt text, and what each database dialect does not support: shared by the
knowledge-graph agent's kg_prompt and the text-to-Cypher flows."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from typing import Any

from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, PropertyInfo

DIALECT_NOTES: dict[Dialect, str] = {
    "falkordb": (
        "The database is FalkorDB (openCypher). It does NOT support: EXISTS {...} or COUNT {...} with more "
        "than one pattern or a RETURN of their own; datetime() with a zone or offset, duration.between() and "
        "other temporal arithmetic; =~ (use STARTS WITH, ENDS WITH, CONTAINS, toLower()); APOC; label "
        "expressions (n:A|B); shortestPath() in MATCH (use it in WITH or RETURN). Only read queries are allowed."
    ),
    "neo4j": ("The database is Neo4j 5 (Cypher 5). Do not use APOC procedures. Only read queries are allowed."),
}


#: Example values a property shows in a prompt: enough to show a value's form (its spelling, case,
#: range), and the prompt is sent with every draft.
EXAMPLES_SHOWN = 2
#: A property whose sampled texts run to this many words (the lower median) and `PROSE_CHARS` on
#: average holds prose (a tagline, a plot, a description): its wording shows nothing a query matches
#: on, so it shows no examples. Titles and names are shorter ("When Harry Met Sally": 20 characters).
PROSE_WORDS = 4
PROSE_CHARS = 20
EXAMPLE_TEXT_CHARS = 32  # a longer example text is left out (a long title), its shorter siblings shown


def _single(value: float) -> float:
    """`value` in single precision, read back."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _rounded(value: Any) -> Any:
    """A float stored in single precision as it was most likely written: 34.07, not the
    34.0699996948242 it reads back as. Any other float is shown as it is."""
    if not isinstance(value, float) or not math.isfinite(value) or value == 0:
        return value
    try:
        stored = _single(value)
    except OverflowError:  # beyond single precision: a double
        return value
    if stored != value and float(f"{stored:.15g}") != value:  # a double (the database prints 15 digits)
        return value
    return next((short for digits in range(1, 10) if _single(short := float(f"{value:.{digits}g}")) == stored), value)


def _prose(examples: list[Any]) -> bool:
    texts = [e for e in examples if isinstance(e, str)]
    if not texts:
        return False
    words = sorted(len(t.split()) for t in texts)
    return words[(len(words) - 1) // 2] >= PROSE_WORDS and sum(map(len, texts)) / len(texts) > PROSE_CHARS


def shown_examples(prop: PropertyInfo) -> list[Any]:
    """The example values a prompt shows of `prop`: the first few short ones, none of prose, floats
    stored in single precision as written."""
    if _prose(prop.examples):
        return []
    short = [e for e in prop.examples if not (isinstance(e, str) and len(e) > EXAMPLE_TEXT_CHARS)]
    return [_rounded(e) for e in short[:EXAMPLES_SHOWN]]


#: What a draft is told of the dialect: the constructs it lacks, named only. The whole notes (with what
#: to write instead) go with a revision judging a database error, which most often names one of them.
DIALECT_SUMMARY: dict[Dialect, str] = {
    "falkordb": (
        "The database is FalkorDB (openCypher). It does NOT support: APOC, =~, label expressions "
        "(n:A|B), EXISTS {...} or COUNT {...} over several patterns, zoned datetimes, duration arithmetic, "
        "shortestPath() in MATCH."
    ),
    "neo4j": DIALECT_NOTES["neo4j"],
}


def _property_text(prop: PropertyInfo) -> str:
    kinds = "|".join(prop.types) or "ANY"
    shown = shown_examples(prop)
    if not shown:
        return f"{prop.name}: {kinds}"
    examples = ", ".join(json.dumps(e, ensure_ascii=False) for e in shown)
    return f"{prop.name}: {kinds} (e.g. {examples})"


def relationship_patterns(
    schema: GraphSchema, properties: Callable[[list[PropertyInfo]], str], *, inside: bool = False
) -> list[str]:
    """Each relationship pattern as Cypher writes it, `(:Start)-[:TYPE]->(:End)`, with its properties'
    text after it (`inside`: in its brackets, `[:TYPE {a, b}]`); types without properties between the
    same labels share one pattern, `[:A|B|C]` (a graph with many such types shows each pair once)."""
    entries: list[str | tuple[str, str]] = []  # a pattern with properties, or a label pair's shared one
    shared: dict[tuple[str, str], list[str]] = {}
    for rel in schema.relationships:
        shown = properties(rel.properties)
        for start, end in rel.patterns or [("?", "?")]:
            if shown:
                entries.append(
                    f"(:{start})-[:{rel.type}{shown}]->(:{end})"
                    if inside
                    else f"(:{start})-[:{rel.type}]->(:{end}){shown}"
                )
                continue
            if (start, end) not in shared:
                entries.append((start, end))
            shared.setdefault((start, end), []).append(rel.type)
    return [
        entry if isinstance(entry, str) else f"(:{entry[0]})-[:{'|'.join(shared[entry])}]->(:{entry[1]})"
        for entry in entries
    ]


def schema_text(schema: GraphSchema) -> str:
    """The graph's labels, relationship patterns and typed properties, as prompt text."""
    lines = ["Nodes and their properties:"]
    for node in schema.nodes:
        props = "; ".join(_property_text(p) for p in node.properties) or "no properties"
        lines.append(f"- (:{node.label}) {props}")
    lines.append("Relationships and their properties:")
    typed = relationship_patterns(
        schema, lambda props: " " + "; ".join(_property_text(p) for p in props) if props else ""
    )
    lines += [f"- {pattern}" for pattern in typed]
    return "\n".join(lines)
