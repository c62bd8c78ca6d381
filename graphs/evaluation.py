"""`reflexion eval`: run an agent or flow over (question, gold Cypher) pairs and score execution accuracy.

    report = await evaluate(agent="retry_evaluate", model="oracle", items=load_dataset(), db=db)

Every gold query runs first on the same database (read-only); those the backend cannot run are
reported and excluded. Then the questions run concurrently (asyncio, at most `concurrency` at a
time), each scored by `nodes.evaluation.scoring.rows_match`. `model` is "oracle", "corrupt" (every
fault kind in turn) or a chat model name such as "openai:gpt-4o-mini".
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sized
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig

from reflexion_agents.graphs.eval_processes import WorkerPool, WorkPlan, workers_for
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.runner import Runner, RunTarget
from reflexion_agents.graphs.text2cypher_flow import FLOWS, Text2CypherFlow
from reflexion_agents.nodes.evaluation.dataset import EvalItem
from reflexion_agents.nodes.evaluation.faults import FAULTS
from reflexion_agents.nodes.evaluation.fit import dataset_fit
from reflexion_agents.nodes.evaluation.gold import GoldResult, run_gold
from reflexion_agents.nodes.evaluation.gold_store import GoldStore
from reflexion_agents.nodes.evaluation.oracle import GoldChatModel, GoldRun, gold_run, scoring
from reflexion_agents.nodes.evaluation.report import ReportTally
from reflexion_agents.nodes.evaluation.scoring import rows_match
from reflexion_agents.nodes.evaluation.simulated import Misbehaviour, SimulatedChatModel, simulated_run
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase, graph_name
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.schemas.constants import (
    EVAL_MAX_STEPS as EVAL_MAX_STEPS,  # the CLI's parser shows them without this module
)
from reflexion_agents.schemas.constants import EVAL_QUERY_TIMEOUT_S as EVAL_QUERY_TIMEOUT_S
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.evaluation import AgentAnswer, EvaluationReport, QuestionTrace
from reflexion_agents.schemas.run_result import QueryAnswer
from reflexion_agents.schemas.text2cypher import Flow

GOLD_MODELS = ("oracle", "corrupt", "simulated")
EVAL_ROW_CAP = 10_000  # gold and answers share one cap; a gold result above it is excluded


def _reflexion_agent(chat: Any, db: GraphDatabase, limits: EvalLimits) -> RunTarget[Any]:
    return KGQueryReflexionAgent(
        conversation_factory=lambda: chat,
        database=db,
        max_steps=limits.max_steps,
        checkpointer=None,
        row_cap=EVAL_ROW_CAP,
        query_timeout=limits.query_timeout,
        trust_non_empty_result=limits.trust_non_empty_result,
    ).runner.target


def _flow(flow: Flow, chat: Any, db: GraphDatabase, limits: EvalLimits) -> RunTarget[Any]:
    # the movies examples would show a flow the gold answers: the store starts empty and learns nothing
    return Text2CypherFlow(
        flow,
        conversation_factory=lambda: chat,
        database=db,
        fewshots=False,
        checkpointer=None,
        row_cap=EVAL_ROW_CAP,
        query_timeout=limits.query_timeout,
        learn=False,
    )


@dataclass(frozen=True)
class EvalLimits:
    max_steps: int
    query_timeout: float
    trust_non_empty_result: bool = True


#: What `agent` may name: each builds its agent or flow for the evaluation (no checkpoints, a wide row cap).
EVALUATED: dict[str, Callable[[Any, GraphDatabase, EvalLimits], RunTarget[Any]]] = {
    "reflexion": _reflexion_agent,
    **{flow: partial(_flow, flow) for flow in FLOWS},
}
AGENTS = tuple(EVALUATED)


class Contestant:
    """One agent or flow shared by every question of the evaluation, answering one question."""

    def __init__(self, agent: str, chat: Any, db: GraphDatabase, limits: EvalLimits) -> None:
        if agent not in EVALUATED:
            raise ConfigurationError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
        self.runner = Runner(EVALUATED[agent](chat, db, limits))

    async def answer(self, question: str, config: RunnableConfig | None = None) -> AgentAnswer:
        # the Reflexion agent's schema prompt is read once, then cached
        result = await self.runner.aask(question, config=config)
        return answer_of(result)


def answer_of(result: Any) -> AgentAnswer:
    """What the evaluation scores of a result that answers with a query (`schemas.run_result.QueryAnswer`)."""
    answer: QueryAnswer = result
    return AgentAnswer(
        cypher=answer.query,
        columns=result.columns,
        rows=answer.query_rows,
        executed=answer.query_ran,
        stop_reason=result.stop_reason,
        steps=answer.queries_tried,
        llm_calls=result.usage.llm_calls,
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
        error=result.error,
    )


def chat_for(model: str) -> Any:
    """The chat model `model` names: the oracle, the corrupting or the simulated model, or a provider's."""
    if model == "simulated":
        return SimulatedChatModel()
    return GoldChatModel() if model in GOLD_MODELS else chat_model_from_env(model)


