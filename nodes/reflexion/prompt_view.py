"""What the model is shown of the memory: every message, with older tool results cut to their
header line.

The memory grows by a draft or revision and a tool result at every step, and each prompt carries
it all; rows of results the loop has moved past cost tokens on every later call without helping
the model judge the newest one. Trimming keeps the last `keep` tool results whole and shortens
the others to their first lines (the query, the row count and the columns). Only the prompt is
trimmed: the memory, the outcomes and the checkpoints keep every row.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, ToolMessage

HEADER_LINES = 2  # "Query: ..." and "Result: N row(s), columns: ..." (see nodes.tools.cypher.describe_result)


def _shortened(message: ToolMessage) -> ToolMessage:
    lines = str(message.content).split("\n")
    if len(lines) <= HEADER_LINES:
        return message
    note = f"[{len(lines) - HEADER_LINES} more line(s) not repeated: a later result is the one to judge]"
    return message.model_copy(update={"content": "\n".join([*lines[:HEADER_LINES], note])})


def prompt_messages(messages: list[BaseMessage], keep_tool_results: int | None) -> list[BaseMessage]:
    """`messages` with all but the last `keep_tool_results` tool results shortened; None keeps all."""
    if keep_tool_results is None:
        return messages
    tool_positions = [i for i, m in enumerate(messages) if isinstance(m, ToolMessage)]
    old = set(tool_positions[: max(0, len(tool_positions) - keep_tool_results)])
    return [_shortened(m) if i in old else m for i, m in enumerate(messages)]  # type: ignore[arg-type]
