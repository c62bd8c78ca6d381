"""What the model is shown of the memory: every message, with the rows of older results left out.

The memory grows by a draft or revision and a tool result at every step, and each prompt carries
it all; rows of results the loop has moved past cost tokens on every later call without helping
the model judge the newest one (benchmarks/prompt_growth.py). Within the current question, the
last `keep` results that returned rows stay whole; older ones keep everything up to their
`Result:` line (any note, the query however many lines it spans, the row count and the columns)
and lose their rows. Errors, skipped repeats, stop notes and earlier questions' answers are never
shortened. Only the prompt is trimmed: the memory, the outcomes and the checkpoints keep every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

RESULT_LINE = "Result: "  # see nodes.tools.cypher.describe_result


def _artifact(message: ToolMessage) -> dict[str, Any]:
    artifact = message.artifact
    if isinstance(artifact, BaseModel):
        return artifact.model_dump()
    return artifact if isinstance(artifact, dict) else {}


def _rows_start(message: BaseMessage) -> int | None:
    """The line where a result's rows begin, or None when the message is not a result with rows."""
    if not isinstance(message, ToolMessage):
        return None
    outcome = _artifact(message)
    if not outcome.get("executed") or outcome.get("error") or not outcome.get("rows"):
        return None
    lines = str(message.content).split("\n")
    header = next((i for i, line in enumerate(lines) if line.startswith(RESULT_LINE)), None)
    return header + 1 if header is not None and header + 1 < len(lines) else None


def _shortened(message: ToolMessage, rows_start: int) -> ToolMessage:
    lines = str(message.content).split("\n")
    note = f"[{len(lines) - rows_start} row line(s) not repeated: a later result is the one to judge]"
    return message.model_copy(update={"content": "\n".join([*lines[:rows_start], note])})


def prompt_messages(messages: Sequence[BaseMessage], keep_tool_results: int | None) -> list[BaseMessage]:
    """`messages` with the rows of all but the last `keep_tool_results` results of the current
    question left out; None keeps everything."""
    if keep_tool_results is None:
        return messages if isinstance(messages, list) else list(messages)
    question = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    results = [(i, start) for i, m in enumerate(messages) if i > question and (start := _rows_start(m)) is not None]
    old = dict(results[: max(0, len(results) - keep_tool_results)])
    return [_shortened(m, old[i]) if i in old else m for i, m in enumerate(messages)]  # type: ignore[arg-type]
