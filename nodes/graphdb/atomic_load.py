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


def load_atomically(db: Any, load: Callable[[Any], T]) -> T:
    """Run `load` on a scratch copy of `db`'s graph (a FalkorDB graph), then replace the graph
    with the copy. If `load` raises, the scratch copy is dropped and the graph is as it was.
    Readers see the old graph until the swap, which takes one delete and one copy."""
    scratch = db.sibling(f"{db.graph_name}{SCRATCH_MARK}{uuid.uuid4().hex[:8]}")
    existed = db.graph_name in db.graphs()
    if existed:
        db.copy_to(scratch.graph_name)
    try:
        result = load(scratch)
    except BaseException:
        scratch.clear()
        raise
    if scratch.graph_name in db.graphs():
        if existed:
            db.clear()
        scratch.copy_to(db.graph_name)
        scratch.clear()
    return result
