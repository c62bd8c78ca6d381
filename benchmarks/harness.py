"""What the benchmarks share: a throw-away embedded FalkorDB (with the movies graph or empty), a
database whose query times are recorded, a scripted model for a loop of any length, a reader of
a process's memory figures, and the machine line printed under every table."""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from reflexion_agents.nodes.graphdb import FalkorDBGraph, ensure_movies_graph
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.nodes.models.scripted import tool_reply


@contextlib.contextmanager
def scratch_database(graph: str = "movies", *, movies: bool = True) -> Iterator[FalkorDBGraph]:
    """`graph` (the movies graph unless `movies=False`) in an embedded FalkorDB of its own, stopped
    and deleted afterwards; `db.server` is the server (its `pid`, its `data_dir`)."""
    with tempfile.TemporaryDirectory() as data_dir:
        server = EmbeddedFalkorDB.start(data_dir)
        try:
            db = FalkorDBGraph(graph, host=server.host, port=server.port, server=server)
            if movies:
                ensure_movies_graph(db)
            yield db
        finally:
            server.stop()


def movies_database() -> contextlib.AbstractContextManager[FalkorDBGraph]:
    return scratch_database("movies")


class TimedDatabase:
    """A database adapter with the time of its queries recorded (`query_s` in all, `times` in
    milliseconds per query text), everything else passed through."""

    def __init__(self, db: Any) -> None:
        self._db, self.query_s, self.times = db, 0.0, {}

    def query(self, cypher: str, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return self._db.query(cypher, *args, **kwargs)
        finally:
            elapsed = time.perf_counter() - started
            self.query_s += elapsed
            self.times[cypher] = elapsed * 1000

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


class ServingCommand:
    """A command that serves (`reflexion serve`, `reflexion scale`) in a process group of its own, run
    in `folder` with its output in `folder/<name>.log`: entered once `ready()` holds, SIGTERM to the
    group on the way out (as a service manager stops it)."""

    def __init__(self, command: list[str], folder: Path, env: dict[str, str], name: str, guard_s: float = 300) -> None:
        self.folder, self.name, self.guard_s = folder, name, guard_s
        self.log = (folder / f"{name}.log").open("w")
        self.process = subprocess.Popen(
            command, cwd=folder, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_until(self, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.guard_s
        while not ready():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = (self.folder / f"{self.name}.log").read_text()[-2000:]
                raise RuntimeError(f"{self.name} did not start:\n{log}")
            time.sleep(0.25)

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=self.guard_s)
        self.log.close()


def proc_status_kb(pid: int | str, field: str) -> int:
    """A memory figure of a process (VmRSS, VmHWM...) in kB, from /proc (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def loop_script(queries: list[str], *, final_score: float = 9) -> list:
    """Replies for a Reflexion run that executes `queries` in order: a draft, then revisions
    scored 2 (not good enough), the last scored `final_score` so the run ends there."""
    replies = [tool_reply("GenerateQuery", {"answer": queries[0], "reflection": "first try", "search_queries": []})]
    for i, query in enumerate([*queries[1:], queries[-1]]):
        last = i == len(queries) - 1
        replies.append(
            tool_reply(
                "ReviseQuery",
                {
                    "answer": "",
                    "reflection": "not yet right",
                    "revised_query": query,
                    "score": final_score if last else 2,
                },
            )
        )
    return replies


def machine() -> str:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu = next(
            (line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")),
            platform.processor(),
        )
    with open("/proc/meminfo") as meminfo:
        mem_kb = next((int(line.split()[1]) for line in meminfo if line.startswith("MemTotal")), 0)
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem_kb / 1024 / 1024:.1f} GB RAM, "
        f"Python {platform.python_version()}, {platform.system()}"
    )


def result_line(name: str, measured: float, target: float, *, unit: str = "", at_least: bool = False) -> str:
    """The verdict line every benchmark ends with, for scripts to read:
    `RESULT <name> <measured> <target> PASS|FAIL` (the target reads `<2ms`, or `>=50x` with `at_least`)."""
    met = measured >= target if at_least else measured < target
    bound = ">=" if at_least else "<"
    return f"RESULT {name} {measured:.2f}{unit} {bound}{target:g}{unit} {'PASS' if met else 'FAIL'}"
