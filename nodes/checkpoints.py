"""Durable threads: the SQLite checkpointer the library and the CLI use by default.

Every step of a run is saved, so a run that was interrupted (a crash, Ctrl-C, a
paused approval) resumes from its last step with the same `thread_id`, in this
process or the next. LangGraph's `SqliteSaver` is sync only and its async twin
is tied to one event loop; agents run both ways (`execute` and `aexecute`), so
the async methods here run the sync ones in a worker thread, behind the
saver's own lock.

`$REFLEXION_CHECKPOINTS` chooses: a file path (default
`~/.local/share/reflexion-agents/checkpoints.sqlite`), `memory` (this process
only), or `none` (no checkpoints). LangGraph server brings its own store, so
the graphs registered for it are compiled without one.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from schemas.errors import ConfigurationError

CHECKPOINTS_ENV = "REFLEXION_CHECKPOINTS"
#: The default for an agent's `checkpointer` argument: the durable store `$REFLEXION_CHECKPOINTS` names.
DURABLE = "durable"

_savers: dict[str, BaseCheckpointSaver] = {}
_savers_lock = threading.Lock()


class ThreadedSqliteSaver(SqliteSaver):
    """`SqliteSaver` that also serves async runs, from a worker thread."""

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None, limit: int | None = None
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in items:
            yield item

    async def aput(
        self, config: Any, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> Any:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.get_delta_channel_history, *args, **kwargs)


def default_checkpoint_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "reflexion-agents" / "checkpoints.sqlite"


def sqlite_checkpointer(path: str | os.PathLike[str]) -> ThreadedSqliteSaver:
    """The saver for the SQLite file at `path`, one per file in a process (created on first use)."""
    target = Path(path).expanduser().resolve()
    with _savers_lock:
        key = str(target)
        if key not in _savers:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                saver = ThreadedSqliteSaver(sqlite3.connect(key, check_same_thread=False))
                saver.setup()
            except (OSError, sqlite3.Error) as e:
                raise ConfigurationError(
                    f"cannot keep threads in {target} ({e}); set {CHECKPOINTS_ENV} to a writable SQLite file, 'memory' or 'none'"
                ) from e
            _savers[key] = saver
        return _savers[key]  # type: ignore[return-value]


def durable_checkpointer() -> BaseCheckpointSaver | None:
    """The checkpointer `$REFLEXION_CHECKPOINTS` names (see the module docstring)."""
    setting = (os.environ.get(CHECKPOINTS_ENV) or "").strip()
    if setting.lower() == "none":
        return None
    if setting.lower() == "memory":
        with _savers_lock:
            return _savers.setdefault("memory", InMemorySaver())
    return sqlite_checkpointer(setting or default_checkpoint_path())


def resolve_checkpointer(checkpointer: Any) -> Any:
    """An agent's `checkpointer` argument: `DURABLE` -> the environment's store; anything else as given."""
    return durable_checkpointer() if checkpointer == DURABLE else checkpointer


INTERRUPT = "__interrupt__"  # the key under which LangGraph reports a paused run


def paused_on(update: dict[str, Any]) -> Any:
    """The value a run paused on (`interrupt`), if this streamed update (or final state) is a pause."""
    interrupts = update.get(INTERRUPT) or ()
    return interrupts[0].value if interrupts else None


def resume_plan(graph: Any, checkpointer: Any, thread_id: str, approval: Any, owner: str) -> tuple[Any, dict[str, Any] | None]:
    """How to continue the run stored in `thread_id` of `graph` (named `owner`): (the input that
    continues it, None), or (None, its finished state) when there is nothing left to run."""
    from langgraph.types import Command

    from nodes.run_context import check_thread_graph

    if checkpointer is None:
        raise ConfigurationError("resuming needs a checkpointer: build it with the default or another one")
    snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    if not snapshot.values:
        raise ConfigurationError(f"no run is stored in thread {thread_id!r}")
    check_thread_graph(snapshot.values, owner, thread_id)
    if snapshot.interrupts:
        if approval is None:
            raise ConfigurationError(f"the run in thread {thread_id!r} waits for approval: pass approval=")
        return Command(resume=approval), None
    return (None, None) if snapshot.next else (None, snapshot.values)
