"""Queries that would stall or kill the database never reach it, or fail inside it with an error,
and the server answers the next query at once. (Only bounded cases run here: the embedded server
is started with a small per-query memory cap before anything large is asked of it.)

How soon things happen is bounded by `tests/helpers.py`'s `latest`: the promise, plus three times
a trivial query timed in the same test and a quarter of a second of slack, so a busy machine does
not fail a test and a runaway (tens of seconds, or a dead server) still does."""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb import falkordb_graph as falkordb_module
from reflexion_agents.nodes.graphdb.cypher_text import refuse_unsendable
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.schemas.errors import CypherSyntaxError, QueryError
from tests.helpers import (
    HANG_GUARD_S,
    TOM_HANKS_QUERY,
    ServerCommands,
    draft,
    latest,
    make_agent,
    revise,
    seconds,
    wait_until,
)

pytestmark = pytest.mark.integration  # servers of their own, with runaway queries


def nested(levels: int) -> str:
    return "RETURN " + "[" * levels + "1" + "]" * levels + " AS x"


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("UNWIND range(1, 1000000000) AS x RETURN count(x)", "would build a list of 1,000,000,000 values"),
        ("RETURN size(range(0, 50000000, 2)) AS n", "25,000,001"),
        (nested(25), "nests expressions 25 levels deep"),
        # the parser recurses as deeply into prefix operators and CASE (24 NOTs: past 10 s, no timeout applies)
        ("RETURN " + "NOT " * 24 + "true AS x", "nests expressions 24 levels deep"),
        ("RETURN " + "-" * 24 + "1 AS x", "nests expressions 24 levels deep"),
        ("RETURN " + "CASE WHEN true THEN " * 24 + "1" + " END" * 24 + " AS x", "nests expressions 24 levels deep"),
        ("RETURN " + "(" * 12 + "NOT " * 12 + "true" + ")" * 12 + " AS x", "nests expressions 24 levels deep"),
        ("MATCH (n) WHERE n.name IN [" + ", ".join(f"'{i}'" for i in range(5000)) + "] RETURN n", "characters long"),
    ],
)
def test_queries_the_server_could_not_survive_never_reach_it(movies_db, query, said):
    client = redis.Redis(host=movies_db.host, port=movies_db.port)
    sent = ServerCommands(client)
    with pytest.raises(CypherSyntaxError, match=said):
        movies_db.query(query, timeout=1)
    assert sent() == {}  # not even its EXPLAIN
    client.close()


def test_ranges_and_nesting_within_bounds_still_run(movies_db):
    assert movies_db.query("UNWIND range(1, 1000) AS x RETURN count(x) AS n").rows == [[1000]]
    assert movies_db.query(nested(10)).rows == [[[[[[[[[[[[1]]]]]]]]]]]]


def test_a_query_past_the_memory_cap_fails_and_the_server_answers_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEXION_QUERY_MEMORY_MB", "64")
    server = EmbeddedFalkorDB.start(tmp_path / "capped")
    try:
        db = FalkorDBGraph("g", host=server.host, port=server.port, server=server)
        db.write("CREATE (:Seed)")
        trivial = seconds(lambda: db.query("MATCH (n) RETURN count(n)"))
        with pytest.raises(QueryError, match="more memory than one query may"):  # not the 5 s timeout
            db.query("UNWIND range(1, 5000000 * 2) AS x WITH collect(x) AS xs RETURN size(xs)", timeout=5)
        answered = time.perf_counter()
        assert db.query("MATCH (n) RETURN count(n)").rows == [[1]]
        assert time.perf_counter() - answered < latest(0.1, trivial)
        status = Path(f"/proc/{server.pid}/status").read_text()
        peak_mb = int(status.split("VmHWM:")[1].split()[0]) // 1024
        assert peak_mb < 1024
    finally:
        server.stop()


def test_the_agent_tells_the_model_and_goes_on(movies_db):
    runaway = "UNWIND range(1, 1000000000) AS x RETURN count(x)"
    agent, _ = make_agent(
        movies_db, [draft(runaway), revise(TOM_HANKS_QUERY, 3), revise(TOM_HANKS_QUERY, 9)], checkpointer=None
    )
    result = agent.execute("How many numbers are there?")
    assert result.outcomes[0].error and "would build a list" in result.outcomes[0].error
    assert result.answer == TOM_HANKS_QUERY and result.stop_reason in ("non_empty_result", "score_threshold")


