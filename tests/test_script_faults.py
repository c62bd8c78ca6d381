"""A Neo4j import script's failure said as what it is (nodes/graphdb/script_faults.py): an APOC call
is refused by name before it runs, with its line and the rewrite to make; a value the database
refuses is the data's fault; the command line names each."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.graphdb import load_cypher_script
from reflexion_agents.nodes.graphdb.script_faults import apoc_called, fault_of
from reflexion_agents.schemas.errors import ScriptError

#: As public import scripts write it (a date parsed with APOC; coordinates some rows lack).
APOC_SCRIPT = """// people and when they were born
CREATE INDEX FOR (p:Person) ON (p.name);
LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row
MERGE (p:Person {name: row.name})
SET p.born = apoc.date.parse(row.born, 'ms', 'yyyy-MM-dd'), p.note = 'not apoc.text.join(x)';
"""
POINT_SCRIPT = """LOAD CSV WITH HEADERS FROM 'file:///places.csv' AS row
CREATE (:Place {name: row.name, at: point({latitude: toFloat(row.lat), longitude: toFloat(row.lng)})});
"""


@pytest.mark.unit
def test_apoc_calls_are_found_in_code_and_database_words_tell_dialect_from_data():
    assert apoc_called(APOC_SCRIPT) == ["apoc.date.parse"]  # the one in a string is text
    assert fault_of("Unknown function 'datetime'") == "dialect"
    assert fault_of("'latitude' and 'longitude' values in point map were not both valid numerics") == "data"


@pytest.fixture
def scratch(movies_db):
    graph = movies_db.sibling("script_faults")
    yield graph
    graph.clear()


def refusal(db, folder, script: str, csv_name: str, csv_text: str) -> ScriptError:
    """The error loading `script` (beside its CSV file) into `db` raises."""
    (folder / csv_name).write_text(csv_text)
    path = folder / "import.cypher"
    path.write_text(script)
    with pytest.raises(ScriptError) as refused:
        load_cypher_script(db, path)
    return refused.value


def test_an_apoc_call_is_refused_by_name_before_anything_of_it_runs(scratch, tmp_path):
    refused = refusal(scratch, tmp_path, APOC_SCRIPT, "people.csv", "name,born\nAda,1815-12-10\n")
    said = str(refused)
    assert refused.fault == "dialect" and (refused.statement, refused.line) == (2, 3)
    assert "apoc.date.parse" in said and "Neo4j plugin" in said and "date()" in said
    assert scratch.query("MATCH (p:Person) RETURN count(p)").rows == [[0]]  # the statement never ran


def test_apoc_inside_a_temporal_call_is_named_not_the_function_around_it(scratch, tmp_path):
    """How public imports most often write a date: FalkorDB alone says "Unknown function 'datetime'"."""
    script = (
        "LOAD CSV WITH HEADERS FROM 'file:///sessions.csv' AS row\n"
        "MERGE (s:Session {title: row.title})\n"
        "SET s.date = datetime({epochMillis: apoc.date.parse(row.date, 'ms', 'MM/dd/yyyy HH:mm a')});\n"
    )
    refused = refusal(scratch, tmp_path, script, "sessions.csv", "title,date\nKeynote,10/25/2018 09:00 AM\n")
    assert refused.fault == "dialect" and "calls apoc.date.parse" in str(refused) and "datetime'" not in str(refused)


def test_a_refused_value_is_the_datas_fault(scratch, tmp_path):
    refused = refusal(scratch, tmp_path, POINT_SCRIPT, "places.csv", "name,lat,lng\nAda,51.5,-0.1\nBob,,\n")
    assert refused.fault == "data" and "point map" in str(refused)
    assert (refused.statement, refused.line) == (1, 1)


def test_the_command_line_names_the_fault(tmp_path, capsys, falkordb_server):
    data_dir = str(falkordb_server.data_dir)
    (tmp_path / "people.csv").write_text("name,born\nAda,1815-12-10\n")
    (tmp_path / "places.csv").write_text("name,lat,lng\nBob,,\n")
    (tmp_path / "people.cypher").write_text(APOC_SCRIPT)
    (tmp_path / "places.cypher").write_text(POINT_SCRIPT)
    for script, said in (
        ("people.cypher", "Not in FalkorDB's dialect"),
        ("places.cypher", "refused the script's data"),
    ):
        assert main(["--data-dir", data_dir, "load", str(tmp_path / script), "--graph", "cli_faults"]) == 2
        assert said in capsys.readouterr().err
