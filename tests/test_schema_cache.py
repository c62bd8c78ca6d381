"""The schema is read once per graph in a process and read again when the graph changes
(nodes/graphdb/schema_cache.py), on the real embedded database."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.graphdb import FalkorDBGraph, falkordb_graph
from reflexion_agents.nodes.graphdb.schema_cache import forget_schemas


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The graphs whose schema was read from the database (the sampling itself still runs)."""
    read: list[str] = []
    sample = falkordb_graph.sample_schema

    def counted(db, *args, **kwargs):
        read.append(db.graph_name)
        return sample(db, *args, **kwargs)

    monkeypatch.setattr(falkordb_graph, "sample_schema", counted)
    forget_schemas()
    yield read
    forget_schemas()


def test_agents_over_one_graph_read_its_schema_once_and_each_graph_its_own(falkordb_server, movies_db, shop_db, reads):
    other = FalkorDBGraph("movies", host=falkordb_server.host, port=falkordb_server.port)  # another client, same graph
    first, second = movies_db.schema(), other.schema()
    assert reads == ["movies"] and first == second
    assert {n.label for n in shop_db.schema().nodes} >= {"Customer", "Product"} and reads == ["movies", "shop"]
    first.nodes.clear()  # a caller's own copy
    assert movies_db.schema().nodes and reads == ["movies", "shop"]


def test_a_change_to_the_graph_has_its_schema_read_again(falkordb_server, reads):
    db = FalkorDBGraph("schema_cache_change", host=falkordb_server.host, port=falkordb_server.port)
    try:
        db.write("CREATE (:Book {title: 'Dune'})")
        assert [n.label for n in db.schema().nodes] == ["Book"]
        db.write("CREATE (:Author {name: 'Frank Herbert'})")  # a new label
        assert {n.label for n in db.schema().nodes} == {"Book", "Author"}
        db.write("MATCH (b:Book) SET b.year = 1965")  # a new property name, no new node
        book = next(n for n in db.schema().nodes if n.label == "Book")
        assert "year" in {p.name for p in book.properties}
        db.schema()  # nothing changed since
        assert reads == ["schema_cache_change"] * 3
    finally:
        db.write("MATCH (n) DETACH DELETE n")


def test_a_graph_swapped_in_by_a_load_has_its_own_schema_read(falkordb_server, reads):
    """The atomic loader writes a scratch graph and renames it over the target: the target's kept
    schema goes with it, even within the second a fingerprint is trusted."""
    target = FalkorDBGraph("schema_cache_target", host=falkordb_server.host, port=falkordb_server.port)
    scratch = FalkorDBGraph("schema_cache_scratch", host=falkordb_server.host, port=falkordb_server.port)
    try:
        target.write("CREATE (:Old {name: 'before'})")
        assert [n.label for n in target.schema().nodes] == ["Old"]
        scratch.write("CREATE (:New {name: 'after'})")
        scratch.replace("schema_cache_target")
        assert [n.label for n in target.schema().nodes] == ["New"]
    finally:
        target.clear()
        scratch.clear()


def test_a_schema_read_while_the_graph_is_written_is_not_kept(falkordb_server, reads):
    from reflexion_agents.nodes.graphdb.introspect import sample_schema
    from reflexion_agents.nodes.graphdb.schema_cache import shared_schema

    db = FalkorDBGraph("schema_cache_race", host=falkordb_server.host, port=falkordb_server.port)
    try:
        db.write("CREATE (:Movie {title: 'Dune'})")

        def read_then_written_meanwhile():
            schema = sample_schema(db, 50)
            db.write("MATCH (m:Movie) SET m.title = 'Dune'")  # another writer, while this read ran
            return schema

        shared_schema(db, 50, read_then_written_meanwhile)
        db.schema()
        assert reads == ["schema_cache_race"]  # read again: the first read was not kept
    finally:
        db.clear()


@pytest.mark.unit
def test_neo4j_schemas_are_kept_per_user_and_a_handed_in_driver_is_a_user_of_its_own():
    from reflexion_agents.nodes.graphdb.neo4j_graph import Neo4jGraph

    class Driver:
        def close(self) -> None: ...

    alice, again = (Neo4jGraph("neo4j://db.example:7687", user="alice", password="x") for _ in range(2))
    bob = Neo4jGraph("neo4j://db.example:7687", user="bob", password="x")
    assert alice.schema_key == again.schema_key != bob.schema_key
    assert Neo4jGraph(driver=Driver()).schema_key != Neo4jGraph(driver=Driver()).schema_key
    for db in (alice, again, bob):
        db.close()


