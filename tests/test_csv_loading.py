"""CSV files loaded as users' files are: identifiers that look like numbers, relationship files
with more columns than properties, rows that do not fit. The report says what happened."""

from __future__ import annotations

import uuid

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.graphdb import FalkorDBGraph


@pytest.fixture
def graph(falkordb_server):
    name = f"csv_{uuid.uuid4().hex[:8]}"
    db = FalkorDBGraph(name, host=falkordb_server.host, port=falkordb_server.port)
    yield name, db
    db.clear()


def load(falkordb_server, graph_name, *args):
    return main(["--data-dir", str(falkordb_server.data_dir), "load", *args, "--graph", graph_name])


def test_a_column_keeps_one_type_and_the_first_load_reports_every_row(falkordb_server, graph, tmp_path, capsys):
    name, db = graph
    stores = tmp_path / "stores.csv"
    stores.write_text("storeID,zip,size\n10,02134,12.5\n11,98101,8\n12,10001,\n", encoding="utf-8")
    assert load(falkordb_server, name, str(stores), "--label", "Store", "--key", "storeID") == 0
    out = capsys.readouterr().out
    assert "3 :Store row(s) written" in out and "storeID: integer, zip: string, size: float" in out
    assert db.query("MATCH (s:Store) RETURN s.storeID, s.zip, s.size ORDER BY s.storeID").rows == [
        [10, "02134", 12.5],
        [11, "98101", 8.0],
        [12, "10001", None],
    ]
    assert (
        load(falkordb_server, name, str(stores), "--label", "Shop", "--key", "storeID", "--types", "storeID=string")
        == 0
    )
    assert db.query("MATCH (s:Shop {storeID: '10'}) RETURN s.zip").rows == [["02134"]]
    assert load(falkordb_server, name, str(stores), "--label", "Text", "--all-strings") == 0
    assert db.query("MATCH (s:Text {storeID: '11'}) RETURN s.size").rows == [["8"]]


