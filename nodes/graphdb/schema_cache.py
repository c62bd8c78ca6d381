"""A graph's schema, read once per graph in a process and read again when the graph changes.

Reading a schema samples every label and searches for relationship types no sample showed
(nodes/graphdb/introspect.py): about half a second on a graph of a million nodes. A service that
makes an agent per question, or many agents over one graph, would pay it every time. So the
schema is kept per graph (the server, and the graph or database on it) and sample size, with a
fingerprint of the graph that costs a few milliseconds whatever its size: its labels,
relationship types and property names, and its node and relationship counts (both kept by the
database, not counted). A load, a new label or property, any node or relationship created or
deleted changes the fingerprint and the schema is read again. The fingerprint itself is taken at
most once a second (`RECHECK_S`): agents made in a burst share one look, and a write through the
project's own adapter drops its graph's schema at once. A change that leaves all of these as they
were (a property's values changing type, or a property key already used by another label appearing
on this one, when another process writes it) is not seen until one of them moves:
`forget_schemas()` drops what is kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from reflexion_agents.schemas.graphdb import GraphSchema

#: The names in one round trip; the two counts apart, as FalkorDB answers a count of every node or
#: relationship from what it keeps only when the count is the whole query (in a UNION it counts).
NAMES_QUERY = " UNION ALL ".join(
    (
        "CALL db.labels() YIELD label RETURN 'label' AS kind, label AS name",
        "CALL db.relationshipTypes() YIELD relationshipType RETURN 'type' AS kind, relationshipType AS name",
        "CALL db.propertyKeys() YIELD propertyKey RETURN 'key' AS kind, propertyKey AS name",
    )
)
COUNT_QUERIES = ("MATCH (n) RETURN count(n)", "MATCH ()-[r]->() RETURN count(r)")
_KEPT = 64  # graphs whose schema is kept at once
RECHECK_S = 1.0  # how long a fingerprint taken is trusted: another process's change is seen after this
#: By (the graph's `schema_key`, sample size): (its fingerprint, when it was taken, the schema).
_kept: dict[tuple[str, int], tuple[tuple[Any, ...], float, GraphSchema]] = {}
#: How many times each graph's schema was forgotten: a read that began before a forget is not kept.
_forgotten: dict[str, int] = {}
_lock = threading.Lock()


def fingerprint(db: Any) -> tuple[Any, ...]:
    """What changes when the graph's schema may have: names and counts, read read-only; in one
    round trip where the adapter can send its own reads together (`read_together`), else one by one."""
    queries = (NAMES_QUERY, *COUNT_QUERIES)
    together = getattr(db, "read_together", None)
    answers = together(queries) if together is not None else None
    if answers is None:
        answers = [db.query(q, row_cap=None).rows for q in queries]
    names = tuple(sorted((str(kind), str(name)) for kind, name in answers[0]))
    return names + tuple(rows[0][0] if rows else 0 for rows in answers[1:])


def shared_schema(db: Any, sample_size: int, read: Callable[[], GraphSchema]) -> GraphSchema:
    """`read()`'s schema of `db`'s graph, or the one kept from an earlier read while the graph's
    fingerprint is unchanged. `db.schema_key` names the graph (the server and graph, and for Neo4j
    the driver, whose user decides what is visible). A copy is returned: a caller may change its own."""
    key = (str(db.schema_key), sample_size)
    with _lock:
        kept, generation = _kept.get(key), _forgotten.get(key[0], 0)
    if kept is not None and time.monotonic() - kept[1] < RECHECK_S:
        return kept[2].model_copy(deep=True)
    now = fingerprint(db)
    schema = kept[2] if kept is not None and kept[0] == now else read()  # unchanged, or read anew
    with _lock:
        if _forgotten.get(key[0], 0) == generation:  # no write since the fingerprint: it may be kept
            if len(_kept) >= _KEPT:
                _kept.clear()
            _kept[key] = (now, time.monotonic(), schema)
    return schema.model_copy(deep=True)


def forget_schemas(schema_key: str | None = None) -> None:
    """Read the schema of the graph `schema_key` names (default: every graph) anew at its next use."""
    with _lock:
        for key in [k for k in _kept if schema_key is None or k[0] == schema_key]:
            del _kept[key]
        for name in [schema_key] if schema_key is not None else list(_forgotten):
            _forgotten[name] = _forgotten.get(name, 0) + 1
