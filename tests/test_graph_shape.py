"""The compiled graph users see in LangGraph server and notebooks, and the registry that names them."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphs import registry

ROOT = Path(__file__).resolve().parents[1]


ENGINE_NODES = {"__start__", "draft", "execute_tool", "revise", "__end__"}
FLOW_NODES = {"__start__", "start", "guardrail", "generate", "map_values", "execute", "summarize", "__end__"}
EXPECTED_NODES = {
    "kg_reflexion": ENGINE_NODES,
    "react_wikipedia": ENGINE_NODES,
    "react_tools": ENGINE_NODES,
    "structured_output": ENGINE_NODES,
    "text2cypher_naive": FLOW_NODES,
    "text2cypher_retry": FLOW_NODES | {"correct"},
    "text2cypher_retry_evaluate": FLOW_NODES | {"correct", "evaluate"},
    "text2cypher_planner": {"__start__", "start", "guardrail", "plan", "subquery", "check", "summarize", "__end__"},
}


def test_every_agent_and_flow_is_registered():
    assert set(registry.names()) == set(EXPECTED_NODES)


def test_langgraph_json_lists_exactly_the_registry():
    listed = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert listed == registry.langgraph_graphs(), "langgraph.json is stale: run python -m graphs.registry"


@pytest.mark.parametrize("name", registry.names())
def test_each_langgraph_json_entry_builds_a_compiled_graph_without_a_model_or_database(monkeypatch, name):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    module_name, _, variable = registry.langgraph_graphs()[name].partition(":")  # module syntax: any directory
    factory = importlib.import_module(module_name).__dict__[variable]  # as LangGraph's loader reads it
    assert callable(factory) and not inspect.signature(factory).parameters  # a zero-argument graph factory
    graph = factory()
    assert set(graph.get_graph().nodes) == EXPECTED_NODES[name]
    assert factory() is graph is registry.graph(name)  # built once


def test_importing_the_registry_builds_nothing_and_a_graph_is_built_on_first_use():
    script = (
        "from graphs import registry as r; before = dict(r._built); r.graph('react_tools'); "
        "print(len(before), sorted(r._built))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.split() == ["0", "['react_tools']"]


def test_an_unknown_name_is_a_configuration_error_naming_the_graphs():
    from schemas.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="unknown graph 'nope'; the graphs are kg_reflexion"):
        registry.graph("nope")


def test_the_picture_shows_the_loop_and_every_way_out():
    graph = registry.graph("kg_reflexion")
    edges = {(e.source, e.target, e.conditional) for e in graph.get_graph().edges}
    assert ("__start__", "draft", False) in edges
    assert ("revise", "execute_tool", True) in edges and ("revise", "__end__", True) in edges
    assert ("execute_tool", "revise", True) in edges and ("draft", "execute_tool", True) in edges
    assert "revise -.-> execute_tool" in graph.get_graph().draw_mermaid()
