"""Durable threads: the SQLite checkpointer the library and the CLI use by default, or PostgreSQL.

Every step of a run is saved, so a run that was interrupted (a crash, Ctrl-C, a
paused approval) resumes from its last step with the same `thread_id`, in this
process or the next. LangGraph's `SqliteSaver` and `PostgresSaver` are sync only
and their async twins are tied to the event loop they were made on; agents run
both ways (`execute`, and `aexecute` on whatever event loop the caller has), so the
async methods here run the sync ones in a worker thread.

`$REFLEXION_CHECKPOINTS` chooses: a file path (default
`~/.local/share/reflexion-agents/checkpoints.sqlite`), a PostgreSQL URL
(`postgresql://user:password@host:5432/db`, or `postgres://`; the `postgres`
extra), `memory` (this process only), or `none` (no checkpoints). LangGraph
server brings its own store, so the graphs registered for it are compiled
without one.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.nodes.compact_saver import CompactSqliteSaver
from reflexion_agents.schemas.errors import ConfigurationError

CHECKPOINTS_ENV = "REFLEXION_CHECKPOINTS"
#: The default for an agent's `checkpointer` argument: the durable store `$REFLEXION_CHECKPOINTS` names.
DURABLE = "durable"
#: How `$REFLEXION_CHECKPOINTS` names a PostgreSQL database (libpq takes both).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_EXTRA = "pip install 'reflexion-agents[postgres]'"
#: Seconds to wait for the PostgreSQL server when the saver is made, before saying it is unreachable.
POSTGRES_CONNECT_TIMEOUT_S = 10
#: The advisory lock (a constant of this library) that one process at a time holds to set the tables up.
POSTGRES_SETUP_LOCK = 0x7265666C65786E  # "reflexn"

_savers: dict[str, BaseCheckpointSaver[Any]] = {}
_savers_lock = threading.Lock()


class AsyncInWorkerThread(BaseCheckpointSaver[str]):
    """Async saver methods that run the saver's sync ones in a worker thread.

    A saver is shared by every run of a process, sync and async, on whatever event loop each
    `aexecute` brings; LangGraph's async savers hold a connection bound to the loop that made
    them, so one of them would fail on the next loop. The sync saver, called from a thread,
    serves any loop and keeps the loop free while the database works. Put it first among the
    bases, so these methods replace `BaseCheckpointSaver[Any]`'s (which raise NotImplementedError)."""

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in items:
            yield item

    async def aput(
        self, config: Any, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> Any:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.get_delta_channel_history, *args, **kwargs)


class ThreadedSqliteSaver(AsyncInWorkerThread, CompactSqliteSaver):
    """The compact SQLite saver (`nodes/compact_saver.py`) that also serves async runs, from a worker
    thread, behind the saver's own lock."""


def default_checkpoint_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "reflexion-agents" / "checkpoints.sqlite"


