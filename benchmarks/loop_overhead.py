"""Framework overhead per draft, execute, revise iteration, against the cost of the query itself.

    python -m benchmarks.loop_overhead [--iterations 10] [--runs 20]

A scripted model with no latency drives the Reflexion loop for `--iterations` queries per run on
the movies graph. The wall time per iteration is split into the database's time for the query,
the scripted model's own time to reply, and the rest: LangGraph, LangChain's model plumbing, the
agent's nodes (prompt building, reply parsing, state updates) and the checkpointer. Two queries
(a point lookup and an aggregation over every ACTED_IN relationship) and three checkpointers
(none, in memory, SQLite: the agents' default) show what dominates.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.harness import TimedDatabase, loop_script, machine, movies_database
from graphs.kg_query_agent import KGQueryReflexionAgent
from nodes.checkpoints import sqlite_checkpointer
from nodes.models import ScriptedChatModel

QUERIES = {
    "point lookup": (
        "MATCH (m:Movie {{title: 'The Matrix'}}) RETURN m.title AS title, m.released AS released, {i} AS run"
    ),
    "aggregation": (
        "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) "
        "RETURN p.name AS name, count(m) AS movies, {i} AS run ORDER BY movies DESC LIMIT 20"
    ),
}


class TimedScriptedModel(ScriptedChatModel):
    """The scripted model with the time of its own replies added up."""

    reply_s: float = 0.0

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return super()._generate(*args, **kwargs)
        finally:
            self.reply_s += time.perf_counter() - started


def checkpointers(folder: Path) -> dict[str, Any]:
    return {
        "none": lambda: None,
        "in memory": InMemorySaver,
        "SQLite (default)": lambda: sqlite_checkpointer(folder / "threads.sqlite"),
    }


def measure(db: Any, query: str, saver: Any, iterations: int, runs: int) -> tuple[float, float, float]:
    """Milliseconds per iteration: (wall, database, scripted model), medians over `runs`."""
    timed = TimedDatabase(db)
    model = TimedScriptedModel()
    agent = KGQueryReflexionAgent(  # one agent for every run: its schema prompt is read once, as in a service
        conversation_factory=lambda: model,
        database=timed,
        max_steps=iterations,
        checkpointer=saver,
        trust_non_empty_result=False,
    )
    walls, queries, replies = [], [], []
    for run in range(runs + 1):
        model.replies, model.calls, model.reply_s = (
            loop_script([query.format(i=run * 1000 + i) for i in range(iterations)]),
            [],
            0.0,
        )
        timed.query_s = 0.0
        started = time.perf_counter()
        result = agent.execute("Which movies?")
        wall = time.perf_counter() - started
        assert result.steps == iterations, (result.stop_reason, result.error)
        if run:  # the first run compiles the graph and reads the schema: warm-up
            walls.append(wall), queries.append(timed.query_s), replies.append(model.reply_s)
    per = lambda values: 1000 * statistics.median(values) / iterations  # noqa: E731
    return per(walls), per(queries), per(replies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(
        "| query | checkpointer | per iteration (ms) | database query (ms) | scripted model (ms) | framework (ms) "
        "| framework share |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    with movies_database() as db, tempfile.TemporaryDirectory() as folder:
        for name, query in QUERIES.items():
            for saver_name, make in checkpointers(Path(folder)).items():
                wall, query_ms, model_ms = measure(db, query, make(), args.iterations, args.runs)
                framework = wall - query_ms - model_ms
                print(
                    f"| {name} | {saver_name} | {wall:.2f} | {query_ms:.2f} | {model_ms:.2f} | {framework:.2f} "
                    f"| {framework / wall:.0%} |"
                )
    print(f"\n{args.iterations} iterations a run (draft or revision, then the query), median of {args.runs} runs.")
    print(f"Machine: {machine()}")


if __name__ == "__main__":
    main()
