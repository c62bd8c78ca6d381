"""The evaluation harness on the real movies questions and database: the oracle scores 100% on the
gold queries that run, and the corrupting model's faults (writes included) never change the graph."""

from __future__ import annotations

from graphs.evaluation import evaluate
from nodes.evaluation.dataset import load_dataset
from tests.helpers import graph_fingerprint


def sample(step: int):
    return load_dataset()[::step]  # every step-th question: all question types, a quick run


async def test_the_oracle_scores_every_runnable_gold_query_and_excluded_ones_are_reported(movies_db):
    items = sample(20)
    report = await evaluate(agent="reflexion", model="oracle", items=items, db=movies_db, concurrency=4)
    assert report.overall.scored + report.excluded == len(items) and report.overall.scored > 30
    assert report.overall.correct == report.overall.scored and report.overall.executable == report.overall.scored
    assert all(t.excluded for t in report.traces if t.correct is None)
    assert {g.name for g in report.by_type} >= {"Simple Retrieval Queries", "Pathfinding Queries"}


async def test_the_corrupting_model_drives_the_loop_and_writes_never_land(movies_db):
    before = graph_fingerprint(movies_db)
    report = await evaluate(
        agent="reflexion", model="corrupt", items=sample(40), db=movies_db, faults=["write_clause", "syntax_error"]
    )
    by_fault = {g.name: g for g in report.by_fault}
    assert by_fault["write_clause"].correct == by_fault["write_clause"].scored > 10
    assert by_fault["syntax_error"].mean_steps == 2 and by_fault["syntax_error"].mean_llm_calls == 3
    assert graph_fingerprint(movies_db) == before
