"""Runs a second from `reflexion scale` with 1 and 2 server processes, 50 REST clients, a 200 ms model.

    python -m benchmarks.scale_out [--clients 50] [--runs 6] [--latency 0.2] [--jobs 16]

`reflexion scale --processes N` (in `.venv-scale`, which `make scale-env` makes) serves the
registered graphs from N processes over one PostgreSQL and one Redis. The model and the clients
are server_throughput's: each question is two model calls of `--latency` seconds and one query on
the embedded movies graph, asked through the Python SDK's `runs.wait`, each client asking `--runs`
questions one after the other, the clients spread over the processes in turn. `reflexion serve`
(LangGraph's in-memory server, one process, threads gone when it stops) is measured beside them
with the same clients, as information.

Target: 2 processes serve at least 1.5 times the runs a second of one, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import ServingCommand, machine, movies_database, result_line
from benchmarks.server_throughput import QUESTION, Server, served_env, slow_model
from reflexion_agents.graphs.cli.serve import DEFAULT_JOBS, DEFAULT_SCALE_JOBS
from reflexion_agents.nodes.graphdb.embedded import free_port
from tests.openai_stub import OpenAIStub

TARGET = 1.5
SCALE_PYTHON = Path(__file__).resolve().parent.parent / ".venv-scale" / "bin" / "python"


class Scaled:
    """`reflexion scale --processes N` on free ports, with its own PostgreSQL and Redis."""

    def __init__(self, env: dict[str, str], processes: int, jobs: int) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="scale-out-"))
        self.folder.chmod(0o755)  # PostgreSQL runs as a user of its own under root
        command = [str(SCALE_PYTHON), "-m", "reflexion_agents.graphs.cli", "scale", "--processes", str(processes)]
        command += ["--port", str(free_port()), "--jobs", str(jobs), "--state-dir", str(self.folder)]
        self.serving = ServingCommand(command, self.folder, env, "scale")
        self.urls: list[str] = []

    def __enter__(self) -> Scaled:
        state = self.folder / "servers.json"
        self.serving.wait_until(state.exists)  # written once every process answers
        self.urls = [s["url"] for s in json.loads(state.read_text())["servers"]]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.serving.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def spread_over(urls: list[str], clients: int, runs: int) -> tuple[float, float]:
    """(runs a second, median seconds a run) of `clients` SDK clients, client i on `urls[i % len(urls)]`."""
    from langgraph_sdk import get_sync_client

    for url in urls:  # warm: each process builds the graph once
        warm = get_sync_client(url=url, timeout=600)
        warm.runs.wait(warm.threads.create()["thread_id"], "kg_reflexion", input=QUESTION)
    latencies: list[float] = []
    lock = threading.Lock()

    def one_client(url: str) -> None:
        own = get_sync_client(url=url, timeout=600)
        for _ in range(runs):
            started = time.perf_counter()
            output = own.runs.wait(own.threads.create()["thread_id"], "kg_reflexion", input=QUESTION)
            assert isinstance(output, dict) and output.get("rows"), output
            with lock:
                latencies.append(time.perf_counter() - started)

    workers = [threading.Thread(target=one_client, args=(urls[i % len(urls)],)) for i in range(clients)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return clients * runs / (time.perf_counter() - started), statistics.median(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--runs", type=int, default=6, help="questions each client asks, one after the other")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the model takes per call")
    parser.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_SCALE_JOBS,
        help=f"runs each scaled process serves at once ({DEFAULT_SCALE_JOBS})",
    )
    args = parser.parse_args()
    if not SCALE_PYTHON.exists():
        raise SystemExit("make scale-env first: the scale-out runtime lives in .venv-scale")
    rows: dict[str, tuple[float, float]] = {}
    with movies_database() as db, OpenAIStub(slow_model(args.latency)) as stub:
        env = served_env(stub, db)
        for processes in (1, 2):
            with Scaled(env, processes, args.jobs) as scaled:
                rows[f"reflexion scale, {processes} process(es)"] = spread_over(scaled.urls, args.clients, args.runs)
        with Server({**env, "REFLEXION_CHECKPOINTS": "memory"}, DEFAULT_JOBS) as server:  # its own default
            rows["reflexion serve (in memory, one process)"] = spread_over([server.url], args.clients, args.runs)
    print(f"\n{args.clients} REST clients, {args.runs} runs each, model latency {args.latency:g} s, --jobs {args.jobs}")
    print(f"(`reflexion serve` with its own default, {DEFAULT_JOBS}):\n")
    print("| server | runs/s | median s a run |")
    print("|---|---:|---:|")
    for name, (rate, median) in rows.items():
        print(f"| {name} | {rate:.1f} | {median:.2f} |")
    print(f"\nThe clients, the processes, PostgreSQL, Redis and FalkorDB share the cores. Machine: {machine()}\n")
    one, two = rows["reflexion scale, 1 process(es)"][0], rows["reflexion scale, 2 process(es)"][0]
    print(result_line("scale_out_2_vs_1_processes", two / one, TARGET, unit="x", at_least=True))


if __name__ == "__main__":
    main()
