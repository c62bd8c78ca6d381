"""What the command line tells a user before anything runs, and how it hands them back a run: help
on every argument, the version, the exit codes, global options on either side of the command, one
name for the agent-or-flow choice, the thread to resume after Ctrl-C, a paused run's resume in the
command line's own words, and `make run` passing a question through exactly as typed."""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.cli import main, parser
from reflexion_agents.graphs.cli.exit_codes import (
    EXIT_ANSWERED,
    EXIT_CONFIGURATION,
    EXIT_DATABASE,
    EXIT_INTERRUPTED,
    EXIT_NO_ANSWER,
)
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import TOM_HANKS_QUERY, draft, make_agent

ROOT = Path(__file__).resolve().parents[1]
REFLEXION = Path(sys.executable).parent / "reflexion"


def arguments(command: argparse.ArgumentParser, path: str = "reflexion"):
    """(command path, argument) for every argument of every command."""
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from arguments(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_argument_of_every_command_has_help_text():
    missing = [f"{path} {a.option_strings or a.dest}" for path, a in arguments(parser()) if not a.help]
    assert not missing


@pytest.mark.integration
def test_version_prints_the_installed_version_on_stdout():
    done = subprocess.run([REFLEXION, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"reflexion {version('reflexion-agents')}"


@pytest.mark.integration
@pytest.mark.parametrize("command", [[], ["ask"], ["eval"]])
def test_help_lists_every_exit_code(command):
    done = subprocess.run([REFLEXION, *command, "--help"], capture_output=True, text=True, timeout=60)
    codes = re.findall(r"^\s+(\d+)\s{2,}\S", done.stdout.split("exit codes:")[1], re.MULTILINE)
    expected = [EXIT_ANSWERED, EXIT_NO_ANSWER, EXIT_CONFIGURATION, EXIT_DATABASE, EXIT_INTERRUPTED]
    assert [int(c) for c in codes] == expected


@pytest.mark.parametrize(
    "argv",
    [["--data-dir", "/d", "ask", "q"], ["ask", "q", "--data-dir", "/d"], ["ask", "--data-dir", "/d", "q"]],
)
def test_the_data_dir_is_taken_before_or_after_the_command(argv):
    assert parser().parse_args(argv).data_dir == "/d"


def test_no_data_dir_given_leaves_it_unset():
    assert parser().parse_args(["ask", "q"]).data_dir is None


def test_ask_and_eval_name_the_agent_or_flow_choice_alike():
    for option in ("--agent", "--flow"):
        assert parser().parse_args(["ask", "q", option, "naive"]).flow == "naive"
        assert parser().parse_args(["eval", option, "planner"]).agent == "planner"


@pytest.mark.parametrize("given", [[], ["--thread", "my-thread"]])
def test_an_ask_interrupted_before_anything_was_saved_promises_no_resume(monkeypatch, capsys, tmp_path, given):
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(tmp_path / "threads.sqlite"))

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("reflexion_agents.graphs.cli.ask.runner", interrupted)
    assert main(["ask", "Who directed The Matrix?", *given]) == EXIT_INTERRUPTED
    said = capsys.readouterr().err
    assert "stopped before anything was saved: ask again" in said and "reflexion resume" not in said


@pytest.mark.integration
def test_an_ask_interrupted_after_a_saved_step_says_which_thread_to_resume(monkeypatch, capsys, tmp_path, movies_db):
    """Ctrl-C while the model writes its revision: the draft and the query's result are saved."""
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(tmp_path / "threads.sqlite"))

    def ctrl_c(messages):
        raise KeyboardInterrupt

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), ctrl_c])
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db)  # durable threads
    monkeypatch.setattr("reflexion_agents.graphs.cli.ask.runner", lambda args: agent.runner)
    assert main(["ask", "Which movies did Tom Hanks act in?", "--thread", "cut-short"]) == EXIT_INTERRUPTED
    assert "resume it with `reflexion resume cut-short`" in capsys.readouterr().err


