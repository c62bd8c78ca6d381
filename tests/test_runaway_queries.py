"""Queries that would stall or kill the database never reach it, or fail inside it with an error,
and the server answers the next query at once. (Only bounded cases run here: the embedded server
is started with a small per-query memory cap before anything large is asked of it.)"""

from __future__ import annotations

import time

import pytest

from nodes.graphdb import FalkorDBGraph
from nodes.graphdb.embedded import EmbeddedFalkorDB
from schemas.errors import CypherSyntaxError, QueryError
from tests.conftest import TOM_HANKS_QUERY, draft, make_agent, revise


def nested(levels: int) -> str:
    return "RETURN " + "[" * levels + "1" + "]" * levels + " AS x"


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("UNWIND range(1, 1000000000) AS x RETURN count(x)", "would build a list of 1,000,000,000 values"),
        ("RETURN size(range(0, 50000000, 2)) AS n", "25,000,001"),
        (nested(25), "nests brackets 25 deep"),
        ("MATCH (n) WHERE n.name IN [" + ", ".join(f"'{i}'" for i in range(5000)) + "] RETURN n", "characters long"),
    ],
)
def test_queries_the_server_could_not_survive_never_reach_it(movies_db, query, said):
    started = time.perf_counter()
    with pytest.raises(CypherSyntaxError, match=said):
        movies_db.query(query, timeout=1)
    assert time.perf_counter() - started < 0.5


def test_ranges_and_nesting_within_bounds_still_run(movies_db):
    assert movies_db.query("UNWIND range(1, 1000) AS x RETURN count(x) AS n").rows == [[1000]]
    assert movies_db.query(nested(10)).rows == [[[[[[[[[[[[1]]]]]]]]]]]]


def test_a_query_past_the_memory_cap_fails_and_the_server_answers_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEXION_QUERY_MEMORY_MB", "64")
    server = EmbeddedFalkorDB.start(tmp_path / "capped")
    try:
        db = FalkorDBGraph("g", host=server.host, port=server.port, server=server)
        db.write("CREATE (:Seed)")
        started = time.perf_counter()
        with pytest.raises(QueryError, match="more memory than one query may"):
            db.query("UNWIND range(1, 5000000 * 2) AS x WITH collect(x) AS xs RETURN size(xs)", timeout=5)
        assert time.perf_counter() - started < 5
        answered = time.perf_counter()
        assert db.query("MATCH (n) RETURN count(n)").rows == [[1]]
        assert time.perf_counter() - answered < 0.5
        peak_mb = int(open(f"/proc/{server.pid}/status").read().split("VmHWM:")[1].split()[0]) // 1024
        assert peak_mb < 1024
    finally:
        server.stop()


def test_the_agent_tells_the_model_and_goes_on(movies_db):
    runaway = "UNWIND range(1, 1000000000) AS x RETURN count(x)"
    agent, model = make_agent(movies_db, [draft(runaway), revise(TOM_HANKS_QUERY, 3), revise(TOM_HANKS_QUERY, 9)], checkpointer=None)
    result = agent.execute("How many numbers are there?")
    assert result.outcomes[0].error and "would build a list" in result.outcomes[0].error
    assert result.answer == TOM_HANKS_QUERY and result.stop_reason in ("non_empty_result", "score_threshold")
