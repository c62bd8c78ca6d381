"""Prompts of the text-to-Cypher flows: guardrail, generation, correction, evaluation, summary, planning.

A prompt line that ends in a backslash goes on with the next one: the backslash joins them, no newline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reflexion_agents.nodes.common.schema_text import DIALECT_NOTES
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema

NULLS_NOTE = (
    "Properties can be null. When you ORDER BY, aggregate (min, max, avg, sum) or compare a property, "
    "filter it with `IS NOT NULL` first, or nulls will come first or skew the result."
)

GUARDRAIL_PROMPT = """You guard a question-answering service over one graph database.
Decide whether the graph can answer the user's question from its data. The graph holds:
{domain}

Judge by the schema, not by the topic's name alone: a question is answerable when its answer can be computed from \
these labels, relationships and properties.
If it is not answerable, give 2 or 3 example questions this graph can answer.
Call the `GuardrailDecision` tool."""

REWRITE_PROMPT = """Rewrite the user's latest question so that it can be understood without the conversation before \
it: name what its pronouns and references ("it", "he", "that movie", "the same year") stand for, from the \
conversation. Keep everything else as the user wrote it; a question that needs nothing from the conversation is \
returned unchanged.
The conversation so far:
{history}
Call the `StandaloneQuestion` tool."""

GENERATE_PROMPT = """Translate the user's question into ONE read-only Cypher statement for the graph below.
Use only the labels, relationship types (in the direction shown) and properties in the schema; string values must \
match the stored spelling and case.
Prefer a single statement, even for questions with several parts. Return only what the question asks for, with \
readable column aliases.
{nulls}
{dialect}

Schema:
{schema}
{examples}
Call the `CypherQuery` tool."""

CORRECT_INSTRUCTION = """Your previous query for this question did not work.
Question: {question}
Query:
{cypher}
Problem: {feedback}
{mappings}
Write a corrected query that fixes exactly that problem."""

EVALUATE_PROMPT = """Judge whether a database result answers a question. Be strict but fair: the rows must contain the \
information asked for.
Question: {question}
Query:
{cypher}
Result ({summary}):
{rows}
Call the `Evaluation` tool: ok=true if the rows answer the question; otherwise say what is wrong and how to fix the \
query."""

SUMMARIZE_PROMPT = """Answer the question from the database result below, and only from it. Say briefly what the \
answer is based on.
If the result is empty, say that the database holds no such information.
Question: {question}
Query:
{cypher}
Result ({summary}):
{rows}
{mappings}Call the `Summary` tool."""

PLAN_PROMPT = """Plan the information to fetch from the graph below to answer the user's question.
Return ONE question when a single Cypher statement can fetch everything (most multi-part questions); split only into \
independent questions that can be fetched in parallel, at most 4.
Each question must be a data-fetching request, not a comparison or reasoning task.
Schema:
{schema}
Call the `SubQuestions` tool."""

CHECK_PROMPT = """Decide whether the information gathered answers the user's question.
Question: {question}
Information gathered:
{gathered}
Call the `InformationCheck` tool; if something is missing, list at most 3 further data-fetching questions."""

PLAN_SUMMARY_PROMPT = """Answer the question from the information gathered below, and only from it. Say briefly what \
the answer is based on.
Question: {question}
Information gathered:
{gathered}
Call the `Summary` tool."""

ROWS_IN_PROMPT = 30


def domain_text(schema: GraphSchema) -> str:
    """A compact picture of the graph for the guardrail: labels with properties, relationship patterns."""
    lines = [f"- (:{n.label}) with {', '.join(p.name for p in n.properties) or 'no properties'}" for n in schema.nodes]
    for rel in schema.relationships:
        lines += [f"- (:{s})-[:{rel.type}]->(:{e})" for s, e in rel.patterns or [("?", "?")]]
    return "\n".join(lines) or "- nothing yet: the graph is empty"


def examples_text(examples: Sequence[dict[str, str]], on_graph: bool = True) -> str:
    """The examples for the prompt; called "on this graph" only when they were written for it."""
    if not examples:
        return ""
    shown = "\n\n".join(f"Question: {e['question']}\nCypher: {e['cypher']}" for e in examples)
    where = " on this graph" if on_graph else " (written for another graph: follow their style, not their labels)"
    return f"\nExamples of questions and their Cypher{where}:\n{shown}\n"


def generate_prompt(
    schema: str, dialect: Dialect | None, examples: Sequence[dict[str, str]], *, on_graph: bool = True
) -> str:
    return GENERATE_PROMPT.format(
        nulls=NULLS_NOTE,
        dialect=DIALECT_NOTES.get(dialect, "") if dialect else "",
        schema=schema,
        examples=examples_text(examples, on_graph),
    )


def rows_text(columns: list[str], rows: list[list[Any]], truncated: bool) -> tuple[str, str]:
    """(summary, rows) for a prompt: how many rows there are and their columns, and the first rows, a
    JSON array a line (as the knowledge-graph agent shows them: `nodes.tools.cypher.describe_result`)."""
    shown = rows[:ROWS_IN_PROMPT]
    lines = "\n".join(json.dumps(row, ensure_ascii=False, default=str) for row in shown) or "(no rows)"
    named = f", columns: {json.dumps(columns, ensure_ascii=False)}" if rows and columns else ""
    summary = f"{len(rows)} rows{named}"
    summary += ", cut at the row cap: more rows exist" if truncated else ""
    if len(rows) > len(shown):
        summary += f", the first {len(shown)} shown"
    return summary, lines
