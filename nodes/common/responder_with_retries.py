"""biochatter's `ResponderWithRetries`, and how the engine reads any responder's reply.

biochatter subclasses return `ResponderWithRetries(runnable, validator)` from their
`_create_initial_responder` / `_create_revise_responder`: `respond(messages)` invokes the
runnable with `{"messages": messages}`, validates the reply (for example with
`PydanticToolsParser(tools=[GenerateQuery])`), feeds the validation error back and tries
again, and returns the model's `AIMessage`. The engine's own `Responder` returns a richer
`ResponderReply`; `respond_with` turns either into that, so the loop takes both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, ValidationError

from reflexion_agents.nodes.common.responder import (
    Responder,
    ResponderReply,
    adrive,
    drive,
    normalised_reply,
    parse_reply,
    usage_of,
)
from reflexion_agents.nodes.models.wire import reply_from_client_error, sendable, usable_reply
from reflexion_agents.schemas.reflexion import TokenUsage

DEFAULT_ATTEMPTS = 3  # biochatter's


class ToolCallArguments(BaseModel):
    """Any tool call's arguments, when a responder names no schema to read them with."""

    model_config = ConfigDict(extra="allow")


class ResponderWithRetries:
    """Invoke `runnable` with `{"messages": state}`, validate with `validator`, retry with the error.

    As biochatter's, with two fixes: a reply the validator turns into nothing (no tool call at
    all) counts as invalid too, and the model calls of every attempt are counted in `usage`.
    After the last attempt the last reply is returned as it is, and the engine reports why it
    cannot be used."""

    def __init__(self, runnable: Any, validator: Any, max_attempts: int = DEFAULT_ATTEMPTS) -> None:
        self.runnable, self.validator = runnable, validator
        self.max_attempts = max(1, int(max_attempts))
        self.usage = TokenUsage()

    def _check(self, response: Any) -> str | None:
        """The validation error to feed back, or None if `response` is usable."""
        try:
            parsed = self.validator.invoke(response)
        except (ValidationError, OutputParserException, ValueError) as e:
            return repr(e)
        if not parsed and isinstance(response, AIMessage) and response.invalid_tool_calls:
            bad = response.invalid_tool_calls[0]
            return str(bad.get("error") or "the tool call arguments are not valid JSON")
        return None if parsed else "the reply must call one of the tools offered"

    def _attempts(self, state: list[BaseMessage]) -> Generator[dict[str, Any], Any, Any]:
        """The retry loop, written once for both call styles: it yields each input for the runnable
        and is sent its reply; it returns the reply to use."""
        response: Any = None
        for _ in range(self.max_attempts):
            response = yield {"messages": sendable(state)}
            self._count(response)
            error = self._check(response)
            if error is None:
                return response
            state = [*state, HumanMessage(content=error)]
        return response

    def respond(self, state: list[BaseMessage]) -> Any:
        return drive(self._attempts(state), self._invoke)

    async def arespond(self, state: list[BaseMessage]) -> Any:
        return await adrive(self._attempts(state), self._ainvoke)

    def _invoke(self, request: dict[str, Any]) -> Any:
        try:
            return self.runnable.invoke(request)
        except ValidationError as e:  # arguments that are not an object: a reply to correct, as bad JSON is
            return _reply_or_raise(e)

    async def _ainvoke(self, request: dict[str, Any]) -> Any:
        try:
            if hasattr(self.runnable, "ainvoke"):
                return await self.runnable.ainvoke(request)
            return await asyncio.to_thread(self.runnable.invoke, request)  # biochatter's may be sync only
        except ValidationError as e:
            return _reply_or_raise(e)

    def _count(self, response: Any) -> None:
        if isinstance(response, AIMessage):
            self.usage = self.usage + usage_of(response)


def _reply_or_raise(error: ValidationError) -> AIMessage:
    reply = reply_from_client_error(error)
    if reply is None:
        raise error
    return reply


def _schema_for(responder: Any, message: AIMessage) -> type[BaseModel]:
    """The pydantic model to read `message` with: the validator's tool that the message calls."""
    tools = [
        t
        for t in getattr(getattr(responder, "validator", None), "tools", None) or []
        if isinstance(t, type) and issubclass(t, BaseModel)
    ]
    called = {c.get("name") for c in message.tool_calls}
    return next((t for t in tools if t.__name__ in called), tools[0] if tools else ToolCallArguments)


def reply_from_output(responder: Any, output: Any) -> ResponderReply:
    """What a responder returned, as the engine records it: a `ResponderReply` as it is; an
    `AIMessage` parsed with the responder's schema (its validator's tools), usage included."""
    if isinstance(output, ResponderReply):
        return output
    output = usable_reply(output)
    usage = getattr(responder, "usage", None)
    if not isinstance(output, AIMessage):
        wrong = f"the responder returned {type(output).__name__}, not an AIMessage"
        return ResponderReply(message=None, parsed=None, usage=usage or TokenUsage(llm_calls=1), error=wrong)
    usage = usage if isinstance(usage, TokenUsage) and usage.llm_calls else usage_of(output)
    parsed, call_id, error = parse_reply(output, _schema_for(responder, output))
    if parsed is None:
        return ResponderReply(message=None, parsed=None, usage=usage, error=error)
    return ResponderReply(message=normalised_reply(output, parsed, call_id), parsed=parsed, usage=usage)


def _failed(error: Exception) -> ResponderReply:
    return ResponderReply(message=None, parsed=None, error=f"the responder failed: {type(error).__name__}: {error}")


def respond_with(responder: Any, messages: list[BaseMessage]) -> ResponderReply:
    """Call any responder (the engine's own or biochatter-style) and read its reply."""
    if isinstance(responder, Responder):
        return responder.respond(messages)
    try:
        output = responder.respond(messages)
    except Exception as e:
        return _failed(e)
    return reply_from_output(responder, output)


async def arespond_with(responder: Any, messages: list[BaseMessage]) -> ResponderReply:
    if isinstance(responder, Responder):
        return await responder.arespond(messages)
    try:
        if hasattr(responder, "arespond"):
            output = await responder.arespond(messages)
        else:
            output = await asyncio.to_thread(responder.respond, messages)
    except Exception as e:
        return _failed(e)
    return reply_from_output(responder, output)
