"""Values that grow inside one expression are bounded or refused, and a server past its memory stops
by itself and comes back with nothing lost.

The families are generated: a `range()` sized only at run time in every place a list is read
(any/all/none/single, UNWIND, size, a comprehension, a reduce, IN), bounded by counts, sums,
collected sizes and parameters; and a `reduce` whose accumulator goes inside itself, in every
spelling (`l + [l]`, `[l] + l`, `l + l`, maps, comprehensions, strings, CASE branches). The same
shapes within bounds must still run and give the right answer. A client asking something simple
meanwhile is answered every time. With the refusal switched off, the exponential reduce meets the
server's hard memory limit: the server stops with "Out Of Memory" in its own log (not the
kernel's OOM killer), the query is not sent again, and the next query finds every write.
"""

from __future__ import annotations

import itertools
import random
import threading
from pathlib import Path

import pytest

from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb import falkordb_graph as falkordb_module
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.schemas.errors import CypherSyntaxError, QueryError

pytestmark = pytest.mark.integration  # servers of their own under memory limits

BOUNDS = [
    ("MATCH (m:Movie) WITH count(m) AS c", "c * 1000000"),
    ("MATCH (m:Movie) WITH toInteger(sum(m.released)) AS c", "c * 1000"),
    ("MATCH (m:Movie) WITH collect(m) AS ms", "size(ms) * 1000000"),
    ("MATCH (p:Person) WITH count(p) AS c", "toInteger(c * 1e6)"),
    ("WITH $n AS c", "c"),
]
READERS = [
    "RETURN any(x IN {r} WHERE x < 0) AS v",
    "RETURN all(x IN {r} WHERE x > 0) AS v",
    "RETURN none(x IN {r} WHERE x < 0) AS v",
    "RETURN single(x IN {r} WHERE x = 1) AS v",
    "UNWIND {r} AS x RETURN count(x) AS v",
    "RETURN size({r}) AS v",
    "RETURN size([x IN {r} WHERE x % 2 = 0 | x]) AS v",
    "RETURN reduce(t = 0, x IN {r} | t + x) AS v",
    "RETURN 5 IN {r} AS v",
]
SELF_GROWING = [
    "reduce(l = [], x IN xs | l + [l])",
    "reduce(l = [], x IN xs | [l] + l)",
    "reduce(l = [1], x IN xs | l + l)",
    "reduce(s = 'ab', x IN xs | s + s)",
    "reduce(m = {}, x IN xs | {inner: m, also: m})",
    "reduce(l = [1], x IN xs | l + [y IN l | y * 2])",
    "reduce(l = [1], x IN xs | CASE WHEN x > 0 THEN l + l ELSE l END)",
    "REDUCE( acc = [], x IN xs | acc + [acc, x] )",
]
WITHIN_BOUNDS = [
    ("RETURN size(reduce(l = [], x IN xs | l + [x])) AS v", 50),
    ("RETURN size(reduce(l = [], x IN xs | CASE WHEN x % 2 = 0 THEN l + [x] ELSE l END)) AS v", 25),
    ("RETURN reduce(m = 0, x IN xs | CASE WHEN x > m THEN x ELSE m END) AS v", 50),
    ("RETURN size(reduce(s = '', x IN xs | s + 'ab')) AS v", 100),
]


def runtime_ranges(seed: int, count: int) -> list[tuple[str, str]]:
    """(query, the range's size expression) drawn from the grammar above."""
    rng = random.Random(seed)
    forms = []
    for prefix, bound in rng.sample(list(itertools.product(BOUNDS, READERS)), count):
        start, size = prefix
        low = rng.choice(["1", "0", "-5"])
        forms.append((f"{start} " + bound.format(r=f"range({low}, {size})"), size))
    return forms


@pytest.fixture
def bystander(movies_db):
    """Another client asking something simple over and over; its failures, after the test."""
    failures: list[str] = []
    answered = []
    stop = threading.Event()

    def ask() -> None:
        other = FalkorDBGraph("movies", host=movies_db.host, port=movies_db.port)
        while not stop.is_set():
            try:
                answered.append(other.query("MATCH (m:Movie) RETURN count(m) AS n").rows == [[38]])
            except Exception as e:  # a failure of the bystander is what this fixture records
                failures.append(f"{type(e).__name__}: {e}")

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    yield failures
    stop.set()
    thread.join(60)
    assert answered and all(answered)


def test_ranges_sized_at_run_time_past_the_limit_are_stopped_before_they_are_built(movies_db, bystander):
    pid = movies_db.server.pid
    for query, _ in runtime_ranges(seed=7, count=30):
        with pytest.raises(QueryError, match="would hold 10,000,000 values or more"):
            movies_db.query(query, {"n": 10**9}, timeout=30)
    assert movies_db.server.pid == pid and bystander == []


def test_ranges_sized_at_run_time_within_the_limit_still_run(movies_db):
    assert movies_db.query("MATCH (m:Movie) WITH count(m) AS c RETURN size(range(1, c * 1000)) AS n").rows == [[38000]]
    assert movies_db.query("WITH $n AS c UNWIND range(c, 1, -1) AS x RETURN collect(x) AS xs", {"n": 3}).rows == [
        [[3, 2, 1]]
    ]
    stepped = "MATCH (m:Movie) WITH count(m) AS c RETURN range(0, c, 10) AS xs"
    assert movies_db.query(stepped).rows == [[[0, 10, 20, 30]]]
    with pytest.raises(QueryError, match="step argument to range") as raised:  # the query's own mistake
        movies_db.query("WITH 1 AS c RETURN range(1, c + 5, 0) AS xs")
    assert "10,000,000" not in str(raised.value)


@pytest.mark.parametrize("expression", SELF_GROWING)
def test_a_reduce_that_puts_its_accumulator_inside_itself_is_refused(movies_db, expression):
    with pytest.raises(CypherSyntaxError, match="inside itself"):
        movies_db.query(f"WITH range(1, 60) AS xs RETURN size({expression}) AS v")


@pytest.mark.parametrize(("query", "expected"), WITHIN_BOUNDS)
def test_reduce_that_adds_one_value_a_step_still_runs(movies_db, query, expected):
    assert movies_db.query(f"WITH range(1, 50) AS xs {query}").rows == [[expected]]


def test_past_its_hard_memory_limit_the_server_stops_itself_and_nothing_written_is_lost(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEXION_DB_MEMORY_MB", "1024")
    monkeypatch.setattr(falkordb_module, "refuse_self_growing_reduce", lambda cypher: None)  # a form not yet known
    server = EmbeddedFalkorDB.start(tmp_path / "limited")
    db = FalkorDBGraph("kept", host=server.host, port=server.port, server=server)
    try:
        assert "1073741824" in Path(f"/proc/{server.pid}/limits").read_text()  # 1 GB of address space
        db.write("UNWIND range(1, 1000) AS i CREATE (:Kept {i: i})")
        first = server.pid
        with pytest.raises(QueryError, match="ran out of memory"):
            db.query("WITH range(1, 40) AS xs RETURN size(reduce(l = [1], x IN xs | l + l)) AS v", timeout=60)
        log = (tmp_path / "limited" / "falkordb.log").read_text(errors="replace")
        assert log.count("Out Of Memory allocating") >= 1 and db.server.pid != first
        assert db.query("MATCH (k:Kept) RETURN count(k) AS n").rows == [[1000]]
    finally:
        db.server.stop()
