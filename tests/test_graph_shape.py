"""The compiled graph users see in LangGraph server and notebooks."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def registered_graphs() -> dict[str, str]:
    return json.loads((ROOT / "langgraph.json").read_text())["graphs"]


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
    assert set(registered_graphs()) == set(EXPECTED_NODES)


@pytest.mark.parametrize("name", sorted(registered_graphs()))
def test_langgraph_json_points_at_a_compiled_graph_that_imports_without_a_model_or_database(monkeypatch, name):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    module_name, _, attribute = registered_graphs()[name].partition(":")  # module syntax: any working directory
    graph = getattr(importlib.import_module(module_name), attribute)
    assert set(graph.get_graph().nodes) == EXPECTED_NODES[name]


def test_the_picture_shows_the_loop_and_every_way_out():
    from graphs.kg_reflexion import graph

    edges = {(e.source, e.target, e.conditional) for e in graph.get_graph().edges}
    assert ("__start__", "draft", False) in edges
    assert ("revise", "execute_tool", True) in edges and ("revise", "__end__", True) in edges
    assert ("execute_tool", "revise", True) in edges and ("draft", "execute_tool", True) in edges
    assert "revise -.-> execute_tool" in graph.get_graph().draw_mermaid()
