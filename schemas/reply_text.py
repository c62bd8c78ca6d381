"""How a finished run says its answer to a person: the stop reason in plain words, rows as a table.

Every graph ends with an `AIMessage` a chat client (LangGraph Studio, agent-chat-ui, the SDK's
`messages-tuple` stream) shows as the answer; each result type writes its text (`reply_text`) with
these helpers. The command line prints its own, terser `summary()` beside the live steps.
"""

from __future__ import annotations

import json
from typing import Any

#: Every stop reason of every agent and flow, as the end of "Stopped: ...". A reason missing here
#: (one of a user's own agent) is shown as its name; a test checks every declared reason is here.
STOP_WORDS: dict[str, str] = {
    # the engine's
    "max_steps": "the step limit was reached",
    "score_threshold": "the model scored the result above the threshold and kept what gave it",
    "non_empty_result": "the result was not empty, and the model kept what gave it without rejecting it",
    "empty_result": (
        "the query found no rows, the model kept it, and the graph holds every label, relationship and "
        "property it names: no rows is the answer"
    ),
    "not_in_graph": (
        "the model kept a query naming what the graph does not hold, after being told so: the graph cannot "
        "answer the question as asked"
    ),
    "no_progress": "the model kept proposing what had already run",
    "model_error": "the model's replies could not be used, even after retries",
    "tool_unavailable": "the database could not be reached",
    "invalid_input": "there was no question to answer",
    "awaiting_approval": "paused until a reviewer approves, edits or rejects the query",
    # the agents' own
    "rejected": "the reviewer rejected the query",
    "finished": "the agent gave its final answer",
    "validated": "the output passed validation",
    # the text-to-Cypher flows'
    "answered": "the rows were summarised into an answer",
    "refused": "the question is outside what the graph holds",
    "query_failed": "the query failed",
    "retries_exhausted": "the corrections ran out",
    "budget": "the cap on model calls was reached",
}

ROWS_IN_REPLY = 20  # rows an answer message shows; the output's `rows` field holds them all


def stop_words(reason: str | None) -> str:
    """`reason` in plain words ("unknown" when a run has none)."""
    if not reason:
        return "unknown"
    return STOP_WORDS.get(reason, reason.replace("_", " "))


def _cell(value: Any) -> str:
    """One value as a table cell: text as it is, anything else as JSON; pipes escaped, one line."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown_table(columns: list[str], rows: list[list[Any]], truncated: bool, limit: int = ROWS_IN_REPLY) -> str:
    """The rows as a Markdown table of at most `limit` rows, then a line saying what was left out:
    rows beyond the limit, and rows the database's row cap cut (`truncated`)."""
    if not rows:
        return "It returned no rows."
    width = max(len(columns), *(len(row) for row in rows))
    header = [*columns, *(f"column {i + 1}" for i in range(len(columns), width))]
    lines = ["| " + " | ".join(_cell(name) for name in header) + " |", "|" + " --- |" * width]
    for row in rows[:limit]:
        cells = [*row, *([""] * (width - len(row)))]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    count = f"{len(rows)}+" if truncated else str(len(rows))
    notes = []
    if len(rows) > limit:
        notes.append(f"Showing {limit} of {count} rows.")
    if truncated:
        notes.append(f"The result was cut at {len(rows)} rows by the row cap: more rows exist.")
    return "\n".join([*lines, *(["", *notes] if notes else [])])


def fenced(text: str, language: str = "") -> str:
    """`text` as a Markdown code block whose fence no line of it can close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"
