"""100 questions with a simulated model latency of 200 ms: concurrent (async) against sequential.

    python -m benchmarks.concurrency [--questions 100] [--latency 0.2] [--limits 1,4,8,16,32,100]

Two targets: 100 questions at once finish at least 50 times sooner than one at a time, and the
agent's speed-up is at least 0.9 of a bare LangGraph graph's doing the same work, run the same way
in the same process (the most the framework allows).

The oracle model (the gold query at every step, see nodes/evaluation/oracle.py) waits `--latency`
seconds per call, as a remote model would, without using the CPU (`asyncio.sleep`). The first
`--questions` runnable movies questions are answered by the Reflexion agent as `reflexion eval`
runs it (`Contestant`), at each concurrency limit; limit 1 is the sequential baseline. Every answer
must be the gold one.

The bare graph (`bare_graph`) is the agent's loop as anyone would write it in plain LangGraph: the
same four nodes, the same model asked through LangChain for the same structured steps, the same
queries on the same database adapter, as many queries a question as the agent ran (9 of the first
100 questions ask for a property the graph lacks: the agent's schema check has it ask once more).
What the agent costs beyond it is the framework's. A graph whose nodes only wait is shown too: no
agent that asks a model and reads a database reaches its speed-up.

Both run as `reflexion eval` runs the agent: the set-up (the dataset, the gold results, the agent,
the bare graph) frozen out of the garbage collector's full collections (`gc.freeze`) before the
questions; a full collection walking it took ~0.1 s, a tenth of a run at 100 at once, landing on
one side or the other by chance. Every limit but the first runs `--rounds` times, the agent and
the bare graph in turns, and the median wall and CPU time of each side is shown. "Model-bound" is
the time the model's latency alone imposes at that limit (the longest question's waits, at least);
the rest is CPU work and waiting for the database. CPU is process time (all threads), shown per
question.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from benchmarks.harness import machine, movies_database, result_line
from reflexion_agents.graphs.evaluation import (
    EVAL_MAX_STEPS,
    EVAL_QUERY_TIMEOUT_S,
    EVAL_ROW_CAP,
    Contestant,
    EvalLimits,
)
from reflexion_agents.nodes.evaluation.dataset import EvalItem, load_dataset
from reflexion_agents.nodes.evaluation.gold import GoldResult, run_gold
from reflexion_agents.nodes.evaluation.oracle import GoldChatModel, gold_run, scoring
from reflexion_agents.nodes.evaluation.scoring import rows_match
from reflexion_agents.schemas.evaluation import AgentAnswer
from reflexion_agents.schemas.kg_query import GenerateQuery, ReviseQuery

TARGET_SPEEDUP = 50.0  # the last limit against the first
TARGET_OF_BARE = 0.9  # the agent's speed-up against the bare graph's

#: One side of the comparison: answers a question, in the config the oracle reads its run from.
Answer = Callable[[str, Any], Awaitable[AgentAnswer]]


class SlowGoldModel(GoldChatModel):
    """The oracle, answering after `latency_s` like a model behind an API. `run_manager` is named, as
    LangChain hands it only to a `_generate` that names it: the oracle reads its run from it."""

    latency_s: float = 0.2
    calls: int = 0  # every call answered, whichever side asked

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        time.sleep(self.latency_s)
        self.calls += 1
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        await asyncio.sleep(self.latency_s)
        self.calls += 1
        return super()._generate(messages, stop, run_manager, **kwargs)


class _Waits(TypedDict):
    steps: int


def waiting_graph(latency_s: float) -> Any:
    """LangGraph alone, doing nothing but the two model waits a question costs (draft and revise),
    as async nodes: the speed-up LangGraph allows when the nodes cost nothing. Shown, not a target:
    no agent that asks a model through LangChain and reads a database gets there."""

    async def draft(state: _Waits) -> dict[str, int]:
        await asyncio.sleep(latency_s)
        return {"steps": 0}

    async def execute_tool(state: _Waits) -> dict[str, int]:
        return {"steps": state["steps"] + 1}

    async def revise(state: _Waits) -> dict[str, int]:
        await asyncio.sleep(latency_s)
        return {}

    builder = StateGraph(_Waits)
    for name, node in (("draft", draft), ("execute_tool", execute_tool), ("revise", revise)):
        builder.add_node(name, node)
    builder.add_edge(START, "draft")
    builder.add_conditional_edges("draft", lambda s: "execute_tool")
    builder.add_conditional_edges("execute_tool", lambda s: "revise")
    builder.add_conditional_edges("revise", lambda s: END)
    return builder.compile()


class _Asked(TypedDict, total=False):
    messages: Annotated[list[BaseMessage], add_messages]
    query: str
    columns: list[str]
    rows: list[list[Any]]
    error: str | None
    score: float
    steps: int
    limit: int


def bare_graph(model: Any, db: Any, steps: dict[str, int]) -> Answer:
    """The agent's loop written as anyone would write it in plain LangGraph: the same four nodes and
    routes, the same chat model asked through LangChain for the same structured steps (the draft and
    the revisions), the same database adapter running each query in a worker thread, the messages
    kept with `add_messages`, and as many queries a question as the agent ran on it (`steps`, by
    question: where the agent's schema check finds a property the graph lacks, it asks once more), so
    both make the same model calls. What the agent costs beyond it is its own: the prompt and the
    schema, the tool binding and reply parsing with retries, the query's checks, the stop rules, a
    wider state (the answer's typed fields) and the typed result."""
    drafts, revisions = model.bind_tools([GenerateQuery]), model.bind_tools([ReviseQuery])

    async def draft(state: _Asked) -> _Asked:
        reply = await drafts.ainvoke(state["messages"])
        limit = steps[str(state["messages"][0].content)]
        return {"messages": [reply], "query": reply.tool_calls[0]["args"]["answer"], "steps": 0, "limit": limit}

    async def execute_tool(state: _Asked) -> _Asked:
        call = state["messages"][-1].tool_calls[0]
        try:
            result = await asyncio.to_thread(db.query, state["query"], row_cap=EVAL_ROW_CAP)
            shown, columns, rows, error = str(result.rows[:20]), result.columns, result.rows, None
        except Exception as e:  # the database's error is what the model reads next
            shown, columns, rows, error = str(e), [], [], str(e)
        message = ToolMessage(shown, tool_call_id=call["id"])
        return {"messages": [message], "columns": columns, "rows": rows, "error": error, "steps": state["steps"] + 1}

    async def revise(state: _Asked) -> _Asked:
        reply = await revisions.ainvoke(state["messages"])
        args = reply.tool_calls[0]["args"]
        return {"messages": [reply], "query": args["revised_query"], "score": float(args["score"])}

    def reply(state: _Asked) -> _Asked:
        answer = f"{len(state['rows'])} rows: {state['rows'][:5]}" if not state["error"] else state["error"]
        return {"messages": [AIMessage(answer)]}

    def after_revise(state: _Asked) -> str:
        return "reply" if state["steps"] >= state["limit"] else "execute_tool"

    builder = StateGraph(_Asked)
    for name, node in (("draft", draft), ("execute_tool", execute_tool), ("revise", revise), ("reply", reply)):
        builder.add_node(name, node)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "execute_tool")
    builder.add_edge("execute_tool", "revise")
    builder.add_conditional_edges("revise", after_revise, ["execute_tool", "reply"])
    builder.add_edge("reply", END)
    compiled = builder.compile()

    async def answer(question: str, config: Any) -> AgentAnswer:
        state = await compiled.ainvoke({"messages": [HumanMessage(question)]}, config)
        return AgentAnswer(
            cypher=state["query"],
            columns=state["columns"],
            rows=state["rows"],
            executed=not state["error"],
            steps=state["steps"],
            llm_calls=state["steps"] + 1,
        )

    return answer


def drive(
    answer: Answer, items: list[EvalItem], gold: dict[int, GoldResult], limit: int
) -> tuple[float, float, list[AgentAnswer]]:
    """(wall, CPU) seconds for `answer` to answer every item, at most `limit` at a time, as the
    evaluation harness drives an agent (the oracle finds each question's run in the call's config);
    and the answers. Every answer must be the gold one: both sides do the whole work."""

    async def all_runs() -> list[AgentAnswer]:
        gate = asyncio.Semaphore(limit)

        async def one(item: EvalItem) -> AgentAnswer:
            async with gate:
                with scoring(gold_run(item.question, item.cypher)) as config:  # type: ignore[arg-type]
                    return await answer(item.question, config)

        return await asyncio.gather(*(one(item) for item in items))

    cpu, wall = time.process_time(), time.perf_counter()
    answers = asyncio.run(all_runs())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for item, got in zip(items, answers, strict=True):
        expected = gold[item.index]
        assert rows_match(item.cypher, expected.columns, expected.rows, got.columns, got.rows), (item, got)
    return wall, cpu, answers


def time_waits(graph: Any, questions: int, limit: int) -> tuple[float, float]:
    """(wall, CPU) seconds for `questions` runs of the waiting graph, at most `limit` at a time."""

    async def all_runs() -> None:
        gate = asyncio.Semaphore(limit)

        async def one() -> None:
            async with gate:
                await graph.ainvoke({"steps": 0})

        await asyncio.gather(*(one() for _ in range(questions)))

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(all_runs())
    return time.perf_counter() - wall, time.process_time() - cpu


def runnable_questions(db: Any, count: int) -> tuple[list[EvalItem], dict[int, GoldResult]]:
    """The first `count` movies questions whose gold query runs, and every gold result."""
    items = load_dataset()
    gold = run_gold(db, items, timeout=10, row_cap=EVAL_ROW_CAP)
    return [item for item in items if not gold[item.index].error][:count], gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limits", default="1,4,8,16,32,100", help="concurrency limits; the first is the baseline")
    parser.add_argument("--rounds", type=int, default=7, help="runs a side at each limit but the first (the median)")
    args = parser.parse_args()
    limits = [int(n) for n in args.limits.split(",")]
    rows: dict[str, list[tuple[int, float, float, int]]] = {"agent": [], "bare": []}
    with movies_database() as db:
        items, gold = runnable_questions(db, args.questions)
        model = SlowGoldModel(latency_s=args.latency)
        limits_of_eval = EvalLimits(EVAL_MAX_STEPS, EVAL_QUERY_TIMEOUT_S)
        agent = Contestant("reflexion", model, db, limits_of_eval).answer
        _, _, answers = drive(agent, items, gold, len(items))  # a warm-up, and the queries it runs a question
        most_calls = max(a.llm_calls for a in answers)  # the longest question's model waits
        bare = bare_graph(model, db, {item.question: a.steps for item, a in zip(items, answers, strict=True)})
        drive(bare, items[:4], gold, 4)
        gc.freeze()  # as `reflexion eval` does before its questions: a full collection walks the set-up no more
        for limit in limits:  # the two take turns, so a slower minute slows both
            runs: dict[str, list[tuple[float, float, int]]] = {"agent": [], "bare": []}
            for _ in range(1 if limit == limits[0] else args.rounds):  # the sequential baseline is long enough
                for side, answer in (("agent", agent), ("bare", bare)):
                    asked = model.calls
                    wall, cpu, _ = drive(answer, items, gold, limit)
                    runs[side].append((wall, cpu, model.calls - asked))  # calls counted by the model
            for side, measured in runs.items():
                walls, cpus = sorted(m[0] for m in measured), sorted(m[1] for m in measured)
                rows[side].append((limit, walls[len(walls) // 2], cpus[len(cpus) // 2], measured[-1][2]))
    print(f"{len(items)} questions, {args.latency * 1000:.0f} ms per model call, every answer the gold one:\n")
    print(
        "| concurrency | agent wall (s) | questions/s | speed-up | model-bound (s) | CPU per question (ms) "
        "| bare wall (s) | bare speed-up | bare CPU per question (ms) | agent's speed-up / bare's |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base, bare_base = rows["agent"][0][1], rows["bare"][0][1]
    for (limit, wall, cpu, calls), (_, bare_wall, bare_cpu, _) in zip(rows["agent"], rows["bare"], strict=True):
        bound = max(math.ceil(len(items) / limit) * calls / len(items), most_calls) * args.latency
        print(
            f"| {limit} | {wall:.2f} | {len(items) / wall:.1f} | {base / wall:.1f}x | {bound:.1f} "
            f"| {1000 * cpu / len(items):.1f} | {bare_wall:.2f} | {bare_base / bare_wall:.1f}x "
            f"| {1000 * bare_cpu / len(items):.1f} | {(base / wall) / (bare_base / bare_wall):.2f} |"
        )
    print(f"\nModel calls a run: agent {rows['agent'][-1][3]}, bare graph {rows['bare'][-1][3]}.\n")
    waiting = waiting_graph(args.latency)
    time_waits(waiting, 10, 10)  # warm-up
    floor = [(limit, *time_waits(waiting, len(items), limit)) for limit in (limits[0], limits[-1])]
    print("LangGraph with nodes that only wait, as the model would, twice a question (no model, no database):\n")
    print("| concurrency | wall (s) | speed-up | CPU per question (ms) |")
    print("|---:|---:|---:|---:|")
    for limit, wall, cpu in floor:
        print(f"| {limit} | {wall:.2f} | {floor[0][1] / wall:.1f}x | {1000 * cpu / len(items):.1f} |")
    print(f"\nMachine: {machine()}\n")
    speedup, bare_speedup = base / rows["agent"][-1][1], bare_base / rows["bare"][-1][1]
    print(result_line("concurrency", speedup, TARGET_SPEEDUP, unit="x", at_least=True))
    print(result_line("concurrency_vs_bare", speedup / bare_speedup, TARGET_OF_BARE, unit="x", at_least=True))


if __name__ == "__main__":
    main()
