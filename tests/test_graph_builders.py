"""The agents and flows as LangGraph's own agents are made: `build_*_graph(...)` returns a compiled
graph that answers from messages alone, keeps no threads unless given a checkpointer, and refuses a
setting it does not have. The models here are the real `langchain-openai` client talking to a local
OpenAI-compatible server, and scripted chat models."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from reflexion_agents import (
    build_extraction_graph,
    build_kg_query_graph,
    build_react_graph,
    build_text2cypher_graph,
    build_wikipedia_react_graph,
)
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.extraction import CarCollection
from tests.flow_script import flow_model
from tests.helpers import TOM_HANKS_QUERY, draft, kg_model, revise
from tests.openai_stub import OpenAIStub, multiply_then_finish

QUESTION = {"messages": [HumanMessage("Which movies did Tom Hanks act in?")]}


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_the_kg_query_graph_answers_through_the_openai_client(movies_db):
    from langchain_openai import ChatOpenAI

    with OpenAIStub(kg_model) as stub:
        model = ChatOpenAI(model="local", base_url=stub.base_url, api_key="not-needed", max_retries=0)
        graph = build_kg_query_graph(model, movies_db, max_steps=4)
        state = graph.invoke(QUESTION)
    assert isinstance(graph, CompiledStateGraph) and graph.checkpointer is None  # as create_react_agent
    assert state["stop_reason"] == "score_threshold" and ["Cast Away"] in state["rows"]
    assert isinstance(state["messages"][-1], AIMessage) and state["messages"][-1].content == state["answer"]
    asked = [r["tool_choice"]["function"]["name"] for r in stub.requests]
    assert asked[0] == "GenerateQuery" and set(asked[1:]) == {"ReviseQuery"}  # through the real client


def test_a_checkpointer_keeps_the_thread_and_a_run_may_lower_a_limit(movies_db):
    model = ScriptedChatModel(default=revise(TOM_HANKS_QUERY, 2))  # never satisfied
    graph = build_kg_query_graph(model, movies_db, checkpointer=InMemorySaver(), max_steps=5)
    thread = {"configurable": {"thread_id": "kept"}}
    state = graph.invoke(QUESTION, thread, context={"max_steps": 2})
    assert (state["stop_reason"], state["steps"]) == ("max_steps", 2)
    assert graph.get_state(thread).values["stop_reason"] == "max_steps"


def test_the_react_graph_calls_plain_function_tools(monkeypatch):
    with OpenAIStub(multiply_then_finish(6, 7)) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        graph = build_react_graph([multiply], "openai:local")  # a model named, made on first use
        state = graph.invoke({"messages": [HumanMessage("What is 6 times 7?")]})
    assert state["stop_reason"] == "finished" and state["answer"] == "42"


def test_the_extraction_graph_validates_what_it_extracts():
    cars = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]}
    graph = build_extraction_graph(CarCollection, ScriptedChatModel(replies=[tool_reply("CarCollection", cars)]))
    state = graph.invoke({"messages": [HumanMessage("I own a Fiat Panda with 45Hp.")]})
    assert (
        state["stop_reason"] == "validated" and CarCollection.model_validate_json(state["answer"]).cars[0].power == 45
    )


def test_a_text2cypher_graph_answers_on_the_database_given(movies_db):
    model = flow_model(
        GuardrailDecision=[{"answerable": True, "reason": "movies"}],
        CypherQuery=[{"cypher": TOM_HANKS_QUERY}],
        Summary=[{"answer": "Tom Hanks acted in 12 movies."}],
    )
    graph = build_text2cypher_graph("naive", model, movies_db, fewshots=False)
    state = graph.invoke({"question": "Which movies did Tom Hanks act in?"})
    assert state["stop_reason"] == "answered" and len(state["rows"]) == 12


def test_the_wikipedia_graph_reads_the_pages_it_is_given():
    from reflexion_agents.nodes.tools.wikipedia import WikipediaTools

    finish = "Thought 1\nI know it.\nAction 1\n<finish>Elia Kazan</finish>"
    graph = build_wikipedia_react_graph(ScriptedChatModel(replies=[finish]), wikipedia=WikipediaTools.sample())
    state = graph.invoke({"messages": [HumanMessage("Who directed On the Waterfront?")]})
    assert state["stop_reason"] == "finished" and state["answer"] == "Elia Kazan"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: build_kg_query_graph(max_stepz=3), "unknown setting 'max_stepz'"),
        (lambda: build_react_graph([multiply], temprature=0), "the ReAct agent does not take that setting"),
        (lambda: build_extraction_graph(CarCollection, retries=2), "the extraction agent does not take that setting"),
        (lambda: build_text2cypher_graph("naive", max_retrys=1), "the naive flow does not take that setting"),
        (
            lambda: build_react_graph([multiply], ScriptedChatModel(), conversation_factory=ScriptedChatModel),
            "a model= or a conversation_factory=, not both",
        ),
    ],
)
def test_a_setting_the_graph_does_not_have_is_refused_by_name(build, said):
    with pytest.raises(ConfigurationError, match=said):
        build()


def test_the_graph_is_the_agents_own_picture(movies_db):
    from reflexion_agents.graphs.loop_nodes import LOOP_NODES

    graph = build_kg_query_graph(ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY)]), movies_db)
    assert set(graph.get_graph().nodes) == {"__start__", *LOOP_NODES, "__end__"}


def test_each_function_built_graph_draws_as_its_agent_class_does(movies_db):
    """Built from functions or through the class's hooks, one picture: the same nodes and labelled routes."""
    from reflexion_agents import KGQueryReflexionAgent, ReActAgent, StructuredOutputReflectionAgent
    from reflexion_agents import WikipediaReActAgent as Wikipedia
    from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
    from tests.helpers import labelled_edges

    sample = WikipediaTools.sample()
    pairs = [
        (
            build_kg_query_graph(ScriptedChatModel(), movies_db),
            KGQueryReflexionAgent(ScriptedChatModel, database=movies_db),
        ),
        (build_react_graph([multiply], ScriptedChatModel()), ReActAgent([multiply], ScriptedChatModel)),
        (build_extraction_graph(CarCollection, ScriptedChatModel()), StructuredOutputReflectionAgent(CarCollection)),
        (build_wikipedia_react_graph(ScriptedChatModel(), wikipedia=sample), Wikipedia(wikipedia=sample)),
    ]
    for built, agent in pairs:
        assert labelled_edges(built) == labelled_edges(agent.graph) and built.name == agent.graph.name


