"""The knowledge-graph Reflexion loop on the real embedded movies graph, with a scripted model."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, keep, make_agent, revise, seconds


def test_non_empty_result_the_revision_keeps_stops_and_returns_the_executed_rows(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, score=6)])
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "non_empty_result"
    assert result.answer == TOM_HANKS_QUERY
    assert ["Cast Away"] in result.tool_result and len(result.tool_result) == 12
    assert result.steps == 1 and result.score == 6.0
    assert result.usage.llm_calls == 2 and result.usage.total_tokens > 0


def test_rows_do_not_end_the_run_while_the_revision_rewrites_the_query(movies_db):
    rewrite = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title LIMIT 3"
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(rewrite, score=9), keep(rewrite, score=9)])
    result = agent.execute("Name three movies Tom Hanks acted in.")
    assert result.stop_reason == "score_threshold" and result.steps == 2  # the praised rewrite ran, then ended it
    assert result.answer == rewrite and len(result.tool_result) == 3


def test_a_high_score_beside_a_rewritten_query_never_ends_the_run_on_no_rows(movies_db):
    # The model scores its own revision, not the empty result it was shown: the revision runs first.
    agent, _ = make_agent(
        movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, score="8/10"), keep(TOM_HANKS_QUERY, score=9)]
    )
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "score_threshold" and result.steps == 2
    assert result.answer == TOM_HANKS_QUERY and len(result.tool_result) == 12


def test_no_rows_are_the_answer_when_the_graph_holds_all_the_query_names(movies_db):
    agent, _ = make_agent(movies_db, [draft(EMPTY_QUERY), keep(EMPTY_QUERY, score="8/10")])
    result = agent.execute("Which movies did Nobody At All act in?")
    assert result.stop_reason == "empty_result"
    assert result.answer == EMPTY_QUERY and result.tool_result == [] and result.score == 8.0
    assert result.check is not None and result.check.verified
    assert any("Nobody At All" in f for f in result.check.findings)  # the value no node holds, said


def test_score_threshold_is_configurable(movies_db):
    other = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title AS title"
    script = [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 8), revise(other, 9.5), keep(other, 9.5)]
    default, _ = make_agent(movies_db, list(script), trust_non_empty_result=False)
    assert default.execute("q").steps == 1  # 8 > 7
    agent, _ = make_agent(movies_db, list(script), score_threshold=9, trust_non_empty_result=False)
    result = agent.execute("q")  # 8 is not above 9: the kept query is not run again; the next one is
    assert result.stop_reason == "score_threshold" and result.score == 9.5 and result.answer == other
    assert [o.executed for o in result.outcomes] == [True, False, True]


def test_empty_result_loops_back_to_execute_the_revision(movies_db):
    agent, _ = make_agent(movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, score=2), keep(TOM_HANKS_QUERY)])
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "non_empty_result"
    assert result.steps == 2 and result.answer == TOM_HANKS_QUERY and len(result.tool_result) == 12
    assert [o.non_empty for o in result.outcomes] == [False, True]


def test_all_null_rows_count_as_empty(movies_db):
    null_query = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.nonexistent AS x"
    agent, _ = make_agent(movies_db, [draft(null_query), revise(TOM_HANKS_QUERY, score=1), keep(TOM_HANKS_QUERY)])
    result = agent.execute("q")
    assert result.outcomes[0].executed and result.outcomes[0].rows == [[None]]
    assert result.outcomes[0].non_empty is False
    assert result.stop_reason == "non_empty_result" and result.answer == TOM_HANKS_QUERY


def test_database_error_text_reaches_the_revise_prompt(movies_db):
    bad = "MATCH (m:Movie) WHERE m.title =~ 'The.*' RETURN m.title"
    agent, model = make_agent(movies_db, [draft(bad), revise(TOM_HANKS_QUERY, score=2), keep(TOM_HANKS_QUERY)])
    result = agent.execute("q")
    revise_prompt = model.calls[1]
    tool_messages = [m for m in revise_prompt if isinstance(m, ToolMessage)]
    assert tool_messages and "The database rejected the query" in tool_messages[-1].content
    assert result.outcomes[0].error and result.outcomes[0].error in tool_messages[-1].content
    assert result.stop_reason == "non_empty_result" and result.answer == TOM_HANKS_QUERY


def test_a_repeated_query_is_not_run_again_and_the_model_is_told(movies_db):
    agent, model = make_agent(
        movies_db, [draft(EMPTY_QUERY), revise(EMPTY_QUERY + ";", 1), revise(TOM_HANKS_QUERY, 1), keep(TOM_HANKS_QUERY)]
    )
    result = agent.execute("q")
    assert [o.executed for o in result.outcomes] == [True, False, True]
    told = [m for m in model.calls[2] if isinstance(m, ToolMessage)][-1].content
    assert "already ran at step 1" in told
    assert result.answer == TOM_HANKS_QUERY


def test_no_progress_when_the_model_keeps_repeating(movies_db):
    agent, _ = make_agent(movies_db, [draft(EMPTY_QUERY)] + [revise(EMPTY_QUERY, 1)] * 5)
    result = agent.execute("q")
    assert result.stop_reason == "no_progress"  # three repeats in a row (max_repeats), each refused
    assert result.steps == 4 and result.answer == EMPTY_QUERY and result.tool_result == []


@pytest.mark.parametrize("max_steps", [1, 29, 30, 100, 1000])
def test_step_limit_ends_normally_with_the_best_result(movies_db, max_steps):
    # Every revision is a new empty query, so only the step limit can end the loop.
    def revision(messages):
        n = sum(isinstance(m, ToolMessage) for m in messages)
        return revise(f"MATCH (p:Person {{name: 'Nobody {n}'}}) RETURN p.name AS name", score=1)

    model = ScriptedChatModel(replies=[draft(EMPTY_QUERY)], default=revision)
    # no checkpoints: every saved step stores the whole memory, about 1.3 GB over a 1000-step run
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model, database=movies_db, max_steps=max_steps, checkpointer=None
    )
    result = agent.execute("q")
    assert result.stop_reason == "max_steps"
    assert result.steps == max_steps and len(result.outcomes) == max_steps
    assert result.answer is not None and result.tool_result == []
    assert result.usage.llm_calls == max_steps + 1


def test_the_step_limit_is_checked_before_the_other_rules(movies_db):
    agent, _ = make_agent(
        movies_db, [draft("MATCH (m:Movie) RETURN m.title AS t"), revise(EMPTY_QUERY, 9)], max_steps=1
    )
    result = agent.execute("q")
    assert result.stop_reason == "max_steps" and result.answer == "MATCH (m:Movie) RETURN m.title AS t"


@pytest.mark.parametrize("bad", [0, -1, 1001, 2.5, "30", True])
def test_invalid_step_limits_are_refused_clearly(bad):
    with pytest.raises(ConfigurationError, match="max_steps"):
        KGQueryReflexionAgent(conversation_factory=lambda: None, max_steps=bad)


def test_write_queries_from_the_model_never_change_the_graph(movies_db):
    from tests.helpers import graph_fingerprint

    before = graph_fingerprint(movies_db)
    writes = ["MATCH (n) DETACH DELETE n", "CREATE (:Hacker {name: 'x'})", "MATCH (p:Person) SET p.name = 'x'"]
    agent, _ = make_agent(
        movies_db, [draft(writes[0]), revise(writes[1], 1), revise(writes[2], 1), revise("u", 1)], max_steps=3
    )
    result = agent.execute("Delete everything")
    assert graph_fingerprint(movies_db) == before
    assert [o.error_type for o in result.outcomes] == ["WriteQueryRefusedError"] * 3
    assert "Only read queries are allowed" in result.outcomes[0].content
    assert result.stop_reason == "max_steps" and result.tool_result is None and result.error


def test_runaway_query_is_stopped_by_its_timeout(movies_db):
    runaway = "MATCH (a), (b), (c), (d) RETURN count(*) AS n"  # over a minute: 171^4 rows
    # the one timeout serves the runaway and the quick query after it: short, but ample for a quick
    # query on this machine as it is now
    quick = seconds(lambda: movies_db.query(TOM_HANKS_QUERY))
    agent, _ = make_agent(
        movies_db,
        [draft(runaway), revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY)],
        query_timeout=round(1.0 + 10 * quick, 3),
    )
    result = agent.execute("q")
    assert result.outcomes[0].error_type == "QueryTimeoutError"
    assert result.stop_reason == "non_empty_result" and result.answer == TOM_HANKS_QUERY


def test_row_cap_is_reported_to_the_model_and_the_result(movies_db):
    agent, _ = make_agent(
        movies_db, [draft("MATCH (p:Person) RETURN p.name AS name"), revise("u", 9)], row_cap=10, rows_in_message=3
    )
    result = agent.execute("q")
    assert len(result.tool_result) == 10 and result.truncated
    assert "cut at the row cap" in result.outcomes[0].content and "Showing the first 3" in result.outcomes[0].content


def test_memory_is_a_well_formed_tool_conversation(movies_db):
    agent, model = make_agent(movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY)])
    agent.execute("q")
    memory = model.calls[-1][1:]  # after the system prompt
    kinds = [type(m).__name__ for m in memory]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage"]
    for ai, tool in zip(memory[1::2], memory[2::2], strict=True):
        assert isinstance(ai, AIMessage) and tool.tool_call_id == ai.tool_calls[0]["id"]


async def test_aexecute_gives_the_same_result(movies_db):
    agent, _ = make_agent(movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY)])
    result = await agent.aexecute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "non_empty_result" and len(result.tool_result) == 12 and result.steps == 2


def test_empty_question_is_refused():
    agent = KGQueryReflexionAgent(conversation_factory=lambda: ScriptedChatModel())
    with pytest.raises(ConfigurationError):
        agent.execute("   ")


def test_kg_prompt_defaults_to_the_live_schema(movies_db):
    agent, model = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise("u", 9)])
    agent.execute("q")
    system = model.calls[0][0].content
    assert "(:Person)-[:ACTED_IN]->(:Movie)" in system and "FalkorDB" in system


def test_wrong_rows_scored_low_run_the_revision_whether_or_not_rows_are_trusted(movies_db):
    # Rows, but not the answer: the revision scores them low and rewrites the query.
    wrong = "MATCH (p:Person)-[:DIRECTED]->(m:Movie {title: 'The Matrix'}) RETURN p.name AS name"
    script = [draft(wrong), revise(TOM_HANKS_QUERY, score=2), keep(TOM_HANKS_QUERY, score=9)]
    for trust in (True, False):
        agent, _ = make_agent(movies_db, list(script), trust_non_empty_result=trust)
        result = agent.execute("Which movies did Tom Hanks act in?")
        assert result.stop_reason == "score_threshold" and result.answer == TOM_HANKS_QUERY and result.steps == 2
        assert len(result.tool_result) == 12


def test_rows_kept_with_a_score_that_rejects_them_do_not_end_the_run(movies_db):
    wrong = "MATCH (p:Person)-[:DIRECTED]->(m:Movie {title: 'The Matrix'}) RETURN p.name AS name"
    agent, _ = make_agent(
        movies_db, [draft(wrong), keep(wrong, score=2), revise(TOM_HANKS_QUERY, 3), keep(TOM_HANKS_QUERY)]
    )
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "non_empty_result" and result.answer == TOM_HANKS_QUERY
    assert [o.executed for o in result.outcomes] == [True, False, True]  # the kept query was not run again


def test_without_trusting_non_empty_results_a_middling_score_does_not_end_the_run(movies_db):
    script = [draft(TOM_HANKS_QUERY)] + [keep(TOM_HANKS_QUERY, score=6)] * 4
    trusting, _ = make_agent(movies_db, list(script))
    assert trusting.execute("q").stop_reason == "non_empty_result"
    agent, _ = make_agent(movies_db, list(script), trust_non_empty_result=False)
    result = agent.execute("q")
    assert result.stop_reason == "no_progress" and result.answer == TOM_HANKS_QUERY


def test_without_trusting_non_empty_results_an_unscored_one_still_stops(movies_db):
    agent, _ = make_agent(
        movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, score="n/a")], trust_non_empty_result=False
    )
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "non_empty_result" and result.answer == TOM_HANKS_QUERY and result.score is None
