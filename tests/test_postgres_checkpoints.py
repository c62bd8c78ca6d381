"""Durable threads in a real PostgreSQL (16, from the `pgserver` wheel, started for this session in a
temporary directory): `REFLEXION_CHECKPOINTS=postgresql://...` and a user's own `PostgresSaver`; a
`reflexion ask` killed with SIGKILL mid-run resumes to the result of an uninterrupted run; two
processes continue each other's thread; 100 concurrent async runs share one saver."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

MISSING_EXTRA = "the postgres extra is not installed: pip install -e '.[postgres]'"
pytest.importorskip("langgraph.checkpoint.postgres", reason=MISSING_EXTRA)
pytest.importorskip("pgserver", reason=MISSING_EXTRA)

import psycopg
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes import checkpoints
from reflexion_agents.nodes.checkpoints import durable_checkpointer, postgres_checkpointer, redacted_url
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import EMPTY_QUERY, HANG_GUARD_S, SLACK_S, TOM_HANKS_QUERY, draft, keep, revise
from tests.openai_stub import OpenAIStub, tool_names

pytestmark = pytest.mark.server  # a PostgreSQL server

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Which movies did Tom Hanks act in?"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this session's own, on a Unix socket in a temporary directory; stopped
    and its files deleted at the end. Outside pytest's temporary tree: when the tests run as root the
    server runs as another user, and a pytest session starting meanwhile closes that tree to others."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs, when XDG_RUNTIME_DIR is unset
        import pgserver

    base = Path(tempfile.mkdtemp(prefix="reflexion-pg-"))
    server = pgserver.get_server(base / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def new_database(url: str) -> str:
    """The URL of a new, empty database on the server at `url`."""
    name = f"threads_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.replace("/postgres?", f"/{name}?", 1)


def stored_threads(url: str, prefix: str) -> set[str]:
    """The threads with checkpoints in the database, read with SQL (not through a saver)."""
    with psycopg.connect(url) as conn:
        query = "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE %s"
        return {row[0] for row in conn.execute(query, (f"{prefix}%",))}


def draft_is_stored(url: str, thread: str) -> bool:
    """Whether the draft step's result (its route on to the query) is in the database."""
    with psycopg.connect(url) as conn:
        query = "SELECT 1 FROM checkpoint_writes WHERE thread_id = %s AND channel = 'branch:to:execute_tool'"
        return conn.execute(query, (thread,)).fetchone() is not None


def wait_for(condition: Callable[[], bool], timeout: float = HANG_GUARD_S) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


# --- the model behind the CLI: an OpenAI-compatible stub whose replies follow the conversation


def two_step_model(request: dict[str, Any]) -> dict[str, Any]:
    """A model that is a function of the conversation, so a resumed run gets the replies an
    uninterrupted one would: it drafts a query with no rows, revises it to Tom Hanks's movies
    (5/10), then keeps it and scores it 9/10."""
    if "GenerateQuery" in tool_names(request):
        return {"tool": "GenerateQuery", "args": {"answer": EMPTY_QUERY, "reflection": "first try"}}
    if sum(m["role"] == "tool" for m in request["messages"]) == 1:
        args = {"answer": EMPTY_QUERY, "reflection": "no rows", "revised_query": TOM_HANKS_QUERY, "score": 5}
    else:
        args = {"answer": TOM_HANKS_QUERY, "reflection": "good", "revised_query": TOM_HANKS_QUERY, "score": 9}
    return {"tool": "ReviseQuery", "args": args}


