"""Reads from a FalkorDB replica (`redis-server --replicaof`): the adapter answers read-only queries
there as on the primary, although a replica plans nothing (Redis counts GRAPH.EXPLAIN as a write),
refuses writes saying where they go, and sees the primary's changes as they replicate."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB, server_command
from reflexion_agents.schemas.errors import GraphNotFoundError, QueryError, WriteQueryRefusedError
from tests.helpers import (
    TOM_HANKS_QUERY,
    ServerCommands,
    draft,
    free_port,
    graph_fingerprint,
    keep,
    make_agent,
    wait_until,
)

pytestmark = pytest.mark.integration


def _in_sync(client: redis.Redis) -> bool:
    try:
        replication = client.info("replication")
    except redis.exceptions.ConnectionError:
        return False
    return replication.get("master_link_status") == "up" and b"movies" in client.execute_command("GRAPH.LIST")


@pytest.fixture(scope="module")
def replica(falkordb_server: EmbeddedFalkorDB, movies_db, tmp_path_factory) -> Iterator[FalkorDBGraph]:
    """The movies graph read from a replica of the session's server, started as its docs say."""
    port, folder = free_port(), tmp_path_factory.mktemp("replica")
    command = server_command(Path(folder), port, journaled=False)
    process = subprocess.Popen([*command, "--replicaof", falkordb_server.host, str(falkordb_server.port)])
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        wait_until(lambda: _in_sync(client), "the replica in sync with its primary")
        db = FalkorDBGraph("movies", host="127.0.0.1", port=port)
        yield db
        db.close()
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=30)


def test_the_agent_answers_from_a_replica_as_from_the_primary(replica, movies_db):
    assert replica.schema() == movies_db.schema()  # the same prompt: the schema reads run there too
    answers = []
    for db in (replica, movies_db):
        agent, _ = make_agent(db, [draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, score=9)])
        answers.append(agent.execute("Which movies did Tom Hanks act in?"))
    on_replica, on_primary = answers
    assert on_replica.stop_reason == on_primary.stop_reason and on_replica.error is None
    assert on_replica.rows == on_primary.rows and len(on_replica.rows or []) > 5
    uncapped = "MATCH (m:Movie) RETURN m.title AS title ORDER BY title"
    assert replica.query(uncapped, row_cap=None).rows == movies_db.query(uncapped, row_cap=None).rows


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (m:Movie {title: 'The Matrix'}) SET m.title = 'Renamed' RETURN m.title",
        "CREATE (:Movie {title: 'Planted'}) RETURN 1",
        "CALL db.idx.fulltext.createNodeIndex('Movie', 'title')",
        "MATCH (m:Movie) WITH m LIMIT 1 DETACH DELETE m RETURN count(*)",
        "LOAD/* the plan would show it */CSV FROM 'file:///etc/hostname' AS line RETURN line",
    ],
)
def test_writes_on_a_replica_are_refused_and_nothing_changes(replica, movies_db, query):
    before = graph_fingerprint(movies_db)
    with pytest.raises(WriteQueryRefusedError):
        replica.query(query)
    with pytest.raises(WriteQueryRefusedError, match="read-only replica: send writes to its primary"):
        replica.query(query, allow_writes=True)
    with pytest.raises(WriteQueryRefusedError, match="read-only replica"):
        replica.write(query)
    assert graph_fingerprint(movies_db) == before


def test_a_model_that_writes_on_a_replica_is_told_and_the_run_goes_on(replica):
    write = "MATCH (m:Movie {title: 'The Matrix'}) SET m.released = 1900 RETURN m.title"
    agent, _ = make_agent(replica, [draft(write), keep(TOM_HANKS_QUERY, score=9), keep(TOM_HANKS_QUERY, score=9)])
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert result.rows and result.outcomes[0].error_type == "WriteQueryRefusedError"
    assert replica.query("MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released").rows == [[1999]]


def test_the_primarys_changes_reach_the_replicas_readers(replica, movies_db):
    primary, mirrored = movies_db.sibling("replicated_notes"), replica.sibling("replicated_notes")
    try:
        primary.write("CREATE (:Note {text: 'first'})")
        wait_until(lambda: "replicated_notes" in mirrored.graphs(), "the new graph on the replica")
        wait_until(lambda: mirrored.query("MATCH (n:Note) RETURN count(n)").rows == [[1]], "the first note")
        assert "Note" in str(mirrored.schema())
        primary.write("CREATE (:Tag {name: 'later'})")
        wait_until(lambda: mirrored.query("MATCH (t:Tag) RETURN t.name").rows == [["later"]], "the tag")
        # the schema is read again once the graph changed, within a second (`schema_cache.RECHECK_S`)
        wait_until(lambda: "Tag" in str(mirrored.schema()), "the new label in the replica's schema")
    finally:
        primary.clear()


def test_a_graph_the_replica_lacks_is_named_and_a_failing_query_runs_once(replica):
    with pytest.raises(GraphNotFoundError, match="never_replicated"):
        replica.sibling("never_replicated").query("MATCH (n) RETURN n")
    # a run-time error (not a compile error) is reported as it is, not sent again unwrapped
    sent = ServerCommands(redis.Redis(host=replica.host, port=replica.port))
    with pytest.raises(QueryError, match="Type mismatch"):
        replica.query("UNWIND [1, 'a'] AS x RETURN x * 2 AS doubled")
    assert sent().get("RO_QUERY") == 1
