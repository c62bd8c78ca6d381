"""100 questions with a simulated model latency of 200 ms: concurrent (async) against sequential.

    python -m benchmarks.concurrency [--questions 100] [--latency 0.2] [--limits 1,4,8,16,32,100]

The oracle model (the gold query at every step, see nodes/evaluation/oracle.py) waits `--latency`
seconds per call, as a remote model would, without using the CPU (`asyncio.sleep`). The
evaluation harness runs the first `--questions` runnable movies questions through the Reflexion
agent (two model calls and one query each) at each concurrency limit. Limit 1 is the sequential
baseline. "Model-bound" is the time the model's latency alone imposes at that limit; the rest is
CPU work (the framework, the database client) and waiting for the database, which is measured as
process CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from typing import Any

from benchmarks.harness import machine, movies_database
from graphs.evaluation import EVAL_ROW_CAP, evaluate
from nodes.evaluation.dataset import load_dataset
from nodes.evaluation.gold import run_gold
from nodes.evaluation.oracle import GoldChatModel


class SlowGoldModel(GoldChatModel):
    """The oracle, answering after `latency_s` like a model behind an API."""

    latency_s: float = 0.2

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(self.latency_s)
        return super()._generate(*args, **kwargs)

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.latency_s)
        return super()._generate(*args, **kwargs)


def runnable_questions(db: Any, count: int) -> list:
    items = load_dataset()
    gold = run_gold(db, items, timeout=10, row_cap=EVAL_ROW_CAP)
    return [item for item in items if not gold[item.index].error][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limits", default="1,4,8,16,32,100")
    args = parser.parse_args()
    limits = [int(n) for n in args.limits.split(",")]
    rows = []
    with movies_database() as db:
        items = runnable_questions(db, args.questions)
        for limit in limits:
            model = SlowGoldModel(latency_s=args.latency)
            cpu, wall = time.process_time(), time.perf_counter()
            report = asyncio.run(
                evaluate(agent="reflexion", model="oracle", items=items, db=db, chat=model, concurrency=limit)
            )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert report.overall.correct == len(items), report.overall
            calls = sum(t.answer.llm_calls for t in report.traces if t.answer)
            model_bound = math.ceil(len(items) / limit) * (calls / len(items)) * args.latency
            rows.append((limit, wall, cpu, calls, model_bound, report.overall.latency_p50_s))
    base = rows[0][1]
    print(f"{len(items)} questions, {args.latency * 1000:.0f} ms per model call:\n")
    print("| concurrency | wall (s) | questions/s | speed-up | model-bound (s) | CPU (s) | latency p50 (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for limit, wall, cpu, _, bound, p50 in rows:
        print(
            f"| {limit} | {wall:.1f} | {len(items) / wall:.1f} | {base / wall:.1f}x | {bound:.1f} | {cpu:.1f} "
            f"| {p50:.2f} |"
        )
    calls = rows[-1][3]  # the model calls of the last run (every run asks the same questions)
    print(f"\nWall time includes running the {len(items)} gold queries once ({calls} model calls a run).")
    print(f"Machine: {machine()}")


if __name__ == "__main__":
    main()