def test_relationship_files_name_their_property_columns_and_missing_endpoints_are_reported(
    falkordb_server, graph, tmp_path, capsys
):
    name, db = graph
    people = tmp_path / "people.csv"
    people.write_text("id,name,city\n1,Ada,London\n2,Alan,Wilmslow\n", encoding="utf-8")
    knows = tmp_path / "knows.csv"
    knows.write_text(
        "from,to,since,note,city\n1,2,1936,met at work,London\n2,3,1940,,\n9,1,1950,x,y\n", encoding="utf-8"
    )
    assert load(falkordb_server, name, str(people), "--label", "Person", "--key", "id") == 0
    capsys.readouterr()
    assert (
        load(
            falkordb_server,
            name,
            str(knows),
            "--relationship",
            "KNOWS",
            "--start",
            "Person.id=from",
            "--end",
            "Person.id=to",
            "--properties",
            "since",
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "1 :KNOWS row(s) written, 2 skipped" in out
    assert "row 3: end node :Person not found (id = 3)" in out and "row 4: start node :Person not found (id = 9)" in out
    assert db.query("MATCH ()-[k:KNOWS]->() RETURN properties(k)").rows == [[{"since": 1936}]]
    assert (
        load(
            falkordb_server,
            name,
            str(knows),
            "--relationship",
            "LIKES",
            "--start",
            "Person.id=from",
            "--end",
            "Person.id=to",
            "--properties",
            "",
        )
        == 0
    )
    assert db.query("MATCH ()-[k:LIKES]->() RETURN properties(k)").rows == [[{}]]


def test_malformed_rows_are_refused_by_row_or_skipped_and_counted_when_lenient(
    falkordb_server, graph, tmp_path, capsys
):
    name, db = graph
    items = tmp_path / "items.csv"
    items.write_text("sku,price\nA1,3.5\nA2\nA3,cheap\nA4,4,extra\nA5,5\n", encoding="utf-8")
    assert load(falkordb_server, name, str(items), "--label", "Item", "--key", "sku") == 2
    assert "row 3: 1 cells for 2 columns" in capsys.readouterr().err
    assert name not in db.graphs()  # nothing was written
    assert load(falkordb_server, name, str(items), "--label", "Item", "--key", "sku", "--types", "price=float") == 2
    assert (
        load(
            falkordb_server, name, str(items), "--label", "Item", "--key", "sku", "--types", "price=float", "--lenient"
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "2 :Item row(s) written, 3 skipped (malformed row: 2, bad value: 1)" in out
    assert "row 4: bad value ('cheap' is not a float)" in out
    assert db.query("MATCH (i:Item) RETURN i.sku, i.price ORDER BY i.sku").rows == [["A1", 3.5], ["A5", 5.0]]


def test_a_second_load_finds_every_node_of_the_first_and_matches_across_file_types(
    falkordb_server, graph, tmp_path, capsys
):
    name, db = graph
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("id,code\n0,X0\n1,X1\n2,X2\n", encoding="utf-8")
    edges = tmp_path / "edges.csv"
    edges.write_text("a,b\n0,1\n1,2\n2,0\n", encoding="utf-8")
    assert load(falkordb_server, name, str(nodes), "--label", "N", "--key", "id") == 0
    assert load(falkordb_server, name, str(edges), "--relationship", "E", "--start", "N.id=a", "--end", "N.id=b") == 0
    assert "3 :E row(s) written" in capsys.readouterr().out  # id 0 included, after the graph was copied for the load
    assert load(falkordb_server, name, str(nodes), "--label", "T", "--key", "id", "--all-strings") == 0
    assert load(falkordb_server, name, str(edges), "--relationship", "F", "--start", "T.id=a", "--end", "T.id=b") == 0
    assert "3 :F row(s) written" in capsys.readouterr().out  # the file's integers find the text ids
    assert db.query("MATCH (:T {id: '0'})-[:F]->(b:T) RETURN b.id").rows == [["1"]]


def test_a_load_killed_mid_way_leaves_the_graph_and_its_scratch_copy_is_cleared_next_time(
    falkordb_server, graph, tmp_path
):
    name, db = graph
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("id\n1\n", encoding="utf-8")
    assert load(falkordb_server, name, str(nodes), "--label", "N", "--key", "id") == 0
    stale = db.sibling(f"{name}__loading_deadbeef")  # what a killed load leaves behind
    stale.write("CREATE (:Half)")
    assert db.query("MATCH (n) RETURN count(n)").rows == [[1]]  # the graph itself is untouched
    assert load(falkordb_server, name, str(nodes), "--label", "N", "--key", "id") == 0
    assert f"{name}__loading_deadbeef" not in db.graphs()
    assert not [g for g in db.graphs() if g.startswith(f"{name}__loading_")]


@pytest.mark.parametrize(
    ("last_row", "options", "said"),
    [
        ("X,cheap", {"types": {"price": "float"}}, "row 1202: 'cheap' is not a float"),
        (",9", {}, "row 1202 has no 'sku'"),
    ],
    ids=["bad value", "no key"],
)
def test_a_refused_row_far_down_a_file_refuses_the_load_before_anything_is_written(
    graph, tmp_path, last_row, options, said
):
    """Rows are read a batch at a time; a refusal on the last row still writes no row before it."""
    from reflexion_agents.nodes.graphdb.csv_loader import load_nodes_csv
    from reflexion_agents.schemas.errors import ConfigurationError

    name, db = graph
    items = tmp_path / "items.csv"
    rows = "".join(f"S{i},{i}.5\n" for i in range(1200))
    items.write_text(f"sku,price\n{rows}{last_row}\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=said):
        load_nodes_csv(db, items, "Item", key="sku", **options)
    assert name not in db.graphs()  # not one of the 1,200 good rows before it


def test_a_file_that_can_be_read_only_once_loads_every_row(graph, tmp_path):
    """A pipe (`/dev/fd/N`, a FIFO) gives its bytes once; the loader reads a file twice."""
    import os
    import threading

    from reflexion_agents.nodes.graphdb.csv_loader import load_nodes_csv

    _, db = graph
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "w") as pipe:
            pipe.write("id,name\n1,a\n2,b\n3,c\n")

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        report = load_nodes_csv(db, f"/dev/fd/{read}", "N", key="id")
    finally:
        feeder.join()
        os.close(read)
    assert report.rows == 3
    assert db.query("MATCH (n:N) RETURN n.id, n.name ORDER BY n.id").rows == [[1, "a"], [2, "b"], [3, "c"]]


def test_a_file_changed_between_the_two_readings_is_refused(graph, tmp_path, monkeypatch):
    """Another program appending to the file while it loads: its types and refusals no longer hold."""
    from reflexion_agents.nodes.graphdb import csv_loader
    from reflexion_agents.schemas.errors import ConfigurationError

    name, db = graph
    items = tmp_path / "items.csv"
    items.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(600)), encoding="utf-8")
    surveyed = csv_loader.survey

    def survey_then_append(*args, **kwargs):
        layout = surveyed(*args, **kwargs)
        with items.open("a", encoding="utf-8") as more:
            more.write("notanint,late\n")
        return layout

    monkeypatch.setattr(csv_loader, "survey", survey_then_append)
    with pytest.raises(ConfigurationError, match="changed while it was being loaded"):
        csv_loader.load_nodes_csv(db, items, "N", key="id")
    assert name not in db.graphs()


def test_a_row_is_counted_as_a_record_even_when_a_quoted_field_spans_lines(graph, tmp_path):
    from reflexion_agents.nodes.graphdb.csv_loader import load_nodes_csv
    from reflexion_agents.schemas.errors import ConfigurationError

    _, db = graph
    notes = tmp_path / "notes.csv"
    notes.write_text('id,text\n1,"two\nlines"\n2,plain\n3\n', encoding="utf-8")  # row 4 is short
    with pytest.raises(ConfigurationError, match="row 4: 1 cells for 2 columns"):
        load_nodes_csv(db, notes, "Note", key="id")


def test_two_readers_at_once_both_read_long_fields(tmp_path):
    """The csv module's field limit is the process's: one reader ending must not lower it under another."""
    from reflexion_agents.nodes.graphdb.csv_loader import CsvLayout, survey, typed_rows

    short, long = tmp_path / "short.csv", tmp_path / "long.csv"
    short.write_text("id\n1\n2\n", encoding="utf-8")
    long.write_text("id,text\n1,a\n2," + "x" * 200_000 + "\n", encoding="utf-8")

    first, second = typed_rows(long, survey(long)), typed_rows(short, survey(short))
    assert next(first)[1]["id"] == 1  # the long file is being read
    assert [row["id"] for _, row in second] == [1, 2]  # another file read to its end meanwhile
    assert len(next(first)[1]["text"]) == 200_000
    assert isinstance(survey(short), CsvLayout)
