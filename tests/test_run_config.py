"""`execute`, `aexecute`, `resume` and the flows' `ask` take LangChain's `config` and pass it to the
graph: a callback handler hears every model call, tags and metadata reach each run, the run carries
its name. An option a run does not take is a TypeError naming it, never dropped."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents import ReActAgent, Text2CypherFlow
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS
from tests.flow_script import flow_model
from tests.helpers import TOM_HANKS_QUERY, draft, keep, make_agent, revise


class Heard(BaseCallbackHandler):
    """A LangChain callback handler of the kind tracing tools install: what it is told of."""

    def __init__(self) -> None:
        self.model_calls: list[dict] = []
        self.top_runs: list[str | None] = []

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, tags=None, metadata=None, **kw):
        self.model_calls.append({"tags": tags or [], "metadata": metadata or {}})

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kw):
        if parent_run_id is None:
            self.top_runs.append(kw.get("name"))


CONFIG = {"tags": ["nightly"], "metadata": {"user": "ada"}, "run_name": "movies question"}


@pytest.mark.integration
def test_a_callback_handler_hears_every_model_call_of_the_kg_agent(movies_db):
    heard = Heard()
    agent, model = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)], checkpointer=None)
    result = agent.execute("Which movies did Tom Hanks act in?", config={**CONFIG, "callbacks": [heard]})
    assert result.stop_reason == "score_threshold" and len(heard.model_calls) == len(model.calls) == 2
    assert all("nightly" in call["tags"] and call["metadata"]["user"] == "ada" for call in heard.model_calls)
    assert heard.top_runs == ["movies question"]


@pytest.mark.integration
def test_async_runs_and_resumes_pass_the_config_too(movies_db):
    agent, _ = make_agent(
        movies_db,
        [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)],
        require_approval=True,
        checkpointer=InMemorySaver(),
    )
    first, then = Heard(), Heard()
    paused = asyncio.run(agent.aexecute("Tom Hanks movies?", config={"callbacks": [first]}))
    assert paused.stop_reason == "awaiting_approval" and len(first.model_calls) == 1  # the draft
    done = agent.resume(paused.thread_id, "approve", config={"callbacks": [then], "run_name": "approved"})
    assert ["Cast Away"] in done.tool_result and len(then.model_calls) == 1 and then.top_runs == ["approved"]


def test_the_react_agent_passes_the_config():
    heard = Heard()
    model = ScriptedChatModel(
        replies=[tool_reply("multiply", {"a": 6, "b": 7}), tool_reply("finish", {"answer": "42"})]
    )
    assert ReActAgent(ARITHMETIC_TOOLS, lambda: model).call("6*7?", config={"callbacks": [heard]}) == "42"
    assert len(heard.model_calls) == 2


@pytest.mark.integration
def test_a_flow_passes_the_config(movies_db):
    heard = Heard()
    model = flow_model(
        GuardrailDecision=[{"answerable": True, "reason": "people and their movies"}],
        CypherQuery=[{"cypher": TOM_HANKS_QUERY}],
        Summary=[{"answer": "Cast Away, and more"}],
    )
    flow = Text2CypherFlow("naive", conversation_factory=lambda: model, database=movies_db, fewshots=False)
    result = flow.ask("Which movies did Tom Hanks act in?", config={"callbacks": [heard], "tags": ["flow"]})
    assert result.answer and len(heard.model_calls) >= 2 and all("flow" in c["tags"] for c in heard.model_calls)


@pytest.mark.parametrize(
    "option, named",
    [
        ({"thread": "abc"}, "'thread'"),
        ({"callbacks": []}, "go in config="),
        ({"tags": ["x"], "run_name": "r"}, "'run_name', 'tags'"),
    ],
)
def test_an_option_a_run_does_not_take_is_a_type_error_naming_it(option, named):
    model = ScriptedChatModel(replies=[tool_reply("finish", {"answer": "42"})])
    agent = ReActAgent(ARITHMETIC_TOOLS, lambda: model, checkpointer=None)
    with pytest.raises(TypeError, match=named):
        agent.execute("6*7?", **option)
    assert model.calls == []  # refused before anything ran


def test_a_resume_refuses_an_unknown_option_before_reading_the_thread():
    agent = ReActAgent(ARITHMETIC_TOOLS, ScriptedChatModel, checkpointer=InMemorySaver())
    with pytest.raises(TypeError, match="'thread_id'"):
        agent.resume("t", thread_id="other")
