"""A local OpenAI-compatible chat-completions server on loopback, replying from a script.

It lets the real `langchain-openai` client path run end to end with no network.
Each reply is a function of the request body (so it can look at the offered
tools and the conversation) returning a tool call, plain text, or raw content.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

StubReply = dict[str, Any]  # {"tool": name, "args": {...}} | {"text": "..."} | {"raw_arguments": name, "text": "..."}


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


class OpenAIStub:
    """`with OpenAIStub(reply_fn) as stub:` serves `stub.base_url`; `stub.requests` records bodies."""

    def __init__(self, reply: Callable[[dict[str, Any]], StubReply]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                stub.requests.append(body)
                payload = json.dumps(stub._completion(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        spec = self.reply(body)
        message: dict[str, Any] = {"role": "assistant", "content": spec.get("text")}
        if "tool" in spec:
            arguments = spec["args"] if isinstance(spec["args"], str) else json.dumps(spec["args"])
            message["tool_calls"] = [
                {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                 "function": {"name": spec["tool"], "arguments": arguments}}
            ]
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool" in spec else "stop"}],
            "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": 20, "total_tokens": prompt_chars // 4 + 20},
        }

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
