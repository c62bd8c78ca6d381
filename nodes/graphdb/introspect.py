"""Schema description by sampling, shared by every backend.

It reads the label and relationship-type catalogues, then looks at a bounded
sample per label and per type, and no APOC procedure is needed. A label's sample
is a label scan that stops early. A relationship type's sample is not: FalkorDB
finds relationships by walking nodes, so a rare type costs about a second per
million nodes in front of its first use (benchmarks/schema_scale.py). Each type
therefore gets `sample_timeout` seconds; past that it is described without its
endpoints, as (:?)-[:TYPE]->(:?), instead of failing the whole schema.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

from nodes.graphdb.cypher_text import quote_name
from schemas.errors import QueryTimeoutError
from schemas.graphdb import GraphSchema, NodeLabelInfo, PropertyInfo, RelationshipInfo

logger = logging.getLogger(__name__)

MAX_EXAMPLES = 3
SAMPLE_TIMEOUT_S = 2.0  # per relationship type (see the module docstring)
MAX_EXAMPLE_CHARS = 60


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


def sample_schema(db: Any, sample_size: int = 50, sample_timeout: float = SAMPLE_TIMEOUT_S) -> GraphSchema:
    """Describe `db`'s graph from its catalogues and `sample_size` entities per label/type."""
    nodes = []
    for label in db.labels():
        result = db.query(
            f"MATCH (n:{quote_name(label)}) WITH n LIMIT $k RETURN properties(n) AS p",
            {"k": sample_size},
            row_cap=None,
        )
        nodes.append(NodeLabelInfo(label=label, properties=summarize_properties([r[0] for r in result.rows])))
    relationships = []
    for rel_type in db.relationship_types():
        try:
            result = db.query(
                f"MATCH (a)-[r:{quote_name(rel_type)}]->(b) WITH a, r, b LIMIT $k "
                "RETURN labels(a) AS s, labels(b) AS e, properties(r) AS p",
                {"k": sample_size},
                row_cap=None,
                timeout=sample_timeout,
            )
        except QueryTimeoutError:
            logger.warning(
                "sampling :%s took over %s s; it is described without its endpoints", rel_type, sample_timeout
            )
            relationships.append(RelationshipInfo(type=rel_type, patterns=[], properties=[]))
            continue
        patterns: list[tuple[str, str]] = []
        for start_labels, end_labels, _ in result.rows:
            for start in start_labels or ["?"]:
                for end in end_labels or ["?"]:
                    if (start, end) not in patterns:
                        patterns.append((start, end))
        relationships.append(
            RelationshipInfo(
                type=rel_type,
                patterns=patterns,
                properties=summarize_properties([r[2] for r in result.rows]),
            )
        )
    return GraphSchema(nodes=nodes, relationships=relationships, dialect=db.dialect)
