"""The Wikipedia tools on the shipped corpus, and the live MediaWiki client against a loopback API server."""

from __future__ import annotations

import time

import pytest

from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
from reflexion_agents.nodes.tools.wikipedia_backends import LocalCorpus, MediaWikiAPI, PageNotFoundError, WikipediaError
from tests.helpers import latest, seconds
from tests.wikipedia_stub import MediaWikiStub


@pytest.fixture(scope="module")
def corpus() -> LocalCorpus:
    return LocalCorpus.from_file()


def test_search_returns_the_first_sentences_of_the_exact_page(corpus):
    observation = WikipediaTools(corpus, sentences=2).search("Colorado orogeny")
    assert observation.text == (
        "The Colorado orogeny was an episode of mountain building (an orogeny) in Colorado and surrounding areas. "
        "It took place from about 1780 to 1650 million years ago, during the Paleoproterozoic."
    )
    assert observation.page.url == "https://en.wikipedia.org/wiki/Colorado_orogeny"


def test_search_follows_redirects_and_normalises_titles(corpus):
    assert WikipediaTools(corpus).search("milhouse").page.title == "Milhouse Van Houten"


@pytest.mark.parametrize("entity", ["High Plains", "Adam Clayton Powell"])  # ambiguous, then ambiguous with a film
def test_an_ambiguous_or_missing_page_lists_similar_titles(corpus, entity):
    observation = WikipediaTools(corpus).search(entity)
    assert observation.page is None
    assert observation.text.startswith(f"Could not find [{entity}]. Similar: [")
    assert "You should search for one of those instead." in observation.text
    assert f"'{entity} (" in observation.text  # the specific page is among the suggestions


def test_a_page_nobody_wrote_is_not_found(corpus):
    assert WikipediaTools(corpus).search("Zyxxy Qwerty").text == (
        "Could not find [Zyxxy Qwerty]. Similar: []. You should search for one of those instead."
    )


def test_lookup_walks_through_the_matches_of_the_last_page(corpus):
    tools = WikipediaTools(corpus)
    first = tools.lookup("orogeny", "Colorado orogeny", 0).text
    last = tools.lookup("orogeny", "Colorado orogeny", 3).text
    assert first.startswith("(Result 1 / 4) The Colorado orogeny was")
    assert (
        last == "(Result 4 / 4) The boundary between the Colorado orogeny and the Wyoming craton is the Cheyenne belt."
    )
    assert (
        tools.lookup("orogeny", "Colorado orogeny", 4).text
        == "No more results for [orogeny] on the page [Colorado orogeny]."
    )


def test_lookup_keeps_abbreviations_inside_the_sentence(corpus):
    text = WikipediaTools(corpus).lookup("named after", "Milhouse Van Houten", 0).text
    assert (
        text == "(Result 1 / 1) Milhouse was named after U.S. president Richard Nixon, whose middle name was Milhous."
    )


def test_lookup_says_when_there_is_no_page_or_no_match(corpus):
    tools = WikipediaTools(corpus)
    assert tools.lookup("x", None, 0).text.startswith("No page has been searched yet.")
    assert (
        tools.lookup("volcano", "Colorado orogeny", 0).text
        == "[volcano] does not appear on the page [Colorado orogeny]."
    )


def test_the_live_client_speaks_the_mediawiki_api(corpus):
    with MediaWikiStub(corpus) as stub:
        api = MediaWikiAPI(stub.api_url)
        page = api.page("Leah Sava Jeffries")
        assert (page.title, page.url) == ("Leah Jeffries", "https://en.wikipedia.org/wiki/Leah_Jeffries")
        with pytest.raises(PageNotFoundError):
            api.page("Zyxxy Qwerty")
        observation = WikipediaTools(api).search("High Plains")
        assert "Similar: ['High Plains (United States)'" in observation.text
        assert api.page("Leah Jeffries") == page  # the redirect's target is read from the cache
    titles = [r.get("titles") for r in stub.requests if "titles" in r]
    assert titles == ["Leah Sava Jeffries", "Zyxxy Qwerty", "High Plains"]
    assert all(r["user-agent"].startswith("reflexion-agents/") and r["format"] == "json" for r in stub.requests)


@pytest.mark.integration
def test_a_stalled_or_failing_wikipedia_is_an_error_observation_not_a_hang(corpus):
    with MediaWikiStub(corpus, delay=2.0) as stub:
        observation = WikipediaTools(MediaWikiAPI(stub.api_url, timeout=0.3)).search("Walker Scobell")
    assert observation.error and observation.text.startswith("Error: Wikipedia could not be reached: ReadTimeout")
    with MediaWikiStub(corpus) as stub:  # what a whole request takes here now, from a new client
        trivial = seconds(lambda: MediaWikiAPI(stub.api_url).page("Walker Scobell"))
    with MediaWikiStub(corpus, trickle=0.05) as stub:  # every byte within the read timeout, the whole (20 s) far beyond
        started = time.monotonic()
        with pytest.raises(WikipediaError, match=r"no complete reply within 0\.5 s"):
            MediaWikiAPI(stub.api_url, timeout=0.5).page("Walker Scobell")
        elapsed = time.monotonic() - started
        assert elapsed < latest(0.5 + 0.05, trivial), (elapsed, trivial)  # the timeout, and the byte that ends it
    with MediaWikiStub(corpus, status=503) as stub, pytest.raises(WikipediaError, match="503"):
        MediaWikiAPI(stub.api_url).page("Walker Scobell")