def test_a_bare_command_prints_the_help(capsys):
    assert main([]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: reflexion") and "ask" in shown and "exit codes:" in shown


def test_a_paused_run_resumed_without_a_decision_names_the_command_lines_flag(movies_db):
    agent, _ = make_agent(movies_db, [draft(TOM_HANKS_QUERY)], require_approval=True, checkpointer=InMemorySaver())
    paused = agent.execute("Which movies did Tom Hanks act in?")
    assert paused.pending_approval is not None
    with pytest.raises(
        ConfigurationError, match=rf"reflexion resume {paused.thread_id} --decision approve\|edit\|reject"
    ):
        agent.resume(paused.thread_id)


@pytest.mark.integration
def test_make_run_passes_the_question_through_as_typed(tmp_path):
    """`$HOME`, double and single quotes reach the program unexpanded (make and the shell expand nothing)."""
    echo = tmp_path / "argv.py"
    echo.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    question = 'What did $HOME "direct", and it\'s $(whoami)?'
    done = subprocess.run(
        ["make", "-s", "run", f"PY={sys.executable} {echo}", f"QUESTION={question}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == json.dumps(["-m", "reflexion_agents.graphs.main", question])


def test_a_model_server_that_cannot_be_reached_is_named(movies_db):
    """The real OpenAI client pointed at a closed port: its "Connection error." comes with the address."""
    from langchain_openai import ChatOpenAI

    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from tests.helpers import closed_port

    address = f"http://127.0.0.1:{closed_port()}/v1"
    model = ChatOpenAI(model="gpt-4o-mini", base_url=address, api_key="sk-test", max_retries=0, timeout=5)
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
    result = agent.execute("Who directed The Matrix?")
    assert "Connection error" in result.error and address in result.error


def test_serve_refuses_a_busy_port_before_saying_where_it_serves(capsys):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == EXIT_CONFIGURATION
    said = capsys.readouterr()
    assert f"port {port} on 127.0.0.1 is taken" in said.err and "Serving" not in said.out


@pytest.mark.parametrize(
    "argv, code, kind",
    [
        (["ask", "Who?", "--graph", "no_such_graph_here", "--json"], EXIT_CONFIGURATION, "Configuration error"),
        (["resume", "no-such-thread", "--json"], EXIT_CONFIGURATION, "Configuration error"),
    ],
)
def test_with_json_every_failure_is_one_json_object_on_stdout(falkordb_server, tmp_path, argv, code, kind):
    done = subprocess.run(
        [REFLEXION, "--data-dir", str(falkordb_server.data_dir), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "REFLEXION_CHECKPOINTS": str(tmp_path / "threads.sqlite"), "REFLEXION_MODEL": "oracle"},
    )
    assert done.returncode == code, done.stderr
    failure = json.loads(done.stdout.strip().splitlines()[-1])
    assert failure["kind"] == kind and failure["exit_code"] == code and failure["message"]


def test_the_schema_config_the_readme_passes_to_biochatters_prompt_engine_ships_with_the_project():
    from reflexion_agents.nodes.graphdb import demo_data

    readme = (ROOT / "README.md").read_text()
    paths = re.findall(r'schema_config_or_info_dict="([^"]+)"', readme)
    names = re.findall(r"schema_config_or_info_dict=([A-Z_]+)\b", readme)  # the package's own, by name
    assert paths or names
    assert all((ROOT / path).is_file() for path in paths)
    assert all(f"import {name}" in readme and getattr(demo_data, name).is_file() for name in names)


@pytest.mark.integration
def test_graph_under_a_neo4j_environment_is_that_neo4j_database_never_the_embedded_demo(monkeypatch, capsys):
    """`--graph movies` with `$NEO4J_URI` set means the Neo4j database `movies`: a Neo4j that cannot be
    reached is said, not replaced by the embedded demo graph's answer."""
    from tests.helpers import closed_port
    from tests.openai_stub import OpenAIStub

    uri = f"bolt://127.0.0.1:{closed_port()}"
    monkeypatch.delenv("REFLEXION_DATABASE_URL", raising=False)
    monkeypatch.setenv("NEO4J_URI", uri)
    monkeypatch.setenv("NEO4J_PASSWORD", "secret")
    with OpenAIStub(lambda request: {"text": "never asked"}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        code = main(["ask", "Which movies did Tom Hanks act in?", "--graph", "movies"])
    said = capsys.readouterr().out
    assert code == EXIT_DATABASE and "tool_unavailable" in said and "127.0.0.1" in said  # Neo4j's address
    assert stub.requests == [] and "Cast Away" not in said


@pytest.mark.integration
def test_an_interrupted_follow_up_does_not_promise_the_earlier_finished_run(monkeypatch, capsys, tmp_path, movies_db):
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(tmp_path / "threads.sqlite"))
    from tests.helpers import revise

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)])
    KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db).execute(
        "Which movies did Tom Hanks act in?", thread_id="kept"
    )

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("reflexion_agents.graphs.cli.ask.runner", interrupted)
    assert main(["ask", "And who directed them?", "--thread", "kept"]) == EXIT_INTERRUPTED
    said = capsys.readouterr().err
    assert "stopped before anything was saved" in said and "reflexion resume" not in said
