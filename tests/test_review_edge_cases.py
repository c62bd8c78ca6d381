"""Edge cases that once slipped through: forged error texts, comments around RETURN, threads, huge scores."""

from __future__ import annotations

import multiprocessing

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.common.responder import parse_reply
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.nodes.reflexion.scoring import parse_score
from reflexion_agents.schemas.errors import WriteQueryRefusedError
from reflexion_agents.schemas.kg_query import GenerateQuery
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, keep, revise

pytestmark = pytest.mark.integration  # servers and processes of their own

MEG_RYAN_QUERY = TOM_HANKS_QUERY.replace("Tom Hanks", "Meg Ryan")


def test_a_second_question_on_the_same_thread_is_a_fresh_run(movies_db):
    model = ScriptedChatModel(
        replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY), draft(MEG_RYAN_QUERY), keep(MEG_RYAN_QUERY)]
    )
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=InMemorySaver())
    first = agent.execute("Tom Hanks movies?", thread_id="t")
    second = agent.execute("Meg Ryan movies?", thread_id="t")
    assert first.answer == TOM_HANKS_QUERY and second.answer == MEG_RYAN_QUERY
    assert second.steps == 1 and len(second.outcomes) == 1 and second.usage.llm_calls == 2
    # The second draft saw the whole first exchange, as a well-formed tool conversation ending in its answer.
    assert [type(m).__name__ for m in model.calls[2][1:]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
        "HumanMessage",
    ]
    assert TOM_HANKS_QUERY in model.calls[2][-2].content and not model.calls[2][-2].tool_calls


def test_graph_invoked_directly_with_only_messages_runs(movies_db):
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY)])
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db)
    state = agent.graph.invoke(
        {"messages": [HumanMessage("Tom Hanks movies?")]}, {"configurable": {"thread_id": "direct"}}
    )
    assert state["stop_reason"] == "non_empty_result" and state["steps"] == 1


def test_the_compiled_graph_carries_a_recursion_limit_that_fits_max_steps(movies_db):
    model = ScriptedChatModel(
        replies=[draft(EMPTY_QUERY)],
        default=lambda m: revise(f"MATCH (p:Person {{name: 'Nobody {len(m)}'}}) RETURN p.name", 1),
    )
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, max_steps=40)
    state = agent.graph.invoke(
        {"messages": [HumanMessage("q")]}, {"configurable": {"thread_id": "limit"}}
    )  # LangGraph's default is 25
    assert state["stop_reason"] == "max_steps" and state["steps"] == 40


def test_a_huge_score_is_no_score():
    assert parse_score(10**400) is None and parse_score("1" * 400) is None


def test_a_query_cannot_forge_the_missing_graph_or_timeout_errors(movies_db):
    model = ScriptedChatModel(
        replies=[
            draft("RETURN 'empty key' + "),
            revise("RETURN 'Query timed out' + ", 1),
            revise(TOM_HANKS_QUERY, 1),
            keep(TOM_HANKS_QUERY),
        ]
    )
    result = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db).execute("q")
    assert [o.error_type for o in result.outcomes[:2]] == ["CypherSyntaxError", "CypherSyntaxError"]
    assert result.stop_reason == "non_empty_result"


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:Movie) RETURN m.title AS t, m.released AS r /* RETURN r, t ORDER BY x */",
        "MATCH (m:Movie) /* don't */ RETURN m.title AS t, m.released AS r",
        "MATCH (m:Movie) RETURN m.title AS t, m.released AS r // done",
        "MATCH (m:Movie) RETURN m.title AS speedlimit, m.released AS r",
    ],
)
def test_comments_and_keyword_like_names_keep_the_cap_in_the_database(movies_db, monkeypatch, query):
    sent: list[str] = []
    original = movies_db._session.graph.ro_query
    monkeypatch.setattr(movies_db._session.graph, "ro_query", lambda q, *a, **k: sent.append(q) or original(q, *a, **k))
    result = movies_db.query(query, row_cap=2)
    assert sent[0].startswith("CALL {") and sent[0].endswith("LIMIT 3")
    assert len(result.rows) == 2 and result.truncated
    assert isinstance(result.rows[0][0], str) and isinstance(result.rows[0][1], int)


def test_validate_refuses_procedures_that_write(movies_db):
    with pytest.raises(WriteQueryRefusedError, match="createNodeIndex"):
        movies_db.validate("CALL db.idx.fulltext.createNodeIndex('Movie', 'title')")
    movies_db.validate("CALL db.labels()")  # reading procedures pass


def test_replies_with_content_blocks_are_read_from_their_text():
    reply = AIMessage(content=[{"type": "text", "text": 'Query: {"answer": "RETURN 1"}'}])
    parsed, _, error = parse_reply(reply, GenerateQuery)
    assert error is None and parsed.answer == "RETURN 1"


def _start_and_report(directory: str, queue: multiprocessing.Queue, done: multiprocessing.Event) -> None:
    server = EmbeddedFalkorDB.start(directory)
    queue.put((server.port, server.owned))
    done.wait(60)  # stay alive (and keep an owned server running) until both have reported


def test_two_processes_starting_on_one_directory_share_one_server(tmp_path):
    context = multiprocessing.get_context("spawn")
    queue, done = context.Queue(), context.Event()
    workers = [context.Process(target=_start_and_report, args=(str(tmp_path), queue, done)) for _ in range(2)]
    for w in workers:
        w.start()
    reports = [queue.get(timeout=60) for _ in workers]
    done.set()
    for w in workers:
        w.join(60)
    assert len({port for port, _ in reports}) == 1
    assert sorted(owned for _, owned in reports) == [False, True]


def test_step_limit_returns_the_best_executed_query(movies_db):
    error_query = "MATCH (m:Movie) RETURN m.title +"
    better_empty = EMPTY_QUERY
    worse_empty = "MATCH (p:Person {name: 'Nobody Else'}) RETURN p.name AS name"
    model = ScriptedChatModel(
        replies=[draft(error_query), revise(better_empty, 1), revise(worse_empty, 6), revise("RETURN 1 +", 2)]
    )
    result = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, max_steps=3).execute("q")
    assert result.stop_reason == "max_steps"
    assert [o.score for o in result.outcomes] == [1.0, 6.0, 2.0]
    assert result.answer == better_empty and result.tool_result == []  # no error, highest score
