"""Framework time per draft/execute/revise iteration, next to a bare three-node LangGraph StateGraph.

    python -m benchmarks.loop_overhead [--iterations 10] [--runs 20]

The target: the loop costs less than 1% of a 200 ms model call (2 ms) per iteration, with the
agents' default checkpointer (SQLite). A model that replies at once (`ScriptedChatModel`) drives
`KGQueryReflexionAgent` through `--iterations` queries per run, and the database replays answers it
recorded from the movies graph (so the database costs nothing: this is the loop alone). Per
iteration, the wall time is split into:

- the model: the scripted model's own reply time, which a real model's network call replaces;
- the database: the adapter's `query`, which replays here;
- the framework: everything else, which is what this measures. LangGraph (scheduling, state
  reducers, the checkpointer), LangChain's chat-model plumbing (callbacks, message conversion),
  and the agent's nodes (prompt building, reply parsing, the write and repeat checks, state updates).

The floor is a bare StateGraph with the agent's four nodes and routes, the same checkpointer and
the same messages: each node appends the next message of a run the agent made (the draft, the tool
result, the revision, ..., the answer), so LangGraph checkpoints and reduces what it does for the
agent. It runs two ways: replaying the model's replies, and asking the same scripted chat model for
them through LangChain's `invoke`, as any LangGraph agent asks its model (LangChain's callbacks and
message handling then count on both sides; the model's own reply time on neither). What the agent
costs beyond the second is its own: the prompt, the tool binding, parsing and validating the reply,
the query's check, the routers' reading of a wider state. CPU time (all threads, the checkpointer's
background writes included) is printed beside the wall time: on a busy machine it is the steadier.

Two targets: the framework costs under 2 ms an iteration (1% of a 200 ms model call), and at most
1.5 times the bare graph's time (calling the model) with the same checkpointer (SQLite, the agents'
default). The replaying bare graph is shown beside it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from benchmarks.harness import loop_script, machine, movies_database, result_line
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.checkpoints import sqlite_checkpointer
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.graphdb import QueryResult

TARGET_MS = 2.0  # 1% of a 200 ms model call
TARGET_RATIO = 1.5  # the framework against the bare graph, same checkpointer and messages
MODEL_CALL_MS = 200
MODEL_NODES = ("draft", "revise")  # the agent's nodes that call the model (`reply` writes the answer)
QUERIES = [
    "MATCH (m:Movie {{title: 'The Matrix'}}) RETURN m.title AS title, m.released AS released, {i} AS attempt",
    "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) RETURN p.name AS name, count(m) AS movies, {i} AS attempt "
    "ORDER BY movies DESC LIMIT 20",
]


class ReplayedDatabase:
    """The movies database with each query's answer recorded on first use and replayed after, so
    the benchmark's database time is a dictionary lookup; `query_s` adds up the time spent in it."""

    def __init__(self, db: Any) -> None:
        self._db, self._answers, self.query_s = db, {}, 0.0
        self.dialect = db.dialect

    def query(self, cypher: str, *args: Any, **kwargs: Any) -> QueryResult:
        started = time.perf_counter()
        try:
            if cypher not in self._answers:
                self._answers[cypher] = self._db.query(cypher, *args, **kwargs)
            return self._answers[cypher]
        finally:
            self.query_s += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


class TimedScriptedModel(ScriptedChatModel):
    """The scripted model with the time of its own replies added up."""

    reply_s: float = 0.0

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return super()._generate(*args, **kwargs)
        finally:
            self.reply_s += time.perf_counter() - started


class _Replay(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


#: A run the agent made, node by node: (the node, the messages it appended).
Run = list[tuple[str, list[BaseMessage]]]


def bare_graph(checkpointer: Any, run: Run, model: TimedScriptedModel | None = None) -> Any:
    """The agent's nodes and routes doing nothing but append the messages the agent's node appended at
    that point of `run`: LangGraph's own cost for the same state, with the same checkpointer. With a
    `model`, the nodes that call the model (`MODEL_NODES`) ask `model` for their reply (`model_replies`)."""
    appended, then, count = {}, {}, 1  # by the number of messages so far: what comes, and which node
    for node, messages in run:
        then[count], appended[count] = node, messages
        count += len(messages)
    then[count] = END

    def replay(state: _Replay) -> dict[str, list[BaseMessage]]:
        count = len(state["messages"])
        messages = appended[count]
        if model is not None and then[count] in MODEL_NODES:
            messages = [model.invoke(state["messages"]), *messages[1:]]
        return {"messages": messages}

    def route(state: _Replay) -> str:
        return then[len(state["messages"])]

    builder = StateGraph(_Replay)
    for name in ("draft", "execute_tool", "revise", "reply"):
        builder.add_node(name, replay)
    builder.add_edge(START, "draft")
    for name in ("draft", "execute_tool", "revise"):
        builder.add_conditional_edges(name, route)
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=checkpointer)


def config(checkpointer: Any, run: int | str) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"bench-{run}"}} if checkpointer is not None else {}


def timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    """(what the call returned, its wall seconds, its CPU seconds)."""
    wall, cpu = time.perf_counter(), time.process_time()
    returned = call()
    return returned, time.perf_counter() - wall, time.process_time() - cpu


def model_replies(run: Run) -> list[AIMessage]:
    """The model's replies in `run`, in order: what the bare graph's model is scripted to say."""
    return [messages[0] for node, messages in run if node in MODEL_NODES and isinstance(messages[0], AIMessage)]


Sample = dict[str, float]  # one run: seconds of wall, CPU, and (the agent's) model and database time


