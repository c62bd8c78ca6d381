"""`reflexion eval` in one process and shared among worker processes, with a model that answers at once.

    python -m benchmarks.eval_workers [--workers 2] [--rounds 2]

Every movies question, scored by the Reflexion agent with the oracle (the gold query at every step,
no latency), `--concurrency` 8, as `reflexion eval --model oracle` runs them: once in one process
(`--workers 1`, what the command did before it had workers) and once shared among `--workers`
processes (`graphs/eval_processes.py`). Wall time from the call to the report, the gold queries and
the processes' start included; the better of `--rounds` runs each, taken in turns.

Target: on 2 cores, at least 1.7 times faster with 2 workers than with one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from benchmarks.harness import machine, movies_database, result_line
from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset

TARGET = 1.7


def timed(db: object, items: list, workers: int) -> tuple[float, int, int]:
    """(wall seconds, questions scored, processes used) of one evaluation."""
    started = time.perf_counter()
    report = asyncio.run(evaluate(agent="reflexion", model="oracle", items=items, db=db, workers=workers))  # type: ignore[arg-type]
    wall = time.perf_counter() - started
    assert report.overall.correct == report.overall.scored, report.overall
    return wall, report.overall.scored, int(report.options["workers"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    items = load_dataset()
    runs: dict[int, list[tuple[float, int, int]]] = {1: [], args.workers: []}
    with movies_database() as db:
        for _ in range(args.rounds):
            for workers in runs:
                runs[workers].append(timed(db, items, workers))
    print(f"{len(items)} movies questions, the oracle, concurrency 8 a process; best of {args.rounds}:\n")
    print("| workers asked | processes | questions scored | wall (s) | questions/s |")
    print("|---:|---:|---:|---:|---:|")
    best = {workers: min(results) for workers, results in runs.items()}
    for workers, (wall, scored, used) in best.items():
        print(f"| {workers} | {used} | {scored} | {wall:.1f} | {scored / wall:.0f} |")
    print(f"\nCores: {os.cpu_count()}. Machine: {machine()}\n")
    print(result_line("eval_workers_speedup", best[1][0] / best[args.workers][0], TARGET, unit="x", at_least=True))


if __name__ == "__main__":
    main()
