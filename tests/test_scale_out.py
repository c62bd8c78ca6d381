"""`reflexion scale`: the registered graphs from two server processes over one PostgreSQL and one Redis,
started as `make scale` starts them (in `.venv-scale`, which `make test` makes), driven with the
official `langgraph_sdk` client. A run started through one process streams, pauses and resumes
through the other, and a run whose process is killed with SIGKILL is finished by the other."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.helpers import TOM_HANKS_QUERY, free_port, served_env, wait_until
from tests.openai_stub import OpenAIStub
from tests.test_langgraph_server import model_reply

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parent.parent
SCALE_PYTHON = REPO / ".venv-scale" / "bin" / "python"
QUESTION = {"messages": [{"role": "user", "content": "Which movies did Tom Hanks act in?"}]}
GUARD_S = 180.0  # a guard against a hang, never a bound on speed


class SlowModel:
    """The tests' knowledge-graph model, answering after `delay_s` seconds: a run lasts long enough to
    be killed in the middle."""

    def __init__(self) -> None:
        self.delay_s = 0.0
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.calls += 1
        time.sleep(self.delay_s)
        return model_reply(request)


def _require_scale_env() -> None:
    if not SCALE_PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail("CI must run the scale-out test: `make test` makes .venv-scale (make scale-env)")
        pytest.skip("the scale-out runtime is not installed (make scale-env)")


def _new_state() -> Path:
    state = Path(tempfile.mkdtemp(prefix="reflexion-scale-test-"))  # PostgreSQL runs as its own user under root
    state.chmod(0o755)
    return state


def _free_ports(count: int) -> int:
    port = free_port()
    while any(_taken(p) for p in range(port, port + count)):
        port = free_port()
    return port


@contextlib.contextmanager
def scale_command(state: Path, env: dict[str, str], processes: int, port: int) -> Iterator[None]:
    """`reflexion scale` as `make scale` runs it, until the block ends (then SIGTERM, as a service
    manager stops it)."""
    (state / "servers.json").unlink(missing_ok=True)
    command = [str(SCALE_PYTHON), "-m", "reflexion_agents.graphs.cli", "scale", "--processes", str(processes)]
    command += ["--port", str(port), "--state-dir", str(state), "--jobs", "8"]
    with (state / "scale.log").open("a") as log:
        process = subprocess.Popen(
            command, cwd=state, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            serving = lambda: _serving(state, processes) or process.poll() is not None  # noqa: E731
            wait_until(serving, "the processes serving", GUARD_S)
            assert process.poll() is None, (state / "scale.log").read_text()
            yield
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=GUARD_S)


@pytest.fixture(scope="module")
def scaled(falkordb_server, movies_db) -> Iterator[tuple[list[str], SlowModel, Path]]:
    """`reflexion scale --processes 2` on free ports: the two URLs, the model, the state folder."""
    _require_scale_env()
    port, state, model = _free_ports(2), _new_state(), SlowModel()
    try:
        with OpenAIStub(model) as stub:
            env = served_env(stub, falkordb_server, REFLEXION_DATA_DIR=str(state / "data"))
            with scale_command(state, env, 2, port):
                yield [f"http://127.0.0.1:{p}" for p in (port, port + 1)], model, state
    finally:
        subprocess.run(["rm", "-rf", str(state)], check=False)


def _taken(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/ok", timeout=0.5)
    except httpx.HTTPError:
        return False
    return True


def _serving(state: Path, processes: int) -> bool:
    try:
        servers = json.loads((state / "servers.json").read_text())["servers"]
    except (OSError, ValueError, KeyError):
        return False
    return len(servers) == processes


def _servers(state: Path) -> list[dict[str, Any]]:
    servers: list[dict[str, Any]] = json.loads((state / "servers.json").read_text())["servers"]
    return servers


def test_a_run_started_on_one_process_streams_through_the_other(scaled):
    (first, second), model, _ = scaled
    model.delay_s = 0.3
    started, follower = get_sync_client(url=first), get_sync_client(url=second)
    thread = started.threads.create()["thread_id"]
    run = started.runs.create(thread, "kg_reflexion", input=QUESTION)
    events = [part.event for part in follower.runs.join_stream(thread, run["run_id"])]
    assert "values" in events and "error" not in events
    values = follower.threads.get_state(thread)["values"]
    assert values["query"] == TOM_HANKS_QUERY and ["Cast Away"] in values["rows"]
    assert values["messages"][-1]["type"] == "ai" and "Cast Away" in values["messages"][-1]["content"]
    assert started.runs.get(thread, run["run_id"])["status"] == "success"


def test_a_run_paused_on_one_process_is_resumed_through_the_other(scaled):
    (first, second), model, _ = scaled
    model.delay_s = 0.0
    asking, approving = get_sync_client(url=first), get_sync_client(url=second)
    thread = asking.threads.create()["thread_id"]
    asking.runs.wait(thread, "kg_reflexion", input=QUESTION, context={"require_approval": True})
    paused = approving.threads.get_state(thread)
    assert paused["next"] == ["execute_tool"]
    request = paused["tasks"][0]["interrupts"][0]["value"]
    assert request["action_requests"][0]["args"] == {"query": TOM_HANKS_QUERY}
    approving.runs.wait(thread, "kg_reflexion", command={"resume": {"decisions": [{"type": "approve"}]}})
    values = asking.threads.get_state(thread)["values"]
    assert values["outcomes"][0]["action"] == TOM_HANKS_QUERY and ["Cast Away"] in values["rows"]


def test_a_run_survives_the_sigkill_of_the_process_running_it(scaled):
    (first, second), model, state = scaled
    model.delay_s = 2.0  # each model call: the run is still going when its process dies
    client = get_sync_client(url=first)
    thread = client.threads.create()["thread_id"]
    calls = model.calls
    run = client.runs.create(thread, "kg_reflexion", input=QUESTION)["run_id"]
    wait_until(lambda: model.calls > calls, "the run's first model call", GUARD_S)
    running = [s for s in _servers(state) if _runs(s, run)]
    assert len(running) == 1, "the process running it says so in its log"
    victim = running[0]
    os.kill(victim["pid"], signal.SIGKILL)
    other = second if victim["url"] == first else first
    finished = get_sync_client(url=other, timeout=GUARD_S).runs.join(thread, run)
    assert finished["query"] == TOM_HANKS_QUERY and ["Cast Away"] in finished["rows"]
    assert get_sync_client(url=other).runs.get(thread, run)["status"] == "success"
    humans = [m for m in finished["messages"] if m["type"] == "human"]
    assert len(humans) == 1  # taken up from its checkpoint, the question not asked twice
    # the command started the killed process again, on its port
    wait_until(lambda: _restarted(state, victim), "the killed process started again", GUARD_S)
    assert httpx.get(f"{victim['url']}/ok", timeout=10).json() == {"ok": True}


def _runs(server: dict[str, Any], run: str) -> bool:
    """Whether `server`'s log says it started `run` (the process that took the request logs the run's
    creation, which may be the other one)."""
    lines = Path(server["log"]).read_text(errors="replace").splitlines()
    return any("Starting background run" in line and run in line for line in lines)


def _restarted(state: Path, victim: dict[str, Any]) -> bool:
    now = next(s for s in _servers(state) if s["port"] == victim["port"])
    return bool(now["pid"] != victim["pid"] and _taken(victim["port"]))


def test_the_web_page_is_served_by_every_process(scaled):
    """langgraph.json's web app (`http.app`), which the runtime could not start without the fix in
    `graphs/cli/langhost_server.py`."""
    urls, _, _ = scaled
    for url in urls:
        page = httpx.get(f"{url}/ui", timeout=30)
        assert page.status_code == 200 and "/ui/static/vendor/force-graph.min.js" in page.text
        assert "movies" in httpx.get(f"{url}/ui/api/graphs", timeout=30).text


def test_threads_outlive_the_command(falkordb_server, movies_db):
    """Stopped and started again on the same state folder, the command serves the threads it had."""
    _require_scale_env()
    port, state = _free_ports(1), _new_state()
    try:
        with OpenAIStub(model_reply) as stub:
            env = served_env(stub, falkordb_server, REFLEXION_DATA_DIR=str(state / "data"))
            with scale_command(state, env, 1, port):
                client = get_sync_client(url=f"http://127.0.0.1:{port}")
                thread = client.threads.create()["thread_id"]
                client.runs.wait(thread, "kg_reflexion", input=QUESTION)
            with scale_command(state, env, 1, port):
                values = get_sync_client(url=f"http://127.0.0.1:{port}").threads.get_state(thread)["values"]
                assert values["query"] == TOM_HANKS_QUERY and ["Cast Away"] in values["rows"]
    finally:
        subprocess.run(["rm", "-rf", str(state)], check=False)
