"""`reflexion eval --workers N`: the questions taken by N processes, so an evaluation uses the machine.

An agent's work between model calls is Python (LangGraph, LangChain, the query's checks), held to
one core by the GIL: with a model that answers at once, one process is the ceiling whatever
`--concurrency` says. So N - 1 helper processes score questions beside the command's own process.

A helper is a fresh Python process (`spawn`: a fork would copy the parent's threads and sockets),
and starting one (imports, its agent, its connection) takes 1.5-3 s, about as long as scoring a
few hundred questions with an instant model. So the helpers are started first (`WorkerPool`), and
import while the command runs the gold queries; they then get the plan (`WorkPlan`: the questions,
the model's name, the database's address, the gold file) and take the questions a few at a time
from one counter they share with the command (`PairCursor`), which scores too from the moment its
gold queries are done. No process waits for another's share: whoever is free takes the next
questions. Every finished question is sent back at once, so the command writes and counts it as it
ends. A helper that dies (killed, out of memory) stops the run with its exit code within a second.

Helpers are used only where they can be: a FalkorDB database (reached by address), a model named
(the oracle, the corrupting and simulated models, or a provider's model from the environment; a
chat model object cannot cross processes), and enough questions (`MIN_SHARE` a process) to pay
for a process's start.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reflexion_agents.nodes.evaluation.dataset import EvalItem
from reflexion_agents.nodes.evaluation.simulated import Misbehaviour
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.evaluation import QuestionTrace

MIN_SHARE = 50  # questions a process must have to be worth its start
WORKER_TIMEOUT_S = 24 * 3600.0  # all helpers silent this long: taken for stuck (a model's retries are bounded)
LOOK_S = 1.0  # how often, while no question finishes, the helpers are checked for one that died
TAKEN_AT_ONCE = 4  # questions a process takes from the shared counter at a time

Pair = tuple[str | None, EvalItem]  # (the fault a corrupting model makes, the question)


@dataclass(frozen=True)
class WorkPlan:
    """What every helper scores and how: everything it needs, picklable."""

    database: dict[str, Any]  # FalkorDBGraph's arguments: graph, host, port (and credentials)
    agent: str
    model: str
    items: list[EvalItem]
    gold_file: str  # the run's `GoldStore`, which every process reads
    kinds: list[str | None]
    concurrency: int
    max_steps: int
    query_timeout: float
    trust_non_empty_result: bool
    misbehaviour: Misbehaviour | None

    def pairs(self) -> list[Pair]:
        """Every (fault, question) to score, in the report's order."""
        return [(fault, item) for fault in self.kinds for item in self.items]


