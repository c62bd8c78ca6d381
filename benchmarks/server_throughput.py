"""Runs a second through LangGraph's server (`reflexion serve`) at 1 and 50 REST clients, beside the
same graph in this process, with a model that answers in 200 ms.

    python -m benchmarks.server_throughput [--clients 1 50] [--runs 4] [--latency 0.2] [--jobs N]

The model is a local OpenAI-compatible server (the real `langchain-openai` client talks to it) that
waits `--latency` seconds per call, as a remote model does, then drafts the Tom Hanks query and keeps
it with a score of 9: each question is two model calls and one query on the embedded movies graph.
Each client asks `--runs` questions one after the other, each in a thread of its own, through the
Python SDK's `runs.wait` (REST). In-process, the same number of asyncio tasks run
`graph.ainvoke` on the graph `registry.build("kg_reflexion", ...)` makes, the server's own kind,
with threads kept in memory as the development server keeps them.

LangGraph's in-memory runtime looks for new runs every 0.5 s when it is idle; `reflexion serve` tells
its queue when a run arrives (`graphs/cli/langgraph_dev.py`), so the 1-client row is the in-process
one plus HTTP, not plus a wait in line. `REFLEXION_SERVER_POLL_S` in the environment sets the look.

Target: at 50 clients the server, with `reflexion serve`'s default `--jobs`, serves at least 60% of
the in-process runs/s (measured in the same run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.harness import ServingCommand, machine, movies_database, result_line
from reflexion_agents.graphs.cli.serve import DEFAULT_JOBS
from reflexion_agents.nodes.graphdb.embedded import free_port
from tests.openai_stub import OpenAIStub, tool_names

TARGET = 0.6  # the server's runs/s against in-process, at the most clients
QUERY = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
QUESTION = {"messages": [{"role": "user", "content": "Which movies did Tom Hanks act in?"}]}


def slow_model(latency_s: float) -> Any:
    """Draft the query, then keep it with a high score, each after `latency_s`."""

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(latency_s)
        if "GenerateQuery" in tool_names(request):
            return {"tool": "GenerateQuery", "args": {"answer": QUERY, "reflection": "draft", "search_queries": []}}
        args = {"answer": QUERY, "reflection": "fine", "revised_query": QUERY, "score": 9}
        return {"tool": "ReviseQuery", "args": args}

    return reply


def served_env(stub: OpenAIStub, db: Any, **more: str) -> dict[str, str]:
    """The environment a served process runs in: the stub model and the movies graph of `db`."""
    return {
        **os.environ,
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "not-needed",
        "REFLEXION_DATABASE_URL": f"falkordb://{db.host}:{db.port}",
        "REFLEXION_GRAPH": db.graph_name,
        **more,
    }


class Server:
    """`reflexion serve` in a process of its own, on the movies graph and the stub model."""

    def __init__(self, env: dict[str, str], jobs: int | None) -> None:
        self.port, self.folder = free_port(), Path(tempfile.mkdtemp(prefix="server-throughput-"))
        command = [sys.executable, "-m", "reflexion_agents.graphs.cli", "serve", "--port", str(self.port)]
        self.serving = ServingCommand([*command, *(["--jobs", str(jobs)] if jobs else [])], self.folder, env, "server")
        self.url = f"http://127.0.0.1:{self.port}"

    def answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/ok", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def __enter__(self) -> Server:
        self.serving.wait_until(self.answers)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.serving.stop()


def through_rest(url: str, clients: int, runs: int) -> tuple[float, float]:
    """(runs a second, median seconds a run) of `clients` SDK clients asking `runs` questions each."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=url, timeout=600)
    kg = client.assistants.search(graph_id="kg_reflexion")[0]["assistant_id"]
    client.runs.wait(client.threads.create()["thread_id"], kg, input=QUESTION)  # warm: the graph is built
    latencies: list[float] = []
    lock = threading.Lock()

    def one_client() -> None:
        own = get_sync_client(url=url, timeout=600)
        for _ in range(runs):
            started = time.perf_counter()
            output = own.runs.wait(own.threads.create()["thread_id"], kg, input=QUESTION)
            assert isinstance(output, dict) and output.get("rows"), output
            with lock:
                latencies.append(time.perf_counter() - started)

    workers = [threading.Thread(target=one_client) for _ in range(clients)]
    started, cpu = time.perf_counter(), time.process_time()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - started
    CLIENT_CPU[clients] = (time.process_time() - cpu) / wall
    return clients * runs / wall, statistics.median(latencies)


#: The share of one core the REST clients themselves used, by number of clients (they share the machine).
CLIENT_CPU: dict[int, float] = {}


def in_process(base_url: str, database: Any, clients: int, runs: int) -> tuple[float, float]:
    """(runs a second, median seconds a run) of the same graph, `clients` asyncio tasks in this process."""
    from langchain_openai import ChatOpenAI

    from reflexion_agents.graphs import registry

    model = ChatOpenAI(model="stub", base_url=base_url, api_key="not-needed", max_retries=0)
    # kept in memory, a thread a question, as the server keeps them
    graph = registry.build("kg_reflexion", model=model, database=database, checkpointer=InMemorySaver()).graph
    latencies: list[float] = []

    async def one_client() -> None:
        for _ in range(runs):
            started = time.perf_counter()
            output = await graph.ainvoke(QUESTION, {"configurable": {"thread_id": uuid.uuid4().hex}})
            assert output.get("rows"), output
            latencies.append(time.perf_counter() - started)

    async def all_clients() -> float:
        await graph.ainvoke(QUESTION, {"configurable": {"thread_id": "warm"}})
        latencies.clear()
        started = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        return time.perf_counter() - started

    wall = asyncio.run(all_clients())
    return clients * runs / wall, statistics.median(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--runs", type=int, default=4, help="questions each client asks, one after the other")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the model takes per call")
    parser.add_argument(
        "--jobs", type=int, default=None, help=f"the server's --jobs (default: its own, {DEFAULT_JOBS})"
    )
    args = parser.parse_args()

    rows = []
    with movies_database() as db, OpenAIStub(slow_model(args.latency)) as stub:
        env = served_env(stub, db, REFLEXION_CHECKPOINTS="memory")
        local = {clients: in_process(stub.base_url, db, clients, args.runs) for clients in args.clients}
        with Server(env, args.jobs) as server:
            for clients in args.clients:
                served = through_rest(server.url, clients, args.runs)
                rows.append((clients, local[clients], served))

    jobs = args.jobs or DEFAULT_JOBS
    print(f"\n`reflexion serve --jobs {jobs}`, model latency {args.latency:g} s, {args.runs} runs a client")
    print("| clients | in-process runs/s | median s | server runs/s | median s | server / in-process |")
    print("|---:|---:|---:|---:|---:|---:|")
    for clients, (local_rate, local_median), (rate, median) in rows:
        ratio = rate / local_rate
        print(f"| {clients} | {local_rate:.1f} | {local_median:.2f} | {rate:.1f} | {median:.2f} | {ratio:.2f} |")
    for clients, share in CLIENT_CPU.items():
        print(f"The {clients} REST client(s) used {share:.0%} of a core themselves (their HTTP and JSON).")
    print(f"\nMachine: {machine()}\n")
    most, (local_rate, _), (rate, _) = rows[-1]
    print(result_line(f"server_throughput_{most}_clients_vs_in_process", rate / local_rate, TARGET, at_least=True))


if __name__ == "__main__":
    main()
