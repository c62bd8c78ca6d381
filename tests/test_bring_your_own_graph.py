"""Another graph than the movies demo, brought in as users bring theirs: the shop example's
Neo4j-style import script (LOAD CSV from URLs, conversions, constraints, quoted commas, a short
row) loaded through `reflexion load`, then listed, described, given examples and dropped."""

from __future__ import annotations

import json
import shutil
import uuid

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.demo_data import SHOP_CYPHER, SHOP_DIR
from tests.helpers import graph_fingerprint
from tests.loopback import LoopbackServer

SHOP_NODES = {"Category": 6, "Customer": 40, "Order": 150, "Product": 60, "Supplier": 8}
SHOP_RELATIONSHIPS = {"ORDERS": 463, "PART_OF": 60, "PURCHASED": 150, "REFERRED": 30, "SUPPLIES": 60}


@pytest.fixture
def data_dir(falkordb_server) -> str:
    return str(falkordb_server.data_dir)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def open_graph(falkordb_server, name: str) -> FalkorDBGraph:
    return FalkorDBGraph(name, host=falkordb_server.host, port=falkordb_server.port)


def test_the_shop_script_loads_with_the_counts_and_types_it_writes(data_dir, falkordb_server, capsys):
    name = unique("shop")
    assert main(["--data-dir", data_dir, "load", str(SHOP_CYPHER), "--graph", name]) == 0
    assert "264 nodes, 763 relationships" in capsys.readouterr().out
    db = open_graph(falkordb_server, name)
    try:
        assert dict(db.query("MATCH (n) RETURN labels(n)[0], count(*)", row_cap=None).rows) == SHOP_NODES
        assert dict(db.query("MATCH ()-[r]->() RETURN type(r), count(*)", row_cap=None).rows) == SHOP_RELATIONSHIPS
        # Strings unless the script converts them: identifiers and postal codes keep their leading zeros.
        supplier = db.query("MATCH (s:Supplier {supplierID: '1'}) RETURN s.postalCode, s.companyName").rows
        assert supplier == [["02134", "Harbour Trading, Ltd."]]
        typed = db.query("MATCH (p:Product {productID: '1'}) RETURN p.unitPrice, p.unitsInStock, p.discontinued").rows[
            0
        ]
        assert [type(v) for v in typed] == [float, int, bool]
        # The short row: its missing fields set nothing.
        assert db.query(
            "MATCH (p:Product {productID: '42'}) RETURN p.unitsInStock, p.discontinued, p.productName"
        ).rows == [[None, None, "Tofu"]]
        assert db.query("MATCH ()-[d:ORDERS]->() RETURN d.quantity LIMIT 1").rows[0][0] > 0
    finally:
        db.clear()


def test_csv_files_are_found_in_csv_dir_and_a_failing_statement_leaves_the_graph_as_it_was(
    data_dir, falkordb_server, tmp_path, capsys
):
    name = unique("shop")
    script = tmp_path / "elsewhere" / "shop.cypher"
    script.parent.mkdir()
    shutil.copy(SHOP_CYPHER, script)  # the CSV files are not beside this copy
    assert main(["--data-dir", data_dir, "load", str(script), "--graph", name, "--csv-dir", str(SHOP_DIR)]) == 0
    db = open_graph(falkordb_server, name)
    try:
        before = graph_fingerprint(db)
        broken = tmp_path / "broken.cypher"
        broken.write_text(
            "CREATE (:Marker {v: 1});\n"
            "LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/products.csv' AS row\n"
            "MERGE (p:Product {productID: row.productID}) SET p.extra = row.productName;\n"
            "// the third statement fails\n"
            "MATCH (p:Product SET p.bad = 1;\n"
        )
        capsys.readouterr()
        assert main(["--data-dir", data_dir, "load", str(broken), "--graph", name, "--csv-dir", str(SHOP_DIR)]) == 2
        err = capsys.readouterr().err
        assert "statement 3 (line 5" in err
        assert graph_fingerprint(db) == before  # neither the marker nor the extra properties
        assert not [g for g in db.graphs() if "__loading_" in g]  # no scratch copy left behind
        assert (
            main(["--data-dir", data_dir, "load", str(broken), "--graph", unique("fresh"), "--csv-dir", str(SHOP_DIR)])
            == 2
        )
    finally:
        db.clear()


def test_a_new_graph_is_not_created_by_a_failed_load_and_load_never_defaults_to_the_demo(
    data_dir, falkordb_server, tmp_path, capsys
):
    name = unique("never")
    broken = tmp_path / "x.cypher"
    broken.write_text("CREATE (:A);\nLOAD CSV FROM 'file:///no/such.csv' AS row CREATE (:B);\n")
    assert main(["--data-dir", data_dir, "load", str(broken), "--graph", name]) == 2
    assert "no/such.csv" in capsys.readouterr().err
    assert name not in open_graph(falkordb_server, "movies").graphs()
    movies_copy = tmp_path / "movies.cypher"
    movies_copy.write_text("CREATE (:Intruder);\n")
    assert main(["--data-dir", data_dir, "load", str(movies_copy)]) == 2
    assert "--graph" in capsys.readouterr().err
    for bad in ("", "a b", "x__examples"):
        assert main(["--data-dir", data_dir, "load", str(movies_copy), "--graph", bad]) == 2
    named = tmp_path / "my-data.cypher"
    named.write_text("CREATE (:A {v: 1});\n")
    assert main(["--data-dir", data_dir, "load", str(named)]) == 0
    db = open_graph(falkordb_server, "my_data")
    assert db.query("MATCH (a:A) RETURN a.v").rows == [[1]]
    db.clear()