def test_a_thread_the_built_graph_paused_is_resumed_by_biochatters_class(movies_db):
    """`build_kg_query_graph` needs no class, yet its threads are the agent's: the class resumes one."""
    from reflexion_agents import KGQueryReflexionAgent

    saver = InMemorySaver()
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)])
    graph = build_kg_query_graph(model, movies_db, checkpointer=saver, require_approval=True)
    paused = graph.invoke(QUESTION, {"configurable": {"thread_id": "built"}})
    assert paused["__interrupt__"][0].value["query"] == TOM_HANKS_QUERY  # waiting for a reviewer
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=saver)
    result = agent.resume("built", "approve")
    assert result.stop_reason == "score_threshold" and ["Cast Away"] in result.tool_result


def test_the_kg_query_graph_takes_biochatters_arguments_too(falkordb_server, movies_db):
    """`conversation_factory`, `connection_args` and `query_lang`, as the agent class takes them."""
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)])
    where = {"backend": "falkordb", "host": falkordb_server.host, "port": falkordb_server.port, "graph": "movies"}
    graph = build_kg_query_graph(conversation_factory=lambda: model, connection_args=where, query_lang="Cypher")
    assert ["Cast Away"] in graph.invoke(QUESTION)["rows"]
    with pytest.raises(ConfigurationError, match="a model= or a conversation_factory=, not both"):
        build_kg_query_graph(model, conversation_factory=lambda: model)
