"""The one run API: every agent runs, resumes and reports through `graphs.runner.Runner`, and every
result keeps the same contract (`answered`, `thread_id`, `pending_approval`)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.react_agent import ReActAgent
from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.extraction import CarCollection
from reflexion_agents.schemas.run_result import RunResult
from tests.helpers import TOM_HANKS_QUERY, draft, make_agent, revise

CARS = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]}


def react_agent(replies: list, **kwargs) -> tuple[ReActAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    return ReActAgent(ARITHMETIC_TOOLS, lambda: model, **kwargs), model


def test_every_result_says_whether_it_answered_in_the_same_words(movies_db):
    kg, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)])
    react, _ = react_agent([tool_reply("multiply", {"a": 6, "b": 7}), tool_reply("finish", {"answer": "42"})])
    unfinished, _ = react_agent([tool_reply("multiply", {"a": 6, "b": 7})], max_steps=1)
    model = ScriptedChatModel(replies=[tool_reply("CarCollection", {"cars": "none"})])
    failing = StructuredOutputReflectionAgent(CarCollection, lambda: model, max_retries=0)
    results = {
        "kg": kg.execute("Which movies did Tom Hanks act in?"),
        "react": react.execute("6 times 7?"),
        "react_unfinished": unfinished.execute("6 times 7?"),
        "extraction_failed": failing.extract("a passage"),
    }
    assert all(isinstance(r, RunResult) and r.thread_id for r in results.values())
    assert {name: r.answered for name, r in results.items()} == {
        "kg": True,
        "react": True,
        "react_unfinished": False,
        "extraction_failed": False,
    }


def test_a_finished_react_thread_resumes_to_its_result_without_calling_the_model():
    agent, model = react_agent(
        [tool_reply("multiply", {"a": 6, "b": 7}), tool_reply("finish", {"answer": "42"})],
        checkpointer=InMemorySaver(),
    )
    first = agent.execute("6 times 7?", thread_id="t-react")
    calls = len(model.calls)
    again = agent.resume("t-react")
    assert again == first and again.answer == "42"
    assert len(model.calls) == calls
    assert asyncio.run(agent.aresume("t-react")) == first


def test_a_thread_of_another_agent_is_refused_by_name():
    saver = InMemorySaver()
    react, _ = react_agent([tool_reply("finish", {"answer": "x"})], checkpointer=saver)
    react.execute("q", thread_id="shared")
    model = ScriptedChatModel(replies=[])
    extraction = StructuredOutputReflectionAgent(CarCollection, lambda: model, checkpointer=saver)
    with pytest.raises(ConfigurationError, match="ReActAgent"):
        extraction.resume("shared")


def test_a_run_context_that_does_not_fit_the_agent_is_refused_before_any_model_call():
    agent, model = react_agent([tool_reply("finish", {"answer": "x"})])
    with pytest.raises(ConfigurationError, match="max_steps"):
        agent.execute("q", context={"max_steps": 0})
    with pytest.raises(ConfigurationError, match="unknown"):
        agent.execute("q", context={"unknown": 1})
    assert model.calls == []


def test_each_step_is_reported_once_with_its_own_message_in_sync_and_async_runs():
    script = [tool_reply("CarCollection", {"cars": "none"}), tool_reply("CarCollection", CARS)]
    seen: dict[str, list[tuple[int, str, str]]] = {"sync": [], "async": []}

    def recorder(kind: str):
        return lambda step, node, message, update: seen[kind].append((step, node, type(message).__name__))

    for kind in seen:
        model = ScriptedChatModel(replies=list(script))
        agent = StructuredOutputReflectionAgent(CarCollection, lambda model=model: model)
        if kind == "sync":
            result = agent.extract("a passage", on_step=recorder(kind))
        else:
            result = asyncio.run(agent.aextract("a passage", on_step=recorder(kind)))
        assert result.ok
    expected = [(0, "draft", "AIMessage"), (1, "execute_tool", "ToolMessage"), (1, "revise", "AIMessage")]
    assert seen["sync"] == seen["async"] == [*expected, (2, "execute_tool", "ToolMessage")]


def test_a_biochatter_style_final_result_that_is_a_plain_object_is_returned_as_it_is():
    class Plain:
        def __init__(self, stop_reason):
            self.stop_reason = stop_reason

    class PlainResultAgent(ReActAgent):
        def _parse_final_result(self, output):
            return Plain(output.get("stop_reason"))

    model = ScriptedChatModel(replies=[tool_reply("finish", {"answer": "x"})])
    result = PlainResultAgent(ARITHMETIC_TOOLS, lambda: model).execute("q")
    assert isinstance(result, Plain) and result.stop_reason == "finished"


def test_a_run_context_is_parsed_as_json_clients_send_it_and_still_bounded():
    agent, _ = react_agent([tool_reply("multiply", {"a": 6, "b": 7}), tool_reply("multiply", {"a": 6, "b": 7})])
    result = agent.execute("q", context={"max_steps": "1"})  # a form field or a query string sends text
    assert result.stop_reason == "max_steps" and len(result.steps) == 1
    with pytest.raises(ConfigurationError, match="max_steps"):
        agent.execute("q", context={"max_steps": "2000"})


def test_a_paused_run_exits_1_whatever_ran_before_the_pause():
    from reflexion_agents.graphs.cli.exit_codes import EXIT_NO_ANSWER, exit_code
    from reflexion_agents.schemas.kg_query import KGQueryResult

    paused = KGQueryResult(answer="MATCH (n) RETURN n", tool_result=[], stop_reason="awaiting_approval")
    assert exit_code(paused.model_copy(update={"pending_approval": {"query": "MATCH (m) RETURN m"}})) == EXIT_NO_ANSWER
    assert exit_code(paused.model_copy(update={"stop_reason": "score_threshold"})) == 0


def test_a_knowledge_graph_subclass_ends_runs_with_a_stop_reason_of_its_own(movies_db):
    """As a user would extend the agent: stop as soon as a query returns at least ten rows."""
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent

    class EnoughRows(KGQueryReflexionAgent):
        def _stop_reason(self, state, run):
            outcomes = state.get("outcomes") or []
            if outcomes and len(outcomes[-1]["rows"]) >= 10:
                return "enough_rows"
            return super()._stop_reason(state, run)

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=1)])
    agent = EnoughRows(conversation_factory=lambda: model, database=movies_db, trust_non_empty_result=False)
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "enough_rows" and len(result.tool_result) == 12
    assert "enough_rows" in result.summary()


def test_a_step_logger_set_on_the_instance_or_in_a_subclass_hears_every_step(movies_db):
    """Steps are streamed only when someone hears of them: a `_log_step_message` set on the agent
    (as a notebook does) and a subclass's own `log_step` are heard as biochatter's hook is."""
    heard: list[tuple[int, str]] = []
    patched, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)], checkpointer=None)
    patched._log_step_message = lambda step, node, output: heard.append((step, node))
    patched.execute("Which movies did Tom Hanks act in?")

    class Logged(type(patched)):
        def log_step(self, step, node, message):
            heard.append((step, f"subclass {node}"))

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)])
    Logged(conversation_factory=lambda: model, database=movies_db, checkpointer=None).execute("Tom Hanks?")
    assert heard[:3] == [(0, "draft"), (1, "execute_tool"), (1, "revise")]
    assert [node for _, node in heard[3:]] == ["subclass draft", "subclass execute_tool", "subclass revise"]


def test_a_subclass_responder_hook_is_built_off_the_event_loop(movies_db):
    """A user's responder hook may block (read a file, a database): async runs build it in a worker
    thread, while the package's own responders are built on the event loop."""
    threads: list[str] = []
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)], checkpointer=None)

    class OwnRevision(type(agent)):
        def _create_revise_responder(self, prompt=None):
            threads.append(threading.current_thread().name)
            return super()._create_revise_responder(prompt)

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)])
    own = OwnRevision(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
    asyncio.run(own.aexecute("Which movies did Tom Hanks act in?"))
    assert threads and threading.main_thread().name not in threads


def test_the_tool_check_is_made_on_the_event_loop_only_when_it_reads_nothing(movies_db, monkeypatch):
    """Before the first model call an async run checks the database can be reached, in a worker thread
    (it may read the schema); once the schema is read, the package's own check reads nothing and is
    made on the event loop. A kg_prompt (checked against the catalogue) or a subclass's own check
    keeps the thread."""
    from reflexion_agents.graphs import kg_query_graph

    on_loop: list[bool] = []
    check = kg_query_graph.tool_ready

    def watched(*args, **kwargs):
        on_loop.append(threading.current_thread() is threading.main_thread())
        return check(*args, **kwargs)

    monkeypatch.setattr(kg_query_graph, "tool_ready", watched)
    replies = [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)]
    model = ScriptedChatModel(replies=replies * 3)
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
    for prompt in (None, None, "The graph has Person and Movie nodes."):
        assert asyncio.run(agent.aexecute("Which movies did Tom Hanks act in?", prompt)).rows
    assert on_loop == [False, True, False]

    class OwnCheck(KGQueryReflexionAgent):
        def _tool_ready(self, state, run):
            on_loop.append(threading.current_thread() is threading.main_thread())
            super()._tool_ready(state, run)

    model.replies, own = (
        replies * 2,
        OwnCheck(conversation_factory=lambda: model, database=movies_db, checkpointer=None),
    )
    on_loop.clear()
    for _ in range(2):
        asyncio.run(own.aexecute("Which movies did Tom Hanks act in?"))
    assert on_loop and not any(on_loop)
