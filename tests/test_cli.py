"""The `reflexion` command: each subcommand, its JSON output and its exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.schemas.errors import DatabaseUnavailableError
from tests.helpers import TOM_HANKS_QUERY, flow_replies
from tests.openai_stub import OpenAIStub, multiply_then_finish


@pytest.fixture
def data_dir(falkordb_server, movies_db) -> str:
    return str(falkordb_server.data_dir)


@pytest.mark.parametrize("flow", ["reflexion", "naive", "retry_evaluate"])
def test_ask_answers_with_json_output(monkeypatch, capsys, data_dir, flow):
    with OpenAIStub(flow_replies) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        code = main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?", "--flow", flow, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    rows = result.get("tool_result") or result.get("rows")
    assert len(rows) == 12 and ["Cast Away"] in rows


def test_ask_prints_each_step_live(monkeypatch, capsys, data_dir):
    with OpenAIStub(flow_replies) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        assert main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?", "--flow", "naive"]) == 0
    out = capsys.readouterr().out
    assert out.index("[Guardrail]") < out.index("[Cypher generation]") < out.index("[Cypher execution]")
    assert "Tom Hanks acted in 12 movies." in out and "Stopped: answered" in out


def test_missing_model_key_and_a_down_database_have_their_exit_codes(monkeypatch, capsys, data_dir):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["--data-dir", data_dir, "ask", "anything"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")

    def unreachable(connection_args):
        raise DatabaseUnavailableError("FalkorDB at 127.0.0.1:1 is unreachable")

    monkeypatch.setattr("reflexion_agents.graphs.cli.ask.connect", unreachable)
    assert main(["ask", "anything", "--graph", "movies"]) == 3
    assert "Database unavailable: FalkorDB at 127.0.0.1:1" in capsys.readouterr().err
    monkeypatch.setenv("REFLEXION_DATABASE_URL", "falkordb://127.0.0.1:1")  # the environment's database, down
    assert main(["ask", "anything"]) == 3 and "127.0.0.1:1" in capsys.readouterr().err


def test_graphs_lists_registered_and_stored_graphs(capsys, data_dir):
    assert main(["--data-dir", data_dir, "graphs", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert "text2cypher_planner" in listing["registered"]
    movies = next(g for g in listing["database"] if g["graph"] == "movies")
    assert movies["nodes"] == 171 and movies["relationships"] == 253


def test_draw_writes_mermaid_and_refuses_unknown_graphs(tmp_path, capsys):
    target = tmp_path / "planner.mmd"
    assert main(["draw", "text2cypher_planner", str(target)]) == 0
    drawn = target.read_text()
    assert "check -. &nbsp;each missing piece, in parallel&nbsp; .-> subquery" in drawn  # the fan-out, labelled
    assert main(["draw", "no_such_graph", str(tmp_path / "x.mmd")]) == 2
    assert "unknown graph 'no_such_graph'" in capsys.readouterr().err


def test_load_runs_a_cypher_script_into_a_named_graph(tmp_path, capsys, data_dir, movies_db):
    script = tmp_path / "tiny.cypher"
    script.write_text(
        "CREATE CONSTRAINT IF NOT EXISTS FOR (c:City) REQUIRE (c.name) IS UNIQUE;\nCREATE (:City {name: 'Oslo'});\n"
    )
    assert main(["--data-dir", data_dir, "load", str(script), "--graph", "cli_cities"]) == 0
    printed = capsys.readouterr().out
    assert "Loaded" in printed and "into 'cli_cities'" in printed and "1 translated" in printed
    cities = movies_db.sibling("cli_cities")
    try:
        assert cities.query("MATCH (c:City) RETURN c.name").rows == [["Oslo"]]
    finally:
        cities.clear()


@pytest.mark.integration
def test_react_runs_the_tool_agent_and_the_wikipedia_agent(monkeypatch, capsys):
    with OpenAIStub(multiply_then_finish(465, 321)) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        assert main(["react", "What is 465 times 321?", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "149265"
    replies = iter(["Action 1\n<search>Elia Kazan", "Action 2\n<finish>director"])
    with OpenAIStub(lambda request: {"text": next(replies)}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        assert main(["react", "What was Elia Kazan?", "--agent", "wikipedia", "--sample-corpus"]) == 0
    out = capsys.readouterr().out
    assert (
        "<search>Elia Kazan</search> -> Elia Kazan (born" in out
        and "sources: https://en.wikipedia.org/wiki/Elia_Kazan" in out
    )


@pytest.mark.integration
def test_extract_validates_against_a_schema_and_reports_failures(monkeypatch, capsys):
    cars = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]}
    with OpenAIStub(lambda request: {"tool": "CarCollection", "args": cars}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        assert main(["extract", "I own a Fiat Panda with 45Hp.", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["value"] == cars
        assert main(["extract", "text", "--schema", "reflexion_agents.schemas.extraction:NoSuchModel"]) == 2
        assert "cannot import the schema" in capsys.readouterr().err
    with OpenAIStub(lambda request: {"text": "no JSON at all"}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        assert (
            main(
                [
                    "extract",
                    "I own a Fiat Panda.",
                    "--schema",
                    "reflexion_agents.schemas.extraction:Car",
                    "--max-retries",
                    "0",
                ]
            )
            == 1
        )
    assert "No valid output" in capsys.readouterr().out


def test_ask_with_the_reflexion_agent_prints_the_same_steps_as_make_run(monkeypatch, capsys, data_dir):
    with OpenAIStub(flow_replies) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        assert main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?"]) == 0
    out = capsys.readouterr().out
    assert "[draft] query: " + TOM_HANKS_QUERY in out and "[execute 1] 12 row(s)" in out
    assert "Stopped: score_threshold after 1 step(s)" in out and '"Cast Away"' in out


def test_draw_writes_real_png_and_svg_pictures_with_no_system_package(tmp_path):
    """pygraphviz's wheel carries Graphviz: a fresh install draws pictures."""
    png, svg = tmp_path / "kg.png", tmp_path / "kg.svg"
    assert main(["draw", "kg_reflexion", str(png)]) == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["draw", "kg_reflexion", str(svg)]) == 0
    drawn = svg.read_text()
    assert drawn.lstrip().startswith("<?xml") and "<svg" in drawn
    assert all(f">{node}</text>" in drawn for node in ("draft", "execute_tool", "revise"))


