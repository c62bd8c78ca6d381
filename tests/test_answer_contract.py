"""One answer, one shape: `answer` (in words), `query`, `columns`, `rows`, `stop_reason` and
`thread_id` mean the same in the Python result's `output()`, in the graph's own output (what
LangGraph's server returns) and in `reflexion ... --json`, for the agent and the flows alike.
biochatter's `KGQueryResult.answer` (the query) is the one documented exception, on that class's
result only."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents import KGQueryReflexionAgent, Text2CypherFlow
from reflexion_agents.graphs.cli import main
from tests.flow_script import flow_model
from tests.helpers import TOM_HANKS_QUERY, draft, flow_replies, revise
from tests.openai_stub import OpenAIStub

CONTRACT = ("answer", "query", "columns", "rows", "stop_reason", "thread_id")
QUESTION = "Which movies did Tom Hanks act in?"
OK = {"answerable": True, "reason": "people and the movies they acted in"}


def kg_agent(movies_db):
    from reflexion_agents.nodes.models import ScriptedChatModel

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=9)] * 2)
    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=InMemorySaver())


def naive_flow(movies_db):
    model = flow_model(
        GuardrailDecision=[OK] * 2,
        CypherQuery=[{"cypher": TOM_HANKS_QUERY}] * 2,
        Summary=[{"answer": "Tom Hanks acted in Cast Away and eleven more."}] * 2,
    )
    return Text2CypherFlow(
        "naive", conversation_factory=lambda: model, database=movies_db, fewshots=False, checkpointer=InMemorySaver()
    )


@pytest.mark.integration
@pytest.mark.parametrize("make, run", [(kg_agent, "execute"), (naive_flow, "ask")], ids=["agent", "flow"])
def test_the_python_result_and_the_graphs_output_say_the_same_answer(movies_db, make, run):
    target = make(movies_db)
    said = getattr(target, run)(QUESTION, thread_id="in-python").output()
    served = target.graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "as-served"}})
    assert said["thread_id"] == "in-python" and served["thread_id"] == "as-served"
    for field in CONTRACT[:-1]:
        assert said[field] == served[field], field
    assert said["query"] == TOM_HANKS_QUERY and ["Cast Away"] in said["rows"] and said["columns"] == ["title"]
    assert isinstance(said["answer"], str) and said["answer"] != said["query"]  # words, not the query


@pytest.mark.integration
def test_biochatters_result_keeps_the_query_as_its_answer_and_says_the_rest_by_name(movies_db):
    result = kg_agent(movies_db).execute(QUESTION)
    assert result.answer == result.query == TOM_HANKS_QUERY and result.rows == result.tool_result
    assert result.output()["answer"] == result.reply_text()


@pytest.mark.integration
@pytest.mark.parametrize("flow", ["reflexion", "naive", "retry_evaluate"])
def test_json_output_is_the_same_contract_for_the_agent_and_the_flows(monkeypatch, capsys, falkordb_server, flow):
    with OpenAIStub(flow_replies) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        args = ["--data-dir", str(falkordb_server.data_dir), "ask", QUESTION, "--flow", flow, "--json"]
        assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(CONTRACT) <= set(printed)
    assert printed["query"] == TOM_HANKS_QUERY and ["Cast Away"] in printed["rows"] and printed["thread_id"]
    assert isinstance(printed["answer"], str) and printed["answer"] != printed["query"]
    assert "tool_result" not in printed and "cypher" not in printed  # said once, under the contract's names
