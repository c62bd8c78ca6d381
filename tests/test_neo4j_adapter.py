"""The Neo4j adapter, driven through a stand-in driver that returns the neo4j package's own types.

No Neo4j server can run here, so these tests check what the adapter does with
real `neo4j.Record`, `ResultSummary`, graph and exception objects: the EXPLAIN
read-only gate, READ access mode, the row cap, timeouts and error mapping.
"""

from __future__ import annotations

import time

import neo4j
import pytest
from neo4j import graph as neo4j_graph
from neo4j.exceptions import Neo4jError, ServiceUnavailable

from reflexion_agents.nodes.graphdb import Neo4jGraph, connect
from reflexion_agents.schemas.errors import (
    ConfigurationError,
    CypherSyntaxError,
    DatabaseUnavailableError,
    GraphNotFoundError,
    QueryTimeoutError,
    WriteQueryRefusedError,
)
from tests.neo4j_fakes import FakeDriver


def error(code: str, message: str) -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message=message)


def test_reads_run_in_read_mode_with_the_timeout_and_plain_values():
    graph = neo4j_graph.Graph()
    tom = neo4j_graph.Node(graph, "4:x:1", 1, ["Person"], {"name": "Tom Hanks", "born": 1956})
    driver = FakeDriver(keys=["p", "day"], rows=[[tom, neo4j.time.Date(2020, 1, 2)]])
    db = Neo4jGraph(driver=driver, db_name="movies")
    started = time.monotonic()
    result = db.query("MATCH (p:Person) RETURN p, date() AS day", timeout=3.0)
    took = time.monotonic() - started
    assert result.rows == [[{"_labels": ["Person"], "name": "Tom Hanks", "born": 1956}, "2020-01-02"]]
    assert all(s["default_access_mode"] == neo4j.READ_ACCESS and s["database"] == "movies" for s in driver.sessions)
    explain, query = driver.queries
    assert explain.text.startswith("EXPLAIN ") and query.text.startswith("MATCH ")
    # the server's transaction timeouts: what is left of the 3 s the EXPLAIN and the query share (no less
    # than what the whole call left of it, however long this machine took)
    assert 3.0 - took <= query.timeout <= explain.timeout <= 3.0
    assert all(0 < s["connection_acquisition_timeout"] <= 5.0 for s in driver.sessions)


@pytest.mark.parametrize("query_type", ["w", "rw", "s"])
def test_queries_that_are_not_plain_reads_are_refused_before_running(query_type):
    driver = FakeDriver(query_type=query_type)
    with pytest.raises(WriteQueryRefusedError, match=repr(query_type)):
        Neo4jGraph(driver=driver).query("CREATE (:X)")
    assert len(driver.queries) == 1  # only the EXPLAIN was sent


def test_load_csv_is_refused_although_explain_calls_it_a_read():
    driver = FakeDriver(query_type="r")
    with pytest.raises(WriteQueryRefusedError, match="LOAD CSV"):
        Neo4jGraph(driver=driver).query("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row")
    assert driver.queries == []


def test_the_row_cap_stops_pulling_records():
    driver = FakeDriver(keys=["n"], rows=[[i] for i in range(1000)])
    result = Neo4jGraph(driver=driver).query("UNWIND range(1, 1000) AS n RETURN n", row_cap=5)
    assert result.rows == [[0], [1], [2], [3], [4]] and result.truncated
    assert driver.results[0].pulled == 6


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (error("Neo.ClientError.Statement.SyntaxError", "Invalid input 'R'"), CypherSyntaxError),
        (error("Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration", "timed out"), QueryTimeoutError),
        (
            error("Neo.ClientError.Statement.AccessMode", "Writing in read access mode not allowed"),
            WriteQueryRefusedError,
        ),
        (ServiceUnavailable("Couldn't connect to localhost:7687"), DatabaseUnavailableError),
        (error("Neo.ClientError.Database.DatabaseNotFound", "Database does not exist: filmz"), GraphNotFoundError),
    ],
)
def test_driver_errors_become_the_projects_errors(raised, expected):
    with pytest.raises(expected) as info:
        Neo4jGraph(driver=FakeDriver(error=raised)).query("MATCH (n) RETURN n")
    assert isinstance(info.value.__cause__, type(raised))


