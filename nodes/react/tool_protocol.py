"""Read a tool-calling ReAct reply: a native tool call, or `{"thought": ..., "action": "fn(a=1)"}` as text.

One tool runs per step: a reply with several native calls keeps the first (the
observation says the others were dropped), so every call in the memory has its
answer and the conversation stays valid for the next request.
"""

from __future__ import annotations

import uuid

from langchain_core.messages import AIMessage, ToolCall
from langchain_core.messages.tool import tool_call

from reflexion_agents.nodes.common.responder import json_in_text
from reflexion_agents.nodes.models.wire import not_an_object
from reflexion_agents.nodes.tools.call_expression import CallExpressionError, parse_call_expression, render_call
from reflexion_agents.schemas.react import ReActAction

TEXT_FORMAT_HINT = 'Reply with one tool call, or with JSON {"thought": "...", "action": "tool_name(arg=value)"}.'


def _kept(reply: AIMessage, text: str, tool_calls: list[ToolCall] | None = None) -> AIMessage:
    return AIMessage(
        content=text,
        tool_calls=tool_calls or [],
        id=reply.id,
        usage_metadata=reply.usage_metadata,
        response_metadata=reply.response_metadata,
    )


def read_tool_reply(reply: AIMessage) -> tuple[AIMessage, ReActAction]:
    """(the reply as the memory keeps it, the action read from it)."""
    text = reply.text.strip()
    if reply.tool_calls:
        call = reply.tool_calls[0]
        args = call.get("args") or {}
        note = "Only the first tool call ran; call one tool at a time." if len(reply.tool_calls) > 1 else None
        action = ReActAction(
            thought=text,
            tool=call["name"],
            args=args,
            action=render_call(call["name"], [], args),
            call_id=call["id"],
            note=note,
        )
        return _kept(reply, text, [call]), action
    if reply.invalid_tool_calls:
        bad = reply.invalid_tool_calls[0]
        name, call_id = bad.get("name") or "unknown", bad.get("id") or f"call_{uuid.uuid4().hex[:12]}"
        call = tool_call(name=name, args={}, id=call_id)
        malformed = f"the arguments of `{name}` are not valid JSON: {bad.get('args')!r}"
        error = not_an_object(bad.get("args")) or malformed
        return _kept(reply, text, [call]), ReActAction(
            thought=text, action=f"{name}(...)", call_id=call_id, error=error
        )
    data = json_in_text(text)
    if data is None or not isinstance(data.get("action"), str):
        return _kept(reply, text), ReActAction(thought=text, error=f"the reply has no action. {TEXT_FORMAT_HINT}")
    thought, expression = str(data.get("thought") or ""), data["action"]
    try:
        name, positional, named = parse_call_expression(expression)
    except CallExpressionError as e:
        return _kept(reply, text), ReActAction(thought=thought, action=expression, error=str(e))
    return _kept(reply, text), ReActAction(
        thought=thought, tool=name, args=named, positional=positional, action=expression
    )
