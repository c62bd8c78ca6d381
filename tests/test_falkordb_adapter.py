"""The FalkorDB adapter on the real embedded server: read-only, timeouts, row caps, schema."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.schemas.errors import (
    CypherSyntaxError,
    GraphNotFoundError,
    QueryError,
    QueryTimeoutError,
    WriteQueryRefusedError,
)
from tests.helpers import graph_fingerprint, seconds

WRITES = {
    "CREATE": "CREATE (:Intruder {name: 'x'})",
    "MERGE": "MERGE (p:Person {name: 'Nobody New'}) RETURN p",
    "DELETE": "MATCH (m:Movie {title: 'The Matrix'}) DETACH DELETE m",
    "SET": "MATCH (p:Person) SET p.name = 'x'",
    "REMOVE": "MATCH (p:Person) REMOVE p.born",
    "DROP": "DROP INDEX ON :Person(name)",
    "LOAD CSV": "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "FOREACH": "MATCH (p:Person) FOREACH (x IN [1] | SET p.flag = x)",
    "CALL that writes": "CALL db.idx.fulltext.createNodeIndex('Person', 'name')",
    "CALL in one backtick name": "CALL `db.idx.fulltext.createNodeIndex`('Person', 'name')",
    "CALL with backticks per part": "CALL `db`.`idx`.`fulltext`.`createNodeIndex`('Person', 'name')",
    "CALL with spaces around dots": "CALL db . idx . fulltext . drop('Movie')",
    "CREATE INDEX": "CREATE INDEX FOR (m:Movie) ON (m.tagline)",
}


@pytest.mark.parametrize("kind", sorted(WRITES))
def test_writes_are_refused_and_the_graph_is_unchanged(movies_db, kind):
    before = graph_fingerprint(movies_db)
    indexes_before = movies_db._session.graph.list_indices().result_set
    with pytest.raises(WriteQueryRefusedError):
        movies_db.query(WRITES[kind])
    assert graph_fingerprint(movies_db) == before
    assert movies_db._session.graph.list_indices().result_set == indexes_before


def test_validation_compiles_without_running(movies_db):
    before = graph_fingerprint(movies_db)
    movies_db.validate("CREATE (:Ghost)", allow_writes=True)  # an EXPLAIN-prefixed query would create it
    assert graph_fingerprint(movies_db) == before
    with pytest.raises(CypherSyntaxError, match="Invalid input"):
        movies_db.validate("MATCH (n RETURN n")


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        # an offset FalkorDB's localdatetime would drop (without one, datetime() runs as localdatetime)
        ("RETURN datetime('2019-03-07T09:30:00+02:00') AS then", "Unknown function 'datetime'"),
        # a subquery of two patterns (one pattern, with its WHERE, runs: tests/test_exists_patterns.py)
        ("MATCH (p:Person) WHERE EXISTS { (p)-[:ACTED_IN]->(m), (p)-[:DIRECTED]->(m) } RETURN p.name", "Invalid input"),
        ("MATCH (n) WHERE n.name =~ 'T.*' RETURN n.name", "does not currently support =~"),
    ],
)
def test_dialect_gaps_come_back_as_syntax_errors_in_the_database_words(movies_db, query, fragment):
    with pytest.raises(CypherSyntaxError) as info:
        movies_db.query(query)
    assert fragment in info.value.message and info.value.query == query


def test_runtime_errors_are_query_errors(movies_db):
    with pytest.raises(QueryError) as info:
        movies_db.query("MATCH (m:Movie) RETURN m.title + 1 - 'x' AS bad")
    assert info.value.message


def test_a_runaway_query_hits_its_timeout(movies_db):
    with pytest.raises(QueryTimeoutError):
        movies_db.query("MATCH (a), (b), (c), (d) RETURN count(*)", timeout=0.2)


def test_row_cap_is_applied_in_the_database_and_keeps_column_order(movies_db):
    result = movies_db.query("MATCH (m:Movie) RETURN m.title, m.released ORDER BY m.released DESC, m.title", row_cap=3)
    assert result.columns == ["m.title", "m.released"]
    assert result.truncated and len(result.rows) == 3
    assert result.rows[0] == ["Cloud Atlas", 2012]
    exact = movies_db.query("MATCH (m:Movie) RETURN count(m) AS n", row_cap=1)
    assert exact.rows == [[38]] and not exact.truncated


def test_row_cap_also_applies_to_queries_that_cannot_be_wrapped(movies_db):
    result = movies_db.query("CALL db.labels()", row_cap=1)
    assert result.truncated and len(result.rows) == 1


def test_nodes_relationships_and_paths_become_plain_data(movies_db):
    row = movies_db.query(
        "MATCH p = (a:Person {name: 'Keanu Reeves'})-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) RETURN a, r, p"
    ).rows[0]
    assert row[0] == {"_labels": ["Person"], "name": "Keanu Reeves", "born": 1964}
    assert row[1] == {"_type": "ACTED_IN", "roles": ["Neo"]}
    assert [part.get("_labels", part.get("_type")) for part in row[2]] == [["Person"], "ACTED_IN", ["Movie"]]


def test_schema_lists_labels_patterns_properties_and_examples(movies_db):
    schema = movies_db.schema()
    assert [n.label for n in schema.nodes] == ["Movie", "Person"]
    released = next(p for p in schema.node("Movie").properties if p.name == "released")
    assert released.types == ["INTEGER"] and len(released.examples) == 3
    patterns = {r.type: r.patterns for r in schema.relationships}
    assert patterns["ACTED_IN"] == [("Person", "Movie")] and patterns["FOLLOWS"] == [("Person", "Person")]
    assert [p.name for p in next(r for r in schema.relationships if r.type == "REVIEWED").properties] == [
        "rating",
        "summary",
    ]


def test_a_graph_that_does_not_exist_is_a_clear_error(falkordb_server, movies_db):
    db = FalkorDBGraph("no_such_graph", host=falkordb_server.host, port=falkordb_server.port)
    with pytest.raises(GraphNotFoundError, match=r"'no_such_graph' does not exist.*movies"):
        db.query("MATCH (n) RETURN n")
    with pytest.raises(GraphNotFoundError):
        db.labels()


def test_explicit_writes_work_when_allowed(falkordb_server):
    db = FalkorDBGraph("scratch_writes", host=falkordb_server.host, port=falkordb_server.port)
    db.clear()
    db.query("CREATE (:Thing {name: 'a'})", allow_writes=True)
    assert db.query("MATCH (t:Thing) RETURN t.name").rows == [["a"]]
    db.clear()


@pytest.mark.timeout(60)  # fetched whole and cut on the client, these five million rows take minutes
def test_row_cap_stops_a_return_star_query_in_the_database(movies_db):
    star = "MATCH (a), (b), (c) WITH a.name AS x, b.title AS y, c.name AS z RETURN *"
    result = movies_db.query(star, row_cap=5, timeout=3)
    assert result.truncated and len(result.rows) == 5 and sorted(result.columns) == ["x", "y", "z"]


def test_a_relationship_type_too_slow_to_sample_is_kept_without_its_endpoints(movies_db, caplog):
    from reflexion_agents.nodes.graphdb.introspect import SAMPLE_TIMEOUT_S, sample_schema

    db = movies_db.sibling("rare_relationship")
    try:  # 300,000 nodes, one relationship between the last two: no label sample shows it, a search must
        db.write("UNWIND range(1, 300000) AS i CREATE (:Item {i: i})")
        scan_s = seconds(lambda: db.write("MATCH (a:Item {i: 300000}), (b:Item {i: 299999}) CREATE (a)-[:RARE]->(b)"))
        schema = sample_schema(db, sample_timeout=0.005)
        assert [(r.type, r.patterns) for r in schema.relationships] == [("RARE", [])]
        assert {n.label for n in schema.nodes} == {"Item"}
        assert "RARE" in caplog.text and "without its endpoints" in caplog.text
        # with time to spare: the default (a search takes about as long as that write's two scans, a
        # tenth of a second idle here), or ten times those scans on a machine too busy for the default
        spare = max(SAMPLE_TIMEOUT_S, 10 * scan_s)
        assert sample_schema(db, sample_timeout=spare).relationships[0].patterns == [("Item", "Item")]
    finally:
        db.clear()


@pytest.mark.parametrize(
    "kind", ["CALL in one backtick name", "CALL with backticks per part", "CALL with spaces around dots"]
)
def test_validation_alone_refuses_every_spelling_of_a_write_procedure(movies_db, kind):
    with pytest.raises(WriteQueryRefusedError, match="would change the graph"):
        movies_db.validate(WRITES[kind])


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (n:Person) RETURN n.name\x00 DETACH DELETE n",
        "MATCH (n)\x1b RETURN n",
        "EXPLAIN MATCH (n) RETURN n",
        "profile MATCH (n) RETURN n",
        "  // plan\nPROFILE MATCH (n) RETURN n",
    ],
)
def test_control_characters_and_plan_prefixes_are_refused_before_the_server_sees_them(movies_db, query):
    before = graph_fingerprint(movies_db)
    with pytest.raises(CypherSyntaxError):
        movies_db.query(query)
    with pytest.raises(CypherSyntaxError):
        movies_db.validate(query)
    assert graph_fingerprint(movies_db) == before
