"""The default SQLite checkpointer: LangGraph's checkpoint contract in a file a third of the size.

LangGraph's `SqliteSaver` stores each write of a step in a row of its own, keyed by three
36-character ids (thread, checkpoint, task) and indexed by them again: a five-iteration question
made 80 such rows, whose keys alone outweighed what they held. Its channel versions are
50-character strings written for every channel into every checkpoint. Here:

- a thread's id is stored once (`threads`), rows name it by a small integer;
- the writes a task makes at one step are one row (`thread_writes.pack`, `nodes/checkpoint_rows.py`),
  compressed together, so a step's tool result and the outcome that repeats it compress as one text;
- rows are compressed with zstd and a dictionary trained on the library's own checkpoints
  (`nodes/checkpoint_dictionary.py`): a checkpoint is too small for a compressor to learn much from;
- channel versions are integers (LangGraph's own default; a converted file's are made integers too).

Everything else is LangGraph's contract as `SqliteSaver` keeps it: `put_writes` keeps the first
write of a task to a regular channel and the last to a special one (an interrupt, an error), pending
writes come back in LangGraph's replay order (`writes_sort_key`), `list` filters on metadata and
`before`. `tests/test_compact_saver.py` runs LangGraph's conformance suite against it. A file in
LangGraph's layout is converted on first open (`nodes/checkpoint_migration.py`).
"""

from __future__ import annotations

import builtins
import random
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from reflexion_agents.nodes.checkpoint_rows import (
    list_where,
    loaded_json,
    merged_writes,
    metadata_matches,
    pack_writes,
    stored_json,
    unpack_writes,
)
from reflexion_agents.nodes.compressed_serde import CompressedSerializer
from reflexion_agents.schemas.errors import ConfigurationError

SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS thread_checkpoints (
    thread INTEGER NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    PRIMARY KEY (thread, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS thread_writes (
    thread INTEGER NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    pack BLOB NOT NULL,
    PRIMARY KEY (thread, checkpoint_ns, checkpoint_id, task_id)
);
"""


class CompactSqliteSaver(BaseCheckpointSaver[Any]):
    """LangGraph checkpoints in one SQLite file, compactly (see the module docstring).

    One connection, used behind a lock by every thread of the process, as `SqliteSaver` does."""

    def __init__(
        self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None, packs_compressed: bool = True
    ) -> None:
        super().__init__(serde=serde or CompressedSerializer())
        self.conn = conn
        self.packs_compressed = packs_compressed
        self.lock = threading.Lock()
        self.is_setup = False

    def setup(self) -> None:
        """Create the tables (and convert a file in LangGraph's own layout) once."""
        if self.is_setup:
            return
        from reflexion_agents.nodes.checkpoint_migration import (
            convert_langgraph_tables,
            has_langgraph_tables,
            table_names,
        )

        with self.lock:
            tables = table_names(self.conn)
            old_layout = has_langgraph_tables(tables)
            try:
                if not {"threads", "thread_checkpoints", "thread_writes"} <= tables:
                    self.conn.executescript(SCHEMA)  # only when missing: it asks for the write lock
                if old_layout:
                    # the write lock before reading (another process may be converting the file: wait for
                    # it, then find nothing left to convert); the conversion is one transaction
                    self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:
                if old_layout and "readonly" in str(e):
                    raise ConfigurationError(
                        "this checkpoint file is in LangGraph's SqliteSaver layout and read-only: open it "
                        "once with write access to convert it (its threads are kept), or read it with "
                        "LangGraph's SqliteSaver"
                    ) from e
                raise
            if old_layout:
                try:
                    convert_langgraph_tables(self.conn, self.serde)
                    self.conn.commit()
                except BaseException:
                    self.conn.rollback()
                    raise
        self.is_setup = True

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """A cursor under the saver's lock. With `transaction`, its statements are one transaction that
        takes SQLite's write lock first (`BEGIN IMMEDIATE`: another process writing the file is waited
        for, and a read-then-write such as merging a task's writes sees no stale row), committed when
        the block ends, rolled back if it fails."""
        self.setup()
        with self.lock:
            cur = self.conn.cursor()
            try:
                if transaction and not self.conn.in_transaction:
                    cur.execute("BEGIN IMMEDIATE")
                yield cur
                if transaction:
                    self.conn.commit()
            except BaseException:
                if transaction:
                    self.conn.rollback()
                raise
            finally:
                cur.close()

    def _thread(self, cur: sqlite3.Cursor, thread_id: str, create: bool) -> int | None:
        """The small integer rows name `thread_id` by (made when `create`), None when it has none.

        Read each time, not kept: another process may delete the thread and start it again. The
        numbers are never reused (AUTOINCREMENT), so rows a deleted thread left behind (a write racing
        the delete) never join a new thread of the same name."""
        find = "SELECT id FROM threads WHERE thread_id = ?"
        row = cur.execute(find, (thread_id,)).fetchone()
        if row is None and create:  # OR IGNORE: another process may make it in between
            cur.execute("INSERT OR IGNORE INTO threads (thread_id) VALUES (?)", (thread_id,))
            row = cur.execute(find, (thread_id,)).fetchone()
        return None if row is None else int(row[0])

    def _stored_value(self, value: Any) -> tuple[str, bytes]:
        """A write's value as it goes into a pack: not compressed on its own, the pack is."""
        plain = getattr(self.serde, "dumps_uncompressed", None)
        return cast(tuple[str, bytes], plain(value) if plain is not None else self.serde.dumps_typed(value))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"]
        thread_id, checkpoint_ns = str(configurable["thread_id"]), str(configurable.get("checkpoint_ns", ""))
        kind, blob = self.serde.dumps_typed(checkpoint)
        stored_metadata = stored_json(get_checkpoint_metadata(config, metadata), self.packs_compressed)
        with self.cursor() as cur:
            thread = self._thread(cur, thread_id, create=True)
            cur.execute(
                "INSERT OR REPLACE INTO thread_checkpoints (thread, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    thread,
                    checkpoint_ns,
                    checkpoint["id"],
                    configurable.get("checkpoint_id"),
                    kind,
                    blob,
                    stored_metadata,
                ),
            )
        return {
            "configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint["id"]}
        }

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if not writes:
            return
        configurable = config["configurable"]
        key = (str(configurable.get("checkpoint_ns", "")), str(configurable["checkpoint_id"]), task_id)
        new = [(WRITES_IDX_MAP.get(c, i), c, *self._stored_value(v)) for i, (c, v) in enumerate(writes)]
        replace = all(c in WRITES_IDX_MAP for c, _ in writes)
        with self.cursor() as cur:
            thread = self._thread(cur, str(configurable["thread_id"]), create=True)
            where = "thread = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ?"
            row = cur.execute(f"SELECT pack FROM thread_writes WHERE {where}", (thread, *key)).fetchone()
            if row is None:
                cur.execute(
                    "INSERT INTO thread_writes (thread, checkpoint_ns, checkpoint_id, task_id, task_path, pack) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (thread, *key, task_path, pack_writes(merged_writes([], new, replace), self.packs_compressed)),
                )
            else:
                pack = pack_writes(merged_writes(unpack_writes(row[0]), new, replace), self.packs_compressed)
                cur.execute(f"UPDATE thread_writes SET pack = ? WHERE {where}", (pack, thread, *key))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        checkpoint_ns = str(configurable.get("checkpoint_ns", ""))
        with self.cursor(transaction=False) as cur:
            thread = self._thread(cur, str(configurable["thread_id"]), create=False)
            if thread is None:
                return None
            columns = "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
            if checkpoint_id := get_checkpoint_id(config):
                cur.execute(
                    f"SELECT {columns} FROM thread_checkpoints WHERE thread = ? AND checkpoint_ns = ? "
                    "AND checkpoint_id = ?",
                    (thread, checkpoint_ns, checkpoint_id),
                )
            else:
                cur.execute(
                    f"SELECT {columns} FROM thread_checkpoints WHERE thread = ? AND checkpoint_ns = ? "
                    "ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread, checkpoint_ns),
                )
            row = cur.fetchone()
            if row is None:
                return None
            return self._tuple(cur, str(configurable["thread_id"]), thread, checkpoint_ns, row)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        wheres, values = list_where(config, before)
        if wheres is None:
            return  # a `before` that names no checkpoint: nothing is before it (as `SqliteSaver` answers)
        if config is not None:
            with self.cursor(transaction=False) as cur:
                thread = self._thread(cur, str(config["configurable"]["thread_id"]), create=False)
            if thread is None:
                return
            wheres, values = ["c.thread = ?", *wheres], [thread, *values]
        # the keys (and the small metadata, to filter on) first; each checkpoint is read as it is
        # yielded, so `limit=1` reads one and a long listing holds no blobs
        query = (
            "SELECT t.thread_id, c.thread, c.checkpoint_ns, c.checkpoint_id, c.metadata "
            "FROM thread_checkpoints c JOIN threads t ON t.id = c.thread"
            + (" WHERE " + " AND ".join(wheres) if wheres else "")
            + " ORDER BY c.checkpoint_id DESC"
            + (" LIMIT ?" if limit is not None and not filter else "")
        )
        with self.cursor(transaction=False) as cur:
            keys = cur.execute(query, [*values, *([limit] if limit is not None and not filter else [])]).fetchall()
        listed = 0
        for thread_id, thread, checkpoint_ns, checkpoint_id, metadata in keys:
            if limit is not None and listed >= limit:
                return
            if filter and not metadata_matches(metadata, filter):
                continue
            with self.cursor(transaction=False) as cur:
                row = cur.execute(
                    "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM thread_checkpoints "
                    "WHERE thread = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (thread, checkpoint_ns, checkpoint_id),
                ).fetchone()
                found = None if row is None else self._tuple(cur, thread_id, thread, checkpoint_ns, row)
            if found is not None:  # None: deleted since the keys were read
                listed += 1
                yield found

    def _tuple(
        self, cur: sqlite3.Cursor, thread_id: str, thread: int, checkpoint_ns: str, row: tuple[Any, ...]
    ) -> CheckpointTuple:
        """The `CheckpointTuple` of one stored checkpoint row, its pending writes read with it."""
        checkpoint_id, parent_id, kind, blob, metadata = row

        def config_of(checkpoint: str) -> RunnableConfig:
            return {
                "configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint}
            }

        return CheckpointTuple(
            config_of(checkpoint_id),
            self.serde.loads_typed((kind, blob)),
            cast(CheckpointMetadata, loaded_json(metadata)),
            config_of(parent_id) if parent_id else None,
            self._pending_writes(cur, thread, checkpoint_ns, checkpoint_id),
        )

    def _pending_writes(
        self, cur: sqlite3.Cursor, thread: int, checkpoint_ns: str, checkpoint_id: str
    ) -> builtins.list[PendingWrite]:
        """A checkpoint's writes, in the order LangGraph replays a step's writes (`writes_sort_key`)."""
        rows = cur.execute(
            "SELECT task_id, task_path, pack FROM thread_writes "
            "WHERE thread = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread, checkpoint_ns, checkpoint_id),
        ).fetchall()
        writes = [(path, task, *write) for task, path, pack in rows for write in unpack_writes(pack)]
        writes.sort(key=lambda w: writes_sort_key(w[0], w[1], w[2]))
        return [(task, channel, self.serde.loads_typed((kind, value))) for _, task, _, channel, kind, value in writes]

    def thread_ids(self) -> builtins.list[str]:
        """Every thread with a checkpoint, the one checkpointed last first: what `reflexion threads`
        lists, found from the keys alone (listing every checkpoint reads them all)."""
        with self.cursor(transaction=False) as cur:
            rows = cur.execute(
                "SELECT t.thread_id FROM threads t JOIN thread_checkpoints c ON c.thread = t.id "
                "WHERE c.checkpoint_ns = '' GROUP BY t.id ORDER BY max(c.checkpoint_id) DESC"
            ).fetchall()
        return [row[0] for row in rows]

    def delete_thread(self, thread_id: str) -> None:
        with self.cursor() as cur:
            thread = self._thread(cur, str(thread_id), create=False)
            if thread is None:
                return
            cur.execute("DELETE FROM thread_checkpoints WHERE thread = ?", (thread,))
            cur.execute("DELETE FROM thread_writes WHERE thread = ?", (thread,))
            cur.execute("DELETE FROM threads WHERE id = ?", (thread,))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """LangGraph's walk up the parent chain (`BaseCheckpointSaver`'s, whose contract this keeps),
        stopping at a checkpoint it has seen: a checkpoint put again under a descendant's config makes
        the chain a loop, and the walk would never end (LangGraph's `SqliteSaver` guards it too)."""
        if not channels:
            return {}
        collected: dict[str, builtins.list[PendingWrite]] = {c: [] for c in channels}
        seeds: dict[str, Any] = {}
        target = self.get_tuple(config)
        remaining, seen = set(channels), {target.config["configurable"]["checkpoint_id"]} if target else set()
        parent = target.parent_config if target else None
        while parent is not None and remaining:
            found = self.get_tuple(parent)
            if found is None or (key := found.config["configurable"]["checkpoint_id"]) in seen:
                break
            seen.add(key)
            for write in reversed(found.pending_writes or []):
                if write[1] in remaining:
                    collected[write[1]].append(write)
            for channel in [c for c in remaining if c in found.checkpoint["channel_values"]]:
                seeds[channel] = found.checkpoint["channel_values"][channel]
                remaining.discard(channel)
            parent = found.parent_config
        history: dict[str, DeltaChannelHistory] = {}
        for channel in channels:
            history[channel] = {"writes": builtins.list(reversed(collected[channel]))}
            if channel in seeds:
                history[channel]["seed"] = seeds[channel]
        return history

    def get_next_version(self, current: Any, channel: None = None) -> Any:
        """Integer versions (LangGraph's default; a converted file's are turned into integers too). A
        string goes on as `SqliteSaver`'s strings, so a channel's versions stay comparable."""
        if current is None:
            return 1
        if isinstance(current, str):
            return f"{int(current.split('.')[0]) + 1:032}.{random.random():016}"
        return int(current) + 1