def wal_connection(path: str) -> sqlite3.Connection:
    """A connection to the checkpoint file in write-ahead-log mode with `synchronous=NORMAL`.

    Each step's checkpoint is one commit. In the default rollback-journal mode every commit waits
    for the disk twice (fsync of the journal and of the file): most of a step's checkpoint time.
    In WAL mode a commit is an append to the log, and `NORMAL` syncs the log only at checkpoints
    of the log itself. A crash of the process loses nothing committed (the log is in the file
    system); a crash of the machine or a power cut can lose the last commits, never corrupt the
    file: the run then resumes from an earlier step and repeats the steps after it."""
    connection = sqlite3.connect(path, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def sqlite_checkpointer(path: str | os.PathLike[str]) -> ThreadedSqliteSaver:
    """The saver for the SQLite file at `path`, one per file in a process (created on first use)."""
    target = Path(path).expanduser().resolve()
    with _savers_lock:
        key = str(target)
        if key not in _savers:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                saver = ThreadedSqliteSaver(wal_connection(key))
                saver.setup()
            except (OSError, sqlite3.Error) as e:
                raise ConfigurationError(
                    f"cannot keep threads in {target} ({e}); "
                    f"set {CHECKPOINTS_ENV} to a writable SQLite file, 'memory' or 'none'"
                ) from e
            _savers[key] = saver
        return _savers[key]  # type: ignore[return-value]


def redacted_url(url: str) -> str:
    """`url` fit for an error message or a log: its password (in the address or `?password=`) is `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unreadable PostgreSQL URL>"
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:***@{hostport}"
    items = parts.query.split("&") if parts.query else []
    query = "&".join(f"{i.split('=', 1)[0]}=***" if i.lower().startswith("password=") else i for i in items)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _passwords(url: str) -> list[str]:
    """The password(s) `url` carries, as a server or a driver could echo them back."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password, unquote(parts.password or "")]
    query = [item.split("=", 1) for item in parts.query.split("&") if "=" in item]
    found += [unquote(value) for name, value in query if name.lower() == "password"]
    return sorted({p for p in found if p}, key=len, reverse=True)


@functools.cache
def _postgres_saver_type() -> type[BaseCheckpointSaver[Any]]:
    """LangGraph's `PostgresSaver` with async methods from a worker thread (made once, on first use,
    so the library imports without the `postgres` extra)."""
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError as e:
        raise ConfigurationError(
            f"{CHECKPOINTS_ENV} names a PostgreSQL database, which needs the postgres extra: {POSTGRES_EXTRA} ({e})"
        ) from e

    class ThreadedPostgresSaver(AsyncInWorkerThread, PostgresSaver):
        """`PostgresSaver` that also serves async runs, from a worker thread, behind the saver's own
        lock (LangGraph's rule for a shared saver: one database call at a time per saver)."""

    return ThreadedPostgresSaver


def postgres_checkpointer(url: str) -> BaseCheckpointSaver[Any]:
    """The saver for the PostgreSQL database at `url`, one per URL in a process (made on first use,
    its tables created or migrated then): a `PostgresSaver` that serves `execute` and `aexecute`.

    Why not `AsyncPostgresSaver` for async runs: its connection belongs to the event loop that
    opened it, and every `aexecute` called from sync code (`asyncio.run`) is a new loop, while
    this saver is cached for the process. A sync saver, called from worker threads, serves every
    loop and thread. Its connection comes from a pool of one that pings it before each use, so a
    connection the server dropped (a restart, a failover, an idle timeout) is replaced instead of
    failing a run; the saver's lock allows one call at a time, so one connection is all it uses.
    LangGraph's `setup()` run by several processes at once (workers starting together on a new
    database) fails on duplicate keys: here it runs under a PostgreSQL advisory lock."""
    saver_type: Any = _postgres_saver_type()
    import psycopg
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    key = url.strip()
    with _savers_lock:
        if key in _savers:
            return _savers[key]
        where = redacted_url(key)
        settings = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        pool: Any = None
        try:
            # One plain connection first: an unreachable server or a refused login fails at once,
            # with the driver's reason, instead of as a pool timeout.
            with psycopg.connect(key, connect_timeout=POSTGRES_CONNECT_TIMEOUT_S, autocommit=True) as probe:
                pool = ConnectionPool(
                    key,
                    min_size=1,
                    max_size=1,
                    kwargs=settings,
                    open=False,
                    check=ConnectionPool.check_connection,
                    name=f"reflexion-checkpoints {where}",
                )
                pool.open(wait=True, timeout=POSTGRES_CONNECT_TIMEOUT_S)
                saver = saver_type(pool)
                # held until the probe closes: one process at a time creates or migrates the tables
                probe.execute("SELECT pg_advisory_lock(%s)", (POSTGRES_SETUP_LOCK,))
                saver.setup()
        except (psycopg.Error, OSError) as e:
            if pool is not None:
                pool.close()
            reason = " ".join(str(e).split()) or type(e).__name__
            for secret in _passwords(key):
                reason = reason.replace(secret, "***")
            raise ConfigurationError(
                f"cannot keep threads in the PostgreSQL database at {where} ({reason}); check that the "
                f"server runs and the URL in {CHECKPOINTS_ENV} is right, or set it to a SQLite file, "
                "'memory' or 'none'"
            ) from e
        atexit.register(_close_quietly, pool)
        made: BaseCheckpointSaver[Any] = saver
        _savers[key] = made
        return made


def _close_quietly(pool: Any) -> None:
    """Close a saver's pool at exit; a server already gone is no error then."""
    with contextlib.suppress(Exception):
        pool.close(timeout=1.0)


def durable_checkpointer() -> BaseCheckpointSaver[Any] | None:
    """The checkpointer `$REFLEXION_CHECKPOINTS` names (see the module docstring)."""
    setting = (os.environ.get(CHECKPOINTS_ENV) or "").strip()
    if setting.lower() == "none":
        return None
    if setting.lower() == "memory":
        with _savers_lock:
            return _savers.setdefault("memory", InMemorySaver())
    if setting.lower().startswith(POSTGRES_SCHEMES):
        return postgres_checkpointer(setting)
    return sqlite_checkpointer(setting or default_checkpoint_path())


def resolve_checkpointer(checkpointer: Any) -> Any:
    """An agent's `checkpointer` argument: `DURABLE` -> the environment's store; anything else as given."""
    return durable_checkpointer() if checkpointer == DURABLE else checkpointer


INTERRUPT = "__interrupt__"  # the key under which LangGraph reports a paused run


def paused_on(update: dict[str, Any]) -> Any:
    """The value a run paused on (`interrupt`), if this streamed update (or final state) is a pause."""
    interrupts = update.get(INTERRUPT) or ()
    return interrupts[0].value if interrupts else None


def resume_plan(
    graph: Any, checkpointer: Any, thread_id: str, approval: Any, owner: str
) -> tuple[Any, dict[str, Any] | None]:
    """How to continue the run stored in `thread_id` of `graph` (named `owner`): (the input that
    continues it, None), or (None, its finished state) when there is nothing left to run."""
    from langgraph.types import Command

    from reflexion_agents.nodes.common.approval import naming_the_query
    from reflexion_agents.nodes.run_context import check_thread_graph

    if checkpointer is None:
        raise ConfigurationError("resuming needs a checkpointer: build it with the default or another one")
    snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    if not snapshot.values:
        raise ConfigurationError(f"no run is stored in thread {thread_id!r}")
    check_thread_graph(snapshot.values, owner, thread_id)
    if snapshot.interrupts:
        if approval is None:
            raise ConfigurationError(
                f"the run in thread {thread_id!r} waits for approval: decide with "
                f"`reflexion resume {thread_id} --decision approve|edit|reject` "
                '(in Python: resume(thread_id, "approve"), "reject" or {"action": "edit", "query": ...})'
            )
        return Command(resume=naming_the_query(approval, snapshot.interrupts[0].value)), None
    # Finished means no tasks at all. Tasks that all hold their results but no later checkpoint
    # are a run that died after a step's writes were saved and before the next checkpoint was
    # (LangGraph saves checkpoints in the background while the next step runs): continue it.
    return (None, None) if snapshot.next or snapshot.tasks else (None, snapshot.values)