# Runaways the pre-check cannot see (their sizes are computed at run time), one per way a query
# escapes FalkorDB's own timeout or memory cap. The limits below are the promise: control back
# within the timeout + 10% (the client deadline is 5% + 50 ms), and a server that answers at once
# (each on a busy machine allowing what a trivial query takes there: `latest`).
RUNTIME_RANGE = "WITH 171 AS c UNWIND range(1, c * 1000000) AS x RETURN count(x)"
STRING_REDUCE = "WITH 171 AS c RETURN size(reduce(s = '', x IN range(1, c * 2000) | s + 'abcdefghij'))"
CARTESIAN = "MATCH (a), (b), (c), (d) RETURN count(*)"
RUNAWAYS = {"runtime_range": RUNTIME_RANGE, "string_reduce": STRING_REDUCE, "cartesian": CARTESIAN}


@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:
        env.setenv("REFLEXION_QUERY_MEMORY_MB", "256")
        server = EmbeddedFalkorDB.start(tmp_path_factory.mktemp("runaways"))
    db = FalkorDBGraph("g", host=server.host, port=server.port, server=server)
    db.write("UNWIND range(1, 200) AS i CREATE (:N {i: i})")
    yield server, db
    server.stop()


def _peak_mb(pid: int) -> int:
    return int(open(f"/proc/{pid}/status").read().split("VmHWM:")[1].split()[0]) // 1024


@pytest.mark.parametrize("kind", sorted(RUNAWAYS))
def test_a_runaway_returns_control_within_its_timeout_and_nobody_waits_for_it(small_server, kind):
    server, db = small_server
    bystander: dict[str, Any] = {}
    other = FalkorDBGraph("g", host=server.host, port=server.port)
    trivial = seconds(lambda: other.query("MATCH (n:N) RETURN count(n)"))
    client = redis.Redis(host=server.host, port=server.port)
    returned = threading.Event()

    def ask_something_else() -> None:
        # once the runaway runs in the server (its client is blocked on it), or was refused already
        running = lambda: client.info("clients")["blocked_clients"] > 0  # noqa: E731
        try:
            wait_until(lambda: running() or returned.is_set(), "the runaway never started")
            started = time.perf_counter()
            rows = other.query("MATCH (n:N) RETURN count(n)", timeout=5).rows
            bystander["s"] = time.perf_counter() - started
            bystander["rows"] = rows
        except Exception as e:  # said by the test itself, not lost in this thread
            bystander["failed"] = f"{type(e).__name__}: {e}"

    helper = threading.Thread(target=ask_something_else)
    helper.start()
    started = time.perf_counter()
    with pytest.raises(QueryError):  # QueryTimeoutError, or the memory cap's error
        db.query(RUNAWAYS[kind], timeout=1.0)
    took = time.perf_counter() - started
    returned.set()
    helper.join(HANG_GUARD_S)
    client.close()
    assert took < latest(1.1, trivial), f"{kind}: control came back after {took:.2f}s"
    assert "failed" not in bystander and bystander["rows"] == [[200]], bystander
    assert bystander["s"] < latest(0.1, trivial), f"an unrelated query waited {bystander['s']:.2f}s behind {kind}"
    answered = time.perf_counter()
    assert db.query("RETURN 1").rows == [[1]]
    assert time.perf_counter() - answered < latest(0.1, trivial)
    assert _peak_mb(server.pid) < 8 * 256 + 300  # threads x the per-query cap, plus the server itself


def test_several_abandoned_runaways_do_not_hold_up_other_clients(small_server):
    server, db = small_server
    import concurrent.futures

    trivial = seconds(lambda: db.query("MATCH (n:N) RETURN count(n)"))
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        runaways = [
            pool.submit(FalkorDBGraph("g", host=server.host, port=server.port).query, STRING_REDUCE, timeout=0.5)
            for _ in range(2)
        ]
        concurrent.futures.wait(runaways, timeout=HANG_GUARD_S)  # both clients have given up; the server
        started = time.perf_counter()  # is still concatenating (for tens of seconds, unguarded)
        assert db.query("MATCH (n:N) RETURN count(n)", timeout=5).rows == [[200]]
        assert time.perf_counter() - started < latest(0.1, trivial)
        for runaway in runaways:
            with pytest.raises(QueryError):
                runaway.result()


