"""The connection a FalkorDB graph and its siblings share, and how it comes back after the embedded
server died.

A remote server that restarts is found again by redis-py on the next command (same host and
port). The embedded server is different: a new one listens on a new port, so a live agent holding
the old port would fail every run until it was rebuilt. The link notices that the server it was
given no longer answers, starts (or joins) the directory's server again, and every graph sharing
the link moves to it.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import redis
from falkordb import FalkorDB

from reflexion_agents.nodes.graphdb.deadline import DeadlineConnection, deadline_after
from reflexion_agents.nodes.graphdb.quarantine import Quarantine, quarantine_of


def _client(host: str, port: int, options: dict[str, Any]) -> FalkorDB:
    # Every reply is read under the deadline of the query waiting for it (nodes/graphdb/deadline.py);
    # no silent retry: a timed-out query sent again would only start a second runaway on the server.
    pool = redis.ConnectionPool(
        connection_class=DeadlineConnection, host=host, port=port, decode_responses=True, **options
    )
    # The client asks the server about itself at once (INFO); a peer that accepts and stays silent
    # must not hold the caller for the socket timeout (120 s).
    with deadline_after(options.get("socket_connect_timeout") or 5.0):
        return FalkorDB(connection_pool=pool)


class FalkorDBLink:
    """One server connection (pool and client); `generation` grows each time it is remade."""

    def __init__(self, host: str, port: int, server: Any = None, **options: Any) -> None:
        self.host, self.port, self.server = host, int(port), server
        self._options = options
        self.client = _client(self.host, self.port, options)
        self.generation = 0
        self._lock = threading.Lock()

    @property
    def quarantine(self) -> Quarantine | None:
        """The quarantined queries of the embedded server's data directory; None for a remote server."""
        data_dir = getattr(self.server, "data_dir", None)
        return quarantine_of(data_dir) if data_dir is not None else None

    def reconnect_embedded(self, generation: int) -> bool:
        """After a connection failure seen at `generation`: if the embedded server is gone, start
        (or join) the directory's server again and connect to it. True when the caller may retry."""
        from reflexion_agents.nodes.graphdb.embedded import answers_ping, shared_server

        if self.server is None:
            return False
        with self._lock:
            if self.generation != generation:
                return True  # another thread has reconnected already
            if answers_ping(self.port):
                return False  # the server is there: the failure was something else
            self.server.stop()  # the dead server's users lock and state file
            self.server = shared_server(self.server.data_dir)
            self.close()
            self.host, self.port = self.server.host, self.server.port
            self.client = _client(self.host, self.port, self._options)
            self.generation += 1
            return True

    def close(self) -> None:
        """Close the idle connections (a query another graph runs on this link keeps its own; the
        pool opens new ones when the link is used again)."""
        self.client.connection.connection_pool.disconnect(inuse_connections=False)


_shared: weakref.WeakValueDictionary[tuple[Any, ...], FalkorDBLink] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()


def shared_link(host: str, port: int, server: Any = None, **options: Any) -> FalkorDBLink:
    """The one link of this process to a server (same address, credentials and embedded server):
    graphs opened by name, as many as runs ask for, share its connections instead of each keeping
    a pool and a socket of their own."""
    key = (host.lower(), int(port), id(server), *sorted(options.items()))
    with _shared_lock:
        link = _shared.get(key)
        if link is None:
            link = _shared[key] = FalkorDBLink(host, port, server, **options)
        return link
