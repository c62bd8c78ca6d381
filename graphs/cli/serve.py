"""`reflexion serve` / `make serve`: every graph of `graphs.registry` behind LangGraph's development server.

It runs `langgraph dev` offline: no browser, no hot reload unless asked, no
version check against PyPI, no CLI analytics, and LangSmith tracing off unless
the environment turns it on. Threads live in the server's own store; the
model and the database come from each run's context, else the environment.

The command line's parser takes its defaults from here: this module imports the registry (and
with it LangGraph) only when the server is started.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from reflexion_agents.schemas.errors import ConfigurationError

TRACING_VARIABLES = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 2024
#: Runs the server works on at once. LangGraph's own default (10) made 50 REST clients wait in line
#: (2.1 runs/s). With the queue told of new runs (`langgraph_dev`), 50 clients of a 200 ms model got
#: 29 runs/s with 32 jobs, 34 with 50, 44 with 64 and 38 with 100 on 2 cores, beside 50-54 in-process
#: (`python -m benchmarks.server_throughput --jobs N`): past 64 the runs only share the same cores.
DEFAULT_JOBS = 64
#: The same for each process of `reflexion scale`: processes sharing the cores serve more in all with
#: fewer runs each (2 processes on 2 cores, 50 clients: 21.8 runs/s with 8 jobs each, 24.6 with 16,
#: 24.7 with 32, 21.2 with 64; `python -m benchmarks.scale_out --jobs N`).
DEFAULT_SCALE_JOBS = 16


def offline_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the server runs in: the caller's, with the offline switches set
    (a value the caller set explicitly wins)."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
    env.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")
    if not any(name in env for name in TRACING_VARIABLES):
        env["LANGSMITH_TRACING"] = "false"
    return env


def langgraph_dev_command() -> list[str]:
    """`langgraph dev` with its queue told of new runs (`graphs/cli/langgraph_dev.py` says why)."""
    import importlib.util

    parts = ("langgraph_cli", "langgraph_api", "langgraph_runtime_inmem")
    if not all(importlib.util.find_spec(name) for name in parts):
        raise ConfigurationError(
            "LangGraph's server is not installed: pip install 'reflexion-agents[serve]' (make serve does it for you)"
        )
    return [sys.executable, "-m", "reflexion_agents.graphs.cli.langgraph_dev", "dev"]


def serve_command(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    reload: bool = False,
    config: Path | None = None,
    jobs: int = DEFAULT_JOBS,
) -> list[str]:
    """The server's command line; `config` defaults to the project's langgraph.json (`graphs.registry`),
    or, where the package is installed without the repository (a wheel), one written from the registry."""
    if config is None:  # the registry imports every graph's module: not for the parser, which reads the defaults
        config = default_config()
    command = [
        *langgraph_dev_command(),
        "--config",
        str(config),
        "--host",
        host,
        "--port",
        str(port),
        "--no-browser",
        "--n-jobs-per-worker",
        str(jobs),
    ]
    return command if reload else [*command, "--no-reload"]


def default_config() -> Path:
    """The repository's `langgraph.json`; an installed package has none, so the registry's graphs are
    written to one in this user's cache (`$XDG_CACHE_HOME/reflexion-agents/`, written again at each
    start: one file, not a new folder each time; the package itself is on the import path)."""
    from reflexion_agents.graphs.registry import LANGGRAPH_JSON, write_langgraph_json

    if LANGGRAPH_JSON.exists():
        return LANGGRAPH_JSON
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reflexion-agents"
    cache.mkdir(parents=True, exist_ok=True)
    written = cache / "langgraph.json"
    write_langgraph_json(written)
    return written


def refuse_busy_port(host: str, port: int) -> None:
    """Refuse a port something already listens on. LangGraph's server would move to another port,
    and clients told the asked one would talk to whatever holds it."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise ConfigurationError(f"cannot serve on {host}: {e}") from e
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: a closing port is free
        try:
            probe.bind(address)
        except OSError as e:
            raise ConfigurationError(
                f"port {port} on {host} is taken ({e.strerror or e}): stop what holds it, or choose another "
                "with --port (make serve PORT=...)"
            ) from e


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, reload: bool = False, jobs: int = DEFAULT_JOBS) -> None:
    """Replace this process with the server (Ctrl-C stops it). langgraph.json names the registry's
    graphs by module (`graphs.registry:<name>`), so any working directory serves; the server keeps
    its threads in `.langgraph_api/` there. `reflexion serve` refuses a busy port first
    (`refuse_busy_port`), before it says where it serves."""
    command = serve_command(host, port, reload, jobs=jobs)
    os.execve(command[0], command, offline_environment())
