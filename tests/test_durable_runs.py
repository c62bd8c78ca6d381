"""Durable threads (the default SQLite checkpointer), resuming an interrupted run, human approval of a
query before it runs, and per-run settings from the run's context."""

from __future__ import annotations

import sqlite3
import uuid

import pytest
from langchain_core.messages import AIMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.checkpoints import ThreadedSqliteSaver, durable_checkpointer
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import ConfigurationError
from tests.flow_script import flow_model
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, graph_fingerprint, keep, make_agent, revise
from tests.openai_stub import OpenAIStub

MATRIX = "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p:Person) RETURN p.name AS director"
OK = {"answerable": True, "reason": "people and movies"}


class ProcessKilled(BaseException):
    """Stands for the process dying mid-run (BaseException: nothing in the loop may swallow it)."""


def test_agents_checkpoint_to_the_sqlite_file_the_environment_names(movies_db, monkeypatch, tmp_path):
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(tmp_path / "threads.sqlite"))
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)])
    assert isinstance(agent.checkpointer, ThreadedSqliteSaver)
    result = agent.execute("Tom Hanks movies?", thread_id="t-1")
    assert result.thread_id == "t-1" and (tmp_path / "threads.sqlite").exists()
    # another process opening the file sees the finished run: resume returns it without a model call
    other = KGQueryReflexionAgent(
        conversation_factory=lambda: ScriptedChatModel(),
        database=movies_db,
        checkpointer=ThreadedSqliteSaver(sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)),
    )
    again = other.resume("t-1")
    assert (again.answer, again.stop_reason) == (result.answer, result.stop_reason)
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", "none")
    assert durable_checkpointer() is None


def test_an_interrupted_run_resumes_from_its_last_step_without_redoing_it(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"

    def dies(messages):
        raise ProcessKilled

    first = ScriptedChatModel(replies=[draft(EMPTY_QUERY), dies])
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: first,
        database=movies_db,
        checkpointer=ThreadedSqliteSaver(sqlite3.connect(path, check_same_thread=False)),
    )
    with pytest.raises(ProcessKilled):
        agent.execute("Tom Hanks movies?", thread_id="crash")
    assert len(first.calls) == 2  # the draft, then the revise call that "died"
    # a new process: new saver on the same file, new model; it continues at the revise step
    second = ScriptedChatModel(replies=[revise(TOM_HANKS_QUERY, 5), keep(TOM_HANKS_QUERY, 9)])
    restarted = KGQueryReflexionAgent(
        conversation_factory=lambda: second,
        database=movies_db,
        checkpointer=ThreadedSqliteSaver(sqlite3.connect(path, check_same_thread=False)),
    )
    result = restarted.resume("crash")
    assert ["Cast Away"] in result.tool_result and result.answer == TOM_HANKS_QUERY
    assert [o.action for o in result.outcomes] == [EMPTY_QUERY, TOM_HANKS_QUERY]  # step 1 was not run again
    assert [t["function"]["name"] for t in second.bound_tools[0]] == ["ReviseQuery"]  # no second draft
    with pytest.raises(ConfigurationError, match="no run is stored"):
        restarted.resume("no-such-thread")


def test_approval_pauses_before_the_query_and_approve_runs_it(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)], require_approval=True)
    paused = agent.execute("Tom Hanks movies?")
    assert paused.stop_reason == "awaiting_approval" and paused.tool_result is None
    assert paused.pending_approval["query"] == TOM_HANKS_QUERY and paused.pending_approval["step"] == 1
    with pytest.raises(ConfigurationError, match="waits for approval"):
        agent.resume(paused.thread_id)
    done = agent.resume(paused.thread_id, "approve")
    assert done.stop_reason in ("score_threshold", "non_empty_result") and ["Cast Away"] in done.tool_result


def test_an_edit_runs_the_reviewers_query_and_the_model_is_told(movies_db):
    agent, model = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(MATRIX, 9)], require_approval=True)
    paused = agent.execute("Who directed The Matrix?")
    done = agent.resume(paused.thread_id, {"action": "edit", "query": MATRIX})
    assert done.answer == MATRIX and ["Lana Wachowski"] in done.tool_result
    assert "The reviewer replaced the query" in str(model.calls[-1][-1].content)