def workers_for(requested: int, questions: int, db: Any, chat: Any) -> int:
    """How many processes an evaluation gets: those asked for, where they can be used (see above)."""
    if requested <= 1 or chat is not None or not hasattr(db, "connection_args"):
        return 1
    return max(1, min(requested, questions // MIN_SHARE))


class PairCursor:
    """The next question to score, one counter shared by every process of the run."""

    def __init__(self, counter: Any) -> None:
        self.counter = counter  # a `multiprocessing.Value`, in memory the processes share

    def taken(self, pairs: Sequence[Pair]) -> Iterator[Pair]:
        """The pairs this process takes, a few at a time, until none is left. One iterator serves all
        of a process's concurrent tasks (they take from it in turn, on one event loop)."""
        while True:
            with self.counter.get_lock():
                start = self.counter.value
                self.counter.value = start + TAKEN_AT_ONCE
            if start >= len(pairs):
                return
            yield from pairs[start : start + TAKEN_AT_ONCE]


class WorkerPool:
    """`helpers` processes, started at once and idle until `plan` gives them work (or none)."""

    def __init__(self, helpers: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.cursor = PairCursor(context.Value("q", 0))
        self._plans: Any = context.Queue()
        self._finished: Any = context.Queue()
        self._stop = threading.Event()
        self._planned = 0
        self._collected = False
        self.workers = [
            context.Process(target=_work, args=(self._plans, self._finished, self.cursor.counter), daemon=True)
            for _ in range(helpers)
        ]
        for worker in self.workers:
            worker.start()

    def plan(self, plan: WorkPlan | None, helpers: int) -> None:
        """Give the first `helpers` processes `plan`; the others are told to end."""
        self._planned = min(helpers, len(self.workers)) if plan is not None else 0
        for n in range(len(self.workers)):
            self._plans.put(plan if n < self._planned else None)

    def collect(self, on_done: Callable[[QuestionTrace], None], timeout_s: float = WORKER_TIMEOUT_S) -> None:
        """Hand `on_done` every question the planned helpers finish, until each has said it is done."""
        running, silent_since = self._planned, time.monotonic()
        while running and not self._stop.is_set():
            try:
                kind, payload = self._finished.get(timeout=LOOK_S)
            except queue.Empty:
                dead = [w.exitcode for w in self.workers if w.exitcode not in (None, 0)]
                if dead:  # killed (out of memory, a signal) or failed before it could say so
                    raise ConfigurationError(f"an evaluation worker died (exit code {dead[0]})") from None
                if time.monotonic() - silent_since > timeout_s:
                    raise ConfigurationError(f"an evaluation worker said nothing for {timeout_s:.0f} s") from None
                continue
            silent_since = time.monotonic()
            if kind == "trace":
                on_done(QuestionTrace.model_validate_json(payload))
            elif kind == "done":
                running -= 1
            else:
                raise ConfigurationError(f"an evaluation worker failed: {payload}")
        self._collected = not running

    def close(self) -> None:
        """End every helper: those never planned are told to end; when the run did not finish (it
        failed, or was cancelled), those still scoring are terminated at once."""
        self._stop.set()
        if not self._planned:
            for _ in self.workers:
                self._plans.put(None)
        finished = self._collected or not self._planned
        for worker in self.workers:
            worker.join(timeout=5 if finished else 0.1)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=5)
        if not finished:  # a plan no helper read would hold this process at its exit, flushing to no one
            self._plans.cancel_join_thread()
            self._finished.cancel_join_thread()


def _work(plans: Any, finished: Any, counter: Any) -> None:
    """A helper: wait for the plan, then score questions from the shared counter, each finished one
    sent back at once."""
    import asyncio

    try:
        plan = plans.get()
        if plan is None:
            return
        asyncio.run(
            _score_taken(plan, PairCursor(counter), lambda trace: finished.put(("trace", trace.model_dump_json())))
        )
        finished.put(("done", None))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the command reports it, once;
        raise SystemExit(130) from None  # a helper interrupted alone still ends as one that died
    except BaseException as e:  # said to the parent, which stops the run
        finished.put(("error", f"{type(e).__name__}: {e}"))


async def _score_taken(plan: WorkPlan, cursor: PairCursor, sent: Callable[[QuestionTrace], None]) -> None:
    import asyncio
    import gc

    from reflexion_agents.graphs.evaluation import Contestant, EvalLimits, chat_for, score_question, scored_in_turn
    from reflexion_agents.nodes.evaluation.gold_store import GoldStore
    from reflexion_agents.nodes.graphdb.falkordb_graph import FalkorDBGraph

    db = FalkorDBGraph(**plan.database)
    chat = chat_for(plan.model)
    limits = EvalLimits(plan.max_steps, plan.query_timeout, plan.trust_non_empty_result)
    contestant = await asyncio.to_thread(Contestant, plan.agent, chat, db, limits)
    gc.freeze()  # the helper's set-up lives to its end: full collections need not walk it
    gate = asyncio.Semaphore(plan.concurrency)
    with GoldStore(plan.gold_file) as gold:

        async def one(fault: str | None, item: EvalItem) -> QuestionTrace:
            return await score_question(contestant, item, gold[item.index], fault, gate, plan.misbehaviour)

        await scored_in_turn(cursor.taken(plan.pairs()), plan.concurrency, one, sent)
