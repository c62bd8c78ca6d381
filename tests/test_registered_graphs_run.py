"""The registered graphs run from messages alone, as LangGraph server and Studio send them,
with the model configured from the environment (here a local OpenAI-compatible stub)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from reflexion_agents.graphs import registry
from tests.openai_stub import OpenAIStub, multiply_then_finish


def test_the_react_tools_graph_answers_a_message(monkeypatch):
    with OpenAIStub(multiply_then_finish(6, 7)) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        served = registry.build("react_tools")  # as the server builds it: the model from the environment
        state = served.graph.invoke({"messages": [HumanMessage("What is 6 times 7?")]})
    assert state["stop_reason"] == "finished" and state["question"] == "What is 6 times 7?"
    assert state["outcomes"][-1]["content"] == "42"
    # a chat client shows the last message: an AI message with the final answer, and the output says it too
    last = state["messages"][-1]
    assert isinstance(last, AIMessage) and last.content == "42" == state["answer"] and not last.tool_calls


def test_the_structured_output_graph_extracts_from_a_message(monkeypatch):
    cars = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]}
    with OpenAIStub(lambda request: {"tool": "CarCollection", "args": cars}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        agent = registry.build("structured_output")
        state = agent.graph.invoke({"messages": [HumanMessage("I own a Fiat Panda with 45Hp.")]})
    assert state["stop_reason"] == "validated"
    assert agent._parse_final_result(state).value.cars[0].power == 45
    last = state["messages"][-1]  # the validated object as JSON, the whole message
    assert isinstance(last, AIMessage) and json.loads(last.content) == cars and state["answer"] == last.content
    # the passage was wrapped in the extraction prompt before the model saw it
    assert "I own a Fiat Panda with 45Hp." in stub.requests[0]["messages"][1]["content"]
    assert "JSON schema" in stub.requests[0]["messages"][1]["content"]


def test_a_run_takes_its_step_limit_from_its_context_up_to_the_agents_ceiling():
    from reflexion_agents.graphs.react_agent import ReActAgent
    from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
    from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS

    model = ScriptedChatModel(default=tool_reply("add", {"a": 1, "b": 1}))
    agent = ReActAgent(ARITHMETIC_TOOLS, lambda: model, max_steps=4)
    thread = {"configurable": {"thread_id": "limits"}}
    state = agent.graph.invoke({"messages": [HumanMessage("Add forever.")]}, thread, context={"max_steps": 2})
    assert (state["stop_reason"], state["steps"], len(model.calls)) == ("max_steps", 2, 2)
    state = agent.graph.invoke({"messages": [HumanMessage("Add forever.")]}, thread, context={"max_steps": 500})
    assert (state["stop_reason"], state["steps"]) == ("max_steps", 4)  # capped, and no recursion error
    # the next run of the same thread sent no limit: the agent's own applies, not the last run's
    state = agent.graph.invoke({"messages": [HumanMessage("Add forever.")]}, thread)
    assert (state["stop_reason"], state["steps"]) == ("max_steps", 4)


def test_an_empty_message_ends_the_run_with_a_typed_stop_and_no_model_call():
    from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent
    from reflexion_agents.nodes.models import ScriptedChatModel
    from reflexion_agents.schemas.extraction import CarCollection

    model = ScriptedChatModel(replies=[])
    graph = StructuredOutputReflectionAgent(CarCollection, lambda: model, checkpointer=None).graph
    for inputs in ({"messages": [HumanMessage("   ")]}, {"messages": []}):
        state = graph.invoke(inputs)
        assert state["stop_reason"] == "invalid_input" and "no question" in state["error"]
        assert isinstance(state["messages"][-1], AIMessage)  # the chat is told why, not left silent
        assert "Stopped: there was no question to answer." in state["messages"][-1].content
    assert model.calls == []


def test_a_registered_text2cypher_flow_answers_through_chat_openai(monkeypatch, falkordb_server, movies_db):
    flow = registry.agent("text2cypher_retry_evaluate")
    hanks = "MATCH (p:Person {name: 'tom hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
    replies = {
        "GuardrailDecision": {"answerable": True, "reason": "movies"},
        "CypherQuery": {"cypher": hanks},
        "Evaluation": {"ok": True},
        "Summary": {"answer": "Tom Hanks acted in 12 movies, among them Cast Away."},
    }

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        tool = request["tool_choice"]["function"]["name"]
        return {"tool": tool, "args": replies[tool]}

    with OpenAIStub(reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("REFLEXION_DATA_DIR", str(falkordb_server.data_dir))
        state = registry.graph("text2cypher_retry_evaluate").invoke({"question": "Which movies did Tom Hanks act in?"})
        result = flow.result(state)
        # as a chat client asks: a user message, no `question` field
        chat = registry.graph("text2cypher_retry_evaluate").invoke(
            {"messages": [{"role": "user", "content": "Which movies did Tom Hanks act in?"}]}
        )
        flow.close()
    assert result.stop_reason == "answered" and len(result.rows) == 12 and result.mappings[0].mapped == "Tom Hanks"
    for run in (state, chat):
        asked, answered = run["messages"]
        assert isinstance(asked, HumanMessage) and asked.content == "Which movies did Tom Hanks act in?"
        assert isinstance(answered, AIMessage) and answered.content == replies["Summary"]["answer"] == run["answer"]
        assert run["query"] == result.cypher and len(run["rows"]) == 12 and run["columns"] == ["title"]
    assert chat["question"] == "Which movies did Tom Hanks act in?" and chat["stop_reason"] == "answered"
    calls = [r["tool_choice"]["function"]["name"] for r in stub.requests]
    assert calls == ["GuardrailDecision", "CypherQuery", "Evaluation", "Summary"] * 2  # each run the same four
    assert (
        "Examples of questions and their Cypher on this graph:" in stub.requests[1]["messages"][0]["content"]
    )  # seeded store


def any_graphs_model(request: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI-compatible model for every registered graph: each structured step it is forced to
    answer, a calculator for the tool-calling agent, and a text ReAct turn for the Wikipedia agent."""
    from tests.helpers import TOM_HANKS_QUERY

    forced = {
        "GuardrailDecision": {"answerable": True, "reason": "movies"},
        "CypherQuery": {"cypher": TOM_HANKS_QUERY},
        "Evaluation": {"ok": True},
        "Summary": {"answer": "Tom Hanks acted in 12 movies."},
        "SubQuestions": {"questions": ["Which movies did Tom Hanks act in?"]},
        "InformationCheck": {"enough": True},
        "CarCollection": {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]},
        "GenerateQuery": {"answer": TOM_HANKS_QUERY, "reflection": "", "search_queries": []},
        "ReviseQuery": {"answer": TOM_HANKS_QUERY, "reflection": "", "revised_query": TOM_HANKS_QUERY, "score": 9},
    }
    choice = request.get("tool_choice")
    name = choice["function"]["name"] if isinstance(choice, dict) else None
    offered = [t["function"]["name"] for t in request.get("tools") or []]
    name = name or next((tool for tool in forced if tool in offered), None)
    if name:
        return {"tool": name, "args": forced[name]}
    if offered:  # the calculator: one multiplication, then finish with its result
        last = request["messages"][-1]
        if last["role"] == "tool":
            return {"tool": "finish", "args": {"answer": last["content"]}}
        return {"tool": "multiply", "args": {"a": 6, "b": 7}}
    return {"text": "Thought 1\nI know it.\nAction 1\n<finish>Elia Kazan was a director</finish>"}


