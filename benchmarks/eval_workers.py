"""`reflexion eval` in one process and shared among worker processes, with a model that answers at once.

    python -m benchmarks.eval_workers [--workers 2] [--rounds 2] [--repeat 1]

Every movies question, scored by the Reflexion agent with the oracle (the gold query at every step,
no latency), `--concurrency` 8, as `reflexion eval --model oracle` runs them: once in one process
(`--workers 1`, what the command did before it had workers) and once by `--workers` processes (the
command's and its helpers, `graphs/eval_processes.py`). Wall time from the call to the report, the gold queries and
the processes' start included; the better of `--rounds` runs each, taken in turns. `--repeat`
asks every question that many times, for a run long enough to pay for the processes' start.
The database server's CPU time is shown: on a machine whose cores it shares, the workers' gain is
bounded by it.

Target: on 2 cores, at least 1.7 times faster with 2 workers than with one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.harness import machine, movies_database, result_line
from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset

TARGET = 1.7


def cpu_s(pid: int) -> float:
    """CPU seconds (user and system) a process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(db: object, items: list, workers: int) -> tuple[float, int, int, float]:
    """(wall seconds, questions scored, processes used, the database server's CPU seconds) of one
    evaluation."""
    server = db.server.pid  # type: ignore[attr-defined]
    started, server_started = time.perf_counter(), cpu_s(server)
    report = asyncio.run(evaluate(agent="reflexion", model="oracle", items=items, db=db, workers=workers))  # type: ignore[arg-type]
    wall = time.perf_counter() - started
    assert report.overall.correct == report.overall.scored, report.overall
    return wall, report.overall.scored, int(report.options["workers"]), cpu_s(server) - server_started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="the questions this many times (a longer run)")
    args = parser.parse_args()
    movies = load_dataset()
    items = [replace(item, index=n) for n, item in enumerate(movies * args.repeat)]
    runs: dict[int, list[tuple[float, int, int, float]]] = {1: [], args.workers: []}
    with movies_database() as db:
        for _ in range(args.rounds):
            for workers in runs:
                runs[workers].append(timed(db, items, workers))
    asked = f"{len(items)} movies questions ({args.repeat}x the file)"
    print(f"{asked}, the oracle, concurrency 8 a process; best of {args.rounds}:\n")
    print("| workers asked | processes | questions scored | wall (s) | questions/s | database server CPU (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    best = {workers: min(results) for workers, results in runs.items()}
    for workers, (wall, scored, used, server_s) in best.items():
        print(f"| {workers} | {used} | {scored} | {wall:.1f} | {scored / wall:.0f} | {server_s:.1f} |")
    wall, _, _, server_s = best[1]
    ceiling = (os.cpu_count() or 1) / (1 + server_s / wall)
    print(
        f"\nCores: {os.cpu_count()}. In one process the database server kept {server_s / wall:.0%} of a core busy "
        f"beside it: with the server on the same cores, workers can be at most {ceiling:.2f}x faster "
        f"(cores / (1 + the server's share)), before the processes' start. Machine: {machine()}\n"
    )
    print(result_line("eval_workers_speedup", best[1][0] / best[args.workers][0], TARGET, unit="x", at_least=True))


if __name__ == "__main__":
    main()
