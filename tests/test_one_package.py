"""The project installs one importable name, `reflexion_agents`: a user's own `graphs.py`, `nodes.py`
and `schemas.py` (a FastAPI app commonly has a one-line `schemas.py`) break nothing, whether the
library is imported, its every module loaded, an agent run, or the command line used from there."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # the library used from another folder, in processes of their own

# What a user's project folder holds: modules named as the project's folders are, none a package.
USERS_OWN = {
    "graphs.py": "CHARTS = ['bar', 'pie']\n",
    "nodes.py": "raise ImportError('the user nodes module was imported')\n",
    "schemas.py": "from pydantic import BaseModel\n\nclass Item(BaseModel):\n    name: str\n",
}

EVERY_MODULE = textwrap.dedent(
    """
    import importlib, pkgutil, sys
    import reflexion_agents
    import schemas  # the user's own
    assert schemas.Item(name="x").name == "x"
    names = [m.name for m in pkgutil.walk_packages(reflexion_agents.__path__, "reflexion_agents.")]
    for name in names:
        if name.endswith(".__main__") or name == "reflexion_agents.graphs.main":
            continue  # programs: importing one runs it
        importlib.import_module(name)
    assert sys.modules["schemas"].__file__.endswith("schemas.py")  # still the user's
    assert "nodes" not in sys.modules  # the user's nodes.py raises when imported: nothing did
    assert "graphs" not in sys.modules  # nor the user's graphs.py
    from reflexion_agents import KGQueryReflexionAgent, Text2CypherFlow, ReflexionAgent, ResponderWithRetries
    print(len(names))
    """
)

AN_AGENT_RUNS = textwrap.dedent(
    """
    import sys
    import graphs, schemas  # the user's own, imported first
    from reflexion_agents import FalkorDBGraph, KGQueryReflexionAgent
    from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply

    query = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
    db = FalkorDBGraph("movies", host=sys.argv[1], port=int(sys.argv[2]))
    revise = lambda score: tool_reply("ReviseQuery", {"answer": query, "reflection": "ok", "score": score,
                                                       "search_queries": [], "revised_query": query})
    model = ScriptedChatModel(replies=[revise(9), revise(9), revise(9)])
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=db, checkpointer=None)
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert ["Cast Away"] in result.query_rows, result
    print(result.stop_reason)
    """
)


@pytest.fixture
def users_folder(tmp_path: Path) -> Path:
    for name, text in USERS_OWN.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def run_in(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """`command` run as a user runs it from `folder`: that folder first on the import path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_every_module_imports_beside_the_users_own_graphs_nodes_and_schemas(users_folder):
    done = run_in(users_folder, sys.executable, "-c", EVERY_MODULE)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100  # every module of the package, not a few


def test_an_agent_runs_beside_the_users_own_modules(users_folder, movies_db):
    done = run_in(users_folder, sys.executable, "-c", AN_AGENT_RUNS, movies_db.host, str(movies_db.port))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("score_threshold", "non_empty_result")


def test_the_command_line_runs_beside_the_users_own_modules(users_folder):
    reflexion = Path(sys.executable).with_name("reflexion")
    done = run_in(users_folder, str(reflexion), "--help")
    assert done.returncode == 0, done.stderr
    assert "extract" in done.stdout
    assert run_in(users_folder, sys.executable, "-m", "reflexion_agents.graphs.main", "--help").returncode == 0


def test_no_generic_top_level_name_is_installed():
    """Outside the repository nothing but `reflexion_agents` is importable from the project."""
    probe = "import importlib.util as u; print([n for n in ('graphs', 'nodes', 'schemas') if u.find_spec(n)])"
    done = run_in(Path("/"), sys.executable, "-c", probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_no_module_imports_a_private_module_of_langgraph_or_langchain():
    """A private module (`langgraph._internal`) may move in any release: every import is public."""
    import ast

    import reflexion_agents

    root = Path(reflexion_agents.__file__).parent
    sources = [Path(d, f) for d, _, files in os.walk(root, followlinks=True) for f in files if f.endswith(".py")]
    private = []
    for path in sorted(sources):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.split(".")[0] in {"langgraph", "langchain", "langchain_core"} and "._" in name:
                    private.append(f"{path.relative_to(root)}: {name}")
    assert len(sources) > 100  # the links to the folders are followed
    assert private == []
