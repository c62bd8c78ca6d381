"""The sampled schema on a generated graph: real endpoint labels for rare relationship types, for rare
labels hidden among many nodes, and for a type that joins several label pairs.

The graph is drawn at random (fixed seed): its nodes are created in shuffled order, so the few nodes of
the rare labels sit anywhere among the others, and relationship ends are drawn at random too. Nothing is
placed where the sampler looks first."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.harness import TimedDatabase
from reflexion_agents.nodes.common.schema_text import schema_text
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.nodes.graphdb.introspect import sample_schema
from reflexion_agents.schemas.graphdb import GraphSchema

# label: (nodes, property map over the node's position `u`); "" is a node without a label
NODES = {
    "Person": (8000, "{name: 'person ' + toString(u), age: 20 + u % 50}"),
    "Document": (8000, "{title: 'doc ' + toString(u), year: 1990 + u % 30, score: toFloat(u % 97) / 7.0}"),
    "Organisation": (3000, "{name: 'org ' + toString(u), public: u % 2 = 0}"),
    "Gene": (3, "{symbol: 'G' + toString(u)}"),
    "Disease": (2, "{name: 'disease ' + toString(u), codes: ['D' + toString(u)]}"),
    "": (2, "{}"),
}
# type: [(start label, end label, how many)]
RELATIONSHIPS = {
    "AUTHORED": [("Person", "Document", 10000)],
    "WORKS_FOR": [("Person", "Organisation", 5000)],
    "MENTIONS": [  # one type, four label pairs: two common, two to labels of a handful of nodes
        ("Document", "Person", 4000),
        ("Document", "Organisation", 2000),
        ("Document", "Gene", 4),
        ("Document", "Disease", 3),
    ],
    "ASSOCIATED_WITH": [("Gene", "Disease", 3)],  # rare type between rare labels
    "CITES": [("Document", "Document", 4)],  # rare type between labels of thousands of nodes
    "LINKS": [("", "", 1)],  # between nodes without a label
}


def _create_graph(db: FalkorDBGraph, seed: int = 7) -> None:
    """Nodes in shuffled order (the labels of thousands in blocks of 100, the others one by one), so
    internal ids follow it; then relationships between nodes drawn at random, found by id."""
    rng = random.Random(seed)
    units = []
    for label, (count, _) in NODES.items():
        block = 100 if count >= 1000 else 1
        units += [(label, min(block, count - i)) for i in range(0, count, block)]
    rng.shuffle(units)
    positions: dict[str, list[int]] = {label: [] for label in NODES}
    for label, size in units:
        low = sum(len(p) for p in positions.values())
        props = NODES[label][1].replace("{", "{u: u, ", 1).replace(", }", "}")
        db.write(
            f"UNWIND range($low, $high) AS u CREATE ({':' + label if label else ''} {props})",
            {"low": low, "high": low + size - 1},
        )
        positions[label].extend(range(low, low + size))
    first, last = db.query("MATCH (n) RETURN min(id(n) - n.u), max(id(n) - n.u)", row_cap=None).rows[0]
    assert first == last == 0, "node ids are not the creation order: the writes below find nodes by id"
    for rel_type, pairs in RELATIONSHIPS.items():
        ends = [
            [rng.choice(positions[start]), rng.choice(positions[end]), rng.randrange(100)]
            for start, end, count in pairs
            for _ in range(count)
        ]
        db.write(
            "UNWIND $ends AS e WITH e, e[0] AS x, e[1] AS y MATCH (a), (b) WHERE id(a) = x AND id(b) = y "
            f"CREATE (a)-[:{rel_type} {{weight: e[2]}}]->(b)",
            {"ends": ends},
        )
    db.write("MATCH (a:Gene), (b:Disease) WITH a, b LIMIT 1 CREATE (a)-[:OBSOLETE]->(b)")
    db.write("MATCH ()-[r:OBSOLETE]->() DELETE r")  # the type stays in the catalogue with nothing left


@pytest.fixture(scope="module")
def sampled(falkordb_server: EmbeddedFalkorDB) -> Iterator[tuple[GraphSchema, TimedDatabase]]:
    db = FalkorDBGraph("schema_sampling", host=falkordb_server.host, port=falkordb_server.port, server=falkordb_server)
    db.clear()
    _create_graph(db)
    timed: Any = TimedDatabase(db)
    try:
        yield sample_schema(timed), timed
    finally:
        db.clear()


def _patterns(schema: GraphSchema) -> dict[str, set[tuple[str, str]]]:
    return {r.type: set(r.patterns) for r in schema.relationships}


def test_every_relationship_type_gets_its_real_endpoint_labels(sampled):
    schema, _ = sampled
    assert _patterns(schema) == {
        "AUTHORED": {("Person", "Document")},
        "WORKS_FOR": {("Person", "Organisation")},
        "MENTIONS": {
            ("Document", "Person"),
            ("Document", "Organisation"),
            ("Document", "Gene"),
            ("Document", "Disease"),
        },
        "ASSOCIATED_WITH": {("Gene", "Disease")},
        "CITES": {("Document", "Document")},
        "LINKS": {("?", "?")},
        "OBSOLETE": set(),  # nothing left to show
    }
    text = schema_text(schema)
    for line in [
        "- (:Gene)-[:ASSOCIATED_WITH]->(:Disease) weight: INTEGER",
        "- (:Document)-[:CITES]->(:Document) weight: INTEGER",
        "- (:Document)-[:MENTIONS]->(:Gene) weight: INTEGER",
        "- (:Document)-[:MENTIONS]->(:Disease) weight: INTEGER",
        "- (:?)-[:OBSOLETE]->(:?)",
    ]:
        assert line in text


def test_labels_and_property_types_come_from_the_node_samples(sampled):
    schema, _ = sampled
    assert [n.label for n in schema.nodes] == ["Disease", "Document", "Gene", "Organisation", "Person"]
    kinds = {(n.label, p.name): p.types for n in schema.nodes for p in n.properties}
    assert kinds[("Document", "score")] == ["FLOAT"] and kinds[("Document", "year")] == ["INTEGER"]
    assert kinds[("Organisation", "public")] == ["BOOLEAN"] and kinds[("Disease", "codes")] == ["LIST"]


def test_only_types_no_label_sample_showed_are_searched_and_an_empty_one_is_not(sampled):
    _, timed = sampled
    searched = sorted(q.split("[:")[1].split("*")[0].strip("`") for q in timed.times if "*1..2" in q)
    assert searched == ["CITES", "LINKS"]  # OBSOLETE's count (0) spared its search
    assert all(q.lstrip().startswith(("MATCH", "CALL")) for q in timed.times)