def test_every_registered_graph_ends_with_an_ai_message_that_answers(monkeypatch, falkordb_server, movies_db):
    """Fresh builds of every graph LangGraph server serves, each asked by a user message through the
    real OpenAI client: the last message is an AI message, not a tool result, and says the answer."""
    monkeypatch.setenv("REFLEXION_DATA_DIR", str(falkordb_server.data_dir))
    monkeypatch.setenv("REFLEXION_WIKIPEDIA", "sample")
    with OpenAIStub(any_graphs_model) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        for name in registry.names():
            built = registry.build(name)
            try:
                state = built.graph.invoke({"messages": [HumanMessage("Which movies did Tom Hanks act in?")]})
            finally:
                getattr(built, "close", lambda: None)()
            last = state["messages"][-1]
            assert isinstance(last, AIMessage) and not last.tool_calls and last.content, (name, state["messages"])
            assert state["stop_reason"] in ("finished", "validated", "answered", "score_threshold"), (name, state)
            assert last.content == state["answer"], name
            if name == "kg_reflexion" or name.startswith("text2cypher_"):
                assert ["Cast Away"] in state["rows"] and state["columns"] == ["title"], name


def test_a_registered_graph_is_built_with_the_model_and_database_given(movies_db):
    """`registry.build`: the served kind of agent, with a chat model and a database of the caller's."""
    from reflexion_agents.nodes.models import ScriptedChatModel
    from reflexion_agents.schemas.errors import ConfigurationError
    from tests.helpers import TOM_HANKS_QUERY, draft, revise

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9), revise(TOM_HANKS_QUERY, 9)])
    built = registry.build("kg_reflexion", model=model, database=movies_db, max_steps=3)
    state = built.graph.invoke({"messages": [HumanMessage("Which movies did Tom Hanks act in?")]})
    assert ["Cast Away"] in state["rows"] and len(model.calls) >= 2
    assert built is not registry.agent("kg_reflexion")  # the served one is untouched
    with pytest.raises(ConfigurationError, match="queries no database; database= is for kg_reflexion"):
        registry.build("react_tools", database=movies_db)
    with pytest.raises(ConfigurationError, match="unknown setting 'max_stepz'"):
        registry.build("kg_reflexion", max_stepz=3)
    with pytest.raises(ConfigurationError, match="a model= or a conversation_factory=, not both"):
        registry.build("react_tools", model=model, conversation_factory=lambda: model)
