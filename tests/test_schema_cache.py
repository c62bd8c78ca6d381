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
