"""A checkpoint file in LangGraph's `SqliteSaver` layout, converted to the compact one on first open.

Files written before the compact saver (`nodes/compact_saver.py`) hold LangGraph's two tables,
`checkpoints` and `writes`. A task's write rows become one pack, their values copied as they are
stored (nothing the serializer would read differently can change); each checkpoint is read once to
turn its channel versions, `SqliteSaver`'s 50-character strings, into the integers the compact saver
counts with (their leading counter, so each channel's versions keep their order: a thread must not
mix the two kinds, which LangGraph compares). A checkpoint the serializer cannot read is copied as it
is, keeping its strings. The old tables are dropped in the same transaction: a crash during the
conversion leaves the file as it was, and the next open converts it again.
"""

from __future__ import annotations

import sqlite3
from itertools import groupby
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from reflexion_agents.nodes.checkpoint_rows import pack_writes

LANGGRAPH_TABLES = ("checkpoints", "writes")


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def has_langgraph_tables(tables: set[str]) -> bool:
    """Whether a file with these tables holds LangGraph's `SqliteSaver` layout."""
    return all(table in tables for table in LANGGRAPH_TABLES)


def integer_versions(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """`checkpoint` with `SqliteSaver`'s version strings ("00000000000000000000000000000007.0.4784")
    as their counters (7), in `channel_versions` and in what each node has seen."""

    def counter(version: Any) -> Any:
        return int(version.split(".")[0]) if isinstance(version, str) else version

    converted = dict(checkpoint)
    converted["channel_versions"] = {k: counter(v) for k, v in checkpoint.get("channel_versions", {}).items()}
    converted["versions_seen"] = {
        node: {k: counter(v) for k, v in seen.items()} for node, seen in checkpoint.get("versions_seen", {}).items()
    }
    return converted


def _with_integer_versions(serde: SerializerProtocol, kind: str, blob: bytes) -> tuple[str, bytes]:
    """A stored checkpoint with integer versions, or as it was when the serializer cannot read it."""
    try:
        return serde.dumps_typed(integer_versions(serde.loads_typed((kind, blob))))
    except Exception:
        return kind, blob


def convert_langgraph_tables(conn: sqlite3.Connection, serde: SerializerProtocol) -> int:
    """Copy LangGraph's tables into the compact ones and drop them; the checkpoints copied.

    The caller holds the transaction (the saver's `setup`) and commits it."""
    if not has_langgraph_tables(table_names(conn)):
        return 0  # converted by another process while this one waited for the lock
    threads: dict[str, int] = {}

    def thread_of(thread_id: str) -> int:
        if thread_id not in threads:
            row = conn.execute("SELECT id FROM threads WHERE thread_id = ?", (thread_id,)).fetchone()
            if row is None:
                row = (conn.execute("INSERT INTO threads (thread_id) VALUES (?)", (thread_id,)).lastrowid,)
            threads[thread_id] = int(row[0])
        return threads[thread_id]

    copied = 0
    # read with cursors of their own, row by row: a file of any size is converted in bounded memory
    for thread_id, ns, checkpoint_id, parent, kind, blob, metadata in conn.cursor().execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
        "FROM checkpoints"
    ):
        kind, blob = _with_integer_versions(serde, str(kind), bytes(blob))
        conn.execute(
            "INSERT OR REPLACE INTO thread_checkpoints (thread, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
            "type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (thread_of(str(thread_id)), ns, checkpoint_id, parent, kind, blob, metadata),
        )
        copied += 1
    columns = {row[1] for row in conn.execute("PRAGMA table_info(writes)")}
    task_path = "task_path" if "task_path" in columns else "''"
    rows = conn.cursor().execute(
        f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, {task_path}, idx, channel, type, value "
        "FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
    )
    for (thread_id, ns, checkpoint_id, task_id), task_rows in groupby(rows, key=lambda r: r[:4]):
        written = list(task_rows)
        conn.execute(
            "INSERT OR REPLACE INTO thread_writes (thread, checkpoint_ns, checkpoint_id, task_id, task_path, pack) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                thread_of(str(thread_id)),
                ns,
                checkpoint_id,
                task_id,
                written[0][4] or "",
                pack_writes([(int(r[5]), str(r[6]), str(r[7] or ""), bytes(r[8] or b"")) for r in written]),
            ),
        )
    for table in LANGGRAPH_TABLES:
        conn.execute(f"DROP TABLE {table}")
    return copied
