"""`reflexion threads`: the runs kept in the durable checkpointer (`$REFLEXION_CHECKPOINTS`).

    reflexion threads [list] [--limit 20] [--json]   # newest first: thread, graph, status, time, question
    reflexion threads show THREAD_ID [--json]       # one run: its question, status, steps, answer, query or error
    reflexion threads delete THREAD_ID              # forget it (its checkpoints and pending writes)

A THREAD_ID may be a prefix of one thread's id alone, here and in `reflexion resume`.

A thread is read from its newest checkpoint through LangGraph's saver API, so every store the
agents use (SQLite, PostgreSQL, memory) lists the same way. Its status: `finished (<stop reason>)`,
`paused for approval` (it waits on a decision: `reflexion resume ID --decision ...`), or
`interrupted` (it stopped mid-run: `reflexion resume ID` continues it).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reflexion_agents.graphs.cli.exit_codes import EXIT_ANSWERED
from reflexion_agents.nodes.checkpoints import CHECKPOINTS_ENV, INTERRUPT, durable_checkpointer
from reflexion_agents.nodes.run_context import GRAPH_KEY
from reflexion_agents.schemas.errors import ConfigurationError


def _saver() -> Any:
    saver = durable_checkpointer()
    if saver is None:
        raise ConfigurationError(f"no threads are kept: {CHECKPOINTS_ENV} is 'none'")
    return saver


def summary(saved: Any) -> dict[str, Any]:
    """One thread, read from its newest checkpoint (a LangGraph `CheckpointTuple`)."""
    values = saved.checkpoint.get("channel_values") or {}
    paused = any(write[1] == INTERRUPT for write in saved.pending_writes or [])
    stop = values.get("stop_reason")
    status = "paused for approval" if paused else f"finished ({stop})" if stop else "interrupted"
    return {
        "thread_id": saved.config["configurable"]["thread_id"],
        "graph": (values.get("run_context") or {}).get(GRAPH_KEY, "?"),
        "status": status,
        "time": saved.checkpoint.get("ts", ""),
        "question": values.get("question") or "",
        "steps": values.get("steps"),
        "answer": values.get("answer"),  # a finished run's answer, as its last message says it
        # the outcomes are stored as each step's additions (schemas/state_channels.py): the newest
        # action is a plain field
        "query": values.get("query") or values.get("cypher") or values.get("action"),
        "error": values.get("error"),
    }


def newest(saver: Any, limit: int | None = None) -> list[dict[str, Any]]:
    """The threads, newest first: the first checkpoint seen of each thread is its newest. A saver that
    lists its threads (the default SQLite one: `thread_ids`) is asked for them, and only their newest
    checkpoints are read."""
    if callable(getattr(saver, "thread_ids", None)):
        ids = saver.thread_ids()[:limit] if limit else saver.thread_ids()
        found = (saver.get_tuple({"configurable": {"thread_id": thread_id}}) for thread_id in ids)
        return [summary(saved) for saved in found if saved is not None]
    seen: dict[str, dict[str, Any]] = {}
    for saved in saver.list(None):
        configurable = saved.config["configurable"]
        if configurable.get("checkpoint_ns") or configurable["thread_id"] in seen:
            continue
        seen[configurable["thread_id"]] = summary(saved)
    threads = sorted(seen.values(), key=lambda t: t["time"], reverse=True)
    return threads[:limit] if limit else threads


def resolve_thread(saver: Any, given: str) -> str:
    """The thread `given` names: its whole id, or a prefix of one id alone (as `threads` lists them and
    git takes commits). A prefix of several is refused with them; none, with how to list them."""
    if saver.get_tuple({"configurable": {"thread_id": given}}) is not None:
        return given
    ids = [str(t["thread_id"]) for t in newest(saver)] if given else []
    starting = sorted({thread for thread in ids if thread.startswith(given)})
    if len(starting) == 1:
        return starting[0]
    if starting:
        shown = ", ".join(starting[:5])
        raise ConfigurationError(f"{given!r} begins {len(starting)} threads ({shown}): give more of it")
    raise ConfigurationError(f"no run is stored in thread {given!r} (`reflexion threads` lists them)")


def thread_graph(saver: Any, thread_id: str) -> str | None:
    """Which graph wrote `thread_id`, as its run recorded it, or None (a run from before it was recorded)."""
    saved = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    values = saved.checkpoint.get("channel_values") or {} if saved is not None else {}
    owner = (values.get("run_context") or {}).get(GRAPH_KEY)
    return str(owner) if owner else None


def cmd_threads(args: argparse.Namespace, out: Console) -> int:
    saver = _saver()
    if args.action == "list":
        threads = newest(saver, args.limit)
        if args.json:
            print(json.dumps(threads, ensure_ascii=False, default=str))
            return EXIT_ANSWERED
        table = Table(box=box.SIMPLE_HEAD)
        longest = max((len(t["thread_id"]) for t in threads), default=6)
        # the id whole, whatever the width: it is what `show` and `resume` take; the rest gives way
        table.add_column("thread", no_wrap=True, min_width=longest)
        table.add_column("graph", no_wrap=True, overflow="ellipsis", ratio=1)
        table.add_column("status", no_wrap=True, overflow="ellipsis", ratio=1)
        table.add_column("time", no_wrap=True, min_width=11)  # MM-DD HH:MM (UTC)
        table.add_column("question", no_wrap=True, overflow="ellipsis", ratio=2)
        for t in threads:
            table.add_row(
                t["thread_id"], t["graph"], t["status"], t["time"][5:16].replace("T", " "), escape(t["question"][:60])
            )
        out.print(table if threads else "No threads are kept.", soft_wrap=False)
        return EXIT_ANSWERED
    if not args.thread_id:
        raise ConfigurationError(f"threads {args.action} needs a THREAD_ID (see `reflexion threads`)")
    thread_id = resolve_thread(saver, args.thread_id)
    saved = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    if args.action == "delete":
        saver.delete_thread(thread_id)
        out.print(f"Deleted thread {thread_id}", highlight=False)
        return EXIT_ANSWERED
    thread = summary(saved)
    if args.json:
        print(json.dumps(thread, ensure_ascii=False, default=str))
    else:
        for key, value in thread.items():
            if value not in (None, ""):
                out.print(f"[bold]{key}:[/bold] {escape(str(value))}", highlight=False)
    return EXIT_ANSWERED
