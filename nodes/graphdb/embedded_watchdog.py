"""Shut the embedded FalkorDB server down once nobody uses it, however its users ended.

Every process using the server holds a shared lock on `falkordb-server.users`; the kernel releases
it when the process ends, even by SIGKILL. Whoever then takes the exclusive lock (the last user
in its `stop()`, or this watchdog when users died without calling it) does so under the start
lock, so a process arriving at that moment either sees a running server and becomes a user first,
or finds none and starts a new one.

Run as a script (`python embedded_watchdog.py DATA_DIR SERVER_PID SERVER_PORT LOCK_FD USERS_FD`), it
needs only the standard library: it must start fast and must not import the application.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import socket
import sys
import time
from pathlib import Path
from typing import IO

USERS_FILE = "falkordb-server.users"
_LOCK_FILE = "falkordb-server.lock"  # the start lock (embedded.LOCK_FILE)
_STATE_FILE = "falkordb-server.json"  # embedded.STATE_FILE
POLL_S = 0.25


def gone(pid: int) -> bool:
    """True when `pid` has exited (a zombie counts as exited: it holds nothing but its entry)."""
    if pid <= 0:
        return True  # no such process (0 and negatives would name process groups)
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def _ask_to_stop(port: int, save: bool, timeout_s: float) -> bool:
    """Send SHUTDOWN; True once the server is on its way out (its final save, if any, done: Redis
    closes its listening socket only after it), False when it refused (the save failed)."""
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=2.0)
    except OSError:
        return True  # nothing listens any more
    with connection:
        connection.sendall(b"SHUTDOWN SAVE\r\n" if save else b"SHUTDOWN NOSAVE\r\n")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            readable, _, _ = select.select([connection], [], [], 0.05)
            if readable:
                try:
                    return not connection.recv(512).startswith(b"-")  # an error reply, or the close at exit
                except OSError:
                    return True
            if not _listening(port):
                return True
    return True  # no word within the time: it is stopped by force below


def shut_down(pid: int, port: int, timeout_s: float = 60.0) -> None:
    """Save and stop the server; without saving when it cannot save (its directory was deleted).
    Once it has saved, it is not waited for: its module threads take seconds to wind down and
    hold nothing that matters, so it is killed after a short grace."""
    if not _ask_to_stop(port, True, timeout_s):
        _ask_to_stop(port, False, timeout_s)
    deadline = time.monotonic() + 0.5
    while not gone(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
            deadline = float("inf")
        time.sleep(0.02)


def _server_state(directory: Path) -> dict[str, int] | None:
    try:
        state = json.loads((directory / _STATE_FILE).read_text())
        return {"pid": int(state["pid"]), "port": int(state["port"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def shut_down_if_unused(
    directory: Path, *, timeout_s: float = 60.0, lock: IO[str] | None = None, users: IO[str] | None = None
) -> bool:
    """Shut the directory's server down if no process holds a users lock; True when it is down."""
    with contextlib.ExitStack() as stack:
        lock = lock or stack.enter_context(open(directory / _LOCK_FILE, "w"))
        users = users or stack.enter_context(open(directory / USERS_FILE, "a"))
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # somebody uses it
            try:
                state = _server_state(directory)
                if state is not None:
                    shut_down(state["pid"], state["port"], timeout_s)
                    (directory / _STATE_FILE).unlink(missing_ok=True)
                return True
            finally:
                fcntl.flock(users, fcntl.LOCK_UN)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def watch(directory: Path, server_pid: int, server_port: int, lock: IO[str], users: IO[str]) -> None:
    """Wait until the server's last user is gone, then shut it down; return early if the server
    stops or is replaced by another. `lock` and `users` are the directory's start lock and users
    file, opened by the starter (so a directory deleted at once changes nothing)."""
    while True:
        time.sleep(POLL_S)
        state = _server_state(directory)
        if gone(server_pid) or (state is not None and state["pid"] != server_pid):
            return
        try:
            fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue
        fcntl.flock(users, fcntl.LOCK_UN)
        if state is None:  # the directory is gone: nobody can find this server again
            shut_down(server_pid, server_port)
            return
        if shut_down_if_unused(directory, lock=lock, users=users):
            return


if __name__ == "__main__":
    directory, pid, port, lock_fd, users_fd = sys.argv[1:6]
    with os.fdopen(int(lock_fd), "a") as lock_file, os.fdopen(int(users_fd), "a") as users_file:
        watch(Path(directory), int(pid), int(port), lock_file, users_file)
