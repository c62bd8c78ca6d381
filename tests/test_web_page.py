"""The web page `reflexion serve` serves at /ui (graphs/web/): its routes through the real LangGraph
server, and, in Debian's headless Chromium driven by selenium, a person asking, watching the steps,
approving an edited query, and seeing the answer's rows and the drawing of its nodes; then the
thread reopened and continued."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reflexion_agents.graphs.web.picture import values_of
from tests.helpers import TOM_HANKS_QUERY, flow_replies, free_port, kg_model, served_env, wait_until_serving
from tests.openai_stub import OpenAIStub

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SHOTS = Path(os.environ.get("REFLEXION_SCREENSHOTS") or tempfile.mkdtemp(prefix="web-page-"))
QUESTION = "Which movies did Tom Hanks act in?"


@pytest.mark.unit
def test_the_values_looked_up_are_the_querys_quoted_ones_and_the_rows_text():
    rows = [["Cast Away", 2000], [{"_labels": ["Person"], "name": "Meg Ryan", "born": 1961}], [None, True]]
    query = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m) WHERE m.title <> \"Big\" RETURN m.title"
    assert values_of(query, rows) == ["Tom Hanks", "Big", "Cast Away", "Meg Ryan"]
    assert values_of("MATCH (m) RETURN m.released", [[1999], [2003], [1999]]) == [1999, 2003]  # numbers alone
    assert values_of(None, []) == []


def page_model(request: dict[str, Any]) -> dict[str, Any]:
    """The knowledge-graph agent's model (a wrong draft, then the right query) and the flows' steps."""
    choice = request.get("tool_choice")
    forced = choice["function"]["name"] if isinstance(choice, dict) else None
    if forced in ("GuardrailDecision", "CypherQuery", "Evaluation", "Summary"):
        return flow_replies(request)
    return kg_model(request)


@pytest.fixture(scope="module")
def server(falkordb_server, movies_db, shop_db, tmp_path_factory) -> Iterator[str]:
    """`reflexion serve` on the session's database, every run pausing before each query."""
    port, folder = free_port(), tmp_path_factory.mktemp("web-server")
    with OpenAIStub(page_model) as stub:
        env = served_env(stub, falkordb_server, REFLEXION_REQUIRE_APPROVAL="1")
        log = folder / "server.log"
        process = subprocess.Popen(
            [sys.executable, "-m", "reflexion_agents.graphs.cli", "serve", "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until_serving(process, f"http://127.0.0.1:{port}/ok", log)
            yield f"http://127.0.0.1:{port}"
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)  # a guard against a hang, not a bound


@pytest.mark.server
def test_the_page_and_its_drawing_library_are_served_with_no_internet(server):
    page = httpx.get(f"{server}/ui")
    assert page.status_code == 200 and "/ui/static/vendor/force-graph.min.js" in page.text
    library = httpx.get(f"{server}/ui/static/vendor/force-graph.min.js")
    assert library.status_code == 200 and "ForceGraph" in library.text[:400]
    assert "MIT License" in httpx.get(f"{server}/ui/static/vendor/force-graph.LICENSE").text
    assert httpx.get(f"{server}/ui/static/app.js").status_code == 200
    graphs = httpx.get(f"{server}/ui/api/graphs").json()
    assert {"movies", "shop"} <= set(graphs["graphs"]) and graphs["default"] == "movies"


@pytest.mark.server
def test_the_picture_of_an_answer_holds_its_nodes_and_their_neighbours(server):
    drawn = httpx.post(
        f"{server}/ui/api/picture", json={"query": TOM_HANKS_QUERY, "rows": [["Cast Away"], ["Apollo 13"]]}
    )
    assert drawn.status_code == 200, drawn.text
    nodes = drawn.json()["nodes"]
    found = {n["caption"] for n in nodes if n["found"]}
    assert {"Tom Hanks", "Cast Away", "Apollo 13"} <= found
    assert "Robert Zemeckis" in {n["caption"] for n in nodes}  # Cast Away's director, a neighbour
    assert any(link["type"] == "ACTED_IN" for link in drawn.json()["links"])


@pytest.mark.server
def test_a_second_graph_with_other_labels_is_drawn_from_its_own_nodes(server, shop_db):
    """The shop graph, loaded from its import script: its own labels, found by the rows' values."""
    name = shop_db.query("MATCH (c:Customer) RETURN c.companyName AS name LIMIT 1").rows[0][0]
    drawn = httpx.post(f"{server}/ui/api/picture", json={"query": None, "rows": [[name]], "graph": "shop"}).json()
    assert any(n["found"] and "Customer" in n["labels"] and n["caption"] == name for n in drawn["nodes"]), drawn
    assert "Movie" not in {label for n in drawn["nodes"] for label in n["labels"]}


@pytest.mark.server
@pytest.mark.parametrize(
    "body, status, said",
    [
        ("not json", 400, "send JSON"),
        ({"rows": "Cast Away"}, 400, "send JSON"),
        ({"rows": [["x"]], "graph": 7}, 400, "must be text"),
        ({"rows": [["Cast Away"]], "graph": "no_such_graph"}, 404, "no_such_graph"),
    ],
)
def test_a_malformed_picture_request_gets_a_readable_refusal(server, body, status, said):
    sent = {"content": body} if isinstance(body, str) else {"json": body}
    answered = httpx.post(f"{server}/ui/api/picture", **sent)
    assert answered.status_code == status and said in answered.json()["error"]


def missing_browser() -> str | None:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        return "Debian's chromium and chromium-driver are not installed (make test installs them as root)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the dev extra has it)"
    return None


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the page's console, for a failure's message
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--window-size=1400,1300",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def browser_or_skip() -> Any:
    why = missing_browser()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the web page check: {why}")
        pytest.skip(why)
    return browser()


@pytest.mark.server
def test_a_flow_is_asked_from_the_page_and_answers_in_words_with_its_rows(server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    page = browser_or_skip()
    try:
        page.get(f"{server}/ui")
        WebDriverWait(page, 60).until(lambda p: p.execute_script("return document.body.dataset.ready") == "true")
        Select(page.find_element(By.ID, "assistant")).select_by_value("text2cypher_retry_evaluate")
        WebDriverWait(page, 30).until(lambda p: p.find_element(By.ID, "graph").is_enabled())  # its context has a graph
        page.find_element(By.ID, "question").send_keys(QUESTION)
        page.find_element(By.ID, "send").click()

        def answered(p: Any) -> bool:
            if p.find_element(By.ID, "approval").is_displayed():
                p.find_element(By.ID, "approve").click()
            return p.find_element(By.ID, "answer").is_displayed()

        WebDriverWait(page, 120).until(answered)
        assert "Tom Hanks acted in 12 movies." in page.find_element(By.ID, "answer-text").text  # shown open
        assert "Rows (12)" in page.find_element(By.ID, "rows-title").text
        assert TOM_HANKS_QUERY in page.find_element(By.ID, "answer-query").text
    finally:
        page.quit()


@pytest.mark.server
def test_a_person_asks_approves_an_edit_and_sees_the_rows_and_the_graph(server):
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def until(seconds: float, condition: Any) -> Any:
        try:
            return WebDriverWait(page, seconds, ignored_exceptions=(StaleElementReferenceException,)).until(condition)
        except TimeoutException:
            said = [entry["message"] for entry in page.get_log("browser")]
            error = page.find_element(By.ID, "error").text
            raise AssertionError(f"the page did not get there; it shows {error!r}; its console: {said}") from None

    def shown(element_id: str) -> bool:
        return page.find_element(By.ID, element_id).is_displayed()

    page = browser_or_skip()
    try:
        page.get(f"{server}/ui")
        until(60, lambda p: p.execute_script("return document.body.dataset.ready") == "true")
        assert page.find_element(By.ID, "assistant").get_attribute("value") == "kg_reflexion"
        page.find_element(By.ID, "question").send_keys(QUESTION)
        page.find_element(By.ID, "send").click()

        until(90, lambda p: shown("approval"))  # the drafted query waits for the person
        drafted = page.find_element(By.ID, "approval-query").get_attribute("value")
        assert "MATCH" in drafted and drafted != TOM_HANKS_QUERY
        assert "draft" in page.find_element(By.ID, "steps").text
        page.save_screenshot(str(SHOTS / "web-approval.png"))
        editor = page.find_element(By.ID, "approval-query")
        editor.clear()
        editor.send_keys(TOM_HANKS_QUERY)
        page.find_element(By.ID, "approve-edit").click()

        def answered(p: Any) -> bool:  # each later query pauses too: approve them as they come
            if shown("approval"):
                p.find_element(By.ID, "approve").click()
            return shown("answer") and bool(p.execute_script("return window.reflexionPage.picture"))

        until(120, answered)
        steps = page.find_element(By.ID, "steps").text
        assert all(node in steps for node in ("draft", "execute_tool", "revise", "reply", "stop: score_threshold"))
        assert "Cast Away" in page.find_element(By.ID, "rows").text
        assert "Rows (12)" in page.find_element(By.ID, "rows-title").text  # every row, a page of them shown
        drawn = page.execute_script(
            "return window.reflexionPage.picture.nodes.filter(n => n.found).map(n => n.caption)"
        )
        assert {"Tom Hanks", "Cast Away", "Apollo 13"} <= set(drawn)
        until(30, lambda p: p.execute_script("return document.querySelector('#picture canvas') !== null"))
        titles = [td.text for td in page.find_elements(By.CSS_SELECTOR, "#rows tbody tr td:first-child")]
        first = page.execute_script("return arguments[0].slice().sort((a, b) => a.localeCompare(b))[0]", titles)
        page.find_element(By.CSS_SELECTOR, "#rows th").click()  # sorted by its first column
        until(10, lambda p: p.find_element(By.CSS_SELECTOR, "#rows tbody tr td").text == first)
        page.execute_script("document.getElementById('answer').scrollIntoView()")
        page.save_screenshot(str(SHOTS / "web-answer.png"))

        thread = page.execute_script("return window.reflexionPage.thread")
        page.find_element(By.ID, "new-thread").click()
        until(30, lambda p: not shown("answer"))
        until(30, lambda p: p.find_elements(By.CSS_SELECTOR, f"#threads li[data-thread='{thread}']"))
        page.find_element(By.CSS_SELECTOR, f"#threads li[data-thread='{thread}']").click()
        until(30, lambda p: shown("answer") and "Cast Away" in p.find_element(By.ID, "rows").text)
        assert page.execute_script("return window.reflexionPage.thread") == thread  # a question now follows up
        page.find_element(By.ID, "question").send_keys("And which did he direct?")
        page.find_element(By.ID, "send").click()
        until(120, lambda p: answered(p) and "And which did he direct?" in p.find_element(By.ID, "history").text)
        assert page.execute_script("return window.reflexionPage.thread") == thread
    finally:
        page.quit()
    asked = [
        m["content"]
        for m in httpx.get(f"{server}/threads/{thread}/state").json()["values"]["messages"]
        if m["type"] == "human"
    ]
    assert asked == [QUESTION, "And which did he direct?"]  # one thread, continued


@pytest.mark.unit
def test_on_neo4j_the_picture_names_nodes_by_element_id_and_draws_what_comes_back():
    from reflexion_agents.graphs.web.picture import picture, picture_query
    from reflexion_agents.schemas.graphdb import QueryResult

    assert "elementId(n)" in picture_query("neo4j") and "id(n)" not in picture_query("neo4j").replace("Id(n)", "")
    assert "id(n)" in picture_query("falkordb") and "elementId" not in picture_query("falkordb")

    class Neo4jAnswers:  # what the Neo4j adapter returns for the picture's query: element ids are text
        dialect = "neo4j"

        def query(self, cypher: str, params: dict, **limits: Any) -> QueryResult:
            assert params["values"] == ["Cast Away"] and "elementId" in cypher
            movie, person = ["4:a:1", ["Movie"], {"title": "Cast Away", "gross": float("inf")}], ["4:a:2"]
            return QueryResult(
                query=cypher,
                columns=[],
                rows=[[*movie, "5:a:9", "ACTED_IN", "4:a:2", "4:a:1", *person, ["Person"], {"name": "Tom"}]],
            )

    drawn = picture(Neo4jAnswers(), None, [["Cast Away"]])
    assert [(n["id"], n["caption"], n["found"]) for n in drawn["nodes"]] == [
        ("4:a:1", "Cast Away", True),
        ("4:a:2", "Tom", False),
    ]
    assert drawn["links"] == [{"id": "5:a:9", "source": "4:a:2", "target": "4:a:1", "type": "ACTED_IN"}]
    assert drawn["nodes"][0]["properties"]["gross"] == "inf"  # JSON has no infinity
