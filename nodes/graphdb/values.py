"""Turn driver values (nodes, relationships, paths, temporal types) into JSON-friendly ones.

Rows end up in prompts, in checkpoints and in JSON output, so they must be plain data.
"""

from __future__ import annotations

import math
from typing import Any


def _node(labels: Any, properties: dict[str, Any]) -> dict[str, Any]:
    return {"_labels": sorted(labels or []), **{k: to_plain(v) for k, v in properties.items()}}


def to_plain(value: Any) -> Any:
    """Convert one value returned by FalkorDB's or Neo4j's client to plain Python data."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    module = type(value).__module__
    if module.startswith("falkordb"):
        return _falkordb_value(value)
    if module.startswith("neo4j"):
        return _neo4j_value(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _falkordb_value(value: Any) -> Any:
    kind = type(value).__name__
    if kind == "Node":
        return _node(value.labels, value.properties)
    if kind == "Edge":
        return {"_type": value.relation, **{k: to_plain(v) for k, v in value.properties.items()}}
    if kind == "Path":
        steps = zip(value.nodes(), [*value.edges(), None], strict=False)  # node, edge, ..., node
        return [to_plain(e) for pair in steps for e in pair if e is not None]
    return str(value)


def _neo4j_value(value: Any) -> Any:
    kind = type(value).__name__
    if kind == "Node":
        return _node(value.labels, dict(value))
    if kind == "Relationship":
        return {"_type": value.type, **{k: to_plain(v) for k, v in dict(value).items()}}
    if kind == "Path":
        parts: list[Any] = [to_plain(value.start_node)]
        for rel in value.relationships:
            parts += [to_plain(rel), to_plain(rel.end_node)]
        return parts
    if hasattr(value, "iso_format"):
        return value.iso_format()
    return str(value)
