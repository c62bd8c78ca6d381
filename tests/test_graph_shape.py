"""The compiled graph users see in LangGraph server and notebooks, and the registry that names them."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_agents.graphs import registry
from tests.helpers import labelled_edges

ROOT = Path(__file__).resolve().parents[1]


def expected_nodes(name: str) -> set[str]:
    """The nodes the graph registered as `name` has, from what builds it: the loop's nodes for an
    agent, its builder's for a flow (a builder needs only the wiring to say what it adds)."""
    from reflexion_agents.graphs.loop_nodes import LOOP_NODES
    from reflexion_agents.graphs.text2cypher_builders import FLOW_BUILDERS, Wiring

    built = registry.agent(name)
    flow = getattr(built, "flow", None)
    if flow is None:
        return {"__start__", *LOOP_NODES, "__end__"}
    never_run = Wiring(start=lambda s: {}, node=lambda step: lambda s: {}, reply=lambda s: {})
    return set(FLOW_BUILDERS[flow].build(never_run).compile().get_graph().nodes)


def reachable(edges: set[tuple[str, str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        for a, b in edges:
            if a == node and b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def test_every_flow_is_registered():
    from reflexion_agents.graphs.text2cypher_builders import FLOWS

    assert {f"text2cypher_{flow}" for flow in FLOWS} <= set(registry.names())


def test_langgraph_json_lists_exactly_the_registry():
    listed = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert listed == registry.langgraph_graphs(), (
        "langgraph.json is stale: run python -m reflexion_agents.graphs.registry"
    )


@pytest.mark.parametrize("name", registry.names())
def test_each_langgraph_json_entry_builds_a_compiled_graph_without_a_model_or_database(monkeypatch, name):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    module_name, _, variable = registry.langgraph_graphs()[name].partition(":")  # module syntax: any directory
    factory = importlib.import_module(module_name).__dict__[variable]  # as LangGraph's loader reads it
    # a graph factory that takes the server's runtime if given (tests/test_langgraph_server.py)
    assert all(p.default is None for p in inspect.signature(factory).parameters.values())
    graph = factory()
    drawn = graph.get_graph()
    assert set(drawn.nodes) == expected_nodes(name)
    # every node lies on a way from the start to the end, and every way ends with the answer
    edges = {(e.source, e.target) for e in drawn.edges}
    assert reachable(edges, "__start__") == set(drawn.nodes)
    assert reachable({(b, a) for a, b in edges}, "__end__") == set(drawn.nodes)
    assert {a for a, b in edges if b == "__end__"} == {"reply"}
    assert factory() is graph is registry.graph(name)  # built once


@pytest.mark.integration
def test_importing_the_registry_builds_nothing_and_a_graph_is_built_on_first_use():
    script = (
        "from reflexion_agents.graphs import registry as r; before = dict(r._built); r.graph('react_tools'); "
        "print(len(before), sorted(r._built))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.split() == ["0", "['react_tools']"]


def test_an_unknown_name_is_a_configuration_error_naming_the_graphs():
    from reflexion_agents.schemas.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="unknown graph 'nope'; the graphs are kg_reflexion"):
        registry.graph("nope")


def test_the_picture_shows_the_loop_and_every_way_out_each_labelled_with_what_takes_it():
    graph = registry.graph("kg_reflexion")
    edges = labelled_edges(graph)
    assert set(edges) == {
        ("draft", "execute_tool"),
        ("draft", "reply"),
        ("execute_tool", "revise"),
        ("execute_tool", "reply"),
        ("revise", "execute_tool"),
        ("revise", "reply"),
    }
    assert all(edges.values()), edges  # no conditional edge is left unlabelled
    assert edges["revise", "execute_tool"] == "revise"
    stops = edges["revise", "reply"]
    assert all(words in stops for words in ("score > 7", "non-empty result", "step limit", "no progress"))
    assert "rejected by the reviewer" in edges["execute_tool", "reply"]
    unconditional = {(e.source, e.target) for e in graph.get_graph().edges if not e.conditional}
    assert unconditional == {("__start__", "draft"), ("reply", "__end__")}  # every run ends with the answer
    assert "revise -. &nbsp;revise&nbsp; .-> execute_tool" in graph.get_graph().draw_mermaid()


def test_the_labels_say_the_agents_own_threshold_and_stop_rule():
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent

    agent = KGQueryReflexionAgent(
        lambda: None, score_threshold=8.5, trust_non_empty_result=False, connection_args={}, checkpointer=None
    )
    stops = labelled_edges(agent.graph)["revise", "reply"]
    assert "score > 8.5" in stops and "unscored non-empty result" in stops and "score > 7" not in stops


@pytest.mark.parametrize("flow", ["text2cypher_naive", "text2cypher_retry", "text2cypher_retry_evaluate"])
def test_every_flow_edge_is_labelled_and_every_way_out_passes_the_answer_node(flow):
    graph = registry.graph(flow)
    edges = labelled_edges(graph)
    assert all(edges.values()), edges
    assert edges["start", "reply"] == "empty question" and "out of scope" in edges["guardrail", "reply"]
    assert {(e.source, e.target) for e in graph.get_graph().edges if e.target == "__end__"} == {("reply", "__end__")}
    if flow != "text2cypher_naive":
        assert edges["execute", "correct"] == "database error"


def test_the_planner_picture_shows_the_parallel_fan_out():
    edges = labelled_edges(registry.graph("text2cypher_planner"))
    assert edges["plan", "subquery"] == "each sub-question, in parallel"
    assert edges["check", "subquery"] == "each missing piece, in parallel"
    assert edges["check", "summarize"] == "enough" and edges["plan", "summarize"] == "nothing to fetch"


@pytest.mark.parametrize("name", [n for n in registry.names() if n.startswith("text2cypher_")])
def test_every_query_a_flow_writes_is_checked_before_it_runs(name):
    """Whatever writes a query (a draft, a correction), the way to `execute` passes `check_query`,
    which refuses writes and checks the query against the graph's schema."""
    edges = {(e.source, e.target) for e in registry.graph(name).get_graph().edges}
    into_execute = {source for source, target in edges if target == "execute"}
    if into_execute:  # the planner runs its sub-queries inside `subquery`, checked there
        assert into_execute == {"check_query"}, into_execute
        writers = {target for source, target in edges if target in ("generate", "correct")}
        assert all(("check_query" in reachable(edges, w)) for w in writers)
