"""The registered graphs run from messages alone, as LangGraph server and Studio send them,
with the model configured from the environment (here a local OpenAI-compatible stub)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from tests.openai_stub import OpenAIStub


def test_the_react_tools_graph_answers_a_message(monkeypatch):
    from graphs import react_tools

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]
        if last["role"] == "user":
            return {"tool": "multiply", "args": {"a": 6, "b": 7}}
        return {"tool": "finish", "args": {"answer": last["content"]}}

    with OpenAIStub(reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setattr(react_tools.agent, "_chat", None)
        monkeypatch.setattr(react_tools.agent, "_responder", None)
        state = react_tools.graph.invoke({"messages": [HumanMessage("What is 6 times 7?")]})
    assert state["stop_reason"] == "finished" and state["question"] == "What is 6 times 7?"
    assert state["outcomes"][-1]["content"] == "42"


def test_the_structured_output_graph_extracts_from_a_message(monkeypatch):
    from graphs import structured_output

    cars = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]}
    with OpenAIStub(lambda request: {"tool": "CarCollection", "args": cars}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setattr(structured_output.agent, "_chat", None)
        monkeypatch.setattr(structured_output.agent, "_extractor", None)
        state = structured_output.graph.invoke({"messages": [HumanMessage("I own a Fiat Panda with 45Hp.")]})
    assert state["stop_reason"] == "validated"
    assert structured_output.agent._parse_final_result(state).value.cars[0].power == 45
    # the passage was wrapped in the extraction prompt before the model saw it
    assert "I own a Fiat Panda with 45Hp." in stub.requests[0]["messages"][1]["content"]
    assert "JSON schema" in stub.requests[0]["messages"][1]["content"]
