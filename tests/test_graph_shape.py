"""The compiled graph users see in LangGraph server and notebooks."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_langgraph_json_points_at_a_compiled_graph_that_imports_without_a_model_or_database(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = json.loads((ROOT / "langgraph.json").read_text())
    path, _, attribute = config["graphs"]["kg_reflexion"].partition(":")
    assert (ROOT / path).exists()
    from graphs import kg_reflexion

    graph = getattr(kg_reflexion, attribute)
    assert set(graph.get_graph().nodes) == {"__start__", "draft", "execute_tool", "revise", "__end__"}


def test_the_picture_shows_the_loop_and_every_way_out():
    from graphs.kg_reflexion import graph

    edges = {(e.source, e.target, e.conditional) for e in graph.get_graph().edges}
    assert ("__start__", "draft", False) in edges
    assert ("revise", "execute_tool", True) in edges and ("revise", "__end__", True) in edges
    assert ("execute_tool", "revise", True) in edges and ("draft", "execute_tool", True) in edges
    assert "revise -.-> execute_tool" in graph.get_graph().draw_mermaid()
