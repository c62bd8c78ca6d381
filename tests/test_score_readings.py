"""Stop rules under both readings of `score`: models that score the result they were shown (as the
prompt asks) and models that score the revision they just wrote (as many real ones do)."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from tests.helpers import TOM_HANKS_QUERY, draft, keep, make_agent, revise
from tests.openai_stub import OpenAIStub, revision_scoring_model

BROKEN = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie RETURN m.title"


def _agent(movies_db, stub: OpenAIStub, **options) -> KGQueryReflexionAgent:
    model = ChatOpenAI(model="any", api_key="sk-test", base_url=stub.base_url, max_retries=0)
    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None, **options)


def test_a_high_score_after_an_error_runs_the_fix_and_answers_with_its_rows(movies_db):
    with OpenAIStub(revision_scoring_model(BROKEN, TOM_HANKS_QUERY)) as stub:
        result = _agent(movies_db, stub).execute("Which movies did Tom Hanks act in?")
    assert result.answer == TOM_HANKS_QUERY and len(result.tool_result) == 12 and ["Cast Away"] in result.tool_result
    assert result.stop_reason == "score_threshold" and result.steps == 2
    assert result.outcomes[0].error and result.outcomes[0].score == 8.0  # the score stays on record, unbelieved
    told = [m for m in stub.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "did not end the run because the query it judged failed" in told


async def test_the_same_holds_for_async_runs(movies_db):
    with OpenAIStub(revision_scoring_model(BROKEN, TOM_HANKS_QUERY)) as stub:
        result = await _agent(movies_db, stub).aexecute("Which movies did Tom Hanks act in?")
    assert result.answer == TOM_HANKS_QUERY and result.stop_reason == "score_threshold"


def test_with_trust_non_empty_off_the_fix_still_runs(movies_db):
    with OpenAIStub(revision_scoring_model(BROKEN, TOM_HANKS_QUERY)) as stub:
        result = _agent(movies_db, stub, trust_non_empty_result=False).execute("Which movies did Tom Hanks act in?")
    assert result.answer == TOM_HANKS_QUERY and len(result.tool_result) == 12


def test_a_model_that_keeps_its_broken_query_and_scores_it_high_never_ends_satisfied(movies_db):
    agent, _ = make_agent(movies_db, [draft(BROKEN)] + [revise(BROKEN, score=10)] * 5, checkpointer=None)
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "no_progress"
    assert result.answer == BROKEN and result.tool_result is None and result.error


def test_a_high_score_beside_a_rewritten_query_runs_the_rewrite_first(movies_db):
    # Under the second reading the 9 is the rewrite's: it has not run, so it cannot end the run yet.
    limited = TOM_HANKS_QUERY + " LIMIT 3"
    agent, model = make_agent(
        movies_db, [draft(TOM_HANKS_QUERY), revise(limited, score=9), keep(limited, score=9)], checkpointer=None
    )
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "score_threshold" and result.answer == limited and len(result.tool_result) == 3
    told = [m for m in model.calls[2] if m.type == "tool"][-1].content
    assert "did not end the run because you revised the query" in told


def test_a_high_score_for_a_kept_query_with_rows_ends_the_run(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, score=9)], checkpointer=None)
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "score_threshold" and result.steps == 1 and len(result.tool_result) == 12


def test_after_an_error_a_high_scored_repeat_is_not_run_and_the_model_is_told_so(movies_db):
    from tests.helpers import EMPTY_QUERY

    script = [
        draft(EMPTY_QUERY),
        revise(BROKEN, score=2),
        revise(EMPTY_QUERY, score=9),
        revise(TOM_HANKS_QUERY, score=3),
        keep(TOM_HANKS_QUERY),
    ]
    agent, model = make_agent(movies_db, script, checkpointer=None)
    result = agent.execute("Which movies did Tom Hanks act in?")
    told = [m for m in model.calls[3] if m.type == "tool"][-1].content
    assert "did not end the run because the query it judged failed" in told
    assert "was run instead" not in told and "Not executed: this is the same query" in told
    assert result.answer == TOM_HANKS_QUERY and result.stop_reason == "non_empty_result"
