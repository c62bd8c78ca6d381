"""The ReAct Wikipedia tools: `search` an exact page, `lookup` a phrase in the last page searched.

Observations are plain text for the model. `search` returns the first sentences
of the page itself (no model call to shorten them, unlike the Gemini ReAct notebook's
`search`: it cost a model call per search and could alter the facts); a missing or
ambiguous title returns "Could not find ... Similar: [...]". The reading
position of `lookup` lives in the graph's state, not here, so one tool object
serves every thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reflexion_agents.nodes.tools.wikipedia_backends import (
    AmbiguousPageError,
    LocalCorpus,
    MediaWikiAPI,
    PageNotFoundError,
    WikiPage,
    WikipediaBackend,
    WikipediaError,
)

# Curly opening quotes may start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“‘(\[])")  # noqa: RUF001
_HEADING = re.compile(r"^\s*=+\s*[^=\n]+?\s*=+\s*$", re.MULTILINE)


def clean(text: str) -> str:
    """One line of prose: section headings dropped, whitespace runs collapsed."""
    return " ".join(_HEADING.sub(" ", text).split())


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(clean(text)) if s]


def intro(page: WikiPage) -> str:
    """The lead section: everything before the first heading."""
    heading = _HEADING.search(page.content)
    return page.content[: heading.start()] if heading else page.content


@dataclass(frozen=True)
class Observation:
    text: str
    page: WikiPage | None = None  # the page read, if any (its URL is the source)
    error: str | None = None  # set when Wikipedia itself failed (network, refusal)


class WikipediaTools:
    """`search` and `lookup` over a backend: the live API by default, or a `LocalCorpus`."""

    def __init__(
        self, backend: WikipediaBackend | None = None, *, sentences: int = 3, context_length: int = 200
    ) -> None:
        self.backend = backend if backend is not None else MediaWikiAPI()
        self.sentence_count = max(1, sentences)
        self.context_length = max(20, context_length)

    @classmethod
    def sample(cls) -> WikipediaTools:
        """The tools over the small corpus shipped with the package: offline demos and notebooks."""
        return cls(LocalCorpus.from_file())

    def _similar(self, entity: str) -> str:
        try:
            similar = self.backend.search(entity)
        except WikipediaError as e:
            return f"Could not find [{entity}], and the search for similar pages failed: {e}."
        return f"Could not find [{entity}]. Similar: {similar}. You should search for one of those instead."

    def search(self, entity: str) -> Observation:
        """The first sentences of the page titled exactly `entity`, or similar titles."""
        try:
            page = self.backend.page(entity)
        except (PageNotFoundError, AmbiguousPageError):
            return Observation(self._similar(entity))
        except WikipediaError as e:
            return Observation(f"Error: {e}", error=str(e))
        lead = sentences(intro(page)) or sentences(page.content)
        if not lead:
            return Observation(f"The page [{page.title}] has no text.", page)
        return Observation(" ".join(lead[: self.sentence_count]), page)

    def lookup(self, phrase: str, page_title: str | None, skip: int) -> Observation:
        """The sentence around match number `skip + 1` of `phrase` in the page last searched."""
        if not page_title:
            return Observation("No page has been searched yet. Use <search>entity</search> first.")
        try:
            page = self.backend.page(page_title)
        except WikipediaError as e:
            return Observation(f"Error: {e}", error=str(e))
        text = clean(page.content)
        starts = [m.start() for m in re.finditer(re.escape(phrase.strip()), text, re.IGNORECASE)]
        if not starts:
            return Observation(f"[{phrase}] does not appear on the page [{page.title}].", page)
        if skip >= len(starts):
            return Observation(f"No more results for [{phrase}] on the page [{page.title}].", page)
        return Observation(f"(Result {skip + 1} / {len(starts)}) {self._around(text, starts[skip], len(phrase))}", page)

    def _around(self, text: str, start: int, length: int) -> str:
        """The sentence holding the match, trimmed to `context_length` characters either side."""
        breaks = [m.end() for m in _SENTENCE_END.finditer(text)]  # where each sentence after the first begins
        sentence_start = max((b for b in breaks if b <= start), default=0)
        sentence_end = min((b for b in breaks if b > start + length), default=len(text))
        left = max(sentence_start, start - self.context_length)
        right = min(sentence_end, start + length + self.context_length)
        return text[left:right].strip()
