"""A chat model that replies from a script: for tests, notebooks and benchmarks with no LLM.

langchain-core's fake chat models lack `bind_tools`, which the agents need;
this one supports it and records every prompt it was sent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Reply = AIMessage | str | Callable[[list[BaseMessage]], "AIMessage | str"]


def tool_reply(name: str, args: dict[str, Any], content: str = "") -> AIMessage:
    """An assistant reply that calls tool `name` with `args`."""
    return AIMessage(
        content=content,
        tool_calls=[{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}],
    )


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedChatModel(BaseChatModel):
    """Replies with `replies` in order; a callable reply computes the reply from the prompt.

    Once the script is used up, `default` (if given) answers every further call;
    otherwise the call fails, as a real model failure would. Usage metadata is
    estimated at four characters a token so token accounting can be exercised.
    Stop sequences cut the reply's text before the first of them, as real APIs do.
    """

    replies: list[Any] = Field(default_factory=list)
    default: Any = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[list[dict[str, Any]]] = Field(default_factory=list)
    stops: list[list[str] | None] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _next_reply(self, messages: list[BaseMessage]) -> AIMessage:
        index = len(self.calls) - 1
        if index < len(self.replies):
            reply = self.replies[index]
        elif self.default is not None:
            reply = self.default
        else:
            raise RuntimeError(f"ScriptedChatModel has no reply #{index + 1} (script holds {len(self.replies)})")
        if callable(reply) and not isinstance(reply, BaseMessage):
            reply = reply(messages)
        if isinstance(reply, str):
            reply = AIMessage(content=reply)
        message: AIMessage = reply.model_copy(deep=True)
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        self.bound_tools.append(kwargs.get("tools") or [])
        self.stops.append(stop)
        reply = self._next_reply(messages)
        if stop and isinstance(reply.content, str):
            cut = min((i for i in (reply.content.find(s) for s in stop) if i >= 0), default=-1)
            if cut >= 0:
                reply.content = reply.content[:cut]
        prompt_text = "".join(str(m.content) for m in messages)
        output_text = str(reply.content) + json.dumps([c["args"] for c in reply.tool_calls])
        reply.usage_metadata = {
            "input_tokens": _approx_tokens(prompt_text),
            "output_tokens": _approx_tokens(output_text),
            "total_tokens": _approx_tokens(prompt_text) + _approx_tokens(output_text),
        }
        return ChatResult(generations=[ChatGeneration(message=reply)])