@pytest.mark.parametrize(
    "approval",
    [
        {"decisions": [{"type": "approve"}]},  # LangGraph's human-in-the-loop, as agent-chat-ui resumes
        [{"type": "accept", "args": None}],  # Agent Inbox's earlier response
        {"type": "approve"},  # a single decision
    ],
)
def test_a_chat_clients_approval_runs_the_query_shown(movies_db, approval):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)], require_approval=True)
    paused = agent.execute("Tom Hanks movies?")
    (request,) = paused.pending_approval["action_requests"]  # what those clients render, with buttons
    assert request["name"] == "run_cypher" and request["args"] == {"query": TOM_HANKS_QUERY}
    assert "Tom Hanks movies?" in request["description"]
    assert paused.pending_approval["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    earlier = paused.pending_approval  # the `HumanInterrupt` earlier chat UIs and Agent Inbox read
    assert earlier["action_request"] == {"action": "run_cypher", "args": {"query": TOM_HANKS_QUERY}}
    assert {k for k, allowed in earlier["config"].items() if allowed} == {"allow_accept", "allow_edit", "allow_ignore"}
    done = agent.resume(paused.thread_id, approval)
    assert done.stop_reason in ("score_threshold", "non_empty_result") and ["Cast Away"] in done.tool_result


@pytest.mark.parametrize(
    "edit",
    [
        {"decisions": [{"type": "edit", "edited_action": {"name": "run_cypher", "args": {"query": MATRIX}}}]},
        [{"type": "edit", "args": {"action": "run_cypher", "args": {"query": MATRIX}}}],  # Agent Inbox's
    ],
)
def test_a_chat_clients_edit_runs_the_reviewers_query(movies_db, edit):
    agent, model = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(MATRIX, 9)], require_approval=True)
    done = agent.resume(agent.execute("Who directed The Matrix?").thread_id, edit)
    assert done.answer == MATRIX and ["Lana Wachowski"] in done.tool_result
    assert "The reviewer replaced the query" in str(model.calls[-1][-1].content)


@pytest.mark.parametrize(
    "decision, reason",
    [
        ("reject", "rejected by the reviewer"),
        ({"action": "reject", "reason": "too broad"}, "too broad"),
        ({"action": "ship it"}, "unrecognised approval"),
        ({"action": "edit", "query": " "}, "non-empty 'query'"),
        # LangGraph's decisions and Agent Inbox's responses, as chat clients send them
        ({"decisions": [{"type": "reject", "message": "too broad"}]}, "too broad"),
        ({"decisions": [{"type": "edit", "edited_action": {"name": "run_cypher", "args": {}}}]}, "non-empty 'query'"),
        ({"decisions": [{"type": "respond", "message": "use MATCH"}]}, "answered instead of approving: use MATCH"),
        ({"decisions": [{"type": "approve"}, {"type": "approve"}]}, "one decision was expected, got 2"),
        ([{"type": "ignore", "args": None}], "the reviewer ignored the query"),
        ({"decisions": [{"type": "ship it"}]}, "unrecognised approval"),
    ],
)
def test_a_rejection_or_an_unclear_answer_runs_nothing_and_stops(movies_db, decision, reason):
    before = graph_fingerprint(movies_db)
    # writes allowed: only the reviewer's answer stands between this query and the graph
    agent, model = make_agent(
        movies_db, [draft("CREATE (:Person {name: 'Intruder'})")], require_approval=True, allow_writes=True
    )
    paused = agent.execute("Add a person")
    done = agent.resume(paused.thread_id, decision)
    assert done.stop_reason == "rejected" and reason in done.error and done.tool_result is None
    assert len(model.calls) == 1 and graph_fingerprint(movies_db) == before


def test_approval_set_by_one_runs_context_holds_when_the_resume_sends_none(movies_db):
    before = graph_fingerprint(movies_db)
    agent, _ = make_agent(movies_db, [draft("CREATE (:Person {name: 'Intruder'})")], allow_writes=True)
    paused = agent.execute("Add a person", context={"require_approval": True})
    assert paused.stop_reason == "awaiting_approval"
    done = agent.resume(paused.thread_id, "reject")  # no context this time: the rejection still holds
    assert done.stop_reason == "rejected" and graph_fingerprint(movies_db) == before


async def test_approval_and_resume_work_async_on_the_same_sqlite_threads(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)], require_approval=True)
    paused = await agent.aexecute("Tom Hanks movies?")
    assert paused.stop_reason == "awaiting_approval"
    done = await agent.aresume(paused.thread_id, "approve")
    assert ["Cast Away"] in done.tool_result


