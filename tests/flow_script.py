"""A scripted model for the text-to-Cypher flows: each step's replies come from its own queue.

Every flow prompt names the tool it wants (`Call the \\`CypherQuery\\` tool`), so the
reply is taken from that tool's queue; an item may be a function of the messages
(for parallel planner branches, whose order is not fixed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage

from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply


def flow_model(**queues: list[Any]) -> ScriptedChatModel:
    def reply(messages: list[BaseMessage]) -> Any:
        tool = re.findall(r"Call the `(\w+)` tool", str(messages[0].content))[-1]
        if not queues.get(tool):
            raise RuntimeError(f"the script has no more {tool} replies")
        item = queues[tool].pop(0)
        return item(messages) if isinstance(item, Callable) else tool_reply(tool, item)  # type: ignore[arg-type]

    return ScriptedChatModel(default=reply)


def asked(model: ScriptedChatModel, tool: str) -> list[str]:
    """The user messages of every call that asked for `tool`, in order."""
    return [str(call[-1].content) for call in model.calls if f"Call the `{tool}` tool" in str(call[0].content)]
