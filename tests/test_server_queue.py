"""`reflexion serve`'s queue is told when a run arrives (graphs/cli/langgraph_dev.py): the wake-up call
itself, across threads, and the setting of the fallback look. The served queue is tested end to end in
tests/test_langgraph_server.py, whose server looks on its own only once an hour."""

from __future__ import annotations

import asyncio
import threading

import pytest

from reflexion_agents.graphs.cli.langgraph_dev import DEFAULT_POLL_S, RunArrivals, poll_seconds
from tests.helpers import HANG_GUARD_S

pytestmark = pytest.mark.unit


def test_a_run_announced_from_another_thread_wakes_the_waiting_queue():
    arrivals = RunArrivals()

    async def queue() -> None:
        announcer = threading.Timer(0.01, arrivals.arrived)  # a run created on another loop's thread
        waiting = asyncio.create_task(arrivals.wait(HANG_GUARD_S * 100))
        await asyncio.sleep(0)  # the queue waits first
        announcer.start()
        await asyncio.wait_for(waiting, HANG_GUARD_S)  # woken, long before its own look

    asyncio.run(queue())


def test_a_run_announced_while_the_queue_looks_is_not_lost():
    arrivals = RunArrivals()

    async def queue() -> None:
        await arrivals.wait(0)  # the queue has waited once: it has a loop to be told on
        arrivals.arrived()  # while it looks
        await asyncio.wait_for(arrivals.wait(HANG_GUARD_S * 100), HANG_GUARD_S)

    asyncio.run(queue())


@pytest.mark.parametrize("raw", ["0", "-1", "soon", "nan"])
def test_the_fallback_look_must_be_a_positive_number_of_seconds(raw):
    with pytest.raises(SystemExit, match="REFLEXION_SERVER_POLL_S must be a number of seconds above 0"):
        poll_seconds({"REFLEXION_SERVER_POLL_S": raw})
    assert poll_seconds({}) == DEFAULT_POLL_S and poll_seconds({"REFLEXION_SERVER_POLL_S": "2.5"}) == 2.5
