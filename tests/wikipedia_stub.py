"""A MediaWiki API server on loopback that answers from a local corpus, so the live client's HTTP path runs offline."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from reflexion_agents.nodes.tools.wikipedia_backends import AmbiguousPageError, LocalCorpus, PageNotFoundError
from tests.loopback import LoopbackServer


class MediaWikiStub(LoopbackServer):
    """`with MediaWikiStub(corpus) as stub:` serves `stub.api_url`; `delay` stalls replies, `trickle`
    sends the body a byte at a time with that pause between bytes, `status` fails them."""

    def __init__(self, corpus: LocalCorpus, *, delay: float = 0.0, trickle: float = 0.0, status: int = 200) -> None:
        super().__init__()
        self.corpus, self.delay, self.trickle, self.status = corpus, delay, trickle, status
        self.requests: list[dict[str, str]] = []
        self.api_url = f"{self.address}/w/api.php"

    def handle(self, request: BaseHTTPRequestHandler, body: Any) -> None:
        params = {k: v[0] for k, v in parse_qs(urlparse(request.path).query).items()}
        self.requests.append({**params, "user-agent": request.headers.get("User-Agent", "")})
        time.sleep(self.delay)
        payload = self.start_json(request, self.answer(params), self.status)
        if not self.trickle:
            request.wfile.write(payload)
            return
        for i in range(len(payload)):
            request.wfile.write(payload[i : i + 1])
            request.wfile.flush()
            time.sleep(self.trickle)

    def answer(self, params: dict[str, str]) -> dict[str, Any]:
        if params.get("list") == "search":
            return {
                "query": {
                    "search": [{"title": t} for t in self.corpus.search(params["srsearch"], int(params["srlimit"]))]
                }
            }
        title = params["titles"]
        try:
            page = self.corpus.page(title)
        except PageNotFoundError:
            return {"query": {"pages": [{"title": title, "missing": True}]}}
        except AmbiguousPageError:
            return {
                "query": {"pages": [{"title": title, "pageprops": {"disambiguation": ""}, "extract": "may refer to"}]}
            }
        return {"query": {"pages": [{"title": page.title, "fullurl": page.url, "extract": page.content}]}}