def test_a_full_queue_is_said_to_be_a_busy_database_not_a_syntax_error(tmp_path, monkeypatch):
    from reflexion_agents.schemas.errors import DatabaseUnavailableError

    monkeypatch.setenv("REFLEXION_DB_THREADS", "1")
    server = EmbeddedFalkorDB.start(tmp_path / "queue")
    try:
        redis.Redis(port=server.port).execute_command("GRAPH.CONFIG", "SET", "MAX_QUEUED_QUERIES", "1")
        db = FalkorDBGraph("g", host=server.host, port=server.port, server=server)
        db.write("CREATE (:N)")

        def occupy() -> None:  # one runs on the only thread, one waits in the queue of one
            with pytest.raises(QueryError):
                FalkorDBGraph("g", host=server.host, port=server.port).query(STRING_REDUCE, timeout=5)

        client = redis.Redis(port=server.port)
        busy = [threading.Thread(target=occupy) for _ in range(2)]
        for n, thread in enumerate(busy, start=1):
            thread.start()  # its client waits on the server (running, or queued)
            wait_until(lambda n=n: client.info("clients")["blocked_clients"] >= n, "a query never reached the server")
        with pytest.raises(DatabaseUnavailableError, match="too busy"):
            db.query("RETURN 1", timeout=1)
        for thread in busy:
            thread.join()
    finally:
        server.stop()


# FalkorDB seeks ids by a range for `id(n) < x`; with an upper bound below 1 the seek walks the
# whole (unsigned) id space, past any timeout, and negative bounds give wrong rows. Each query is
# asked on a server of its own: if the guard regressed, the thread it holds dies with that server.
ID_RANGES = [
    ("MATCH (n) WHERE id(n) < 0 RETURN count(n)", 0),
    ("MATCH (n:N) WHERE 0 > id(n) RETURN count(n)", 0),
    ("WITH 0 AS z MATCH (n) WHERE id(n) < z RETURN count(n)", 0),  # a bound known only at run time
    ("MATCH (n) WHERE NOT id(n) >= 0 RETURN count(n)", 0),
    ("MATCH (n) WHERE id(n) <= -1 RETURN count(n)", 0),  # answered 200 (every node) unguarded
    ("MATCH (n) WHERE id(n) >= -3 AND id(n) < 3 RETURN count(n)", 3),  # answered 0 unguarded
    ("MATCH (n) WHERE id(n)<-1 RETURN count(n)", 0),  # FalkorDB reads `<-1` after a value as `< -1`
    ("MATCH (n) WHERE (id(n)) < 0 RETURN count(n)", 0),
    ("MATCH (n) WHERE `id`(n) < 0 RETURN count(n)", 0),  # a function name in backticks
    ("MATCH (n) WHERE id(n) > 5 RETURN count(n)", 194),
]


@pytest.mark.parametrize(("query", "count"), ID_RANGES)
def test_an_id_range_answers_at_once_with_the_right_count(tmp_path, query, count):
    server = EmbeddedFalkorDB.start(tmp_path / "ids")
    try:
        db = FalkorDBGraph("g", host=server.host, port=server.port, server=server)
        db.write("UNWIND range(1, 200) AS i CREATE (:N {i: i})")
        trivial = seconds(lambda: db.query("MATCH (n) WHERE id(n) = 5 RETURN count(n)"))
        started = time.perf_counter()
        assert db.query(query, timeout=30).rows == [[count]]  # unguarded, some outlast any timeout
        assert time.perf_counter() - started < latest(0.1, trivial)
    finally:
        server.stop()


