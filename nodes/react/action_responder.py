"""Ask the model for its next step and read the reply as it is, without retrying.

The Reflexion responder retries a bad reply inside one node; agents whose loop
*is* the correction (ReAct's corrective observation, the extraction agent's
validation feedback) need the reply recorded as a step instead, so this
responder never retries: a reply it cannot read becomes an action with an error
(tool-call arguments that are not a JSON object included, which the OpenAI client
raises on). Prompts go out `sendable` (no lone surrogates).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from pydantic import BaseModel

from reflexion_agents.nodes.common.responder import ResponderReply, usage_of
from reflexion_agents.nodes.models.wire import model_call_failure, reply_from_client_error, sendable

# Reads a reply: (the message the memory keeps, the parsed step).
ReplyReader = Callable[[AIMessage], tuple[AIMessage, BaseModel]]


class ActionResponder:
    """`runnable` (a chat model, possibly bound to tools or stop sequences) + `system_prompt` + `read`."""

    def __init__(self, runnable: Any, system_prompt: str, read: ReplyReader) -> None:
        self.runnable, self.system_prompt, self.read = runnable, system_prompt, read

    def _prompt(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        system = [SystemMessage(content=self.system_prompt)] if self.system_prompt else []
        return sendable([*system, *messages])

    def _reply(self, reply: AIMessage) -> ResponderReply:
        try:
            kept, parsed = self.read(reply)
        except Exception as e:
            return ResponderReply(
                message=None,
                parsed=None,
                usage=usage_of(reply),
                error=f"the reply could not be read: {type(e).__name__}: {e}",
            )
        return ResponderReply(message=kept, parsed=parsed, usage=usage_of(reply))

    def _failed(self, error: Exception) -> ResponderReply:
        return ResponderReply(message=None, parsed=None, error=model_call_failure(error, self.runnable))

    def _unreadable(self, error: Exception) -> ResponderReply:
        """A reply the client refused to build (arguments that are not an object) is read, as any
        other bad reply, into an action with an error; any other failure ends the run."""
        reply = reply_from_client_error(error)
        return self._failed(error) if reply is None else self._reply(reply)

    def respond(self, messages: list[BaseMessage]) -> ResponderReply:
        try:
            reply = self.runnable.invoke(self._prompt(messages))
        except Exception as e:
            return self._unreadable(e)
        return self._reply(reply)

    async def arespond(self, messages: list[BaseMessage]) -> ResponderReply:
        try:
            reply = await self.runnable.ainvoke(self._prompt(messages))
        except Exception as e:
            return self._unreadable(e)
        return self._reply(reply)
