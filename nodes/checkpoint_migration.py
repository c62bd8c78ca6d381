"""A checkpoint file in LangGraph's `SqliteSaver` layout, converted to the compact one on first open.

Files written before the compact saver (`nodes/compact_saver.py`) hold LangGraph's two tables,
`checkpoints` and `writes`. Their rows are copied as they are stored (no value is decoded, so
nothing the serializer would read differently can change), a task's write rows becoming one pack,
and the old tables are dropped, in one transaction: a crash during the conversion leaves the file
as it was, and the next open converts it again. Threads keep their string channel versions.
"""

from __future__ import annotations

import sqlite3
from itertools import groupby

from reflexion_agents.nodes.compact_saver import pack_writes

LANGGRAPH_TABLES = ("checkpoints", "writes")


def has_langgraph_tables(conn: sqlite3.Connection) -> bool:
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return all(table in names for table in LANGGRAPH_TABLES)


def convert_langgraph_tables(conn: sqlite3.Connection) -> int:
    """Copy LangGraph's tables into the compact ones and drop them; the checkpoints copied.

    The caller commits (the saver's `setup`, in the same transaction as its tables)."""
    if not has_langgraph_tables(conn):
        return 0
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