def bare_run(checkpointer: Any, run: Run, question: BaseMessage, *, ask_model: bool) -> Callable[[str], Sample]:
    """One run of the bare graph replaying `run` (asking a scripted model for its replies if
    `ask_model`, whose own reply time is left out), on a thread of its own in a shared file."""
    model = TimedScriptedModel() if ask_model else None
    graph = bare_graph(checkpointer, run, model)
    asked = {"messages": [question]}

    def one(thread: str) -> Sample:
        if model is not None:
            model.replies, model.calls, model.reply_s = model_replies(run), [], 0.0
        _, wall, cpu = timed(lambda: graph.invoke(asked, config(checkpointer, thread)))
        replying = model.reply_s if model is not None else 0.0
        return {"wall": wall - replying, "cpu": cpu - replying}

    return one


def agent_run(db: Any, checkpointer: Any, iterations: int) -> tuple[Callable[[str], Sample], Run, BaseMessage]:
    """One run of the agent (`iterations` queries; the model's and the database's time measured
    apart), and the messages each node appended in a run of it, for the bare graph to replay."""
    replayed, model = ReplayedDatabase(db), TimedScriptedModel()
    agent = KGQueryReflexionAgent(  # one agent for every run, as in a service: its schema is read once
        conversation_factory=lambda: model,
        database=replayed,
        max_steps=iterations,
        checkpointer=checkpointer,
        trust_non_empty_result=False,
    )
    queries = [QUERIES[i % len(QUERIES)].format(i=i) for i in range(iterations)]

    def one(thread: str) -> Sample:
        model.replies, model.calls, model.reply_s, replayed.query_s = loop_script(queries), [], 0.0, 0.0
        result, wall, cpu = timed(lambda: agent.execute("Which movies?"))  # a new thread each time
        assert result.steps == iterations, (result.stop_reason, result.error)
        return {"wall": wall, "cpu": cpu, "model": model.reply_s, "database": replayed.query_s}

    one("warm-up")  # compiles the graph, reads the schema and records the database's answers
    model.replies, model.calls = loop_script(queries), []
    asked = agent.runner.target.question_input("Which movies?")
    updates = agent.graph.stream(asked, config(checkpointer, "messages"), stream_mode="updates")
    run = [(node, update["messages"]) for chunk in updates for node, update in chunk.items() if update.get("messages")]
    assert sum(len(messages) for _, messages in run) > 2 * iterations, run  # the whole run, every step
    return one, run, asked["messages"][0]


def measure(db: Any, make: Callable[[], Any], iterations: int, runs: int) -> dict[str, float]:
    """Milliseconds per iteration, medians over `runs`: the agent's (wall, CPU, model, database,
    framework) and the bare graph's, replaying and asking. The three take turns, run by run, so a
    machine that slows down for a while slows all three alike."""
    agent, run, question = agent_run(db, make(), iterations)
    sides = {
        "agent": agent,
        "replaying": bare_run(make(), run, question, ask_model=False),
        "asking": bare_run(make(), run, question, ask_model=True),
    }
    samples: dict[str, list[Sample]] = {side: [] for side in sides}
    for n in range(runs + 1):
        for side, one in sides.items():
            samples[side].append(one(f"{side}-{n}"))
    for side in samples:
        samples[side] = samples[side][1:]  # the first of each is a warm-up

    def per_iteration(side: str, key: str) -> float:
        return 1000 * statistics.median(s[key] for s in samples[side]) / iterations

    measured = {key: per_iteration("agent", key) for key in ("wall", "cpu", "model", "database")}
    measured["framework"] = (
        1000 * statistics.median((s["wall"] - s["model"] - s["database"]) for s in samples["agent"]) / iterations
    )
    measured["replaying"], measured["asking"] = per_iteration("replaying", "wall"), per_iteration("asking", "wall")
    return measured


def checkpointers(folder: Path) -> dict[str, Callable[[], Any]]:
    return {
        "none": lambda: None,
        "in memory": InMemorySaver,
        "SQLite (default)": lambda: sqlite_checkpointer(folder / "threads.sqlite"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(
        "| checkpointer | bare, replaying (ms) | bare, asking the model (ms) | agent wall / CPU (ms) | model (ms) "
        "| database (ms) | framework (ms) | framework / bare asking | framework / bare replaying "
        "| framework, % of a 200 ms call |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    default_framework, default_ratio = float("nan"), float("nan")
    with movies_database() as db, tempfile.TemporaryDirectory() as folder:
        for name, make in checkpointers(Path(folder)).items():
            agent = measure(db, make, args.iterations, args.runs)
            framework, replaying, asking = agent["framework"], agent["replaying"], agent["asking"]
            print(
                f"| {name} | {replaying:.2f} | {asking:.2f} | {agent['wall']:.2f} / {agent['cpu']:.2f} "
                f"| {agent['model']:.2f} | {agent['database']:.2f} | {framework:.2f} | {framework / asking:.2f}x "
                f"| {framework / replaying:.2f}x | {framework / MODEL_CALL_MS:.2%} |"
            )
            if name.endswith("(default)"):
                default_framework, default_ratio = framework, framework / asking
    print(f"\n{args.iterations} iterations a run (a draft or revision, then the query), medians of {args.runs} runs.")
    print(f"Machine: {machine()}\n")
    print(result_line("loop_overhead", default_framework, TARGET_MS, unit="ms"))
    print(result_line("loop_overhead_vs_bare", default_ratio, TARGET_RATIO, unit="x"))


if __name__ == "__main__":
    main()
