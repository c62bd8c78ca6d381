"""`reflexion threads`: the runs kept in `$REFLEXION_CHECKPOINTS`, as real agents left them: one that
finished, one paused for approval, one killed mid-run; shown, listed newest first, and deleted."""

from __future__ import annotations

import json

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.checkpoints import sqlite_checkpointer
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, make_agent, revise


class ProcessKilled(BaseException):
    """Stands for the process dying mid-run."""


def dies(messages):
    raise ProcessKilled


@pytest.fixture
def kept(movies_db, tmp_path, monkeypatch) -> dict[str, str]:
    """Three threads in a checkpoint file of their own: finished, paused, interrupted."""
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(path))
    saver = sqlite_checkpointer(path)
    finished, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)], checkpointer=saver)
    finished.execute("Which movies did Tom Hanks act in?", thread_id="finished-run")
    paused, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY)], checkpointer=saver, require_approval=True)
    paused.execute("Tom Hanks, with approval?", thread_id="paused-run")
    killed, _ = make_agent(movies_db, [draft(EMPTY_QUERY), dies], checkpointer=saver)
    with pytest.raises(ProcessKilled):
        killed.execute("Who is nobody?", thread_id="killed-run")
    return {"finished-run": "finished", "paused-run": "paused for approval", "killed-run": "interrupted"}


def test_threads_lists_every_kept_run_newest_first_with_its_status(kept, capsys):
    assert main(["threads", "--json"]) == 0
    threads = json.loads(capsys.readouterr().out)
    assert [t["thread_id"] for t in threads] == ["killed-run", "paused-run", "finished-run"]
    assert {t["thread_id"]: t["status"].split(" (")[0] for t in threads} == kept
    assert all(t["graph"] == "KGQueryReflexionAgent" and t["question"] and t["time"] for t in threads)
    assert threads[2]["status"].startswith("finished (") and "Tom Hanks" in threads[2]["question"]


def test_threads_show_and_delete_one_run(kept, capsys):
    assert main(["threads", "show", "finished-run", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["query"] == TOM_HANKS_QUERY and shown["steps"] == 1
    assert TOM_HANKS_QUERY in shown["answer"] and "| Cast Away |" in shown["answer"]  # the answer message's text
    assert main(["threads", "delete", "killed-run"]) == 0
    assert main(["threads", "show", "killed-run"]) == 2
    assert "no run is stored in thread 'killed-run'" in capsys.readouterr().err
    assert main(["threads", "--json"]) == 0
    assert [t["thread_id"] for t in json.loads(capsys.readouterr().out)] == ["paused-run", "finished-run"]
