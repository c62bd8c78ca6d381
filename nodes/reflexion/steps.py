"""State updates made by the engine's three nodes, independent of any particular tool.

The agent class supplies the hooks (responders, the tool, how to read an action
and a score); these functions turn their results into typed state updates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from pydantic import BaseModel

from nodes.reflexion.responder import ResponderReply
from nodes.reflexion.stop_rules import already_ran
from schemas.reflexion import StopReason, ToolOutcome


def last_tool_call_id(messages: list[BaseMessage]) -> str:
    """The id of the newest assistant tool call, which the next ToolMessage answers."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            return message.tool_calls[-1]["id"]
    return "call_none"


def draft_update(reply: ResponderReply, action_of: Callable[[BaseModel], str]) -> dict[str, Any]:
    if reply.parsed is None or reply.message is None:
        return {"usage": reply.usage, "stop_reason": "model_error", "error": f"draft: {reply.error}"}
    return {"messages": [reply.message], "usage": reply.usage, "action": action_of(reply.parsed)}


def skipped_tool_message(state: Mapping[str, Any]) -> ToolMessage | None:
    """A ToolMessage telling the model its action already ran, or None if it is new."""
    outcomes: list[ToolOutcome] = state.get("outcomes") or []
    earlier = already_ran(state.get("action"), outcomes)
    if earlier is None:
        return None
    step = state.get("steps", 0) + 1
    content = (
        f"Not executed: this is the same query that already ran at step {earlier.step}, "
        f"and it gave the result shown then. Write a different query.\nQuery: {state.get('action')}"
    )
    outcome = ToolOutcome(step=step, action=state.get("action") or "", executed=False, content=content)
    return ToolMessage(
        content=content,
        tool_call_id=last_tool_call_id(state.get("messages") or []),
        artifact=outcome.model_dump(),
    )


def tool_update(state: Mapping[str, Any], message: ToolMessage, stop_reason: StopReason | None = None) -> dict[str, Any]:
    """Record a tool step; the outcome is read from the message's artifact, not its text."""
    step = state.get("steps", 0) + 1
    if isinstance(message.artifact, (dict, ToolOutcome)):
        outcome = ToolOutcome.model_validate(message.artifact).model_copy(update={"step": step})
    else:  # a custom tool that returned plain text: non-empty text is a result
        text = str(message.content)
        outcome = ToolOutcome(step=step, action=state.get("action") or "", executed=True, non_empty=bool(text.strip()), content=text)
    update: dict[str, Any] = {
        "messages": [message],
        "steps": step,
        "outcomes": [*(state.get("outcomes") or []), outcome],
        "repeats": 0 if outcome.executed else state.get("repeats", 0) + 1,
    }
    if stop_reason:
        update.update(stop_reason=stop_reason, error=outcome.error)
    return update


def revise_update(
    state: Mapping[str, Any],
    reply: ResponderReply,
    action_of: Callable[[BaseModel], str],
    score_of: Callable[[BaseModel], float | None],
) -> dict[str, Any]:
    """Record a revision: its score goes onto the outcome it judged; its action runs next."""
    if reply.parsed is None or reply.message is None:
        return {"usage": reply.usage, "stop_reason": "model_error", "error": f"revise: {reply.error}"}
    score = score_of(reply.parsed)
    outcomes = list(state.get("outcomes") or [])
    if outcomes:
        outcomes[-1] = outcomes[-1].model_copy(update={"score": score})
    return {
        "messages": [reply.message],
        "usage": reply.usage,
        "action": action_of(reply.parsed),
        "last_score": score,
        "outcomes": outcomes,
    }
