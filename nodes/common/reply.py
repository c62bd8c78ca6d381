"""The last node of every graph: the answer as an `AIMessage`, and the output fields a client reads.

Chat clients (LangGraph Studio, agent-chat-ui, the SDK's `messages-tuple` stream) show a run's last
AI message as its answer; without this node an agent's memory would end on a `ToolMessage` ("Not
executed: the loop stopped") and a flow's on its question. The text and the fields come from the
run's typed result (`RunResult.reply_text` / `reply_fields`), the same object `execute` and `ask` return.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.schemas.reply_text import stop_words

REPLY_NODE = "reply"  # not "answer": LangGraph refuses a node named as a state key


def run_thread_id() -> str | None:
    """The thread of the run this node is in (LangGraph's config), None without a checkpointer."""
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # called outside a graph run
        return None
    thread = configurable.get("thread_id")
    return str(thread) if thread is not None else None


def reply_update(result: Any, stop_reason: str | None) -> dict[str, Any]:
    """The answer message and the top-level output fields of a finished run's `result`. A result
    of a user's own type that cannot say its answer (no `reply_text`, or the `RunResult` default)
    still gets a message: why the run stopped."""
    text: str | None = None
    if hasattr(result, "reply_text"):
        try:
            text, fields = result.reply_text(), result.reply_fields()
        except NotImplementedError:
            text = None
    if text is None:
        text, fields = f"Stopped: {stop_words(stop_reason)}.", {"query": None, "columns": None, "rows": None}
    fields = {"answer": text, **fields, "thread_id": run_thread_id()}
    if isinstance(fields["answer"], str):
        fields["answer"] = without_surrogates(fields["answer"])  # a lone surrogate cannot be sent as JSON
    return {"messages": [AIMessage(content=without_surrogates(text))], **fields}
