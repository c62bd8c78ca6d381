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


def test_a_prefix_of_one_thread_names_it_and_one_of_several_is_refused_with_them(kept, movies_db, capsys):
    assert main(["threads", "show", "fin", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["thread_id"] == "finished-run"
    assert main(["threads", "delete", "k"]) == 0 and "Deleted thread killed-run" in capsys.readouterr().out
    again, _ = make_agent(
        movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)], checkpointer=sqlite_checkpointer(saved())
    )
    again.execute("Tom Hanks again?", thread_id="finished-run-2")
    assert main(["threads", "show", "finished-r"]) == 2
    assert "'finished-r' begins 2 threads (finished-run, finished-run-2): give more of it" in capsys.readouterr().err
    assert main(["threads", "show", "finished-run"]) == 0  # a whole id is never taken as a prefix


@pytest.mark.integration
def test_the_list_keeps_every_thread_id_whole_at_80_columns(kept, movies_db, monkeypatch, capsys):
    thread = "9437d7f4452d4c0b8d3fb1b1c1e0a7aa"  # as `ask` names threads: 32 hex digits
    agent, _ = make_agent(
        movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)], checkpointer=sqlite_checkpointer(saved())
    )
    agent.execute("Which movies did Tom Hanks act in, and in which years were they released? " * 2, thread_id=thread)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["threads"]) == 0
    listed = capsys.readouterr().out
    assert thread in listed and max(len(line) for line in listed.splitlines()) <= 80


def test_resume_takes_a_prefix_and_the_flow_the_thread_was_started_with(movies_db, tmp_path, monkeypatch, capsys):
    """A flow's thread, paused for approval, resumed by a prefix of its id and no --flow."""
    from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
    from tests.flow_script import flow_model

    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(tmp_path / "threads.sqlite"))
    ok = {"answerable": True, "reason": "people and their movies"}
    model = flow_model(GuardrailDecision=[ok], CypherQuery=[{"cypher": TOM_HANKS_QUERY}], Summary=[{"answer": "12"}])
    flow = Text2CypherFlow("naive", conversation_factory=lambda: model, database=movies_db, fewshots=False)
    paused = flow.ask(
        "Which movies did Tom Hanks act in?", thread_id="naive-thread-1", context={"require_approval": True}
    )
    assert paused.stop_reason == "awaiting_approval"
    monkeypatch.setattr("reflexion_agents.graphs.cli.ask.chat_model_from_env", lambda name=None: model)
    monkeypatch.setattr("reflexion_agents.graphs.cli.ask.database", lambda args: movies_db)
    assert main(["resume", "naive-thr", "--decision", "approve", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["thread_id"] == "naive-thread-1" and done["answer"] == "12" and ["Cast Away"] in done["rows"]


def saved() -> str:
    import os

    return os.environ["REFLEXION_CHECKPOINTS"]
