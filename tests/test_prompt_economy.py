"""What every call costs the model to read, through the real OpenAI client: the tools ask only what
the loop reads, rows come as arrays under their columns, empty arguments are not resent (the memory
keeps every field), and the schema says each thing once. A model that still fills what it is no
longer asked for (biochatter's `search_queries`, a draft's `reflection`, a score of "8/10") is read
as before."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from tests.helpers import TOM_HANKS_QUERY
from tests.openai_stub import OpenAIStub, revision_scoring_model

BROKEN = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie RETURN m.title"
QUESTION = "Which movies did Tom Hanks act in?"


def offered(request: dict[str, Any]) -> dict[str, Any]:
    """The one tool a request offers, as the model reads it: {field: its JSON schema}."""
    (tool,) = request["tools"]
    return dict(tool["function"]["parameters"]["properties"])


@pytest.fixture
def run(movies_db) -> Iterator[tuple[OpenAIStub, KGQueryReflexionAgent, Any]]:
    """A question answered through `ChatOpenAI` by a model that drafts a broken query with every
    biochatter field filled, then fixes it and scores the fix "8/10" (its own revision, as many do)."""
    with OpenAIStub(revision_scoring_model(BROKEN, TOM_HANKS_QUERY)) as stub:
        model = ChatOpenAI(model="any", api_key="sk-test", base_url=stub.base_url, max_retries=0)
        saver = InMemorySaver()
        agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=saver)
        yield stub, agent, agent.execute(QUESTION)


def test_the_tools_ask_only_for_what_the_loop_reads(run):
    stub, _, result = run
    assert result.answer == TOM_HANKS_QUERY and result.stop_reason == "score_threshold" and result.steps == 2
    draft, *revisions = stub.requests
    assert offered(draft) == {"answer": {"description": "The Cypher query.", "type": "string"}}
    for request in revisions:
        fields = offered(request)
        assert sorted(fields) == ["reflection", "revised_query", "score"]
        assert fields["score"]["type"] == "number" and "result shown" in fields["score"]["description"]
        assert all("default" not in schema for schema in fields.values())
    assert result.outcomes[0].score == 8.0  # "8/10", read though the tool asks for a number


def test_calls_are_resent_without_their_empty_arguments_and_memory_keeps_every_field(run):
    stub, agent, result = run
    sent = [c for m in stub.requests[-1]["messages"] for c in m.get("tool_calls") or []]
    assert json.loads(sent[0]["function"]["arguments"]) == {"answer": BROKEN, "reflection": "first try"}
    memory = agent.graph.get_state({"configurable": {"thread_id": result.thread_id}}).values["messages"]
    kept = [c["args"] for m in memory for c in getattr(m, "tool_calls", [])]
    # every field, as biochatter's hooks read them (`args["search_queries"]`, `args["reflection"]`)
    assert kept[0] == {"answer": BROKEN, "reflection": "first try", "search_queries": []}
    assert kept[1]["score"] == "8/10" and kept[1]["revised_query"] == TOM_HANKS_QUERY


def test_rows_are_shown_as_arrays_under_their_columns(run):
    stub, _, result = run
    shown = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "tool"][-1]
    named = re.search(r"columns: (\[.*?\])\.", shown)
    assert named is not None
    rows = [json.loads(line) for line in shown.splitlines() if line.startswith("[")]
    by_column = [dict(zip(json.loads(named.group(1)), row, strict=True)) for row in rows]
    assert len(by_column) == len(result.tool_result) == 12
    assert {"title": "Cast Away"} in [{k: v for k, v in row.items() if k == "title"} for row in by_column]


@pytest.fixture(scope="module")
def genes_db(falkordb_server: EmbeddedFalkorDB) -> Iterator[FalkorDBGraph]:
    """A graph of other labels, written as a user would: several property-less relationship types
    between the same labels, a free-text property, floats stored in single precision."""
    db = FalkorDBGraph("genes", host=falkordb_server.host, port=falkordb_server.port, server=falkordb_server)
    db.clear()
    db.query(
        "CREATE (a:Gene {symbol: 'TP53', summary: 'Tumour suppressor that regulates the cell cycle and apoptosis'}),"
        " (b:Gene {symbol: 'MDM2', summary: 'E3 ubiquitin ligase that targets p53 for degradation'}),"
        " (p:Protein {name: 'p53', mass: 43.65299987792969}),"
        " (a)-[:REGULATES]->(b), (b)-[:INHIBITS]->(a), (a)-[:ENCODES]->(p), (b)-[:BINDS {affinity: 0.8}]->(p)",
        allow_writes=True,
    )
    yield db
    db.clear()


def test_the_schema_says_each_thing_once_and_only_what_a_query_matches_on(genes_db):
    agent = KGQueryReflexionAgent(conversation_factory=lambda: None, database=genes_db, checkpointer=None)
    prompt = agent.schema_prompt()
    assert "(:Gene)-[:INHIBITS|REGULATES]->(:Gene)" in prompt or "(:Gene)-[:REGULATES|INHIBITS]->(:Gene)" in prompt
    assert "(:Gene)-[:ENCODES]->(:Protein)" in prompt and "(:Gene)-[:BINDS]->(:Protein) affinity" in prompt
    assert prompt.count("REGULATES") == prompt.count("INHIBITS") == 1
    assert '"TP53"' in prompt and "Tumour suppressor" not in prompt  # free text shows no example
    assert "43.653" in prompt and "43.65299987792969" not in prompt
    # A query with the grouped types, as a model would copy them, runs and reads both relationships.
    rows = genes_db.query("MATCH (:Gene)-[r:REGULATES|INHIBITS]->(:Gene) RETURN count(r) AS n").rows
    assert rows == [[2]]


@pytest.mark.unit
def test_examples_show_a_values_form_and_nothing_a_query_cannot_match_on():
    from reflexion_agents.nodes.common.schema_text import shown_examples
    from reflexion_agents.schemas.graphdb import PropertyInfo

    def shown(*examples: object) -> list:
        return shown_examples(PropertyInfo(name="p", types=[], examples=list(examples)))

    assert shown("The Matrix", "The Lord of the Rings: The Two Towers", "Cloud Atlas") == ["The Matrix", "Cloud Atlas"]
    assert shown("Welcome to the Real World", "Free your mind", "Everything that has a beginning has an end") == []
    assert shown(34.0699996948242, 181.139999389648) == [34.07, 181.14]  # single precision, as written
    assert shown(3.141592653589793, 51.50735099812345) == [3.141592653589793, 51.50735099812345]  # doubles as they are
    assert shown(3 * 1.1 - 0.3) == [3.0000000000000004]  # a double beside a single-precision value, as it is
    assert shown("Top Gun", "The Da Vinci Code") == ["Top Gun", "The Da Vinci Code"]
    assert shown("A Few Good Men", "When Harry Met Sally", "Top Gun") == ["A Few Good Men", "When Harry Met Sally"]
    assert shown("Fish, shellfish and seaweed", "Dried fruit and bean curd") == []
    assert shown(1700000000123.0, 0.0, float("inf")) == [1700000000123.0, 0.0]
