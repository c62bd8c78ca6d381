"""Schema description by sampling, shared by every backend.

The schema goes into prompts, so it is read from bounded samples: neither its size nor
its cost should grow with the graph. No APOC procedure is needed. It reads:

1. the label and relationship-type catalogues;
2. per label, its first `sample_size` nodes (a label scan that stops early): property
   names, types and examples;
3. per label, the relationships of those same nodes, outgoing and incoming: every type
   common around some label gets its real endpoint labels and its properties here, from
   a few traversals out of a handful of nodes, however large the graph;
4. per relationship type seen in neither direction around any label: its count, which
   FalkorDB and Neo4j answer from their statistics (a type with nothing left costs no
   search), then a search for its first relationships.

Only the search grows with the graph. FalkorDB has no scan by relationship type:
`MATCH (a)-[r:T]->(b)` scans nodes and traverses from 16 at a time, one matrix
multiplication each, 0.8 s per million nodes scanned before the first match (1.4 s
while bulk writes are still pending in its matrices; benchmarks/schema_scale.py). A
variable-length pattern whose relationship is not bound, `(a)-[:T*1..2]->()`, is
answered instead by one neighbour lookup per node, about 0.35 s per million (0.6 s for a
type with parallel relationships, which FalkorDB then walks path by path), so on FalkorDB
the search finds the start nodes that way and only then matches their relationships.
Each search gets `sample_timeout` seconds (about five million nodes here); past that the
type is described without its endpoints, as (:?)-[:TYPE]->(:?), instead of failing the
whole schema.

So a type is described from what the samples show: a label pair that is rare among the
relationships of a common type, between labels with many nodes, can be left out.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from reflexion_agents.nodes.graphdb.cypher_text import quote_name
from reflexion_agents.schemas.errors import QueryTimeoutError
from reflexion_agents.schemas.graphdb import GraphSchema, NodeLabelInfo, PropertyInfo, RelationshipInfo

logger = logging.getLogger(__name__)

MAX_EXAMPLES = 3
SAMPLE_TIMEOUT_S = 2.0  # per relationship query (see the module docstring)
MAX_EXAMPLE_CHARS = 60
# Relationships read around one label's sampled nodes, per direction: bounds the work a hub
# node (one with millions of relationships) can cause; the rows come back grouped.
EDGES_PER_LABEL_FACTOR = 10


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list):
        return "LIST"
    if isinstance(value, dict):
        return "MAP"
    return type(value).__name__.upper()


def _example(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_EXAMPLE_CHARS:
        return value[: MAX_EXAMPLE_CHARS - 3] + "..."
    return value


def summarize_properties(samples: list[dict[str, Any]]) -> list[PropertyInfo]:
    """Property names with the types and a few distinct example values seen in `samples`."""
    types: dict[str, list[str]] = defaultdict(list)
    examples: dict[str, list[Any]] = defaultdict(list)
    for props in samples:
        for key, value in (props or {}).items():
            if value is None:
                continue
            kind = type_name(value)
            if kind not in types[key]:
                types[key].append(kind)
            shown = _example(value)
            if len(examples[key]) < MAX_EXAMPLES and shown not in examples[key] and kind != "MAP":
                examples[key].append(shown)
    return [PropertyInfo(name=k, types=types[k], examples=examples[k]) for k in sorted(types)]


@dataclass
class _Seen:
    """What the samples showed of one relationship type."""

    pairs: dict[tuple[str, str], int] = field(default_factory=dict)  # (start, end) label -> relationships seen
    properties: list[dict[str, Any]] = field(default_factory=list)

    def add(self, start_labels: list[str] | None, end_labels: list[str] | None, seen: int) -> None:
        for start in start_labels or ["?"]:  # a node without a label is shown as (:?)
            for end in end_labels or ["?"]:
                self.pairs[(start, end)] = self.pairs.get((start, end), 0) + seen

    def patterns(self) -> list[tuple[str, str]]:
        """Most often seen first; ties by name, so the text does not depend on the reading order."""
        return sorted(self.pairs, key=lambda pair: (-self.pairs[pair], pair))


def _around_label(label: str) -> str:
    """Relationships of the first $nodes nodes of `label`, outgoing and then incoming (at most $edges each),
    grouped by type and endpoint labels. The nodes are bound first, then traversed from: nothing beyond
    them is scanned, on any backend."""
    parts = []
    for anchor in ("a", "b"):
        parts.append(
            f"MATCH ({anchor}:{quote_name(label)}) WITH {anchor} LIMIT $nodes "
            "MATCH (a)-[r]->(b) WITH a, r, b LIMIT $edges "
            "RETURN type(r) AS t, labels(a) AS s, labels(b) AS e, count(*) AS n, "
            "collect(DISTINCT properties(r))[..$k] AS p"
        )
    return " UNION ALL ".join(parts)


def _search(rel_type: str, dialect: str | None) -> str:
    """The first $k relationships of `rel_type` wherever they are. On FalkorDB their start nodes are found
    with a variable-length pattern (a neighbour lookup per node, see the module docstring), then matched.
    Two hops because FalkorDB plans `*1..1` as the ordinary traversal; a path's first hop always starts at
    `a`, so the second changes nothing found. A start node with many such paths gives many rows: the
    first $k of them stop the scan."""
    name = quote_name(rel_type)
    if dialect == "falkordb":
        return (
            f"MATCH (a)-[:{name}*1..2]->() WITH a LIMIT $k WITH DISTINCT a "
            f"MATCH (a)-[r:{name}]->(b) WITH a, r, b LIMIT $k "
            "RETURN labels(a) AS s, labels(b) AS e, properties(r) AS p"
        )
    return (  # Neo4j scans the relationship-type index
        f"MATCH (a)-[r:{name}]->(b) WITH a, r, b LIMIT $k RETURN labels(a) AS s, labels(b) AS e, properties(r) AS p"
    )


def _relationships_around_labels(
    db: Any, labels: list[str], sample_size: int, sample_timeout: float, seen: dict[str, _Seen]
) -> None:
    params = {"nodes": sample_size, "edges": EDGES_PER_LABEL_FACTOR * sample_size, "k": sample_size}
    for label in labels:
        try:
            result = db.query(_around_label(label), params, row_cap=None, timeout=sample_timeout)
        except QueryTimeoutError:
            logger.warning("reading the relationships of :%s nodes took over %s s; skipped", label, sample_timeout)
            continue
        for rel_type, start_labels, end_labels, count, props in result.rows:
            entry = seen.setdefault(rel_type, _Seen())
            entry.add(start_labels, end_labels, int(count))
            entry.properties.extend(props[: max(0, sample_size - len(entry.properties))])


def _search_relationships(db: Any, rel_type: str, sample_size: int, sample_timeout: float) -> _Seen | None:
    """A sample of `rel_type` found by searching the graph; None when it took over `sample_timeout`."""
    entry = _Seen()
    try:
        # O(1) on FalkorDB and Neo4j (their statistics): no search at all for a type with nothing left
        count = db.query(f"MATCH ()-[r:{quote_name(rel_type)}]->() RETURN count(r) AS n", row_cap=None).rows[0][0]
        if not count:
            return entry
        result = db.query(
            _search(rel_type, getattr(db, "dialect", None)), {"k": sample_size}, row_cap=None, timeout=sample_timeout
        )
    except QueryTimeoutError:
        return None
    for start_labels, end_labels, props in result.rows:
        entry.add(start_labels, end_labels, 1)
        entry.properties.append(props)
    return entry


def sample_schema(db: Any, sample_size: int = 50, sample_timeout: float = SAMPLE_TIMEOUT_S) -> GraphSchema:
    """Describe `db`'s graph from its catalogues and `sample_size` entities per label/type."""
    labels = db.labels()
    nodes = []
    for label in labels:
        result = db.query(
            f"MATCH (n:{quote_name(label)}) WITH n LIMIT $k RETURN properties(n) AS p",
            {"k": sample_size},
            row_cap=None,
        )
        nodes.append(NodeLabelInfo(label=label, properties=summarize_properties([r[0] for r in result.rows])))
    seen: dict[str, _Seen] = {}
    _relationships_around_labels(db, labels, sample_size, sample_timeout, seen)
    relationships = []
    for rel_type in db.relationship_types():
        entry = seen[rel_type] if rel_type in seen else _search_relationships(db, rel_type, sample_size, sample_timeout)
        if entry is None:
            logger.warning(
                "sampling :%s took over %s s; it is described without its endpoints", rel_type, sample_timeout
            )
            relationships.append(RelationshipInfo(type=rel_type, patterns=[], properties=[]))
            continue
        relationships.append(
            RelationshipInfo(
                type=rel_type,
                patterns=entry.patterns(),
                properties=summarize_properties(entry.properties[:sample_size]),
            )
        )
    return GraphSchema(nodes=nodes, relationships=relationships, dialect=db.dialect)
