"""A local OpenAI-compatible chat-completions server on loopback, replying from a script.

It lets the real `langchain-openai` client path run end to end with no network.
Each reply is a function of the request body (so it can look at the offered
tools and the conversation) returning a tool call, plain text, or raw content.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import LoopbackServer

# {"tool": name, "args": {...} or raw JSON text} | {"calls": [{"tool": ..., "args": ..., "id": ...}]} | {"text": "..."},
# and optionally "message" (fields added to the message: "refusal", "reasoning_content") and "usage" (as sent)
StubReply = dict[str, Any]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


class OpenAIStub(LoopbackServer):
    """`with OpenAIStub(reply_fn) as stub:` serves `stub.base_url`; `stub.requests` records bodies."""

    def __init__(self, reply: Callable[[dict[str, Any]], StubReply]) -> None:
        super().__init__()
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.base_url = f"{self.address}/v1"

    def handle(self, request: BaseHTTPRequestHandler, body: Any) -> None:
        self.requests.append(body)
        completion = self._completion(body)
        if not body.get("stream"):
            request.wfile.write(self.start_json(request, completion))
            return
        # A streamed reply, as OpenAI sends it when a client streams (LangGraph's `messages` stream
        # mode makes chat models stream): server-sent events of chunks, then [DONE].
        request.send_response(200)
        request.send_header("Content-Type", "text/event-stream")
        request.end_headers()
        for chunk in self._chunks(completion, (body.get("stream_options") or {}).get("include_usage")):
            request.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        request.wfile.write(b"data: [DONE]\n\n")

    @staticmethod
    def _chunks(completion: dict[str, Any], usage: bool) -> list[dict[str, Any]]:
        """`completion` as the chunks of a stream: the role and text, each tool call whole, the finish."""
        choice = completion["choices"][0]
        message = choice["message"]
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        head = {key: completion[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        chunks = [
            {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        ]
        if usage:
            chunks.append({**head, "choices": [], "usage": completion["usage"]})
        return chunks

    @staticmethod
    def _tool_call(name: str, args: Any, call_id: str | None = None) -> dict[str, Any]:
        """One tool call; arguments given as text go as they are (malformed JSON, `1`), others as JSON."""
        arguments = args if isinstance(args, str) else json.dumps(args)
        call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        spec = self.reply(body)
        message: dict[str, Any] = {"role": "assistant", "content": spec.get("text")}
        one = [{"tool": spec["tool"], "args": spec["args"]}] if "tool" in spec else []
        calls = spec.get("calls") or one
        if calls:
            message["tool_calls"] = [self._tool_call(c["tool"], c["args"], c.get("id")) for c in calls]
        message.update(spec.get("message") or {})
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": 20, "total_tokens": prompt_chars // 4 + 20}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": spec.get("usage", usage),
        }


def multiply_then_finish(a: int, b: int) -> Callable[[dict[str, Any]], StubReply]:
    """A tool-calling model: `multiply(a, b)` for the question, then `finish` with the tool's result."""

    def reply(request: dict[str, Any]) -> StubReply:
        last = request["messages"][-1]
        if last["role"] == "user":
            return {"tool": "multiply", "args": {"a": a, "b": b}}
        return {"tool": "finish", "args": {"answer": last["content"]}}

    return reply


def revision_scoring_model(broken: str, fixed: str) -> Callable[[dict[str, Any]], StubReply]:
    """A knowledge-graph model that reads `score` as many real ones do: the score of the query it
    just wrote, not of the result it was shown. It drafts `broken`; after any database error it
    proposes `fixed` and scores that fix 8/10; after rows it keeps the query and scores it 9/10."""

    def reply(request: dict[str, Any]) -> StubReply:
        if "GenerateQuery" in tool_names(request):
            return {
                "tool": "GenerateQuery",
                "args": {"answer": broken, "reflection": "first try", "search_queries": []},
            }
        shown = next(str(m.get("content")) for m in reversed(request["messages"]) if m["role"] == "tool")
        if "error" in shown.lower() or "rejected" in shown.lower():
            return {
                "tool": "ReviseQuery",
                "args": {"answer": broken, "reflection": "fixed the syntax", "revised_query": fixed, "score": "8/10"},
            }
        return {
            "tool": "ReviseQuery",
            "args": {"answer": fixed, "reflection": "good", "revised_query": fixed, "score": "9/10"},
        }

    return reply
