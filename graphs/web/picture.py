"""The part of the graph an answer is about, as nodes and links for the web page's drawing.

An answer's rows are often plain values (titles, names, counts), and a node in a row arrives as its
properties: neither says which node of the graph it was. So the picture is found again by value:
the text and whole-number values of the rows (a node's property values among them) and the quoted
values of the query (`'Tom Hanks'`), looked up as any property of any node, with each found node's
relationships and neighbours. One read-only query, bounded in nodes, relationships per node and time, on
the same database and graph the question was asked of.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Any

from reflexion_agents.nodes.graphdb.protocol import GraphDatabase

#: At most this many values are looked up, nodes found by them, and relationships drawn of each.
MAX_VALUES = 60
MAX_ROWS = 1000  # the rows read for values: the first of a long answer are enough to find its nodes
MAX_FOUND = 40
MAX_NEAR = 12  # a node with thousands of relationships shows a dozen, and leaves room for the others
TIMEOUT_S = 5.0
_LONGEST_VALUE = 200
_QUOTED = re.compile(r"'((?:[^'\\]|\\.){1,200})'|\"((?:[^\"\\]|\\.){1,200})\"")

_PICTURE_QUERY = """MATCH (n) WHERE any(k IN keys(n) WHERE n[k] IN $values)
WITH n LIMIT $found
OPTIONAL MATCH (n)-[r]-(m)
WITH n, collect({r: r, m: m})[..$near] AS near
UNWIND near AS pair
WITH n, pair.r AS r, pair.m AS m
RETURN ID(n) AS n_id, labels(n) AS n_labels, properties(n) AS n_props,
       ID(r) AS r_id, type(r) AS r_type, ID(startNode(r)) AS r_start, ID(endNode(r)) AS r_end,
       ID(m) AS m_id, labels(m) AS m_labels, properties(m) AS m_props"""


def picture_query(dialect: str) -> str:
    """The query, with the identity function of the database: Neo4j 5 deprecates `id()` for
    `elementId()`; FalkorDB has `id()` only."""
    return _PICTURE_QUERY.replace("ID(", "elementId(" if dialect == "neo4j" else "id(")


def _scalars(value: Any) -> Iterable[str | int]:
    """The text and whole numbers in a cell: a list's items, a node's or map's property values."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, str):
        if value.strip() and len(value) <= _LONGEST_VALUE:
            yield value
    elif isinstance(value, int):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not str(key).startswith("_"):  # `_labels`, `_type`: how a node or relationship arrives
                yield from _scalars(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _scalars(item)


def values_of(query: str | None, rows: Iterable[Iterable[Any]]) -> list[str | int]:
    """The values to look nodes up by: the query's quoted values, then the rows' text, then (only when
    there is no text) their whole numbers, which would otherwise match every node born that year."""
    quoted = [a or b for a, b in _QUOTED.findall(query or "")]
    cells = [v for row in itertools.islice(rows, MAX_ROWS) for cell in row for v in _scalars(cell)]
    texts = [v for v in [*quoted, *cells] if isinstance(v, str)]
    chosen: list[str | int] = list(texts) if texts else [v for v in cells if isinstance(v, int)]
    return list(dict.fromkeys(chosen))[:MAX_VALUES]


def _caption(properties: dict[str, Any]) -> str | None:
    """What a node is called: its `name` or `title`, else a property named like one (`companyName`,
    `productName`), else its first text."""
    texts = {k: v for k, v in properties.items() if isinstance(v, str) and v.strip()}
    for key in ("name", "title"):
        if key in texts:
            return texts[key]
    named = [k for k in texts if k.lower().endswith(("name", "title"))]
    chosen = named[0] if named else next(iter(texts), None)
    return texts[chosen] if chosen is not None else None


def _plain(value: Any) -> Any:
    """`value` as JSON can carry it: an infinite number as text (a graph may hold one; JSON cannot)."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _node(node_id: Any, labels: Any, properties: Any, found: bool) -> dict[str, Any]:
    properties = _plain(properties) if isinstance(properties, dict) else {}
    labels = [str(label) for label in labels or []]
    caption = _caption(properties) or (labels[0] if labels else str(node_id))
    return {"id": str(node_id), "labels": labels, "properties": properties, "caption": caption, "found": found}


def picture(db: GraphDatabase, query: str | None, rows: list[list[Any]]) -> dict[str, Any]:
    """`{"nodes": [...], "links": [...], "values": n}`: the nodes holding the answer's values (`found`),
    their relationships and neighbours; empty when the answer holds no value to look up."""
    values = values_of(query, rows)
    if not values:
        return {"nodes": [], "links": [], "values": 0}
    result = db.query(
        picture_query(str(getattr(db, "dialect", ""))),
        {"values": values, "found": MAX_FOUND, "near": MAX_NEAR},
        timeout=TIMEOUT_S,
        row_cap=MAX_FOUND * MAX_NEAR,
    )
    nodes: dict[str, dict[str, Any]] = {}
    links: dict[str, dict[str, Any]] = {}
    for n_id, n_labels, n_props, r_id, r_type, r_start, r_end, m_id, m_labels, m_props in result.rows:
        nodes[str(n_id)] = _node(n_id, n_labels, n_props, True)
        if r_id is None or m_id is None:
            continue
        nodes.setdefault(str(m_id), _node(m_id, m_labels, m_props, False))
        links[str(r_id)] = {"id": str(r_id), "source": str(r_start), "target": str(r_end), "type": str(r_type)}
    return {"nodes": list(nodes.values()), "links": list(links.values()), "values": len(values)}
