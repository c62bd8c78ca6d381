"""A query approved from agent-chat-ui, in a real browser: the chat UI create-agent-chat-app ships (its
Vite template, installed by `make test` from npm with pinned versions) in Debian's headless Chromium,
driven by selenium, against `reflexion serve` with approval on. The pause is drawn as a form with the
query to edit and Accept and Ignore buttons; the person edits the query and submits it; the edited
query runs and the answer is shown with its rows."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.helpers import TOM_HANKS_QUERY, free_port, kg_model, served_env, wait_until_serving
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.server

WEB = Path(__file__).resolve().parent / "agent_chat_ui" / "web"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SHOTS = Path(os.environ.get("REFLEXION_SCREENSHOTS") or tempfile.mkdtemp(prefix="agent-chat-ui-"))


def missing() -> str | None:
    """Why the browser check cannot run here, or None."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        return "Debian's chromium and chromium-driver are not installed (make test installs them as root)"
    if not (WEB / ".installed").exists() or shutil.which("npx") is None:
        return "agent-chat-ui is not installed (make test installs it where npm is)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the dev extra has it)"
    return None


@pytest.fixture
def chat_ui(falkordb_server, movies_db, tmp_path) -> Iterator[tuple[str, str]]:
    """(the chat UI's address, the server's), the server pausing every run before each query."""
    why = missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the chat UI check: {why}")
        pytest.skip(why)
    server_port, web_port = free_port(), free_port()
    with OpenAIStub(kg_model) as stub:
        env = served_env(stub, falkordb_server, REFLEXION_REQUIRE_APPROVAL="1")
        logs = {name: tmp_path / f"{name}.log" for name in ("server", "web")}
        server = subprocess.Popen(
            [sys.executable, "-m", "reflexion_agents.graphs.cli", "serve", "--port", str(server_port)],
            cwd=tmp_path,
            env=env,
            stdout=logs["server"].open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        web = subprocess.Popen(
            ["npx", "vite", "--port", str(web_port), "--strictPort", "--host", "127.0.0.1"],
            cwd=WEB,
            stdout=logs["web"].open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until_serving(server, f"http://127.0.0.1:{server_port}/ok", logs["server"])
            wait_until_serving(web, f"http://127.0.0.1:{web_port}/", logs["web"])
            yield f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{server_port}"
        finally:
            for process in (server, web):
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=60)  # a guard against a hang, not a bound


def browser(downloads: Path) -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",  # this machine refuses Chromium's own connections
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1100,1300",
        f"--user-data-dir={downloads}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def test_a_query_is_approved_with_an_edit_from_agent_chat_ui(chat_ui, tmp_path):
    from langgraph_sdk import get_sync_client
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def until(page: Any, seconds: float, condition: Any) -> Any:
        """Wait for `condition`, looking again when the page re-drew what it was reading (React
        replaces elements as the run streams in)."""
        return WebDriverWait(page, seconds, ignored_exceptions=(StaleElementReferenceException,)).until(condition)

    web, server = chat_ui
    page = browser(tmp_path / "chromium")
    try:
        page.get(f"{web}/?apiUrl={server}&assistantId=kg_reflexion")
        until(page, 60, lambda p: p.find_elements(By.CSS_SELECTOR, "textarea"))
        page.find_element(By.CSS_SELECTOR, "textarea").send_keys("Which movies did Tom Hanks act in?")
        page.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

        def approval_form(p):  # the query to edit, in a field of its own, and the buttons
            fields = [
                t for t in p.find_elements(By.CSS_SELECTOR, "textarea") if "MATCH" in (t.get_attribute("value") or "")
            ]
            buttons = {b.text.strip() for b in p.find_elements(By.TAG_NAME, "button")}
            return fields[0] if fields and {"Accept", "Ignore"} <= buttons else None

        drafted = until(page, 90, lambda p: (form := approval_form(p)) is not None and form.get_attribute("value"))
        page.save_screenshot(str(SHOTS / "approval.png"))

        def edited_and_sent(p):  # from the form as drawn now: a re-draw in between makes it look again
            field = approval_form(p)
            if field is None:
                return False
            field.clear()
            field.send_keys(TOM_HANKS_QUERY)
            submit = [b for b in p.find_elements(By.TAG_NAME, "button") if b.text.strip() in ("Submit", "Accept")]
            submit[0].click()
            return True

        until(page, 90, edited_and_sent)
        until(page, 90, lambda p: "Cast Away" in p.page_source and "Stopped:" in p.page_source)
        page.save_screenshot(str(SHOTS / "answer.png"))
        thread = parse_qs(urlparse(page.current_url).query)["threadId"][0]
    finally:
        page.quit()
    state = get_sync_client(url=server).threads.get_state(thread)["values"]
    ran = [outcome["action"] for outcome in state["outcomes"]]
    assert drafted != TOM_HANKS_QUERY and ran[0] == TOM_HANKS_QUERY  # the person's edit ran, not the draft
    assert ["Cast Away"] in state["rows"] and state["stop_reason"] == "score_threshold"