def test_draw_refuses_a_file_it_cannot_write_and_writes_mermaid_text_for_mmd(tmp_path, capsys):
    gif, mmd = tmp_path / "kg.gif", tmp_path / "kg.mmd"
    assert main(["draw", "kg_reflexion", str(gif)]) == 2 and not gif.exists()
    assert ".png, .svg, .mmd, .md" in capsys.readouterr().err
    assert main(["draw", "kg_reflexion", str(mmd)]) == 0 and "draft -. &nbsp;query drafted" in mmd.read_text()


def test_every_reflexion_command_in_the_readme_parses_as_written():
    import re
    import shlex
    from pathlib import Path

    from reflexion_agents.graphs.cli import parser

    readme = Path(__file__).resolve().parents[1] / "README.md"
    lines = [line.split("  #")[0].strip() for line in readme.read_text().splitlines()]
    commands = [re.sub(r"^\.venv/bin/", "", line) for line in lines if re.match(r"^(\.venv/bin/)?reflexion \w", line)]
    assert len(commands) >= 12
    for command in commands:
        parser().parse_args(shlex.split(command)[1:])  # exits (SystemExit) on any argument the CLI lacks


@pytest.mark.integration
@pytest.mark.parametrize("name", ["text2cypher_planner", "text2cypher_retry_evaluate", "kg_reflexion"])
def test_drawing_a_graph_starts_no_database(tmp_path, name):
    """Compiling reads the attributes a node's code names: none of them may open the database."""
    data = tmp_path / "data"
    env = {**os.environ, "REFLEXION_DATA_DIR": str(data), "REFLEXION_CHECKPOINTS": "none"}
    reflexion = Path(sys.executable).parent / "reflexion"
    done = subprocess.run(
        [reflexion, "draw", name, str(tmp_path / "g.png")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert not data.exists()
