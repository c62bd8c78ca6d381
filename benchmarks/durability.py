"""What the journal costs: writes on the embedded server with every write fsynced before it is
acknowledged (the default), against the same server keeping no journal (how it ran before: a
snapshot every minute, so a crash lost up to a minute of acknowledged writes) and against an
fsync once a second (up to a second lost).

    python -m benchmarks.durability [--writes 500] [--repeats 3]

Each server runs the product's own command line (`server_command`) on a data directory under
the home directory's filesystem (not a RAM disk, where fsync costs nothing), one at a time. The
workloads are the writes users make: `reflexion load` of the shop import script (LOAD CSV, all or
nothing), and single small writes one after another, as `examples load` and learned examples make.
Reads do not touch the journal and are not measured.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.harness import machine, result_line
from reflexion_agents.nodes.graphdb import FalkorDBGraph, load_cypher_script
from reflexion_agents.nodes.graphdb.atomic_load import load_atomically
from reflexion_agents.nodes.graphdb.demo_data import SHOP_CYPHER
from reflexion_agents.nodes.graphdb.embedded import answers_ping, free_port, server_command

MODES = {
    "no journal (before)": (False, "no"),
    "fsync every second": (True, "everysec"),
    "fsync always": (True, "always"),
}
LOAD_TARGET = 1.5  # the shop load may take at most 1.5x as long as without a journal
WRITE_TARGET = 3.0  # a small write, fsynced, at most 3x


@contextlib.contextmanager
def server(journaled: bool, fsync: str) -> Iterator[FalkorDBGraph]:
    with tempfile.TemporaryDirectory(dir=Path.home()) as folder:
        port = free_port()
        command = server_command(Path(folder), port, journaled=journaled, fsync=fsync)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not answers_ping(port):
                time.sleep(0.05)
            yield FalkorDBGraph("bench", port=port)
        finally:
            process.kill()
            process.wait()


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(db: FalkorDBGraph, writes: int, repeats: int) -> tuple[float, float]:
    """(median seconds to load the shop script, median milliseconds per small write)."""
    loads, per_write = [], []
    for run in range(repeats):
        graph = db.sibling(f"shop_{run}")
        loads.append(timed(lambda graph=graph: load_atomically(graph, lambda g: load_cypher_script(g, SHOP_CYPHER))))
        examples = db.sibling(f"examples_{run}")
        seconds = timed(
            lambda examples=examples: [
                examples.write("CREATE (:Example {question: $q, cypher: $c})", {"q": f"question {i}", "c": "RETURN 1"})
                for i in range(writes)
            ]
        )
        per_write.append(seconds / writes * 1000)
    return statistics.median(loads), statistics.median(per_write)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    figures = {}
    for name, (journaled, fsync) in MODES.items():
        with server(journaled, fsync) as db:
            figures[name] = measure(db, args.writes, args.repeats)
    base_load, base_write = figures["no journal (before)"]
    lines = [
        "| server | shop load (s) | vs before | one small write (ms) | vs before |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (load, write) in figures.items():
        lines.append(f"| {name} | {load:.3f} | {load / base_load:.2f}x | {write:.3f} | {write / base_write:.2f}x |")
    print("\n".join(lines))
    print(f"\n{machine()}; {args.writes} small writes, median of {args.repeats}")
    load, write = figures["fsync always"]
    print(result_line("journal_load_cost_ratio", load / base_load, LOAD_TARGET))
    print(result_line("journal_small_write_cost_ratio", write / base_write, WRITE_TARGET))


if __name__ == "__main__":
    main()
