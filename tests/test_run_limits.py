"""A run keeps the limits it started with (issue "hostile inputs": `ask --max-steps 3`, killed, then
`reflexion resume T` ran 5 steps). Whoever resumes a run, another agent object, process or the CLI
with its defaults, it stops at the step limit, row cap, read-only setting and approval it started
with; a resume may lower a limit, and one that would raise it is refused with a message."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.checkpoints import ThreadedSqliteSaver
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import ConfigurationError
from tests.flow_script import flow_model
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, graph_fingerprint, revise
from tests.openai_stub import OpenAIStub

ROOT = Path(__file__).resolve().parents[1]


class ProcessKilled(BaseException):
    """Stands for the process dying mid-run (BaseException: nothing in the loop may swallow it)."""


def nobody(n: int) -> str:
    return f"MATCH (p:Person {{name: 'Nobody {n}'}}) RETURN p.name AS name"


def endless_revisions(messages: list[Any]) -> Any:
    """A new empty query each time, scored low: only the step limit ends the run."""
    return revise(nobody(sum(isinstance(m, ToolMessage) for m in messages)), score=1)


def dies(messages: list[Any]) -> Any:
    raise ProcessKilled


def saver(path: Path) -> ThreadedSqliteSaver:
    """A saver of its own on the file: what a new process opens."""
    return ThreadedSqliteSaver(sqlite3.connect(path, check_same_thread=False))


def killed_at_step_two(movies_db, path: Path, thread: str, **options: Any) -> None:
    """A run started with `options` that dies in its second revise call (two queries ran)."""
    model = ScriptedChatModel(replies=[draft(EMPTY_QUERY), revise(nobody(1), 1), dies])
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model, database=movies_db, checkpointer=saver(path), **options
    )
    with pytest.raises(ProcessKilled):
        agent.execute("Who is nobody?", thread_id=thread)


def default_agent(movies_db, path: Path, **options: Any) -> tuple[KGQueryReflexionAgent, ScriptedChatModel]:
    model = ScriptedChatModel(default=endless_revisions)
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model, database=movies_db, checkpointer=saver(path), **options
    )
    return agent, model


def test_a_run_resumed_by_an_agent_with_default_limits_stops_at_its_own_step_limit(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    killed_at_step_two(movies_db, path, "t", max_steps=3)
    agent, model = default_agent(movies_db, path)  # max_steps 30
    result = agent.resume("t")
    assert (result.stop_reason, result.steps, len(result.outcomes)) == ("max_steps", 3, 3)
    assert len(model.calls) == 2  # the revise call that died, and the third step's


def test_a_resume_may_lower_the_step_limit_but_raising_it_is_refused(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    killed_at_step_two(movies_db, path, "t", max_steps=3)
    agent, model = default_agent(movies_db, path)
    with pytest.raises(ConfigurationError, match=r"max_steps=10 \(the run's: 3\)"):
        agent.resume("t", context={"max_steps": 10})
    assert model.calls == []  # refused before anything ran
    result = agent.resume("t", context={"max_steps": 2})
    assert (result.stop_reason, result.steps) == ("max_steps", 2)


def test_a_run_started_with_more_steps_than_the_resuming_agents_keeps_them(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    killed_at_step_two(movies_db, path, "t", max_steps=40)
    agent, _ = default_agent(movies_db, path, max_steps=5)
    result = agent.resume("t")
    assert (result.stop_reason, result.steps) == ("max_steps", 40)


async def test_the_async_resume_keeps_the_step_limit_too(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    killed_at_step_two(movies_db, path, "t", max_steps=3)
    agent, _ = default_agent(movies_db, path)
    result = await agent.aresume("t")
    assert (result.stop_reason, result.steps) == ("max_steps", 3)


def test_row_cap_approval_and_read_only_hold_when_a_laxer_agent_resumes(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    intruder = "CREATE (:Person {name: 'Intruder'})"
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(intruder, 2)])
    common = {"conversation_factory": lambda: model, "database": movies_db, "trust_non_empty_result": False}
    strict = KGQueryReflexionAgent(**common, checkpointer=saver(path), row_cap=2, require_approval=True)
    assert strict.execute("Tom Hanks movies?", thread_id="t").stop_reason == "awaiting_approval"
    before = graph_fingerprint(movies_db)
    # no approval, writes allowed, 100 rows: none of it applies to a run started without them
    lax = KGQueryReflexionAgent(**common, checkpointer=saver(path), allow_writes=True)
    second = lax.resume("t", "approve")
    assert second.stop_reason == "awaiting_approval" and "Intruder" in second.pending_approval["query"]
    assert len(second.tool_result) == 2 and second.truncated
    done = lax.resume("t", "approve")
    assert "WriteQueryRefused" in str(done.outcomes[-1].error_type) and graph_fingerprint(movies_db) == before


def test_a_flow_resumed_by_a_flow_with_default_limits_keeps_its_row_cap_and_approval(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    ok = {"answerable": True, "reason": "people and movies"}
    model = flow_model(GuardrailDecision=[ok], CypherQuery=[{"cypher": TOM_HANKS_QUERY}], Summary=[{"answer": "12"}])
    common = {"conversation_factory": lambda: model, "database": movies_db, "fewshots": False}
    strict = Text2CypherFlow("naive", **common, checkpointer=saver(path), row_cap=3, require_approval=True)
    assert strict.ask("Tom Hanks movies?", thread_id="f").stop_reason == "awaiting_approval"
    lax = Text2CypherFlow("naive", **common, checkpointer=saver(path))
    with pytest.raises(ConfigurationError, match=r"row_cap=50 \(the run's: 3\)"):
        lax.resume("f", "approve", context={"row_cap": 50})
    assert len(lax.resume("f", "approve").rows) == 3


# -- the CLI: a process killed mid-run, resumed by another with the defaults --------------------


def cli_env(stub: OpenAIStub, falkordb_server: Any, checkpoints: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFLEXION_", "NEO4J_"))}
    env.update(
        {
            "OPENAI_BASE_URL": stub.base_url,
            "REFLEXION_MODEL": "openai:stub",
            "REFLEXION_CHECKPOINTS": str(checkpoints),
            "REFLEXION_DATABASE_URL": f"falkordb://{falkordb_server.host}:{falkordb_server.port}",
            "REFLEXION_GRAPH": "movies",
        }
    )
    return env


def reflexion(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_agents.graphs.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_ask_killed_then_resume_stops_at_the_asked_step_limit(falkordb_server, movies_db, tmp_path):
    third_call, release = threading.Event(), threading.Event()

    def model(request: dict[str, Any]) -> dict[str, Any]:
        tool = request["tool_choice"]["function"]["name"]
        if tool == "GenerateQuery":
            return {"tool": tool, "args": {"answer": nobody(0)}}
        if len(stub.requests) == 3 and not release.is_set():  # the second revise call: the process dies here
            third_call.set()
            release.wait(60)
        ran = sum(m["role"] == "tool" for m in request["messages"])
        return {"tool": tool, "args": {"revised_query": nobody(ran), "score": 1}}

    with OpenAIStub(model) as stub:
        env = cli_env(stub, falkordb_server, tmp_path / "threads.sqlite")
        ask = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reflexion_agents.graphs.cli",
                "ask",
                "Who is nobody?",
                "--max-steps",
                "3",
                "--thread",
                "cli-t",
                "--json",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert third_call.wait(90), ask.stderr.read() if ask.poll() is not None else "no third model call"
            ask.send_signal(signal.SIGKILL)
            ask.wait(30)
        finally:
            release.set()
            if ask.poll() is None:
                ask.kill()
            ask.stderr.close()
        before = len(stub.requests)
        raised = reflexion(env, "resume", "cli-t", "--max-steps", "10", "--json")
        assert raised.returncode == 2 and "max_steps=10 (the run's: 3)" in raised.stderr, raised.stderr
        assert len(stub.requests) == before  # refused before any model call
        resumed = reflexion(env, "resume", "cli-t", "--json")  # the CLI's default would be 30 steps
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert (result["stop_reason"], result["steps"], len(result["outcomes"])) == ("max_steps", 3, 3)
    resumed_calls = [r["tool_choice"]["function"]["name"] for r in stub.requests[before:]]
    # Continued, not restarted: the draft is not redone. How many revise calls remain depends on which
    # step's checkpoint was on disk at the kill (LangGraph writes them while the next step runs): 1 to 3.
    assert "GenerateQuery" not in resumed_calls and 1 <= len(resumed_calls) <= 3


def test_cli_max_steps_with_a_flow_that_has_no_step_limit_is_refused(falkordb_server, movies_db, tmp_path):
    with OpenAIStub(lambda request: {"text": "unused"}) as stub:
        env = cli_env(stub, falkordb_server, tmp_path / "t.sqlite")
        done = reflexion(env, "ask", "q?", "--flow", "retry", "--max-steps", "3")
    assert done.returncode == 2 and "--max-steps limits the reflexion loop" in done.stderr
    assert stub.requests == []


def test_the_cli_prints_a_run_whose_query_holds_a_lone_surrogate(falkordb_server, movies_db, tmp_path):
    """A model may write `"\\ud800"` (valid JSON); the terminal and `--json` still get every line."""

    def model(request: dict[str, Any]) -> dict[str, Any]:
        tool = request["tool_choice"]["function"]["name"]
        if tool == "GenerateQuery":
            return {"tool": tool, "args": {"answer": "MATCH (p:Person {name: 'Tom\ud800'}) RETURN p.name"}}
        return {
            "tool": tool,
            "args": {"revised_query": "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.name AS name", "score": 9},
        }

    with OpenAIStub(model) as stub:
        env = cli_env(stub, falkordb_server, tmp_path / "threads.sqlite")
        env["PYTHONIOENCODING"] = "utf-8"  # strict, as on most terminals
        for extra in ([], ["--json"]):
            done = reflexion(env, "ask", "Tom Hanks?", *extra)
            assert done.returncode == 0, done.stderr
            assert "Traceback" not in done.stderr and "Tom Hanks" in done.stdout
