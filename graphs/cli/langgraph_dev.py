"""`langgraph dev`, as `reflexion serve` starts it: LangGraph's development server, whose queue starts a
run as soon as it is created instead of at its next look.

LangGraph's in-memory runtime (`langgraph_runtime_inmem`) has no way to tell its queue that a run
arrived: the queue looks for pending runs every 0.5 s when it found none the last time, and only
takes the runs created before that wait began. So a run waits 0.5-1 s before it starts, whatever the
load: 50 REST clients with a 200 ms model got ~28 runs/s, each run waiting ~1 s in line for a job
that was free (`python -m benchmarks.server_throughput`). Here the runtime's queue is told: creating
a run, and ending one (which frees its thread for the runs queued behind it), wakes the queue, which
then looks at once. The periodic look stays as the fallback (runs scheduled for later, anything
not announced), every `REFLEXION_SERVER_POLL_S` seconds (default 0.5, LangGraph's own).

Nothing else of the server changes: the same command line (`python -m
reflexion_agents.graphs.cli.langgraph_dev dev ...` takes `langgraph dev`'s options), the same API, the
same store. With `--reload` the server runs in a child process that LangGraph starts: its queue is
LangGraph's own. Where the runtime's queue has another shape (another version), it is left as it is
and the server says so on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

POLL_VARIABLE = "REFLEXION_SERVER_POLL_S"
DEFAULT_POLL_S = 0.5


class RunArrivals:
    """A wake-up call for the queue: `arrived()` from any thread or loop, `wait(timeout)` in the
    queue's loop. A call that comes while the queue looks is kept for its next wait, so none is lost."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def arrived(self) -> None:
        if self._event is None or self._loop is None:
            return  # the queue has not waited yet: it looks at its first pass anyway
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._event.set()
        else:  # a run created from another loop (a graph run on a loop of its own)
            with contextlib.suppress(RuntimeError):  # the queue's loop closed: the server is stopping
                self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout_s: float) -> None:
        """Until a run arrives or `timeout_s` passes; then the calls so far are spent."""
        if self._event is None:
            self._loop, self._event = asyncio.get_running_loop(), asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), timeout_s)
        self._event.clear()


def poll_seconds(environ: dict[str, str] | None = None) -> float:
    """How often the queue looks without being told: `REFLEXION_SERVER_POLL_S`, a positive number."""
    raw = (os.environ if environ is None else environ).get(POLL_VARIABLE, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_POLL_S
    except ValueError:
        value = 0.0
    if not value > 0:
        raise SystemExit(f"{POLL_VARIABLE} must be a number of seconds above 0, got {raw!r}")
    return value


def wake_queue_on_new_runs(runs: Any, threads: Any, poll_s: float) -> RunArrivals:
    """Teach the runtime's `Runs.next` to wait for `RunArrivals` (at most `poll_s`) instead of sleeping
    0.5 s, and `Runs.put` / `Threads.set_joint_status` to announce a run created / ended.
    `runs` and `threads` are the runtime's `Runs` and `Threads` classes."""
    arrivals = RunArrivals()
    take_next, put, set_joint_status = runs.next, runs.put, threads.set_joint_status

    async def next_run(wait: bool, limit: int = 1) -> AsyncIterator[Any]:
        if wait:
            await arrivals.wait(poll_s)
        async for found in take_next(wait=False, limit=limit):
            yield found

    async def put_and_announce(*args: Any, **kwargs: Any) -> Any:
        created = await put(*args, **kwargs)
        arrivals.arrived()
        return created

    async def end_and_announce(*args: Any, **kwargs: Any) -> Any:
        ended = await set_joint_status(*args, **kwargs)
        arrivals.arrived()
        return ended

    runs.next, runs.put = staticmethod(next_run), staticmethod(put_and_announce)
    threads.set_joint_status = staticmethod(end_and_announce)
    return arrivals


def told_queue(poll_s: float) -> bool:
    """Apply `wake_queue_on_new_runs` to the installed in-memory runtime, if it has the expected shape."""
    try:
        from langgraph_runtime_inmem import ops
    except ImportError:
        return False
    runs, threads = getattr(ops, "Runs", None), getattr(ops, "Threads", None)
    needed = ((runs, "next"), (runs, "put"), (threads, "set_joint_status"))
    if not all(callable(getattr(owner, name, None)) for owner, name in needed):
        return False
    wake_queue_on_new_runs(runs, threads, poll_s)
    return True


def main(argv: list[str] | None = None) -> None:
    """`langgraph dev` with the queue told of new runs; `argv` as `langgraph`'s own (`dev --config ...`)."""
    poll_s = poll_seconds()
    if not told_queue(poll_s):
        print("LangGraph's in-memory runtime has another shape: its queue looks for runs every 0.5 s", file=sys.stderr)
    from langgraph_cli.cli import cli

    cli.main(args=sys.argv[1:] if argv is None else argv, prog_name="langgraph")


if __name__ == "__main__":
    main()