def test_the_run_context_sets_row_cap_score_threshold_and_step_limit_for_one_run(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(EMPTY_QUERY, 9)])
    capped = agent.execute("Tom Hanks movies?", context={"row_cap": 2, "score_threshold": 10, "max_steps": 1})
    assert capped.stop_reason == "max_steps" and len(capped.tool_result) == 2 and capped.truncated
    with pytest.raises(Exception, match="max_steps"):
        agent.execute("Tom Hanks movies?", context={"max_steps": 0})


def test_the_run_context_names_the_model_one_client_per_name(movies_db, monkeypatch):
    def reply(request):
        if "GenerateQuery" in str(request.get("tools")):
            return {
                "tool": "GenerateQuery",
                "args": {"answer": TOM_HANKS_QUERY, "reflection": "", "search_queries": []},
            }
        return {"tool": "ReviseQuery", "args": {"answer": "", "reflection": "", "revised_query": "x", "score": 9}}

    with OpenAIStub(reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        fallback = ScriptedChatModel()  # the agent's own model: must not be called
        agent = KGQueryReflexionAgent(conversation_factory=lambda: fallback, database=movies_db)
        for _ in range(2):
            agent.execute("Tom Hanks movies?", context={"model": "openai:served-model"})
    assert {r["model"] for r in stub.requests} == {"served-model"} and fallback.calls == []
    assert len(agent.models.named.values()) == 1


def test_the_run_context_names_another_graph_on_the_database(movies_db, falkordb_server):
    other = movies_db.sibling(f"tiny_{uuid.uuid4().hex[:6]}")
    other.query("CREATE (:Person {name: 'Ada'})", allow_writes=True)
    try:
        agent, _ = make_agent(
            movies_db,
            [draft("MATCH (p:Person) RETURN p.name AS name"), keep("MATCH (p:Person) RETURN p.name AS name", 9)],
        )
        url = f"falkordb://{falkordb_server.host}:{falkordb_server.port}"
        result = agent.execute("Who is there?", context={"database_url": url, "graph": other.graph_name})
        assert result.tool_result == [["Ada"]]
        agent.close()
    finally:
        other.query("MATCH (n) DETACH DELETE n", allow_writes=True)


def test_a_flow_pauses_for_approval_and_resumes_with_an_edit(movies_db):
    model = flow_model(
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": "MATCH (n) RETURN n LIMIT 1"}],
        Summary=[{"answer": "The Wachowskis."}],
    )
    flow = Text2CypherFlow(
        "retry", conversation_factory=lambda: model, database=movies_db, fewshots=False, require_approval=True
    )
    paused = flow.ask("Who directed The Matrix?")
    assert (
        paused.stop_reason == "awaiting_approval" and paused.pending_approval["query"] == "MATCH (n) RETURN n LIMIT 1"
    )
    done = flow.resume(paused.thread_id, {"action": "edit", "query": MATRIX})
    assert (done.stop_reason, done.cypher, done.answer) == ("answered", MATRIX, "The Wachowskis.")
    assert ["Lana Wachowski"] in done.rows


def test_a_flow_rejection_stops_without_running_the_query(movies_db):
    model = flow_model(GuardrailDecision=[OK], CypherQuery=[{"cypher": MATRIX}])
    flow = Text2CypherFlow("naive", conversation_factory=lambda: model, database=movies_db, fewshots=False)
    paused = flow.ask("Who directed The Matrix?", context={"require_approval": True})
    done = flow.resume(paused.thread_id, "reject")
    assert done.stop_reason == "rejected" and done.attempts == [] and done.answer is None


def test_the_planner_refuses_approval_rather_than_running_queries_unapproved(movies_db):
    model = flow_model(GuardrailDecision=[OK])
    flow = Text2CypherFlow(
        "planner", conversation_factory=lambda: model, database=movies_db, fewshots=False, require_approval=True
    )
    result = flow.ask("Who directed The Matrix?")
    assert result.stop_reason == "invalid_input" and "cannot pause" in result.error and result.attempts == []


def test_a_paused_thread_keeps_a_valid_memory(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY)], require_approval=True)
    paused = agent.execute("Tom Hanks movies?")
    messages = agent.graph.get_state({"configurable": {"thread_id": paused.thread_id}}).values["messages"]
    assert isinstance(messages[-1], AIMessage) and messages[-1].tool_calls  # waiting on exactly this call


