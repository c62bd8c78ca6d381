"""`make run`'s main job, as a user runs it: a subprocess with only environment variables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.openai_stub import OpenAIStub
from tests.test_seed_usage import kg_model

ROOT = Path(__file__).resolve().parents[1]


def run_main(env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFLEXION_"))}
    env["REFLEXION_CHECKPOINTS"] = os.environ["REFLEXION_CHECKPOINTS"]  # the suite's scratch file, not the user's
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "graphs.main", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_without_a_model_key_it_says_how_to_configure_one(tmp_path):
    done = run_main({"REFLEXION_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr and "OPENAI_BASE_URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_an_openai_compatible_server_it_answers_and_prints_each_step(tmp_path):
    with OpenAIStub(kg_model) as stub:
        done = run_main({"OPENAI_BASE_URL": stub.base_url, "REFLEXION_DATA_DIR": str(tmp_path), "REFLEXION_MODEL": "openai:local-model"})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Loaded the movies graph" in out
    assert "[draft] query:" in out and "[execute 1] 0 row(s)" in out and "[revise 1] score: '2'" in out
    assert "[execute 2] 12 row(s)" in out
    assert "Stopped: score_threshold after 2 step(s)" in out and '"Cast Away"' in out
    assert {r["model"] for r in stub.requests} == {"local-model"}
    # The data directory keeps the graph: a second run does not load it again.
    with OpenAIStub(kg_model) as stub:
        again = run_main({"OPENAI_BASE_URL": stub.base_url, "REFLEXION_DATA_DIR": str(tmp_path)}, "Which movies did Tom Hanks act in?")
    assert again.returncode == 0 and "Loaded the movies graph" not in again.stdout