def test_explain_errors_carry_the_database_message():
    driver = FakeDriver(explain_error=error("Neo.ClientError.Statement.SyntaxError", "Invalid input 'R': expected ')'"))
    with pytest.raises(CypherSyntaxError, match="expected '\\)'"):
        Neo4jGraph(driver=driver).validate("MATCH (n RETURN n")


def test_seed_style_connection_args_select_neo4j_without_connecting():
    db = connect({"host": "127.0.0.1", "port": "7687", "user": "neo4j", "password": "secret", "db_name": "movies"})
    assert isinstance(db, Neo4jGraph) and db.uri == "bolt://127.0.0.1:7687" and db.db_name == "movies"
    tls = connect({"uri": "neo4j+s://example.databases.neo4j.io", "password": "x"})
    assert tls.uri == "neo4j+s://example.databases.neo4j.io"


def test_bad_connection_args_are_configuration_errors():
    with pytest.raises(ConfigurationError, match="unknown connection_args"):
        connect({"host": "localhost", "pasword": "typo"})
    with pytest.raises(ConfigurationError, match="unknown backend"):
        connect({"backend": "mysql"})
    with pytest.raises(ConfigurationError, match="bad Neo4j URI"):
        connect({"uri": "http://localhost:7474"})


@pytest.mark.parametrize(
    "query",
    [
        "CALL apoc.load.json('file:///etc/passwd') YIELD value RETURN value",
        "CALL apoc.load.csv('file:///etc/passwd') YIELD list RETURN list",
        "CALL apoc.import.csv([{fileName: 'file:///x.csv', labels: ['X']}], [], {})",
        "CALL apoc.export.csv.all('/tmp/out.csv', {})",
        "CALL apoc.cypher.run('MATCH (n) RETURN n', {}) YIELD value RETURN value",
        "CALL apoc.cypher.runFirstColumnSingle('RETURN 1', {})",
        "CALL dbms.listConfig() YIELD name RETURN name",
        "CALL dbms.components() YIELD name RETURN name",
        "MATCH (n) CALL /* a comment */ apoc.load.json('http://example.org/x') YIELD value RETURN value",
        "CALL\n// hidden\napoc . load . json('file:///etc/passwd') YIELD value RETURN value",
    ],
)
def test_procedures_not_known_to_only_read_are_refused_though_explain_calls_them_reads(query):
    driver = FakeDriver(keys=["value"], rows=[["root:x:0:0"]], query_type="r")  # Neo4j says: a read
    db = Neo4jGraph(driver=driver, db_name="movies")
    with pytest.raises(WriteQueryRefusedError, match="not one known to only read"):
        db.query(query)
    assert driver.queries == []  # refused before anything reached the server


def test_schema_and_full_text_procedures_run_and_more_can_be_allowed_by_name():
    driver = FakeDriver(keys=["label"], rows=[["Movie"]], query_type="r")
    db = Neo4jGraph(driver=driver, db_name="movies")
    assert db.query("CALL db.labels() YIELD label RETURN label").rows == [["Movie"]]
    db.query("CALL db.index.fulltext.queryNodes('titles', 'matrix') YIELD node RETURN node")
    with pytest.raises(WriteQueryRefusedError):
        db.query("CALL apoc.meta.schema() YIELD value RETURN value")
    allowed = Neo4jGraph(driver=FakeDriver(keys=["value"], rows=[[{}]]), allowed_procedures={"apoc.meta.schema"})
    assert allowed.query("CALL apoc.meta.schema() YIELD value RETURN value").rows == [[{}]]
