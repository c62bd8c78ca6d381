"""A Neo4j import script's failure said as what it is (nodes/graphdb/script_faults.py): an APOC call
the loader cannot compute is refused by name before it runs, with its line and the rewrite to make;
a value the database refuses is the data's fault; the command line names each."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.graphdb import load_cypher_script
from reflexion_agents.nodes.graphdb.script_faults import apoc_called, fault_of
from reflexion_agents.schemas.errors import ScriptError

#: As public import scripts write it: APOC over a list the statement builds (the loader computes
#: APOC calls over a row's fields only, `nodes.graphdb.row_functions`); a date FalkorDB cannot read.
APOC_SCRIPT = """// people and their tags
CREATE INDEX FOR (p:Person) ON (p.name);
LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row
MERGE (p:Person {name: row.name})
SET p.tags = apoc.coll.toSet(split(row.tags, ';')), p.note = 'not apoc.text.join(x)';
"""
DATE_SCRIPT = """LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row
CREATE (:Person {name: row.name, born: date(row.born)});
"""


@pytest.mark.unit
def test_apoc_calls_are_found_in_code_and_database_words_tell_dialect_from_data():
    assert apoc_called(APOC_SCRIPT) == ["apoc.coll.toset"]  # the one in a string is text
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
    refused = refusal(scratch, tmp_path, APOC_SCRIPT, "people.csv", "name,tags\nAda,math;math\n")
    said = str(refused)
    assert refused.fault == "dialect" and (refused.statement, refused.line) == (2, 3)
    assert "apoc.coll.toset" in said and "Neo4j plugin" in said and "collect(DISTINCT x)" in said
    assert scratch.query("MATCH (p:Person) RETURN count(p)").rows == [[0]]  # the statement never ran


def test_apoc_inside_a_temporal_call_is_named_not_the_function_around_it(scratch, tmp_path):
    """A date parsed from what the statement computes (not a field of the row) is not computed:
    FalkorDB alone would say "Unknown function 'datetime'"."""
    script = (
        "LOAD CSV WITH HEADERS FROM 'file:///sessions.csv' AS row\n"
        "WITH row, trim(row.date) AS text MERGE (s:Session {title: row.title})\n"
        "SET s.date = datetime({epochMillis: apoc.date.parse(text, 'ms', 'MM/dd/yyyy HH:mm a')});\n"
    )
    refused = refusal(scratch, tmp_path, script, "sessions.csv", "title,date\nKeynote,10/25/2018 09:00 AM\n")
    assert refused.fault == "dialect" and "calls apoc.date.parse" in str(refused) and "datetime'" not in str(refused)


def test_a_refused_value_is_the_datas_fault(scratch, tmp_path):
    refused = refusal(scratch, tmp_path, DATE_SCRIPT, "people.csv", "name,born\nAda,1815-12-10\nBob,some day\n")
    assert refused.fault == "data" and "date" in str(refused)
    assert (refused.statement, refused.line) == (1, 1)


def test_the_command_line_names_the_fault(tmp_path, capsys, falkordb_server):
    data_dir = str(falkordb_server.data_dir)
    (tmp_path / "people.csv").write_text("name,born,tags\nAda,yesterday,a;b\n")
    (tmp_path / "people.cypher").write_text(APOC_SCRIPT)
    (tmp_path / "born.cypher").write_text(DATE_SCRIPT)
    for script, said in (
        ("people.cypher", "Not in FalkorDB's dialect"),
        ("born.cypher", "refused the script's data"),
    ):
        assert main(["--data-dir", data_dir, "load", str(tmp_path / script), "--graph", "cli_faults"]) == 2
        assert said in capsys.readouterr().err
