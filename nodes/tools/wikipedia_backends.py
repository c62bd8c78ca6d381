"""Where Wikipedia pages come from: the live MediaWiki API, or a local corpus file.

Both answer the same two questions: the page with this exact title (following
redirects; a missing or disambiguation page is an error carrying its title), and
the titles a full-text search finds. The live client speaks the API the
`wikipedia` package uses, over httpx with a timeout and a User-Agent; that
package sends requests with no timeout at all, so one stalled connection would
hang an agent forever, and it keeps its endpoint in a module global.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from reflexion_agents.schemas.errors import ReflexionError

DEFAULT_API_URL = "https://en.wikipedia.org/w/api.php"
USER_AGENT = "reflexion-agents/0.1 (ReAct Wikipedia tool; https://www.mediawiki.org/wiki/API:Etiquette)"
SAMPLE_CORPUS = Path(__file__).parent / "demo" / "wikipedia_sample.json"


class WikipediaError(ReflexionError):
    """Wikipedia could not answer (network, HTTP status, an unexpected reply)."""


class PageNotFoundError(WikipediaError):
    def __init__(self, title: str) -> None:
        super().__init__(f"no page titled {title!r}")
        self.title = title


class AmbiguousPageError(WikipediaError):
    def __init__(self, title: str) -> None:
        super().__init__(f"{title!r} is a disambiguation page")
        self.title = title


@dataclass(frozen=True)
class WikiPage:
    title: str
    url: str
    content: str  # plain text, sections separated by `== Heading ==` lines


class WikipediaBackend(Protocol):
    def page(self, title: str) -> WikiPage:
        """The page titled exactly `title` (after redirects); PageNotFoundError / AmbiguousPageError."""
        ...

    def search(self, query: str, limit: int = 10) -> list[str]:
        """Titles of pages that match `query`, best first."""
        ...


def normalise_title(title: str) -> str:
    """MediaWiki's title rules: underscores are spaces, runs of spaces collapse, the first letter is upper case."""
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


class MediaWikiAPI:
    """The live Wikipedia (or any MediaWiki) API; pages are cached, as a page is read again by lookups.

    `timeout` bounds a whole request (connecting, waiting and reading), not only each wait, so a
    server that trickles bytes cannot stall a step either. One client serves concurrent runs.
    """

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        *,
        timeout: float = 10.0,
        user_agent: str = USER_AGENT,
        cache_size: int = 64,
    ) -> None:
        self.api_url = api_url
        self.timeout = timeout
        self._client = httpx.Client(timeout=timeout, headers={"User-Agent": user_agent}, follow_redirects=True)
        self._cache: OrderedDict[str, WikiPage] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _get(self, params: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        query = {"action": "query", "format": "json", "formatversion": 2, **params}
        try:
            with self._client.stream("GET", self.api_url, params=query) as response:
                response.raise_for_status()
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout(f"no complete reply within {self.timeout} s")
            data = json.loads(body)
        except (httpx.InvalidURL, UnicodeEncodeError) as e:  # a 1 MB title, a lone surrogate: no URL holds it
            raise WikipediaError(f"this cannot be asked of Wikipedia: {type(e).__name__}: {e!s:.200}") from e
        except (httpx.HTTPError, ValueError) as e:
            raise WikipediaError(f"Wikipedia could not be reached: {type(e).__name__}: {e}") from e
        if "error" in data:
            raise WikipediaError(f"Wikipedia refused the request: {data['error'].get('info', data['error'])}")
        reply: dict[str, Any] = data
        return reply

    def page(self, title: str) -> WikiPage:
        key = normalise_title(title)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        data = self._get(
            {
                "prop": "extracts|info|pageprops",
                "explaintext": 1,
                "inprop": "url",
                "ppprop": "disambiguation",
                "redirects": 1,
                "titles": key,
            }
        )
        pages = data.get("query", {}).get("pages") or [{}]
        found = pages[0]
        if found.get("missing") or found.get("invalid") or "title" not in found:
            raise PageNotFoundError(title)
        if "disambiguation" in (found.get("pageprops") or {}):
            raise AmbiguousPageError(found["title"])
        page = WikiPage(title=found["title"], url=found.get("fullurl", ""), content=found.get("extract") or "")
        with self._lock:
            for name in {key, normalise_title(page.title)}:  # a redirect's target is cached under both titles
                self._cache[name] = page
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return page

    def search(self, query: str, limit: int = 10) -> list[str]:
        data = self._get({"list": "search", "srsearch": query, "srlimit": limit, "srprop": ""})
        return [hit["title"] for hit in data.get("query", {}).get("search", [])]

    def close(self) -> None:
        self._client.close()


class LocalCorpus:
    """Pages from a JSON file: `{"pages": [{"title", "url", "content"}], "redirects": {from: to},
    "disambiguation": [titles]}`. For offline use, tests, and private wikis exported to a file."""

    def __init__(
        self,
        pages: list[dict[str, str]],
        redirects: dict[str, str] | None = None,
        disambiguation: list[str] | None = None,
    ) -> None:
        self._pages = {
            normalise_title(p["title"]): WikiPage(p["title"], p.get("url", ""), p.get("content", "")) for p in pages
        }
        self._redirects = {normalise_title(k): normalise_title(v) for k, v in (redirects or {}).items()}
        self._ambiguous = {normalise_title(t) for t in disambiguation or []}

    @classmethod
    def from_file(cls, path: str | Path = SAMPLE_CORPUS) -> LocalCorpus:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(data.get("pages", []), data.get("redirects"), data.get("disambiguation"))

    def page(self, title: str) -> WikiPage:
        key = normalise_title(title)
        key = self._redirects.get(key, key)
        if key in self._ambiguous:
            raise AmbiguousPageError(title)
        if key not in self._pages:
            raise PageNotFoundError(title)
        return self._pages[key]

    def search(self, query: str, limit: int = 10) -> list[str]:
        """Titles sharing words with `query`, most shared words first (a stand-in for full-text search)."""
        words = set(re.findall(r"\w+", query.lower()))
        scored = []
        for page in self._pages.values():
            title_words = set(re.findall(r"\w+", page.title.lower()))
            score = 2 * len(words & title_words) + len(words & set(re.findall(r"\w+", page.content.lower())))
            if score:
                scored.append((-score, page.title))
        return [title for _, title in sorted(scored)[:limit]]
