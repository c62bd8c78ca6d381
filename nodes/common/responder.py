"""Call a chat model for one structured reply, tolerating the ways replies go wrong.

The reply is asked for as a tool call of a pydantic schema. A reply with no
tool call, arguments that are not a JSON object (malformed, or `1`, `"text"`),
or missing fields is answered with the error and retried; JSON written as plain
text (fenced or not) is accepted. Prompts go out `sendable` (no lone surrogates).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableBinding
from pydantic import BaseModel, ValidationError

from reflexion_agents.nodes.models.wire import (
    MAX_ARGUMENT_DEPTH,
    model_call_failure,
    nesting_depth,
    not_an_object,
    reply_from_client_error,
    sendable,
    shown_calls,
    token_count,
    usable_reply,
)
from reflexion_agents.schemas.reflexion import TokenUsage

R = TypeVar("R")

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass
class ResponderReply:
    """One responder call: the normalised reply and its parsed schema, or why there is none."""

    message: AIMessage | None
    parsed: BaseModel | None
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None


def usage_of(message: AIMessage) -> TokenUsage:
    """One model call and its tokens: LangChain's `usage_metadata`, else the provider's own
    `token_usage` (messages built by hand, as older clients and tests make them)."""
    meta = getattr(message, "usage_metadata", None) or {}
    if not isinstance(meta, dict) or not meta:
        raw = (getattr(message, "response_metadata", None) or {}).get("token_usage") or {}
        raw = raw if isinstance(raw, dict) else {}
        meta = {
            "input_tokens": raw.get("prompt_tokens"),
            "output_tokens": raw.get("completion_tokens"),
            "total_tokens": raw.get("total_tokens"),
        }
    return TokenUsage(
        llm_calls=1,
        input_tokens=token_count(meta.get("input_tokens")),
        output_tokens=token_count(meta.get("output_tokens")),
        total_tokens=token_count(meta.get("total_tokens")),
    )


def json_in_text(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text`, inside a code fence or surrounded by prose."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start in [i for i, ch in enumerate(candidate) if ch == "{"]:
            try:
                value, _ = decoder.raw_decode(candidate[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _validation_summary(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in error.errors())


def parse_reply(message: AIMessage, schema: type[BaseModel]) -> tuple[BaseModel | None, str | None, str | None]:
    """(parsed, tool call id, error): the schema instance read from `message`, or why not."""
    name = schema.__name__
    calls = [c for c in message.tool_calls if c.get("name") == name] or list(message.tool_calls)
    if calls:
        args = calls[0].get("args")
        if nesting_depth(args, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
            return None, None, f"the arguments of `{name}` nest deeper than {MAX_ARGUMENT_DEPTH} levels"
        try:
            return schema.model_validate(args), calls[0].get("id"), None
        except ValidationError as e:
            return None, None, f"the arguments of `{name}` are invalid: {_validation_summary(e)}"
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        malformed = f"the tool call arguments are not valid JSON ({bad.get('error') or bad.get('args')!r})"
        return None, None, not_an_object(bad.get("args")) or malformed
    data = json_in_text(message.text)  # text blocks only, whatever shape the content has
    if data is None:
        return None, None, f"the reply has no `{name}` tool call and no JSON object"
    if isinstance(data.get("args"), dict) and data.get("name") == name:
        data = data["args"]
    if nesting_depth(data, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
        return None, None, f"the JSON in the reply nests deeper than {MAX_ARGUMENT_DEPTH} levels"
    try:
        return schema.model_validate(data), None, None
    except ValidationError as e:
        return None, None, f"the JSON in the reply does not fit `{name}`: {_validation_summary(e)}"


def normalised_reply(message: AIMessage, parsed: BaseModel, call_id: str | None) -> AIMessage:
    """The reply as memory keeps it: exactly one well-formed tool call of the schema."""
    return AIMessage(
        content=message.content if isinstance(message.content, str) else "",
        tool_calls=[
            {
                "name": type(parsed).__name__,
                "args": parsed.model_dump(),
                "id": call_id or f"call_{uuid.uuid4().hex[:12]}",
                "type": "tool_call",
            }
        ],
        id=message.id,
        usage_metadata=message.usage_metadata,
        response_metadata=message.response_metadata,
    )


#: How many (model, schema) bindings are remembered: one per turn schema of every model in use.
BOUND_MODELS_KEPT = 64
_bound: OrderedDict[tuple[int, type[BaseModel]], tuple[weakref.ref[Any], dict[str, Any]]] = OrderedDict()
_bound_lock = threading.Lock()


def bound_to_schema(model: Any, schema: type[BaseModel]) -> Any:
    """`model` bound to answer with a `schema` tool call, converted once per (model, schema).

    Agents build a responder per turn (biochatter's hooks do), and `bind_tools` converts the
    schema to a JSON schema every time: a fifth of the loop's own CPU. What a binding adds to the
    model (its keyword arguments) is remembered, with a weak reference to the model, so a model
    whose agent is gone can be freed; bindings that are more than keyword arguments are not
    remembered. A text-only model (no `bind_tools`) is returned as it is: the JSON-in-text path
    still works."""
    key = (id(model), schema)
    with _bound_lock:
        hit = _bound.get(key)
        remembered = hit[1] if hit is not None and hit[0]() is model else None
        if remembered is not None:
            _bound.move_to_end(key)
    if remembered is not None:
        return model.bind(**remembered)
    try:
        runnable = model.bind_tools([schema], tool_choice=schema.__name__)
    except NotImplementedError:
        return model
    plain = isinstance(runnable, RunnableBinding) and runnable.bound is model and not runnable.config
    plain = plain and not runnable.config_factories and runnable.custom_input_type is None
    if plain and runnable.custom_output_type is None:
        try:
            reference = weakref.ref(model)
        except TypeError:
            return runnable
        with _bound_lock:
            _bound[key] = (reference, dict(runnable.kwargs))
            while len(_bound) > BOUND_MODELS_KEPT:
                _bound.popitem(last=False)
    return runnable


@functools.lru_cache(maxsize=64)
def system_message(text: str) -> SystemMessage:
    """The system message of `text`, one object per text: a run sends the same system prompt on
    every call, and `sendable` checks a message it has seen (by identity) only once."""
    return SystemMessage(content=text)


class Responder:
    """Ask `model` for a `schema` reply to `system_prompt` + the memory, retrying bad replies."""

    def __init__(self, model: BaseChatModel, schema: type[BaseModel], system_prompt: str, max_retries: int = 2) -> None:
        self.model, self.schema, self.system_prompt = model, schema, system_prompt
        self.max_retries = max(0, int(max_retries))
        self._runnable = bound_to_schema(model, schema)

    def _prompt(self, messages: list[BaseMessage], feedback: list[BaseMessage]) -> list[BaseMessage]:
        return sendable([system_message(self.system_prompt), *messages, *feedback])

    def _feedback(self, reply: AIMessage, error: str) -> HumanMessage:
        invalid = [{"name": c.get("name"), "args": c.get("args")} for c in reply.invalid_tool_calls]
        calls = reply.tool_calls or invalid
        text = reply.content if isinstance(reply.content, str) else ""
        shown = text or shown_calls(calls)
        return HumanMessage(
            content=(
                f"Your previous reply could not be used: {error}.\nIt was: {shown[:1000]}\n"
                f"Reply again by calling the `{self.schema.__name__}` tool with every required field."
            )
        )

    def _step(self, reply: AIMessage, state: ResponderReply) -> BaseMessage | None:
        state.usage = state.usage + usage_of(reply)
        parsed, call_id, error = parse_reply(reply, self.schema)
        if parsed is not None:
            state.message, state.parsed, state.error = normalised_reply(reply, parsed, call_id), parsed, None
            return None
        state.error = error
        return self._feedback(reply, error or "unusable reply")

    def _attempts(
        self, messages: list[BaseMessage]
    ) -> Generator[list[BaseMessage], AIMessage | Exception, ResponderReply]:
        """The retry loop, written once for both call styles: it yields each prompt and is sent
        the model's reply, or the exception the call raised; it returns the final reply."""
        state = ResponderReply(message=None, parsed=None)
        feedback: list[BaseMessage] = []
        for _ in range(self.max_retries + 1):
            reply = yield self._prompt(messages, feedback)
            if isinstance(reply, Exception):  # the model call itself failed: report it, do not crash the run
                state.error = model_call_failure(reply, self.model)
                return state
            correction = self._step(usable_reply(reply), state)
            if correction is None:
                return state
            feedback = [correction]
        return state

    def _call(self, prompt: list[BaseMessage]) -> AIMessage | Exception:
        try:
            reply: AIMessage = self._runnable.invoke(prompt)
            return reply
        except Exception as e:
            return reply_from_client_error(e) or e

    async def _acall(self, prompt: list[BaseMessage]) -> AIMessage | Exception:
        try:
            reply: AIMessage = await self._runnable.ainvoke(prompt)
            return reply
        except Exception as e:
            return reply_from_client_error(e) or e

    def respond(self, messages: list[BaseMessage]) -> ResponderReply:
        return drive(self._attempts(messages), self._call)

    async def arespond(self, messages: list[BaseMessage]) -> ResponderReply:
        return await adrive(self._attempts(messages), self._acall)


def drive(attempts: Generator[Any, Any, R], call: Callable[[Any], Any]) -> R:
    """Run a retry loop written as a generator (it yields each request and is sent each reply)
    with a synchronous call; return what the loop returns."""
    request = next(attempts)
    while True:
        try:
            request = attempts.send(call(request))
        except StopIteration as done:
            result: R = done.value
            return result


async def adrive(attempts: Generator[Any, Any, R], call: Callable[[Any], Awaitable[Any]]) -> R:
    """`drive` with an asynchronous call."""
    request = next(attempts)
    while True:
        try:
            request = attempts.send(await call(request))
        except StopIteration as done:
            result: R = done.value
            return result