class ModelServer(OpenAIStub):
    """The stub model, which can hold a revise call open until told: the moment to kill its caller."""

    def __init__(self) -> None:
        super().__init__(self._reply)
        self.hold_revise, self.holding, self.release = threading.Event(), threading.Event(), threading.Event()

    def _reply(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.hold_revise.is_set() and "ReviseQuery" in tool_names(request):
            self.holding.set()
            self.release.wait(60)
        return two_step_model(request)

    def handle(self, request: Any, body: Any) -> None:
        with contextlib.suppress(OSError):  # the caller was killed while its call was held open
            super().handle(request, body)

    def called(self) -> list[str]:
        """The tool each request asked for, in order."""
        return [tool_names(r)[0] for r in self.requests]

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        super().__exit__(*exc)


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with ModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


@pytest.fixture
def cli_env(
    postgres_url: str, model_server: ModelServer, movies_db: FalkorDBGraph, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """This process's environment, naming the PostgreSQL threads and the stub model: what the CLI
    run here (`main`) and the CLI processes started here both see."""
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", postgres_url)
    return dict(os.environ)


def cli(env: dict[str, str], data_dir: str, *args: str) -> subprocess.Popen[str]:
    """`reflexion --data-dir DATA_DIR ARGS...` in a process of its own."""
    command = [sys.executable, "-m", "reflexion_agents.graphs.cli", "--data-dir", data_dir, *args]
    pipe = subprocess.PIPE
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=pipe, stderr=pipe, text=True)


def finished(process: subprocess.Popen[str], timeout: float = 60) -> tuple[int, dict[str, Any]]:
    out, err = process.communicate(timeout=timeout)
    assert out.strip(), err
    return process.returncode, json.loads(out)


def here(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """`reflexion ARGS... --json` run in this process: its result."""
    main([*args, "--json"])
    return json.loads(capsys.readouterr().out)


def summary(result: dict[str, Any]) -> tuple[Any, ...]:
    actions = [o["action"] for o in result["outcomes"]]
    return result["query"], result["stop_reason"], result["rows"], actions


# --- agents in this process: a scripted model whose replies depend on the run's own question


def question_for(i: int) -> str:
    return f"Which number is {i}?"


def number_script(messages: list[BaseMessage]) -> Any:
    """Run i's model, from its own conversation only: a query with no rows, then `RETURN i`
    (5/10), then 9/10. A result built from another thread's state would show another number."""
    asked = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
    i = int(next(re.findall(r"Which number is (\d+)", text)[0] for text in asked if "Which number" in text))
    results = sum(isinstance(m, ToolMessage) for m in messages)
    if results == 0:
        return draft(f"MATCH (p:Person {{name: 'Nobody {i}'}}) RETURN p.name AS name")
    return revise(f"RETURN {i} AS n", 5) if results == 1 else keep(f"RETURN {i} AS n", 9)


def agent_with(model: ScriptedChatModel, movies_db: FalkorDBGraph, checkpointer: Any = "durable") -> Any:
    """A knowledge-graph agent on the movies graph, with `model` and `checkpointer`."""
    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=checkpointer)


def number_agent(movies_db: FalkorDBGraph, checkpointer: Any = "durable") -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(default=number_script)
    return agent_with(model, movies_db, checkpointer), model


def test_the_environment_names_a_postgres_database_and_runs_keep_their_threads_there(
    postgres_url: str, movies_db: FalkorDBGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", postgres_url)
    saver = durable_checkpointer()
    assert isinstance(saver, PostgresSaver) and durable_checkpointer() is saver  # one per URL in a process
    agent, model = number_agent(movies_db)
    assert agent.checkpointer is saver
    prefix = f"env-{uuid.uuid4().hex[:6]}-"
    # sync, then async on two event loops one after the other: the one saver serves them all
    results = [agent.execute(question_for(0), thread_id=f"{prefix}0")]
    results += [asyncio.run(agent.aexecute(question_for(i), thread_id=f"{prefix}{i}")) for i in (1, 2)]
    assert [r.tool_result for r in results] == [[[0]], [[1]], [[2]]]
    assert stored_threads(postgres_url, prefix) == {f"{prefix}{i}" for i in range(3)}
    again = asyncio.run(agent.aresume(f"{prefix}1"))  # a finished thread: its result, no model call
    assert again.tool_result == [[1]] and len(model.calls) == 9
    # `postgres://` names the same database
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", postgres_url.replace("postgresql://", "postgres://", 1))
    other, _ = number_agent(movies_db)
    assert other.checkpointer is not saver and other.resume(f"{prefix}2").tool_result == [[2]]


def test_a_run_killed_mid_run_resumes_to_the_result_of_an_uninterrupted_run(
    cli_env: dict[str, str],
    falkordb_server: Any,
    model_server: ModelServer,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data_dir, thread = str(falkordb_server.data_dir), f"killed-{uuid.uuid4().hex[:8]}"
    model_server.hold_revise.set()
    child = cli(cli_env, data_dir, "ask", QUESTION, "--json", "--thread", thread)
    try:
        assert model_server.holding.wait(60), "the run never reached its revise step"
        # it dies inside the revise call, once the draft is stored; the later checkpoints may or
        # may not have reached the database by then (LangGraph writes them in the background)
        assert wait_for(lambda: draft_is_stored(postgres_url, thread)), "the draft never reached the database"
        child.send_signal(signal.SIGKILL)
        assert child.wait(HANG_GUARD_S) == -signal.SIGKILL
    finally:
        child.kill()
        child.communicate()
    model_server.hold_revise.clear()
    assert model_server.called() == ["GenerateQuery", "ReviseQuery"]
    resumed = here(capsys, "--data-dir", data_dir, "resume", thread)  # another process: this one
    assert model_server.called()[2:] == ["ReviseQuery", "ReviseQuery"]  # the draft was not redone
    whole = here(capsys, "--data-dir", data_dir, "ask", QUESTION, "--thread", f"{thread}-whole")
    assert summary(resumed) == summary(whole) and ["Cast Away"] in resumed["rows"]
    assert [o["action"] for o in resumed["outcomes"]] == [EMPTY_QUERY, TOM_HANKS_QUERY]


def test_two_processes_continue_each_others_thread(
    cli_env: dict[str, str],
    falkordb_server: Any,
    model_server: ModelServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data_dir, thread = str(falkordb_server.data_dir), f"shared-{uuid.uuid4().hex[:8]}"
    # process A: the run pauses before its first query
    _, paused = finished(cli(cli_env, data_dir, "ask", QUESTION, "--approve", "--json", "--thread", thread))
    assert paused["stop_reason"] == "awaiting_approval" and paused["rows"] is None
    assert (paused["pending_approval"]["query"], paused["pending_approval"]["step"]) == (EMPTY_QUERY, 1)
    # process B (this one) approves it: A's query runs here, and the revised query waits in turn
    second = here(capsys, "--data-dir", data_dir, "resume", thread, "--decision", "approve")
    assert second["stop_reason"] == "awaiting_approval" and second["rows"] == []
    assert (second["pending_approval"]["query"], second["pending_approval"]["step"]) == (TOM_HANKS_QUERY, 2)
    # a new process A approves B's pause and finishes the run
    code, done = finished(cli(cli_env, data_dir, "resume", thread, "--decision", "approve", "--json"))
    assert code == 0 and ["Cast Away"] in done["rows"]
    assert [o["action"] for o in done["outcomes"]] == [EMPTY_QUERY, TOM_HANKS_QUERY]
    # B sees A's finished run: the same result, without a model call
    assert summary(here(capsys, "--data-dir", data_dir, "resume", thread)) == summary(done)
    assert model_server.called() == ["GenerateQuery", "ReviseQuery", "ReviseQuery"]


async def test_100_concurrent_async_runs_on_one_saver_each_keep_their_own_thread(
    postgres_url: str, movies_db: FalkorDBGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", postgres_url)
    agent, model = number_agent(movies_db)
    prefix = f"many-{uuid.uuid4().hex[:6]}-"
    # what one run takes on this machine now, alone (five one after another, on the same saver)
    alone, _ = number_agent(movies_db)
    started = time.perf_counter()
    for i in range(5):
        await alone.aexecute(question_for(i), thread_id=f"alone-{prefix}{i}")
    one_run = (time.perf_counter() - started) / 5
    started = time.perf_counter()
    runs = [agent.aexecute(question_for(i), thread_id=f"{prefix}{i}") for i in range(100)]
    results = await asyncio.gather(*runs)
    elapsed = time.perf_counter() - started
    assert [(r.thread_id, r.tool_result, r.stop_reason) for r in results] == [
        (f"{prefix}{i}", [[i]], results[0].stop_reason) for i in range(100)
    ]
    # together no slower than three times the same runs one after another (they share one connection)
    assert len(model.calls) == 300 and elapsed < 3 * 100 * one_run + SLACK_S, (elapsed, one_run)
    # every thread is stored and holds its own run: the user's own saver reads them back
    assert stored_threads(postgres_url, prefix) == {f"{prefix}{i}" for i in range(100)}
    with PostgresSaver.from_conn_string(postgres_url) as own:
        for i in (0, 42, 99):
            stored = own.get_tuple({"configurable": {"thread_id": f"{prefix}{i}"}})
            assert stored is not None and stored.checkpoint["channel_values"]["question"] == question_for(i)


def test_a_users_own_postgres_saver_works_with_agents(postgres_url: str, movies_db: FalkorDBGraph) -> None:
    thread = f"own-{uuid.uuid4().hex[:8]}"
    first = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY)])
    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        agent = agent_with(first, movies_db, saver)
        paused = agent.execute(QUESTION, thread_id=thread, context={"require_approval": True})
    assert paused.stop_reason == "awaiting_approval" and paused.pending_approval["query"] == TOM_HANKS_QUERY
    second = ScriptedChatModel(replies=[keep(TOM_HANKS_QUERY, 9)])
    with PostgresSaver.from_conn_string(postgres_url) as saver:  # a new connection: what was stored holds
        done = agent_with(second, movies_db, saver).resume(thread, "approve")
    assert ["Cast Away"] in done.tool_result and done.answer == TOM_HANKS_QUERY and len(second.calls) == 1


class ProcessKilled(BaseException):
    """Stands for the process dying mid-run (BaseException: nothing in the loop may swallow it)."""


class LosesCheckpointsAfterTheDraft(PostgresSaver):
    """Stores every task's results but no checkpoint after the first step: the database as a
    process killed mid-run leaves it when LangGraph's background checkpoint writes had not caught
    up with the run (seen after SIGKILL inside the revise call: the draft's results stored, no
    later checkpoint). A resume must run on from there, not take the thread for finished because
    the stored step's only task has its result."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if metadata.get("step", -1) >= 1:
            return {"configurable": {**config["configurable"], "checkpoint_id": checkpoint["id"]}}
        return super().put(config, checkpoint, metadata, new_versions)


def test_a_run_whose_last_checkpoints_were_lost_resumes_instead_of_passing_for_finished(
    postgres_url: str, movies_db: FalkorDBGraph
) -> None:
    thread = f"lost-{uuid.uuid4().hex[:8]}"
    saver = postgres_checkpointer(postgres_url)  # the tables, and the saver of the process that resumes

    def dies(messages: list[BaseMessage]) -> Any:
        raise ProcessKilled

    first = ScriptedChatModel(replies=[draft(EMPTY_QUERY), dies])
    settings: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    with psycopg.Connection.connect(postgres_url, **settings) as conn:
        agent = agent_with(first, movies_db, LosesCheckpointsAfterTheDraft(conn))
        with pytest.raises(ProcessKilled):
            agent.execute(QUESTION, thread_id=thread)
    second = ScriptedChatModel(replies=[revise(TOM_HANKS_QUERY, 5), keep(TOM_HANKS_QUERY, 9)])
    result = agent_with(second, movies_db, saver).resume(thread)
    assert ["Cast Away"] in result.tool_result
    assert [o.action for o in result.outcomes] == [EMPTY_QUERY, TOM_HANKS_QUERY]
    assert [t["function"]["name"] for t in second.bound_tools[0]] == ["ReviseQuery"]  # no second draft


def test_a_saver_whose_connection_the_server_dropped_reconnects_instead_of_failing_a_run(
    postgres_url: str, movies_db: FalkorDBGraph
) -> None:
    name = f"dropped-{uuid.uuid4().hex[:6]}"  # the saver's connections, by their application_name
    agent, _ = number_agent(movies_db, postgres_checkpointer(f"{postgres_url}&application_name={name}"))
    assert agent.execute(question_for(7), thread_id=f"{name}-7").tool_result == [[7]]
    # what a server restart, a failover or an idle timeout does to the saver's connection
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        query = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s"
        assert admin.execute(query, (name,)).fetchone() == (1,)
    assert agent.execute(question_for(8), thread_id=f"{name}-8").tool_result == [[8]]
    assert agent.resume(f"{name}-7").tool_result == [[7]]


def test_workers_starting_together_on_a_new_database_set_it_up_once(postgres_url: str) -> None:
    # LangGraph's setup() run by several processes at once fails on duplicate keys; distinct
    # URLs (application_name) stand for distinct processes here, each making its own saver
    url = new_database(postgres_url)
    errors: list[BaseException] = []

    def start(i: int) -> None:
        try:
            postgres_checkpointer(f"{url}&application_name=worker{i}")
        except BaseException as e:
            errors.append(e)

    workers = [threading.Thread(target=start, args=(i,)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert errors == []
    with psycopg.connect(url) as conn:
        versions = [row[0] for row in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    assert versions == list(range(len(PostgresSaver.MIGRATIONS)))


def test_a_missing_extra_and_an_unreachable_server_are_configuration_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "postgresql://reflexion:s3cret-pw@127.0.0.1:1/threads?password=other-secret&sslmode=disable"
    assert redacted_url(url) == "postgresql://reflexion:***@127.0.0.1:1/threads?password=***&sslmode=disable"
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", url)
    with pytest.raises(ConfigurationError) as refused:
        durable_checkpointer()
    message = str(refused.value)
    assert "postgresql://reflexion:***@127.0.0.1:1/threads" in message and "Connection refused" in message
    assert "s3cret" not in message and "other-secret" not in message
    # without the extra: the saver's package cannot be imported
    checkpoints._postgres_saver_type.cache_clear()
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres", None)
    try:
        with pytest.raises(ConfigurationError, match=re.escape("pip install 'reflexion-agents[postgres]'")):
            durable_checkpointer()
    finally:
        checkpoints._postgres_saver_type.cache_clear()
