"""`KeyedCache`: the clients runs name in their context (models, databases), one per name.

A run may name its own model or database. Opening a client per run would be slow, and keeping
"the current model" on the agent would let one run change another's. So clients live in a cache
keyed by what names them: two runs asking for the same model share one client, a run asking for
another gets its own, and nothing a run does changes what a different key returns.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

V = TypeVar("V")


class KeyedCache:
    """Thread-safe `key -> value`, each value made once, at most `size` kept (the least recently
    used is dropped, not closed: a run may still hold it). A value is made outside the shared lock,
    under a lock of its own key, so a slow one (a database that does not answer) never holds up
    other keys."""

    def __init__(self, size: int = 32) -> None:
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()
        self.size = size

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                found: V = self._items[key]
                return found
            key_lock = self._making.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:
                    made: V = self._items[key]
                    return made
            value = make()
            with self._lock:
                self._items[key] = value
                self._making.pop(key, None)
                if len(self._items) > self.size:
                    self._items.popitem(last=False)
        return value

    def peek(self, key: Hashable) -> Any:
        """The value kept for `key`, or None; nothing is made."""
        with self._lock:
            return self._items.get(key)

    def values(self) -> list[Any]:
        with self._lock:
            return list(self._items.values())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