def test_graphs_are_listed_with_counts_described_and_dropped(data_dir, falkordb_server, capsys):
    name = unique("shop")
    assert main(["--data-dir", data_dir, "load", str(SHOP_CYPHER), "--graph", name]) == 0
    capsys.readouterr()
    assert main(["--data-dir", data_dir, "graphs", "--json"]) == 0
    listed = {row["graph"]: row for row in json.loads(capsys.readouterr().out)["database"]}
    assert listed[name]["nodes"] == 264 and listed[name]["relationships"] == 763
    assert main(["--data-dir", data_dir, "schema", name]) == 0
    schema = capsys.readouterr().out
    assert "(:Supplier)-[:SUPPLIES]->(:Product)" in schema and "postalCode: STRING" in schema and "Movie" not in schema
    assert main(["--data-dir", data_dir, "graphs", "drop", name]) == 2  # not a terminal, no --yes: refused
    assert "--yes" in capsys.readouterr().err and name in open_graph(falkordb_server, name).graphs()
    assert main(["--data-dir", data_dir, "graphs", "drop", name, "--yes"]) == 0
    assert name not in open_graph(falkordb_server, name).graphs()
    assert main(["--data-dir", data_dir, "graphs", "drop", name, "--yes"]) == 2  # it is gone
    assert main(["--data-dir", data_dir, "schema", "no_such_graph"]) == 2


def test_examples_are_checked_read_only_before_they_are_stored_for_their_graph(
    data_dir, falkordb_server, tmp_path, capsys
):
    name = unique("shop")
    assert main(["--data-dir", data_dir, "load", str(SHOP_CYPHER), "--graph", name]) == 0
    db = open_graph(falkordb_server, name)
    before = graph_fingerprint(db)
    examples = tmp_path / "examples.csv"
    examples.write_text(
        "question,cypher\n"
        "Which products are in Bakery?,"
        "MATCH (p:Product)-[:PART_OF]->(:Category {categoryName: 'Bakery'}) RETURN p.productName\n"
        "How many orders are there?,MATCH (o:Order) RETURN count(o)\n"
        "Broken,MATCH (p:Product RETURN p\n"
        "Sneaky,MATCH (p:Product) DETACH DELETE p\n"
    )
    capsys.readouterr()
    try:
        assert main(["--data-dir", data_dir, "examples", "load", name, str(examples)]) == 1  # some were refused
        out = capsys.readouterr().out
        assert "2 example(s) stored" in out and "2 refused" in out and "WriteQueryRefusedError" in out
        assert graph_fingerprint(db) == before
        stored = (
            db.sibling(name + "__examples")
            .query("MATCH (e:Text2CypherExample) RETURN e.question ORDER BY e.question")
            .rows
        )
        assert stored == [["How many orders are there?"], ["Which products are in Bakery?"]]
    finally:
        db.clear()
        db.sibling(name + "__examples").clear()


