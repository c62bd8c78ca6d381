"""The embedded server's lifecycle and persistence, and loading Neo4j Cypher scripts."""

from __future__ import annotations

import os

import pytest

from reflexion_agents.nodes.graphdb import FalkorDBGraph, connect, load_cypher_script
from reflexion_agents.nodes.graphdb.cypher_script import translate_schema_statement
from reflexion_agents.nodes.graphdb.cypher_text import split_statements
from reflexion_agents.nodes.graphdb.demo_data import MOVIES_CYPHER
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB


def test_split_statements_respects_strings_and_comments():
    script = "CREATE (:A {t: 'a;b'}); // note; here\nCREATE (:B {t: \"c;d\"});\n\n"
    assert split_statements(script) == ["CREATE (:A {t: 'a;b'})", 'CREATE (:B {t: "c;d"})']


def test_neo4j_schema_statements_are_translated_or_skipped():
    assert translate_schema_statement("CREATE CONSTRAINT IF NOT EXISTS FOR (p:Person) REQUIRE (p.name) IS UNIQUE")[
        0
    ] == ("CREATE INDEX FOR (p:Person) ON (p.name)")
    assert translate_schema_statement("CREATE INDEX IF NOT EXISTS FOR (m:Movie) ON (m.released)")[0] == (
        "CREATE INDEX FOR (m:Movie) ON (m.released)"
    )
    translated, why = translate_schema_statement(
        "CREATE FULLTEXT INDEX t IF NOT EXISTS FOR (n:Movie) ON EACH [n.title]"
    )
    assert translated is None and why


def test_the_movies_script_loads_with_its_constraints_translated(falkordb_server):
    db = FalkorDBGraph("movies_load_test", host=falkordb_server.host, port=falkordb_server.port)
    db.clear()
    report = load_cypher_script(db, MOVIES_CYPHER)
    assert len(report.translated) == 4 and not report.skipped
    assert db.query("MATCH (n) RETURN count(n)").rows == [[171]]
    assert db.query("MATCH ()-[r]->() RETURN count(r)").rows == [[253]]
    again = load_cypher_script(db, "CREATE INDEX IF NOT EXISTS FOR (p:Person) ON (p.born)")
    assert again.skipped and again.executed == 0  # an existing index is noted, not fatal
    db.clear()


@pytest.mark.integration
def test_a_restart_keeps_loaded_graphs(tmp_path):
    server = EmbeddedFalkorDB.start(tmp_path)
    try:
        db = FalkorDBGraph("kept", host=server.host, port=server.port)
        db.write("CREATE (:Kept {n: 1})")
    finally:
        server.stop()
    assert not (tmp_path / "falkordb-server.json").exists()
    restarted = EmbeddedFalkorDB.start(tmp_path)
    try:
        db = FalkorDBGraph("kept", host=restarted.host, port=restarted.port)
        assert db.query("MATCH (k:Kept) RETURN k.n").rows == [[1]]
    finally:
        restarted.stop()


@pytest.mark.integration
def test_a_second_user_of_the_same_directory_reuses_the_server(tmp_path):
    first = EmbeddedFalkorDB.start(tmp_path)
    try:
        second = EmbeddedFalkorDB.start(tmp_path)
        assert second.port == first.port and not second.owned
        second.stop()  # not the owner: the server keeps running
        assert os.path.exists(tmp_path / "falkordb-server.json")
        db = connect({"data_dir": str(tmp_path), "graph": "g"})
        db.write("CREATE (:Seen)")
        assert db.query("MATCH (s:Seen) RETURN count(s)").rows == [[1]]
    finally:
        first.stop()


def test_a_script_that_is_not_utf8_is_a_configuration_error_naming_it(movies_db, tmp_path):
    import pytest

    from reflexion_agents.schemas.errors import ConfigurationError

    script = tmp_path / "latin1.cypher"
    script.write_bytes("CREATE (:Person {name: 'José'})".encode("latin-1"))
    with pytest.raises(ConfigurationError, match=r"latin1\.cypher is not UTF-8"):
        load_cypher_script(movies_db.sibling("latin1_check"), script)
    assert "latin1_check" not in movies_db.graphs()