def test_a_kept_schema_is_checked_in_one_round_trip_and_sees_another_clients_change(
    falkordb_server, reads, monkeypatch
):
    """Past the second a fingerprint is trusted, a new agent's look is the fingerprint's three reads,
    sent together and unplanned; a write by another client (not through this adapter, which would
    drop the schema itself) changes it, and the schema is read again."""
    import redis

    from reflexion_agents.nodes.graphdb import schema_cache
    from reflexion_agents.schemas.errors import GraphNotFoundError
    from tests.helpers import ServerCommands

    db = FalkorDBGraph("schema_cache_look", host=falkordb_server.host, port=falkordb_server.port)
    other = redis.Redis(host=falkordb_server.host, port=falkordb_server.port)
    try:
        db.write("CREATE (:Planet {name: 'Arrakis'})")
        assert [n.label for n in db.schema().nodes] == ["Planet"]
        monkeypatch.setattr(schema_cache, "RECHECK_S", 0.0)  # every look takes the fingerprint
        sent = ServerCommands(other)
        assert [n.label for n in db.schema().nodes] == ["Planet"] and reads == ["schema_cache_look"]
        assert sent() == {"RO_QUERY": 3}  # the names and the two counts; no GRAPH.EXPLAIN
        other.execute_command("GRAPH.QUERY", "schema_cache_look", "CREATE (:Spice {grade: 1})")
        assert {n.label for n in db.schema().nodes} == {"Planet", "Spice"}
        assert reads == ["schema_cache_look"] * 2
    finally:
        db.clear()
        other.close()
    with pytest.raises(GraphNotFoundError):  # the reads together fail: asked one by one, they say why
        FalkorDBGraph("schema_cache_never_made", host=falkordb_server.host, port=falkordb_server.port).schema()


def test_an_agent_kept_alive_sees_its_graph_change_and_answers_from_the_new_schema(falkordb_server, reads, monkeypatch):
    """A served graph keeps one agent for the process's life. Another client adds a label: the agent's
    next question is drafted from a schema that has it, and its query about it is checked against it
    (not stopped as naming what the graph does not hold)."""
    import redis

    from reflexion_agents.graphs import kg_query_tool
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.nodes.graphdb import schema_cache
    from reflexion_agents.nodes.models import ScriptedChatModel
    from tests.helpers import draft, keep

    planets = "MATCH (p:Planet) RETURN p.name AS planet"
    spice = "MATCH (s:Spice) RETURN s.grade AS grade"
    db = FalkorDBGraph("schema_cache_agent", host=falkordb_server.host, port=falkordb_server.port)
    other = redis.Redis(host=falkordb_server.host, port=falkordb_server.port)
    model = ScriptedChatModel(replies=[draft(planets), keep(planets, 9), draft(spice), keep(spice, 9)])
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=db, checkpointer=None)
    try:
        db.write("CREATE (:Planet {name: 'Arrakis'})")
        assert agent.execute("Which planets are there?").tool_result == [["Arrakis"]]
        other.execute_command("GRAPH.QUERY", "schema_cache_agent", "CREATE (:Spice {grade: 1})")
        unchanged = agent.schema_prompt()  # within the second the agent trusts what it read
        assert "Spice" not in unchanged
        monkeypatch.setattr(kg_query_tool, "SCHEMA_RECHECK_S", 0.0)  # as a second later
        monkeypatch.setattr(schema_cache, "RECHECK_S", 0.0)
        result = agent.execute("How good is the spice?")
        assert result.stop_reason == "score_threshold" and result.tool_result == [[1]]
        drafted = str(model.calls[2][0].content)
        assert "(:Spice) grade: INTEGER" in drafted and reads == ["schema_cache_agent"] * 2
    finally:
        db.clear()
        other.close()


def test_an_async_run_given_a_kg_prompt_reads_the_schema_off_the_event_loop(movies_db, monkeypatch):
    """A draft given a kg_prompt reads no schema; its revision reads the schema's names, a database
    round trip (a whole read when the graph changed): in a worker thread, never on the event loop that
    every other run of the process shares."""
    import asyncio
    import threading

    from reflexion_agents.graphs import kg_query_tool
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.nodes.models import ScriptedChatModel
    from tests.helpers import TOM_HANKS_QUERY, draft, keep

    threads: list[str] = []
    read = movies_db.schema

    def recorded():
        threads.append(threading.current_thread().name)
        return read()

    monkeypatch.setattr(movies_db, "schema", recorded)
    monkeypatch.setattr(kg_query_tool, "SCHEMA_RECHECK_S", 0.0)  # every step a second after the last
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)])
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
    result = asyncio.run(agent.aexecute("Which movies did Tom Hanks act in?", "Schema: people acted in movies."))
    assert result.stop_reason == "score_threshold" and threads
    assert threading.main_thread().name not in threads