class CsvHost(LoopbackServer):
    """A web server publishing CSV files, as an example dataset's host does (here, on loopback)."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__()
        self.files, self.requested = files, []

    def handle(self, request, body):
        name = request.path.rsplit("/", 1)[-1]
        self.requested.append(name)
        data = self.files.get(name, "").encode()
        request.send_response(200 if name in self.files else 404)
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)


def test_a_script_fetches_its_csv_from_a_url_only_when_allowed_and_no_local_copy_exists(
    data_dir, falkordb_server, tmp_path, capsys
):
    name = unique("web")
    with CsvHost({"cities.csv": 'name,population\n"Paris, France",2100000\nOslo,\n'}) as host:
        script = tmp_path / "cities.cypher"
        script.write_text(
            f"LOAD CSV WITH HEADERS FROM '{host.address}/data/cities.csv' AS row\n"
            "CREATE (:City {name: row.name, population: toInteger(row.population)});\n"
        )
        assert main(["--data-dir", data_dir, "load", str(script), "--graph", unique("off")]) == 2
        assert "pass --allow-http to fetch it" in capsys.readouterr().err and host.requested == []  # off by default
        assert main(["--data-dir", data_dir, "load", str(script), "--graph", name, "--allow-http"]) == 0
        missing = tmp_path / "missing.cypher"
        missing.write_text(f"LOAD CSV FROM '{host.address}/data/none.csv' AS row CREATE (:X);\n")
        assert main(["--data-dir", data_dir, "load", str(missing), "--graph", unique("none"), "--allow-http"]) == 2
    assert "cannot fetch" in capsys.readouterr().err and host.requested == ["cities.csv", "none.csv"]
    db = open_graph(falkordb_server, name)
    assert db.query("MATCH (c:City) RETURN c.name, c.population ORDER BY c.name").rows == [
        ["Oslo", None],
        ["Paris, France", 2100000],
    ]
    db.clear()


def test_a_script_with_nothing_to_run_and_one_the_database_would_read_files_for(
    data_dir, falkordb_server, tmp_path, capsys
):
    empty = tmp_path / "comments.cypher"
    empty.write_text("// nothing here yet\n")
    assert main(["--data-dir", data_dir, "load", str(empty), "--graph", unique("empty")]) == 0
    assert "0 statements" in capsys.readouterr().out
    server_side = tmp_path / "server_side.cypher"
    server_side.write_text("LOAD CSV FROM $url AS row CREATE (:X {v: row[0]});\n")
    assert main(["--data-dir", data_dir, "load", str(server_side), "--graph", unique("never")]) == 2
    assert "statement 1 (line 1" in capsys.readouterr().err


NORTHWIND_STYLE = """// The product catalogue, imported as Neo4j's Northwind guide does (Neo4j 3.x syntax included).
LOAD CSV WITH HEADERS FROM "https://example.net/northwind/products.csv" AS row
CREATE (n:Product)
SET n = row,
  n.unitPrice = toFloat(row.unitPrice),
  n.unitsInStock = toInteger(row.unitsInStock), n.reorderLevel = toInteger(row.reorderLevel),
  n.discontinued = (row.discontinued <> "0");

LOAD CSV WITH HEADERS FROM "https://example.net/northwind/categories.csv" AS row
CREATE (n:Category)
SET n = row;

LOAD CSV WITH HEADERS FROM "https://example.net/northwind/suppliers.csv" AS row
CREATE (n:Supplier)
SET n = row;

CREATE INDEX ON :Product(productID);
CREATE CONSTRAINT ON (c:Category) ASSERT c.categoryID IS UNIQUE;

MATCH (p:Product),(c:Category)
WHERE p.categoryID = c.categoryID
CREATE (p)-[:PART_OF]->(c);

MATCH (p:Product),(s:Supplier)
WHERE p.supplierID = s.supplierID
CREATE (s)-[:SUPPLIES]->(p);
"""


def test_a_script_in_the_style_of_neo4j_northwind_guide_loads(data_dir, falkordb_server, tmp_path, capsys):
    """Statement forms the shop script does not use: `SET n = row`, double-quoted URLs, joins in
    WHERE, and Neo4j 3.x index and constraint syntax; the CSV keeps Northwind's literal NULLs."""
    (tmp_path / "northwind.cypher").write_text(NORTHWIND_STYLE)
    (tmp_path / "products.csv").write_text(
        "productID,productName,supplierID,categoryID,quantityPerUnit,unitPrice,unitsInStock,reorderLevel,discontinued\n"
        "1,Chai,1,1,10 boxes x 20 bags,18,39,10,0\n2,Chang,1,1,24 - 12 oz bottles,19,17,25,0\n"
        "3,Aniseed Syrup,1,2,12 - 550 ml bottles,10,13,25,0\n4,Chef Anton's Gumbo Mix,2,2,36 boxes,21.35,0,0,1\n"
    )
    (tmp_path / "categories.csv").write_text(
        "categoryID,categoryName,description\n"
        '1,Beverages,"Soft drinks, coffees, teas"\n'
        '2,Condiments,"Sauces, spreads"\n'
    )
    (tmp_path / "suppliers.csv").write_text(
        "supplierID,companyName,city,region,postalCode\n"
        "1,Exotic Liquids,London,NULL,EC1 4SD\n"
        "2,Cajun Delights,New Orleans,LA,70117\n"
    )
    name = unique("northwind")
    assert main(["--data-dir", data_dir, "load", str(tmp_path / "northwind.cypher"), "--graph", name]) == 0
    out = capsys.readouterr().out
    assert "2 translated, 0 skipped" in out and "the graph has 8 nodes, 8 relationships" in out
    db = open_graph(falkordb_server, name)
    try:
        assert db.query(
            "MATCH (p:Product {productID: '4'}) RETURN p.discontinued, p.quantityPerUnit, p.unitsInStock"
        ).rows == [[True, "36 boxes", 0]]
        supplied = db.query(
            "MATCH (s:Supplier)-[:SUPPLIES]->(p)-[:PART_OF]->(c) RETURN s.companyName, count(p) ORDER BY s.companyName"
        ).rows
        assert supplied == [["Cajun Delights", 1], ["Exotic Liquids", 3]]
        indexed = {row[0] for row in db.query("CALL db.indexes() YIELD label RETURN label", row_cap=None).rows}
        assert {"Product", "Category"} <= indexed
    finally:
        db.clear()
