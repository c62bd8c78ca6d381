"""`reflexion eval --workers N`: the questions shared among N processes, so an evaluation uses the machine.

An agent's work between model calls is Python (LangGraph, LangChain, the query's checks), held to
one core by the GIL: with a model that answers at once, one process is the ceiling whatever
`--concurrency` says (96 questions a second with the oracle on the machine of benchmarks/README.md).
Here the parent runs the gold queries into the run's `GoldStore` file and checks the dataset fits
(`graphs.evaluation.evaluate`), then hands every worker a share of the questions (each its own
process, started fresh, with its own connection to the same FalkorDB server, its own model, made
from the model's name, and the gold file to read); each scores its share, `--concurrency` at a
time, and sends every finished question back as it ends, so the parent writes and counts it at
once. A worker that dies (killed, out of memory) stops the run with its exit code within a second.

Workers are used only where they can be: a FalkorDB database (reached by address), a model named
(the oracle, the corrupting and simulated models, or a provider's model from the environment; a
chat model object cannot cross processes), and enough questions (`MIN_SHARE` each) to pay for a
process's start (~1-2 s).
"""

from __future__ import annotations

import multiprocessing
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reflexion_agents.nodes.evaluation.dataset import EvalItem
from reflexion_agents.nodes.evaluation.simulated import Misbehaviour
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.evaluation import QuestionTrace

MIN_SHARE = 50  # questions a worker must have to be worth its start
WORKER_TIMEOUT_S = 24 * 3600.0  # all workers silent this long: taken for stuck (a model's retries are bounded)
LOOK_S = 1.0  # how often, while no question finishes, the workers are checked for one that died


@dataclass(frozen=True)
class Share:
    """What one worker scores and how: everything it needs, picklable."""

    database: dict[str, Any]  # FalkorDBGraph's arguments: graph, host, port (and credentials)
    agent: str
    model: str
    items: list[EvalItem]
    gold_file: str  # the run's `GoldStore`, which every worker reads
    kinds: list[str | None]
    concurrency: int
    max_steps: int
    query_timeout: float
    trust_non_empty_result: bool
    misbehaviour: Misbehaviour | None


def workers_for(requested: int, questions: int, db: Any, chat: Any) -> int:
    """How many workers an evaluation gets: those asked for, where they can be used (see above)."""
    if requested <= 1 or chat is not None or not hasattr(db, "connection_args"):
        return 1
    return max(1, min(requested, questions // MIN_SHARE))


def score_in_processes(
    shares: list[Share], on_done: Callable[[QuestionTrace], None], timeout_s: float = WORKER_TIMEOUT_S
) -> None:
    """Every share scored in a process of its own; `on_done` sees each question as it finishes (and
    is the only one to: nothing is kept here)."""
    context = multiprocessing.get_context("spawn")  # a fork would copy the parent's threads and sockets
    finished: Any = context.Queue()
    workers = [context.Process(target=_score_share, args=(share, finished), daemon=True) for share in shares]
    for worker in workers:
        worker.start()
    running, silent_since = len(workers), time.monotonic()
    try:
        while running:
            try:
                kind, payload = finished.get(timeout=LOOK_S)
            except queue.Empty:
                dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
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
    finally:
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()


def _score_share(share: Share, finished: Any) -> None:
    """A worker: score the share, each finished question sent back at once."""
    import asyncio

    try:
        asyncio.run(_score_all(share, lambda trace: finished.put(("trace", trace.model_dump_json()))))
        finished.put(("done", None))
    except BaseException as e:  # said to the parent, which stops the run
        finished.put(("error", f"{type(e).__name__}: {e}"))


async def _score_all(share: Share, sent: Callable[[QuestionTrace], None]) -> None:
    import asyncio
    import gc

    from reflexion_agents.graphs.evaluation import Contestant, EvalLimits, chat_for, score_question, scored_in_turn
    from reflexion_agents.nodes.evaluation.gold_store import GoldStore
    from reflexion_agents.nodes.graphdb.falkordb_graph import FalkorDBGraph

    db = FalkorDBGraph(**share.database)
    chat = chat_for(share.model)
    limits = EvalLimits(share.max_steps, share.query_timeout, share.trust_non_empty_result)
    contestant = await asyncio.to_thread(Contestant, share.agent, chat, db, limits)
    gc.freeze()  # the worker's set-up lives to its end: full collections need not walk it
    gate = asyncio.Semaphore(share.concurrency)
    with GoldStore(share.gold_file) as gold:

        async def one(fault: str | None, item: EvalItem) -> QuestionTrace:
            return await score_question(contestant, item, gold[item.index], fault, gate, share.misbehaviour)

        pairs = [(fault, item) for fault in share.kinds for item in share.items]
        await scored_in_turn(pairs, share.concurrency, one, sent)