def test_approval_holds_for_every_later_query_of_a_run_resumed_without_context(movies_db):
    agent, _ = make_agent(movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY, 9)])
    paused = agent.execute("Tom Hanks movies?", context={"require_approval": True})
    second = agent.resume(paused.thread_id, "approve")  # no context: the revised query must still wait
    assert second.stop_reason == "awaiting_approval" and second.pending_approval["query"] == TOM_HANKS_QUERY
    done = agent.resume(second.thread_id, "approve")
    assert ["Cast Away"] in done.tool_result


def test_a_run_resumed_after_a_crash_keeps_its_context(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"

    def dies(messages):
        raise ProcessKilled

    first = ScriptedChatModel(replies=[draft(EMPTY_QUERY), dies])
    saver = lambda: ThreadedSqliteSaver(sqlite3.connect(path, check_same_thread=False))  # noqa: E731
    agent = KGQueryReflexionAgent(conversation_factory=lambda: first, database=movies_db, checkpointer=saver())
    paused = agent.execute("Tom Hanks movies?", thread_id="ctx", context={"require_approval": True, "row_cap": 2})
    with pytest.raises(ProcessKilled):
        agent.resume("ctx", "approve")  # the empty query runs; the revise call "dies"
    second = ScriptedChatModel(replies=[revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY, 9)])
    restarted = KGQueryReflexionAgent(conversation_factory=lambda: second, database=movies_db, checkpointer=saver())
    again = restarted.resume("ctx")  # no context: the approval and the row cap of the first run still hold
    assert (
        paused.stop_reason == again.stop_reason == "awaiting_approval"
        and again.pending_approval["query"] == TOM_HANKS_QUERY
    )
    done = restarted.resume("ctx", "approve")
    assert len(done.tool_result) == 2 and done.truncated


def test_a_run_context_can_add_approval_and_lower_limits_but_never_remove_or_raise_them(movies_db):
    agent, _ = make_agent(
        movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)], require_approval=True, row_cap=2
    )
    paused = agent.execute("Tom Hanks movies?", context={"require_approval": False, "row_cap": 1000})
    assert paused.stop_reason == "awaiting_approval"
    done = agent.resume(paused.thread_id, "approve", context={"row_cap": 1000})
    assert len(done.tool_result) == 2 and done.truncated
    model = flow_model(GuardrailDecision=[OK], CypherQuery=[{"cypher": TOM_HANKS_QUERY}], Summary=[{"answer": "12"}])
    flow = Text2CypherFlow(
        "naive",
        conversation_factory=lambda: model,
        database=movies_db,
        fewshots=False,
        require_approval=True,
        row_cap=3,
    )
    paused = flow.ask("Tom Hanks movies?", context={"require_approval": False, "row_cap": 500})
    assert paused.stop_reason == "awaiting_approval"
    assert len(flow.resume(paused.thread_id, "approve").rows) == 3


def test_a_flow_resumed_without_context_asks_again_before_its_correction_runs(movies_db):
    model = flow_model(
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": "MATCH (m:Movie) RETURN m.nope("}, {"cypher": MATRIX}],
        Summary=[{"answer": "x"}],
    )
    flow = Text2CypherFlow("retry", conversation_factory=lambda: model, database=movies_db, fewshots=False)
    paused = flow.ask("Who directed The Matrix?", context={"require_approval": True})
    second = flow.resume(paused.thread_id, "approve")  # the broken query runs and fails; the correction must wait
    assert second.stop_reason == "awaiting_approval" and second.pending_approval["query"] == MATRIX


def test_a_context_naming_only_a_graph_keeps_the_agents_database(falkordb_server, movies_db):
    other = movies_db.sibling(f"tiny_{uuid.uuid4().hex[:6]}")
    other.query("CREATE (:Person {name: 'Grace'})", allow_writes=True)
    model = ScriptedChatModel(
        replies=[draft("MATCH (p:Person) RETURN p.name AS name"), keep("MATCH (p:Person) RETURN p.name AS name", 9)]
    )
    args = {"backend": "falkordb", "host": falkordb_server.host, "port": falkordb_server.port}
    agent = KGQueryReflexionAgent(connection_args=args, conversation_factory=lambda: model)
    try:
        result = agent.execute("Who is there?", context={"graph": other.graph_name})
        assert result.tool_result == [["Grace"]] and agent.dialect == "falkordb"
    finally:
        agent.close()
        other.query("MATCH (n) DETACH DELETE n", allow_writes=True)
