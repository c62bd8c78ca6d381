"""A threaded HTTP server on a free loopback port, the base of the tests' stand-in services."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _ManyClients(ThreadingHTTPServer):
    """Connections waiting to be accepted: the standard library's 5 refuses a burst of concurrent
    clients (50 runs calling a stub model at once) before the server's threads take them."""

    request_queue_size = 256


class LoopbackServer:
    """`with Server() as s:` serves at `s.address`; a subclass answers in `handle(request, body)`,
    where `body` is the decoded JSON of a POST and None for a GET."""

    def __init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.handle(self, None)

            def do_POST(self) -> None:
                server.handle(self, json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))

        self._server = _ManyClients(("127.0.0.1", 0), Handler)
        self.address = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def handle(self, request: BaseHTTPRequestHandler, body: Any) -> None:
        raise NotImplementedError

    @staticmethod
    def start_json(request: BaseHTTPRequestHandler, payload: Any, status: int = 200) -> bytes:
        """Send the status and headers of a JSON reply; return the body, for the caller to write."""
        data = json.dumps(payload).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        return data

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


class TcpPeer:
    """A TCP listener on a free loopback port that is not the server a client expects: `with TcpPeer(reply)
    as peer:` accepts at `peer.port` and answers every chunk a client sends with `reply` (None: never
    answers, holding the connection open), for the tests of how clients fail on a peer that accepts TCP
    and then stays silent or speaks another protocol. `reply` may also make a responder per connection:
    a callable returning a callable from the bytes received to the bytes to send (or None)."""

    def __init__(self, reply: bytes | Any | None = None) -> None:
        import socket

        self.reply = reply
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.connections = 0
        self._sockets: list[Any] = []
        self._closed = threading.Event()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            self._sockets.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: Any) -> None:
        respond = self.reply() if callable(self.reply) else (lambda data: self.reply)
        try:
            while data := conn.recv(65536):
                answer = respond(data)
                if answer:
                    conn.sendall(answer)
        except OSError:
            pass

    def __enter__(self) -> TcpPeer:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        import socket

        self._closed.set()
        self._listener.close()
        for conn in self._sockets:
            try:
                conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            except OSError:
                pass
