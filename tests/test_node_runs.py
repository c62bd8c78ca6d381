"""Each node of the agent loop runs in LangGraph's own run for it: a LangChain callback handler given
in the config sees every node start once (not once more inside itself), sees the model calls made
inside the nodes, and an async run awaits the async bodies on the event loop's thread."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, make_agent, revise

LOOP_NODES = ("draft", "execute_tool", "revise", "reply")


class Seen(BaseCallbackHandler):
    """What a tracer is told: chain (node) starts by name, and chat-model starts (on the thread that
    makes the call: `run_inline`)."""

    run_inline = True

    def __init__(self) -> None:
        self.chains: Counter[str] = Counter()
        self.model_calls = 0
        self.threads: set[int] = set()

    def on_chain_start(self, serialized: Any, inputs: Any, *, name: str | None = None, **kwargs: Any) -> None:
        self.chains[name or (serialized or {}).get("name", "?")] += 1

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.model_calls += 1
        self.threads.add(threading.get_ident())


def _question() -> dict[str, Any]:
    return {"messages": [("user", "Which movies did Tom Hanks act in?")]}


def test_a_handler_sees_each_node_once_and_the_model_calls_inside(movies_db):
    agent, model = make_agent(
        movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, 3), revise(TOM_HANKS_QUERY, 9)], checkpointer=None
    )
    seen = Seen()
    agent.graph.invoke(_question(), {"callbacks": [seen]})
    steps = len(model.calls) - 1  # a draft, then a revision a step: each step executes once
    nodes = {name: seen.chains[name] for name in LOOP_NODES}
    assert nodes == {"draft": 1, "execute_tool": steps, "revise": steps, "reply": 1}, seen.chains
    assert seen.model_calls == len(model.calls) >= 3


async def test_an_async_run_calls_the_model_on_the_event_loop_thread(movies_db):
    agent, model = make_agent(
        movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9), revise(TOM_HANKS_QUERY, 9)], checkpointer=None
    )
    seen = Seen()
    await agent.graph.ainvoke(_question(), {"callbacks": [seen]})
    assert seen.model_calls == len(model.calls) >= 2
    assert seen.threads == {threading.get_ident()}  # the async body, not the sync one in a worker thread
