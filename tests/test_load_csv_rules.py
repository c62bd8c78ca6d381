"""LOAD CSV statements taken apart, and CSV read with Neo4j's rules (no database needed)."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.graphdb.cypher_text import statements_with_lines
from reflexion_agents.nodes.graphdb.load_csv import csv_rows, parse_load_csv, read_csv_source
from reflexion_agents.schemas.errors import ConfigurationError


def test_values_are_strings_quoted_commas_kept_missing_fields_null_extra_fields_dropped():
    text = 'id,name,city\n1,"Smith, Jones & Co",Boston\n2,Short\n3,Long,Oslo,extra\n4,,""\n'
    assert csv_rows(text, headers=True) == [
        {"id": "1", "name": "Smith, Jones & Co", "city": "Boston"},
        {"id": "2", "name": "Short", "city": None},
        {"id": "3", "name": "Long", "city": "Oslo"},
        {"id": "4", "name": None, "city": None},
    ]


def test_without_headers_rows_are_lists_and_the_field_terminator_is_honoured():
    assert csv_rows("a;b\n\ufeffc;d\n", headers=False, terminator=";") == [["a", "b"], ["\ufeffc", "d"]]
    assert csv_rows("\ufeffx\ty\n", headers=False, terminator="\t") == [["x", "y"]]


@pytest.mark.parametrize(
    ("statement", "batch", "cypher"),
    [
        (
            "LOAD CSV WITH HEADERS FROM 'file:///a.csv' AS row MERGE (n:A {id: row.id})",
            1000,
            "UNWIND $rows AS row MERGE (n:A {id: row.id})",
        ),
        (
            "USING PERIODIC COMMIT 500\n"
            "LOAD CSV WITH HEADERS FROM 'https://x.org/a.csv' AS line CREATE (:A {v: toInteger(line.v)})",
            500,
            "UNWIND $rows AS line CREATE (:A {v: toInteger(line.v)})",
        ),
        (
            ":auto LOAD CSV FROM 'a.csv' AS r CALL { WITH r CREATE (:A {v: r[0]}) } IN TRANSACTIONS OF 200 ROWS",
            200,
            "UNWIND $rows AS r WITH r CREATE (:A {v: r[0]})",
        ),
        (
            "LOAD CSV WITH HEADERS FROM 'a.tsv' AS row FIELDTERMINATOR '\\t' CREATE (:A)",
            1000,
            "UNWIND $rows AS row CREATE (:A)",
        ),
    ],
)
def test_statements_become_unwind_batches(statement, batch, cypher):
    load = parse_load_csv(statement)
    assert load is not None and load.batch == batch and load.cypher() == cypher


def test_the_terminator_and_headers_are_read_and_other_statements_are_not_load_csv():
    load = parse_load_csv("LOAD CSV FROM 'a.tsv' AS row FIELDTERMINATOR '\\t' RETURN row")
    assert load.terminator == "\t" and not load.headers
    assert parse_load_csv("MATCH (n) RETURN n") is None
    with pytest.raises(ConfigurationError, match="only USING PERIODIC COMMIT"):
        parse_load_csv("MATCH (n) WITH n LOAD CSV FROM 'a.csv' AS row RETURN row")


def test_files_are_found_in_the_csv_folder_or_beside_the_script_by_path_then_name(tmp_path):
    (tmp_path / "downloads").mkdir()
    (tmp_path / "downloads" / "a.csv").write_text("x\n1\n")
    (tmp_path / "b.csv").write_text("y\n2\n")
    assert read_csv_source("https://example.org/data/a.csv", csv_dir=tmp_path / "downloads") == "x\n1\n"
    assert read_csv_source("file:///import/b.csv", script_dir=tmp_path) == "y\n2\n"
    assert read_csv_source("file:///b.csv", script_dir=tmp_path) == read_csv_source("b.csv", script_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="--csv-dir"):
        read_csv_source("file:///nowhere/c.csv")


def test_statements_know_their_line():
    script = "// header\nCREATE (:A);\n\n  // note\nMATCH (n)\nRETURN n;\n"
    assert statements_with_lines(script) == [(2, "CREATE (:A)"), (5, "MATCH (n)\nRETURN n")]


def test_load_csv_in_strings_is_not_a_statement_and_forms_it_cannot_take_are_refused():
    assert parse_load_csv("CREATE (:X {a: 'LOAD CSV FROM \"x\" AS y'})") is None
    assert parse_load_csv("// LOAD CSV FROM 'x' AS y\nCREATE (:X)") is None
    for statement in (
        "LOAD CSV FROM $url AS row CREATE (:X)",
        "LOAD CSV FROM 'file:///' + 'x.csv' AS row CREATE (:X)",
        "LOAD CSV FROM 'a.csv' AS r LOAD CSV FROM 'b.csv' AS s CREATE (:X)",
    ):
        with pytest.raises(ConfigurationError, match="cannot be loaded here"):
            parse_load_csv(statement)


def test_scoped_calls_report_status_and_unicode_escapes_are_understood():
    load = parse_load_csv(
        "LOAD CSV FROM 'a.csv' AS row FIELDTERMINATOR '\\u0009' CALL (row) { CREATE (:A {v: row[0]}) } "
        "IN TRANSACTIONS OF 10 ROWS REPORT STATUS AS s"
    )
    assert load.terminator == "\t" and load.batch == 10
    assert load.cypher() == "UNWIND $rows AS row WITH row CREATE (:A {v: row[0]})"


def test_malformed_and_unreadable_csv_is_refused_not_swallowed(tmp_path):
    with pytest.raises(ConfigurationError, match="malformed near line"):
        csv_rows('id,name\n1,"unterminated\n2,b\n3,c\n', headers=True)
    assert csv_rows("id,text\n1," + "x" * 200_000 + "\n", headers=True)[0]["text"] == "x" * 200_000
    (tmp_path / "latin.csv").write_bytes("name\nMüller\n".encode("latin-1"))
    with pytest.raises(ConfigurationError, match="UTF-8"):
        read_csv_source("file:///latin.csv", csv_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="malformed"):
        read_csv_source("http://[::1/x.csv")


def test_files_of_the_same_name_in_different_folders_are_told_apart(tmp_path):
    (tmp_path / "2019").mkdir()
    (tmp_path / "2020").mkdir()
    (tmp_path / "2019" / "orders.csv").write_text("y\n2019\n")
    (tmp_path / "2020" / "orders.csv").write_text("y\n2020\n")
    assert read_csv_source("https://example.org/2020/orders.csv", csv_dir=tmp_path) == "y\n2020\n"
    assert read_csv_source("https://example.org/2019/orders.csv", csv_dir=tmp_path) == "y\n2019\n"