def test_the_agent_answers_a_model_that_guards_its_query_with_a_negative_id(movies_db):
    """A model that writes `id(m) < 0` as "nothing yet" gets its empty rows at once, and the next
    query runs at once too: no server thread is left spinning."""
    guarded = "MATCH (m:Movie) WHERE id(m) < 0 RETURN m.title AS title"
    agent, _ = make_agent(movies_db, [draft(guarded), revise(TOM_HANKS_QUERY, 3), revise(TOM_HANKS_QUERY, 9)])
    result = agent.execute("Which movies did Tom Hanks act in?", context={"query_timeout": 2})
    # neither query ran into its timeout (an error in its outcome), and both answered
    assert [o.error for o in result.outcomes] == [None] * len(result.outcomes)
    assert result.outcomes[0].rows == []
    assert result.outcomes[0].action == guarded  # the query as the model wrote it is what is kept
    assert ["Cast Away"] in result.query_rows


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        ("MATCH (n) WHERE id(n) < 0 RETURN n", "MATCH (n) WHERE (id(n) + 0) < 0 RETURN n"),
        ("MATCH (n) WHERE 0 >= ID( n ) RETURN n", "MATCH (n) WHERE 0 >= (ID( n ) + 0) RETURN n"),
        ("MATCH (a)<--(b) WHERE id(a)<id(b) RETURN a", "MATCH (a)<--(b) WHERE (id(a) + 0)<(id(b) + 0) RETURN a"),
        ("MATCH (n) WHERE id(n) = 3 OR id(n) IN [4] OR id(n) <> 5 RETURN n", None),  # seeks that are correct
        ("MATCH (n) WHERE n.s = 'id(n) < 0' RETURN n // id(n) < 0", None),  # text, not code
        ("MATCH (n) WHERE valid(n) < 0 AND n.id(x) < 1 RETURN n", None),  # other functions
        ("MATCH (n) RETURN id(n) AS i ORDER BY id(n)", None),
        ("MATCH (n) WHERE n.i > 0 // `id`(n) < 0\nRETURN n", None),  # a backtick name in a comment
        ("MATCH (n) WHERE f(id(n)) >= 1 RETURN n", "MATCH (n) WHERE f((id(n) + 0)) >= 1 RETURN n"),  # harmless
    ],
)
def test_only_ordered_comparisons_of_id_are_rewritten(query, sent):
    from reflexion_agents.nodes.graphdb.id_ranges import guard_id_ranges

    assert guard_id_ranges(query) == (sent or query)


def test_columns_are_named_as_the_query_was_written(movies_db):
    result = movies_db.query("MATCH (m:Movie) RETURN id(m) > 3 AS later, id(m) < 2 LIMIT 1")
    assert result.columns == ["later", "id(m) < 2"]


def test_the_guard_scans_a_long_query_in_linear_time():
    from reflexion_agents.nodes.graphdb.id_ranges import guard_id_ranges

    query = "RETURN " + "id(n)+" * 3300 + "1"  # near the 20,000-character cap: thousands of calls
    started = time.process_time()
    guard_id_ranges(query)
    assert time.process_time() - started < 0.5


def test_no_real_question_s_gold_query_is_refused_as_too_deep_or_too_long():
    """The limits leave room for every query people wrote for the movies and shop graphs."""
    demo = Path(__file__).resolve().parent.parent / "nodes" / "graphdb" / "demo"
    refused = []
    for dataset in (demo / "text2cypher_movies.csv", demo / "shop" / "text2cypher_shop.csv"):
        with dataset.open(newline="", encoding="utf-8") as rows:
            for row in csv.DictReader(rows):
                try:
                    refuse_unsendable(row["cypher"])
                except CypherSyntaxError as e:
                    if "levels deep" in str(e) or "characters long" in str(e):
                        refused.append(row["cypher"])
    assert refused == []


def test_a_long_chain_of_clauses_runs_and_validates(movies_db):
    """500 chained WITH: the client's own plan printer recursed once per clause and raised RecursionError."""
    chain = "WITH 1 AS x " + " ".join("WITH x" for _ in range(500)) + " RETURN x"
    movies_db.validate(chain)
    assert movies_db.query(chain).rows == [[1]]


@pytest.mark.parametrize("builder", ["[l]", "{a: l}"])
def test_a_result_nested_past_the_client_s_recursion_limit_is_a_query_error_and_the_next_query_answers(
    movies_db, builder, monkeypatch
):
    # a reduce nesting its accumulator is refused before sending (tests/test_runaway_growth.py); the
    # result's depth is what is tested here, so that refusal is off
    monkeypatch.setattr(falkordb_module, "refuse_self_growing_reduce", lambda cypher: None)
    with pytest.raises(QueryError, match="nests too deeply for the client to read"):
        movies_db.query(f"RETURN reduce(l = [], x IN range(1, 3000) | {builder}) AS deep")
    assert movies_db.query("RETURN 41 + 1 AS x").rows == [[42]]
