"""A MediaWiki API server on loopback that answers from a local corpus, so the live client's HTTP path runs offline."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from nodes.tools.wikipedia_backends import AmbiguousPageError, LocalCorpus, PageNotFoundError


class MediaWikiStub:
    """`with MediaWikiStub(corpus) as stub:` serves `stub.api_url`; `delay` stalls replies, `trickle`
    sends the body a byte at a time with that pause between bytes, `status` fails them."""

    def __init__(self, corpus: LocalCorpus, *, delay: float = 0.0, trickle: float = 0.0, status: int = 200) -> None:
        self.corpus, self.delay, self.trickle, self.status = corpus, delay, trickle, status
        self.requests: list[dict[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                params = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
                stub.requests.append({**params, "user-agent": self.headers.get("User-Agent", "")})
                time.sleep(stub.delay)
                payload = json.dumps(stub.answer(params)).encode()
                self.send_response(stub.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if not stub.trickle:
                    self.wfile.write(payload)
                    return
                for i in range(len(payload)):
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()
                    time.sleep(stub.trickle)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_url = f"http://127.0.0.1:{self._server.server_address[1]}/w/api.php"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def answer(self, params: dict[str, str]) -> dict[str, Any]:
        if params.get("list") == "search":
            return {"query": {"search": [{"title": t} for t in self.corpus.search(params["srsearch"], int(params["srlimit"]))]}}
        title = params["titles"]
        try:
            page = self.corpus.page(title)
        except PageNotFoundError:
            return {"query": {"pages": [{"title": title, "missing": True}]}}
        except AmbiguousPageError:
            return {"query": {"pages": [{"title": title, "pageprops": {"disambiguation": ""}, "extract": "may refer to"}]}}
        return {"query": {"pages": [{"title": page.title, "fullurl": page.url, "extract": page.content}]}}

    def __enter__(self) -> MediaWikiStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
