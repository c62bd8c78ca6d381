"""What the benchmarks share: the movies graph in a throw-away embedded FalkorDB, a scripted
model for a loop of any length, and the machine line printed under every table."""

from __future__ import annotations

import contextlib
import os
import platform
import tempfile
from collections.abc import Iterator

from nodes.graphdb import FalkorDBGraph, ensure_movies_graph
from nodes.graphdb.embedded import EmbeddedFalkorDB
from nodes.models.scripted import tool_reply


@contextlib.contextmanager
def movies_database() -> Iterator[FalkorDBGraph]:
    """The movies graph in an embedded FalkorDB of its own, stopped and deleted afterwards."""
    with tempfile.TemporaryDirectory() as data_dir:
        server = EmbeddedFalkorDB.start(data_dir)
        try:
            db = FalkorDBGraph("movies", host=server.host, port=server.port, server=server)
            ensure_movies_graph(db)
            yield db
        finally:
            server.stop()


def loop_script(queries: list[str], *, final_score: float = 9) -> list:
    """Replies for a Reflexion run that executes `queries` in order: a draft, then revisions
    scored 2 (not good enough), the last scored `final_score` so the run ends there."""
    replies = [tool_reply("GenerateQuery", {"answer": queries[0], "reflection": "first try", "search_queries": []})]
    for i, query in enumerate([*queries[1:], queries[-1]]):
        last = i == len(queries) - 1
        replies.append(tool_reply("ReviseQuery", {
            "answer": "", "reflection": "not yet right", "revised_query": query, "score": final_score if last else 2,
        }))
    return replies


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    mem_kb = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    return f"{cpu}, {os.cpu_count()} cores, {mem_kb / 1024 / 1024:.1f} GB RAM, Python {platform.python_version()}, {platform.system()}"
