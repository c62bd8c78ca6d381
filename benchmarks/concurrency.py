"""100 questions with a simulated model latency of 200 ms: concurrent (async) against sequential.

    python -m benchmarks.concurrency [--questions 100] [--latency 0.2] [--limits 1,4,8,16,32,100]

Two targets: 100 questions at once finish at least 50 times sooner than one at a time, and the
agent's speed-up is at least 0.9 of a bare LangGraph graph's with the same nodes, routes and model
waits, run the same way in the same process (the most the framework allows).

The oracle model (the gold query at every step, see nodes/evaluation/oracle.py) waits `--latency`
seconds per call, as a remote model would, without using the CPU (`asyncio.sleep`). The
evaluation harness runs the first `--questions` runnable movies questions through the Reflexion
agent (two model calls and one query each) at each concurrency limit. Limit 1 is the sequential
baseline. "Model-bound" is the time the model's latency alone imposes at that limit; the rest is
CPU work (the framework, the database client) and waiting for the database, which is measured as
process CPU time (all threads), also shown per question. Times start once the harness has run
the gold queries (its `on_start`): what is measured is the agent answering, not the harness.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from benchmarks.harness import machine, movies_database, result_line
from reflexion_agents.graphs.evaluation import EVAL_ROW_CAP, evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.evaluation.gold import run_gold
from reflexion_agents.nodes.evaluation.oracle import GoldChatModel

TARGET_SPEEDUP = 50.0  # the last limit against the first
TARGET_OF_BARE = 0.9  # the agent's speed-up against the bare graph's


class SlowGoldModel(GoldChatModel):
    """The oracle, answering after `latency_s` like a model behind an API. `run_manager` is named, as
    LangChain hands it only to a `_generate` that names it: the oracle reads its run from it."""

    latency_s: float = 0.2

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        time.sleep(self.latency_s)
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        await asyncio.sleep(self.latency_s)
        return super()._generate(messages, stop, run_manager, **kwargs)


class _Counter(TypedDict):
    steps: int


def bare_graph(latency_s: float) -> Any:
    """LangGraph alone: the agent's three nodes doing nothing but the two model waits a question
    costs (draft and revise), as async nodes. Its speed-up is the most the framework allows."""

    async def draft(state: _Counter) -> dict[str, int]:
        await asyncio.sleep(latency_s)
        return {"steps": 0}

    async def execute_tool(state: _Counter) -> dict[str, int]:
        return {"steps": state["steps"] + 1}

    async def revise(state: _Counter) -> dict[str, int]:
        await asyncio.sleep(latency_s)
        return {}

    builder = StateGraph(_Counter)
    for name, node in (("draft", draft), ("execute_tool", execute_tool), ("revise", revise)):
        builder.add_node(name, node)
    builder.add_edge(START, "draft")
    builder.add_conditional_edges("draft", lambda s: "execute_tool")
    builder.add_conditional_edges("execute_tool", lambda s: "revise")
    builder.add_conditional_edges("revise", lambda s: END)
    return builder.compile()


def time_bare(graph: Any, questions: int, limit: int) -> tuple[float, float]:
    """(wall, CPU) seconds for `questions` runs of the bare graph, at most `limit` at a time."""

    async def all_runs() -> None:
        gate = asyncio.Semaphore(limit)

        async def one() -> None:
            async with gate:
                await graph.ainvoke({"steps": 0})

        await asyncio.gather(*(one() for _ in range(questions)))

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(all_runs())
    return time.perf_counter() - wall, time.process_time() - cpu


def runnable_questions(db: Any, count: int) -> list:
    items = load_dataset()
    gold = run_gold(db, items, timeout=10, row_cap=EVAL_ROW_CAP)
    return [item for item in items if not gold[item.index].error][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limits", default="1,4,8,16,32,100", help="concurrency limits; the first is the baseline")
    args = parser.parse_args()
    limits = [int(n) for n in args.limits.split(",")]
    rows = []
    with movies_database() as db:
        items = runnable_questions(db, args.questions)
        for limit in limits:
            model, began = SlowGoldModel(latency_s=args.latency), {}
            report = asyncio.run(
                evaluate(
                    agent="reflexion",
                    model="oracle",
                    items=items,
                    db=db,
                    chat=model,
                    concurrency=limit,
                    on_start=lambda _, began=began: began.update(cpu=time.process_time(), wall=time.perf_counter()),
                )
            )
            wall, cpu = time.perf_counter() - began["wall"], time.process_time() - began["cpu"]
            assert report.overall.correct == len(items), report.overall
            calls = sum(t.answer.llm_calls for t in report.traces if t.answer)
            model_bound = math.ceil(len(items) / limit) * (calls / len(items)) * args.latency
            rows.append((limit, wall, cpu, calls, model_bound, report.overall.latency_p50_s))
    base = rows[0][1]
    print(f"{len(items)} questions, {args.latency * 1000:.0f} ms per model call:\n")
    print(
        "| concurrency | wall (s) | questions/s | speed-up | model-bound (s) | CPU (s) | CPU per question (ms) "
        "| latency p50 (s) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for limit, wall, cpu, _, bound, p50 in rows:
        print(
            f"| {limit} | {wall:.2f} | {len(items) / wall:.1f} | {base / wall:.1f}x | {bound:.1f} | {cpu:.2f} "
            f"| {1000 * cpu / len(items):.1f} | {p50:.2f} |"
        )
    calls = rows[-1][3]  # the model calls of the last run (every run asks the same questions)
    print(f"\n{calls} model calls a run.\n")
    bare = bare_graph(args.latency)
    time_bare(bare, 10, 10)  # warm-up
    floor = [(limit, *time_bare(bare, len(items), limit)) for limit in (limits[0], limits[-1])]
    print("LangGraph alone (three async nodes that only wait, as the model would, twice a question):\n")
    print("| concurrency | wall (s) | speed-up | CPU per question (ms) |")
    print("|---:|---:|---:|---:|")
    for limit, wall, cpu in floor:
        print(f"| {limit} | {wall:.2f} | {floor[0][1] / wall:.1f}x | {1000 * cpu / len(items):.1f} |")
    print(f"\nMachine: {machine()}\n")
    speedup, bare_speedup = base / rows[-1][1], floor[0][1] / floor[-1][1]
    print(result_line("concurrency", speedup, TARGET_SPEEDUP, unit="x", at_least=True))
    print(result_line("concurrency_vs_bare", speedup / bare_speedup, TARGET_OF_BARE, unit="x", at_least=True))


if __name__ == "__main__":
    main()
