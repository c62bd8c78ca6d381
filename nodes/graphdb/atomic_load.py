"""All-or-nothing loads: write into a scratch copy of the graph and swap it in only on success.

A script that fails at its tenth statement would otherwise leave nine statements' worth of
graph behind (indexes and no nodes, say), which no later run can tell from a real graph.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

SCRATCH_MARK = "__loading_"
EXAMPLES_SUFFIX = "__examples"  # beside a graph, its (question, cypher) example pairs (`reflexion examples`)


def kept_by_the_project(graph: str) -> bool:
    """Whether `graph` is one the project keeps for itself (a scratch copy, a graph's examples), not a
    graph users load and ask."""
    return graph.endswith(EXAMPLES_SUFFIX) or SCRATCH_MARK in graph


def load_atomically(db: Any, load: Callable[[Any], T]) -> T:
    """Run `load` on a scratch copy of `db`'s graph (a FalkorDB graph), then put the copy in the
    graph's place in one step (a rename). If `load` raises, the scratch copy is dropped and the
    graph is as it was; if the process dies, the graph is as it was too, and the scratch copy it
    leaves is dropped by the next load into that graph."""
    for stale in [g for g in db.graphs() if g.startswith(db.graph_name + SCRATCH_MARK)]:
        db.sibling(stale).clear()
    scratch = db.sibling(f"{db.graph_name}{SCRATCH_MARK}{uuid.uuid4().hex[:8]}")
    if db.graph_name in db.graphs():
        db.copy_to(scratch.graph_name)
        scratch.rebuild_range_indexes()
    try:
        result = load(scratch)
    except BaseException:
        scratch.clear()
        raise
    if scratch.graph_name in db.graphs():
        scratch.replace(db.graph_name)
    return result
