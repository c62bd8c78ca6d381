"""A capped read reaches FalkorDB as one GRAPH.RO_QUERY; only a failure is planned (GRAPH.EXPLAIN),
to say why. What users rely on: a write is still refused, with the operations its plan shows, and
the graph is unchanged; a query that fails while running is run once, not twice; a timeout is a
timeout. The server's own command counters tell what was sent."""

from __future__ import annotations

import pytest
import redis

from reflexion_agents.schemas.errors import CypherSyntaxError, QueryError, QueryTimeoutError, WriteQueryRefusedError
from tests.helpers import ServerCommands, graph_fingerprint, wait_until


@pytest.fixture()
def sent(movies_db):
    """The GRAPH.* commands the server received during the test, by name."""
    client = redis.Redis(host=movies_db.host, port=movies_db.port)
    yield ServerCommands(client)
    client.close()


def test_a_read_is_one_read_only_command(movies_db, sent):
    result = movies_db.query("MATCH (m:Movie) RETURN m.title AS title ORDER BY title", row_cap=5)
    assert result.columns == ["title"] and len(result.rows) == 5 and result.truncated
    assert sent() == {"RO_QUERY": 1}


@pytest.mark.parametrize(
    "write",
    [
        "CREATE (n:Intruder) RETURN n",
        "MATCH (m:Movie) SET m.title = 'gone' RETURN m.title AS title",
        "MATCH (m:Movie) WITH m LIMIT 1 DETACH DELETE m RETURN 1 AS done",
        "MERGE (p:Person {name: 'Intruder'}) RETURN p.name AS name",
    ],
)
def test_a_write_sent_as_a_read_is_refused_with_its_planned_operations(movies_db, sent, write):
    before = graph_fingerprint(movies_db)
    with pytest.raises(WriteQueryRefusedError, match="writes are not enabled") as refused:
        movies_db.query(write)
    assert any(op in str(refused.value) for op in ("Create", "Update", "Delete", "Merge"))
    assert graph_fingerprint(movies_db) == before
    assert sent().get("QUERY", 0) == 0  # never the writing command


def test_a_query_that_fails_while_running_runs_once(movies_db, sent):
    with pytest.raises(QueryError, match="Type mismatch"):
        movies_db.query("MATCH (m:Movie) RETURN m.title / 0 AS x")
    assert sent() == {"RO_QUERY": 1, "EXPLAIN": 1}


def test_a_query_that_does_not_compile_is_a_syntax_error(movies_db, sent):
    with pytest.raises(CypherSyntaxError) as error:
        movies_db.query("MATCH (m:Movie RETURN m")
    assert error.value.query == "MATCH (m:Movie RETURN m"
    assert sent().get("RO_QUERY", 0) <= 1


def test_a_timeout_is_reported_as_one_and_not_run_again(movies_db, sent):
    with pytest.raises(QueryTimeoutError):
        movies_db.query("UNWIND range(1, 3000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x) AS n", timeout=0.001)
    wait_until(sent.idle, "the server is still running a query")  # a command is counted when it ends
    assert sent().get("RO_QUERY", 0) <= 1 and "EXPLAIN" not in sent()
