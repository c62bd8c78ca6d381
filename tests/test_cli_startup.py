"""The command line answers its help and argument errors without importing what its commands run on.

Importing LangGraph alone takes about a second, so `reflexion --help`, each command's `--help` and an
argument error must import none of LangGraph, LangChain, LangSmith, the database drivers (numpy
comes with the neo4j driver) or pydantic; a command imports them when it runs. The values the
parser shows without those imports must be the ones the settings and the commands' modules hold.
(`benchmarks/cli_startup.py` measures the time; these tests check behaviour only.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_agents.graphs.cli import parser

pytestmark = pytest.mark.integration  # the command line started in processes of its own

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "langgraph",
    "langgraph_sdk",
    "langchain",
    "langchain_core",
    "langsmith",
    "neo4j",
    "falkordb",
    "numpy",
    "pydantic",
)
SCRIPT = Path(sys.executable).parent / "reflexion"  # the console script pyproject installs


def _subcommands(root: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


COMMANDS = sorted(_subcommands(parser()))


def reflexion(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the command line in a fresh process: its result, and the top-level packages it imported."""
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "reflexion_agents.graphs.cli"]
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}  # `-X importtime`: every module imported, on stderr
    done = subprocess.run([*command, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    modules = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    return done, modules


def test_the_help_imports_none_of_the_heavy_packages():
    done, modules = reflexion("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: reflexion") and "ask a knowledge-graph question" in done.stdout
    assert sorted(modules.intersection(HEAVY)) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_each_commands_help_imports_none_of_the_heavy_packages(command):
    done, modules = reflexion(command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: reflexion {command}")
    assert sorted(modules.intersection(HEAVY)) == []


@pytest.mark.parametrize(
    "args",
    [
        ["ask"],  # no question
        ["ask", "Who?", "--flow", "nope"],
        ["eval", "--limit", "many"],
        ["load", "file.csv", "--no-such-option"],
    ],
)
def test_an_argument_error_imports_none_of_the_heavy_packages(args):
    done, modules = reflexion(*args)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert errors[0].startswith("usage: reflexion") and errors[-1].startswith("reflexion")
    assert sorted(modules.intersection(HEAVY)) == []


def test_a_bare_command_prints_its_help_without_the_heavy_packages():
    done, modules = reflexion()
    assert done.returncode == 0 and done.stdout.startswith("usage: reflexion") and "exit codes:" in done.stdout
    assert sorted(modules.intersection(HEAVY)) == []


def _option(command: str, option: str) -> argparse.Action:
    sub = _subcommands(parser())[command]
    return next(a for a in sub._actions if option in a.option_strings)


def test_the_parser_offers_the_flows_and_agents_the_commands_run():
    from reflexion_agents.graphs.cli.ask import ASKABLE
    from reflexion_agents.graphs.evaluation import AGENTS
    from reflexion_agents.graphs.text2cypher_flow import FLOWS
    from reflexion_agents.schemas.constants import FLOW_NAMES

    assert FLOW_NAMES == FLOWS
    assert list(_option("ask", "--flow").choices or []) == list(ASKABLE)
    assert list(_option("resume", "--flow").choices or []) == list(ASKABLE)
    assert tuple(_option("eval", "--agent").choices or []) == AGENTS


def test_the_parser_shows_the_defaults_the_settings_and_commands_hold():
    from reflexion_agents.graphs import evaluation
    from reflexion_agents.graphs.cli.serve import DEFAULT_HOST, DEFAULT_PORT
    from reflexion_agents.nodes.models import resolve
    from reflexion_agents.schemas.settings import AGENT_DEFAULTS, EXTRACTION_DEFAULTS, ExtractionSettings, setting_help

    retries = _option("extract", "--max-retries")
    assert retries.default == EXTRACTION_DEFAULTS.max_retries
    assert retries.help == setting_help(ExtractionSettings, "max_retries")
    assert f"(default {AGENT_DEFAULTS.max_steps})" in str(_option("ask", "--max-steps").help)
    assert _option("eval", "--max-steps").default == evaluation.EVAL_MAX_STEPS
    assert _option("eval", "--query-timeout").default == evaluation.EVAL_QUERY_TIMEOUT_S
    assert f"${resolve.MODEL_ENV}, else {resolve.DEFAULT_MODEL}" in str(_option("eval", "--model").help)
    assert (_option("serve", "--host").default, _option("serve", "--port").default) == (DEFAULT_HOST, DEFAULT_PORT)


def test_each_command_runs_the_function_of_its_module():
    import importlib

    from reflexion_agents.graphs.cli import LazyCommand

    in_modules = 0
    for command, sub in _subcommands(parser()).items():
        run = sub.get_default("run")
        assert callable(run), command
        if isinstance(run, LazyCommand):  # the others (draw, serve) run in graphs.cli itself
            assert callable(getattr(importlib.import_module(f"reflexion_agents.graphs.cli.{run.module}"), run.name)), (
                command
            )
            in_modules += 1
    assert in_modules == 10  # every command but draw and serve


GRAPHDB_CHECK = """
import sys
import reflexion_agents.nodes.graphdb
import reflexion_agents.nodes.graphdb.locations
assert not {"neo4j", "falkordb", "numpy", "pydantic"} & set(sys.modules), sorted(sys.modules)
from reflexion_agents.nodes.graphdb.connect import open_database  # binds the submodule `connect` on the package first
from reflexion_agents.nodes.graphdb import connect, Neo4jGraph
assert callable(connect) and connect.__module__ == "reflexion_agents.nodes.graphdb.connect", connect
assert Neo4jGraph.__module__ == "reflexion_agents.nodes.graphdb.neo4j_graph" and "neo4j" in sys.modules
namespace = {}
exec("from reflexion_agents.nodes.graphdb import *", namespace)
assert sorted(set(namespace) - {"__builtins__"}) == sorted(reflexion_agents.nodes.graphdb.__all__)
assert set(reflexion_agents.nodes.graphdb.__all__) <= set(dir(reflexion_agents.nodes.graphdb))
try:
    reflexion_agents.nodes.graphdb.no_such_name
except AttributeError:
    pass
else:
    raise AssertionError("no_such_name")
"""


def test_the_graphdb_package_imports_its_names_when_first_used():
    done = subprocess.run(
        [sys.executable, "-c", GRAPHDB_CHECK], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
