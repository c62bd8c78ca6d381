"""`reflexion ask --approve` on a real pseudo-terminal (pexpect): the question is shown and the
terminal stays still while it waits (no spinner drawn over it), an edit starts from the query shown
(on the line, to edit in place), and the edited query runs."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect

from tests.helpers import flow_replies
from tests.openai_stub import OpenAIStub

MATRIX = "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p:Person) RETURN p.name AS director"
REFLEXION = str(Path(sys.executable).parent / "reflexion")


def test_the_approval_prompt_shows_and_waits_on_a_terminal(falkordb_server, movies_db, tmp_path):
    with OpenAIStub(flow_replies) as stub:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": stub.base_url,
            "OPENAI_API_KEY": "test",
            "REFLEXION_CHECKPOINTS": str(tmp_path / "threads.sqlite"),
            "TERM": "xterm-256color",
            "COLUMNS": "200",
        }
        argv = ["--data-dir", str(falkordb_server.data_dir), "ask", "Who directed The Matrix?", "--approve"]
        child = pexpect.spawn(REFLEXION, argv, env=env, encoding="utf-8", timeout=60, dimensions=(40, 200))
        try:
            child.expect_exact("[a]pprove, [e]dit or [r]eject")
            asked = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before)  # the text, without colours
            shown = asked.rsplit("Approve this query?", 1)[1].strip().splitlines()[1].strip()
            child.expect(r"\(a\)(\x1b\[[0-9;]*m)*: ")  # the default, at the end of the prompt line
            try:  # while the question waits, nothing redraws the screen
                drawn = child.read_nonblocking(size=10_000, timeout=1.0)
            except pexpect.TIMEOUT:
                drawn = ""
            assert drawn == ""
            child.sendline("e")
            child.expect_exact("Query to run instead")
            child.expect_exact(shown[-20:])  # the query shown is on the line already, to edit in place
            child.send("\x15")  # Ctrl-U: readline clears the line
            child.sendline(MATRIX)
            child.expect(pexpect.EOF)
        finally:
            child.close()
        assert child.exitstatus == 0, child.before
        assert "Lana Wachowski" in child.before
