"""`make run`'s main job, as a user runs it: a subprocess with only environment variables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import TOM_HANKS_QUERY, closed_port, kg_model
from tests.openai_stub import OpenAIStub, revision_scoring_model

pytestmark = pytest.mark.integration  # each test runs the main job in a process of its own

ROOT = Path(__file__).resolve().parents[1]


def run_main(env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFLEXION_"))}
    env["REFLEXION_CHECKPOINTS"] = os.environ["REFLEXION_CHECKPOINTS"]  # the suite's scratch file, not the user's
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "reflexion_agents.graphs.main", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_a_model_key_it_says_how_to_configure_one(tmp_path):
    done = run_main({"REFLEXION_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr and "OPENAI_BASE_URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_an_openai_compatible_server_it_answers_and_prints_each_step(tmp_path):
    with OpenAIStub(kg_model) as stub:
        done = run_main(
            {
                "OPENAI_BASE_URL": stub.base_url,
                "REFLEXION_DATA_DIR": str(tmp_path),
                "REFLEXION_MODEL": "openai:local-model",
            }
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Loaded the movies graph" in out
    assert "[draft] query:" in out and "[execute 1] 0 row(s)" in out and "[revise 1] score 2;" in out
    assert '[execute 2] 12 row(s) of title: [["' in out  # rows as JSON, as the summary shows them
    assert "Stopped: score_threshold after 2 step(s); score 9;" in out and '"Cast Away"' in out
    assert "None" not in out and "['" not in out  # no Python reprs
    assert {r["model"] for r in stub.requests} == {"local-model"}
    # The data directory keeps the graph: a second run does not load it again.
    with OpenAIStub(kg_model) as stub:
        again = run_main(
            {"OPENAI_BASE_URL": stub.base_url, "REFLEXION_DATA_DIR": str(tmp_path)},
            "Which movies did Tom Hanks act in?",
        )
    assert again.returncode == 0 and "Loaded the movies graph" not in again.stdout


def test_a_model_that_scores_its_own_revision_gets_the_fix_run_and_printed(tmp_path):
    """A model that scores the query it just wrote (8/10 on the error turn) must not end the run on the
    broken query: the fix runs and its rows are the answer."""
    broken = TOM_HANKS_QUERY.replace("(m:Movie)", "(m:Movie")
    with OpenAIStub(revision_scoring_model(broken, TOM_HANKS_QUERY)) as stub:
        done = run_main({"OPENAI_BASE_URL": stub.base_url, "REFLEXION_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[execute 1] error" in out and "[revise 1] score 8/10;" in out and "did not end the run" in out
    assert "[execute 2] 12 row(s)" in out
    assert f"Answer query: {TOM_HANKS_QUERY}" in out and '"Cast Away"' in out and "It failed" not in out


def test_a_missing_provider_package_and_an_empty_model_name_are_configuration_errors(tmp_path):
    for model, said in (("anthropic:claude-sonnet-4-5", "langchain-anthropic"), ("openai:", "names no model")):
        done = run_main(
            {"REFLEXION_MODEL": model, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "REFLEXION_DATA_DIR": str(tmp_path)}
        )
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_neo4j_uri_is_the_database_and_a_closed_port_exits_3_before_any_model_call(tmp_path):
    with OpenAIStub(kg_model) as stub:
        for uri in (f"bolt://127.0.0.1:{closed_port()}", f"neo4j://127.0.0.1:{closed_port()}"):
            done = run_main(
                {
                    "OPENAI_BASE_URL": stub.base_url,
                    "REFLEXION_DATA_DIR": str(tmp_path),
                    "NEO4J_URI": uri,
                    "NEO4J_USERNAME": "neo4j",
                    "NEO4J_PASSWORD": "secret",
                }
            )
            assert done.returncode == 3, done.stdout + done.stderr
            assert f"Neo4j at {uri} is unreachable" in done.stdout and "Loaded the movies graph" not in done.stdout
            assert done.stderr.strip() == ""  # the driver's own warnings are not printed on top of the error
        assert stub.requests == []
