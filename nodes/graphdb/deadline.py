"""A client-side deadline for FalkorDB commands, so control comes back even when the server does not stop.

FalkorDB checks a query's own timeout between operations only: one expression that runs long
(`reduce` over a list built at run time) ignores it and holds the caller until the socket timeout
(120 s). redis-py has no per-command timeout, but its `read_response` takes one; the connection
class here passes the time left before the deadline of the query running in this thread or task
(a context variable, so concurrent queries on one pool never share a deadline). When it expires
redis-py drops that connection (the server's reply would arrive later, for nobody) and the pool
opens a fresh one for the next command, so the client recovers without any help.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import redis
from redis.exceptions import TimeoutError as RedisTimeoutError

_deadline: ContextVar[float | None] = ContextVar("falkordb_deadline", default=None)


def client_grace_s(timeout_s: float) -> float:
    """How long past its own timeout a query may hold the caller: 3% + 30 ms, inside the promised
    10% (or 100 ms). The server's own timeout usually ends the query first; this is the backstop."""
    return 0.03 * timeout_s + 0.03


@contextmanager
def deadline_after(timeout_s: float | None) -> Iterator[None]:
    """Every FalkorDB reply read inside this block must arrive within `timeout_s` plus the grace,
    counted from now, for all the block's commands together (the EXPLAIN and the query)."""
    if timeout_s is None:
        yield
        return
    token = _deadline.set(time.monotonic() + timeout_s + client_grace_s(timeout_s))
    try:
        yield
    finally:
        _deadline.reset(token)


class DeadlineConnection(redis.Connection):
    """A redis-py connection whose reads stop at the deadline of the query using it."""

    def read_response(self, disable_decoding: bool = False, *, timeout: Any = None, **kwargs: Any) -> Any:
        deadline = _deadline.get()
        if deadline is not None and timeout is None:
            left = deadline - time.monotonic()
            if left <= 0:
                # A command was sent; its reply must not reach the next user. redis-py's
                # `Connection.disconnect` has no annotations, so the strict check calls it untyped.
                self.disconnect()  # type: ignore[no-untyped-call, unused-ignore]
                raise RedisTimeoutError("the query's deadline passed before its reply")
            kwargs["timeout"] = left
        elif timeout is not None:
            kwargs["timeout"] = timeout
        return super().read_response(disable_decoding, **kwargs)