def model_run(item: EvalItem, gold: GoldResult, fault: str | None, misbehaviour: Misbehaviour | None) -> GoldRun | None:
    """What the gold-knowing model knows of one question (`scoring`): the simulated model's run when
    `misbehaviour` is given, else the oracle's or corrupting model's; None when `fault` does not apply."""
    if misbehaviour is not None:
        return simulated_run(item.question, item.cypher, gold.rows, misbehaviour)
    return gold_run(item.question, item.cypher, fault)


async def score_question(
    runner: Contestant,
    item: EvalItem,
    gold: GoldResult,
    fault: str | None,
    gate: asyncio.Semaphore,
    misbehaviour: Misbehaviour | None = None,
) -> QuestionTrace:
    trace = QuestionTrace(
        index=item.index,
        question=item.question,
        type=item.type,
        gold_cypher=item.cypher,
        fault=fault,
        gold_rows=len(gold.rows),
    )
    run = model_run(item, gold, fault, misbehaviour)
    if run is None:
        trace.excluded = f"the fault {fault} does not apply"
        return trace
    if misbehaviour is not None:  # the simulated model's first draft: its mistake, or none
        trace.fault = getattr(run, "fault", None) or "none"
    async with gate:
        started = time.perf_counter()
        with scoring(run) as config:  # the gold model finds the run in the model calls' metadata
            try:
                answer = await runner.answer(item.question, config)
            except Exception as e:
                answer = AgentAnswer(error=f"{type(e).__name__}: {e}", stop_reason="crashed")
        trace.latency_s = time.perf_counter() - started
    trace.answer = answer
    trace.correct = answer.executed and rows_match(item.cypher, gold.columns, gold.rows, answer.columns, answer.rows)
    return trace


async def scored_in_turn(
    pairs: Iterable[tuple[str | None, EvalItem]],
    concurrency: int,
    score: Callable[[str | None, EvalItem], Awaitable[QuestionTrace]],
    finished: Callable[[QuestionTrace], None],
) -> None:
    """Every (fault, item) pair scored, `concurrency` at a time, each trace handed to `finished` as it
    ends: as many tasks as may run at once take the next pair in turn, so a run of any length holds
    no more than `concurrency` questions (a task per question, made at the start, would hold them all).
    `pairs` may be an iterator that other processes take from too (`eval_processes.PairCursor`)."""
    waiting = iter(pairs)

    async def in_turn() -> None:
        for fault, item in waiting:
            finished(await score(fault, item))

    tasks = min(concurrency, len(pairs)) if isinstance(pairs, Sized) else concurrency
    await asyncio.gather(*(in_turn() for _ in range(max(1, tasks))))


async def _scored_with(pool: WorkerPool, own: Awaitable[None], finished: Callable[[QuestionTrace], None]) -> None:
    """This process's questions (`own`) scored while the helpers' are collected; a helper that fails
    stops this process's scoring too."""
    scoring = asyncio.ensure_future(own)
    try:
        await asyncio.gather(scoring, asyncio.to_thread(pool.collect, finished))
    finally:
        scoring.cancel()


async def evaluate(
    *,
    agent: str,
    model: str,
    items: list[EvalItem],
    db: GraphDatabase,
    dataset: str = "",
    concurrency: int = 8,
    max_steps: int = EVAL_MAX_STEPS,
    query_timeout: float = EVAL_QUERY_TIMEOUT_S,
    faults: list[str] | None = None,
    chat: Any = None,
    trust_non_empty_result: bool = True,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[QuestionTrace], None] | None = None,
    force: bool = False,
    misbehaviour: Misbehaviour | None = None,
    workers: int = 1,
    keep_traces: bool = True,
) -> EvaluationReport:
    """Score `agent` over `items` (see the module docstring); `on_done` sees each finished question, after
    `on_start` learnt how many will run (the gold queries have run by then).
    `trust_non_empty_result` is the Reflexion agent's stop rule (flows ignore it). A dataset that
    does not fit the graph (`nodes.evaluation.fit`) is refused with `ConfigurationError` unless `force`.
    `misbehaviour` sets the simulated model's rates (its defaults when None). `workers` shares the
    questions among that many processes where it can (`graphs.eval_processes`).

    Memory stays bounded however many questions run: gold results wait on disk (`GoldStore`), at most
    `concurrency` questions are in flight, and the scores are summed as questions finish. With
    `keep_traces=False` the report's `traces` are the excluded questions only, and every scored
    trace is seen by `on_done` alone (`reflexion eval` writes each to a file as it ends)."""
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
    kinds: list[str | None] = [None]
    if model == "corrupt":
        asked = list(faults or FAULTS)
        unknown = set(asked) - set(FAULTS)
        if unknown:
            raise ConfigurationError(f"unknown fault kind(s) {', '.join(sorted(unknown))}; known: {', '.join(FAULTS)}")
        kinds = list(asked)
    if model == "simulated":
        misbehaviour = misbehaviour or Misbehaviour()
    elif misbehaviour is not None:
        raise ConfigurationError("misbehaviour rates apply to the simulated model only")
    started = time.perf_counter()
    # Helper processes import while the gold queries run (`graphs.eval_processes`).
    early = workers_for(workers, len(items) * len(kinds), db, chat)
    pool = WorkerPool(early - 1) if early > 1 else None
    try:
        with GoldStore() as gold:
            await asyncio.to_thread(run_gold, db, items, timeout=query_timeout, row_cap=EVAL_ROW_CAP, into=gold)
            fit = await asyncio.to_thread(dataset_fit, db, items, gold)
            if not fit.fits and not force:
                raise ConfigurationError(fit.explain(str(graph_name(db))))
            limits = EvalLimits(max_steps, query_timeout, trust_non_empty_result)
            excluded, reasons, runnable = [], Counter[str](), []
            for item in items:
                refused = gold[item.index]
                if refused.error is None:
                    runnable.append(item)
                    continue
                excluded.append(
                    QuestionTrace(
                        index=item.index,
                        question=item.question,
                        type=item.type,
                        gold_cypher=item.cypher,
                        excluded=refused.error,
                    )
                )
                reasons[refused.reason or ""] += 1
            processes = min(early, workers_for(workers, len(runnable) * len(kinds), db, chat))
            if on_start is not None:
                on_start(len(runnable) * len(kinds))
            pairs = [(fault, item) for fault in kinds for item in runnable]
            tally = ReportTally(by_fault=model in ("corrupt", "simulated"))
            kept: list[QuestionTrace] = []
            counting = threading.Lock()  # the helpers' questions are counted from another thread

            def finished(trace: QuestionTrace) -> None:
                with counting:
                    tally.add(trace)
                    if keep_traces:
                        kept.append(trace)
                    if on_done is not None:
                        on_done(trace)

            plan = WorkPlan(
                getattr(db, "connection_args", {}),
                agent,
                model,
                runnable,
                str(gold.path),
                kinds,
                concurrency,
                max_steps,
                query_timeout,
                trust_non_empty_result,
                misbehaviour,
            )
            chat = chat if chat is not None else chat_for(model)  # a model that cannot be made stops here
            if pool is not None:
                pool.plan(plan if processes > 1 else None, processes - 1)
            runner = await asyncio.to_thread(Contestant, agent, chat, db, limits)
            gate = asyncio.Semaphore(concurrency)

            async def one(fault: str | None, item: EvalItem) -> QuestionTrace:
                return await score_question(runner, item, gold[item.index], fault, gate, misbehaviour)

            if pool is None or processes == 1:
                await scored_in_turn(pairs, concurrency, one, finished)
            else:  # this process takes questions too, from the counter the helpers share
                await _scored_with(pool, scored_in_turn(pool.cursor.taken(pairs), concurrency, one, finished), finished)
    finally:
        if pool is not None:
            pool.close()
    order = {(fault, item.index): n for n, (fault, item) in enumerate(pairs)}
    kept.sort(key=lambda t: order[t.fault if model == "corrupt" else None, t.index])
    return EvaluationReport(
        agent=agent,
        model=model,
        dataset=dataset,
        backend=db.dialect,
        questions=len(items),
        excluded=len(excluded),
        excluded_reasons=dict(reasons.most_common()),
        not_applicable=tally.not_applicable,
        overall=tally.overall.score("all"),
        by_type=tally.by_type.scores(),
        by_fault=tally.by_fault.scores() if tally.by_fault is not None else [],
        wall_s=time.perf_counter() - started,
        concurrency=concurrency,
        traces=excluded + kept,
        options={
            "max_steps": max_steps,
            "query_timeout": query_timeout,
            "row_cap": EVAL_ROW_CAP,
            "trust_non_empty_result": trust_non_empty_result,
            "faults": [k for k in kinds if k],
            "workers": processes,
            **({"misbehaviour": asdict(misbehaviour)} if misbehaviour is not None else {}),
        },
    )
