"""`reflexion ask --approve`, `reflexion resume`, `reflexion load` with CSV files, and `reflexion serve`'s
offline environment; the model is a local OpenAI-compatible stub, the database the embedded FalkorDB."""

from __future__ import annotations

import io
import json
import sys
import uuid
from pathlib import Path

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.cli.serve import DEFAULT_JOBS, offline_environment, serve_command
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from tests.helpers import TOM_HANKS_QUERY, flow_replies
from tests.openai_stub import OpenAIStub

MATRIX = "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p:Person) RETURN p.name AS director"


@pytest.fixture
def data_dir(falkordb_server, movies_db) -> str:
    return str(falkordb_server.data_dir)


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub(flow_replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


def test_ask_with_approve_pauses_and_resume_runs_the_edited_query(stub, capsys, data_dir):
    thread = f"cli-{uuid.uuid4().hex[:8]}"
    code = main(["--data-dir", data_dir, "ask", "Who directed The Matrix?", "--approve", "--json", "--thread", thread])
    paused = json.loads(capsys.readouterr().out)
    assert code == 1 and paused["stop_reason"] == "awaiting_approval"
    assert paused["pending_approval"]["query"] == TOM_HANKS_QUERY
    code = main(["--data-dir", data_dir, "resume", thread, "--decision", "edit", "--query", MATRIX, "--json"])
    done = json.loads(capsys.readouterr().out)
    assert code == 0 and done["query"] == MATRIX and ["Lana Wachowski"] in done["rows"]
    assert "Lana Wachowski" in done["answer"]  # the answer in words: the query, its rows and why it stopped
    # the thread is finished: resuming it again returns the same result without a model call
    calls = len(stub.requests)
    assert main(["--data-dir", data_dir, "resume", thread, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["query"] == MATRIX and len(stub.requests) == calls


def test_ask_with_approve_asks_at_the_terminal(stub, capsys, monkeypatch, data_dir):
    monkeypatch.setattr("sys.stdin", io.StringIO("r\nnot this one\n"))
    code = main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?", "--flow", "retry", "--approve"])
    out = capsys.readouterr().out
    assert code == 1 and "Approve this query?" in out and TOM_HANKS_QUERY in out
    assert "[a]pprove, [e]dit or [r]eject" in out
    assert "Stopped: rejected" in out and "not this one" in out and "Cast Away" not in out


def test_ask_with_approve_asks_before_every_query_of_the_run(monkeypatch, capsys, data_dir):
    empty = "MATCH (p:Person {name: 'Nobody'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"

    def replies(request):
        tool = request["tool_choice"]["function"]["name"]
        if tool == "GenerateQuery":
            return {"tool": tool, "args": {"answer": empty}}
        score = 2 if len(request["messages"]) < 5 else 9
        return {"tool": tool, "args": {"revised_query": TOM_HANKS_QUERY, "score": score}}

    with OpenAIStub(replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setattr("sys.stdin", io.StringIO("a\na\n"))
        code = main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?", "--approve"])
    out = capsys.readouterr().out
    assert code == 0 and out.count("Approve this query?") == 2 and '"Cast Away"' in out


def test_resume_says_what_is_wrong_with_an_unknown_thread(stub, capsys, data_dir):
    assert main(["--data-dir", data_dir, "resume", "no-such-thread"]) == 2
    assert "no run is stored in thread 'no-such-thread'" in capsys.readouterr().err


def test_load_csv_nodes_and_relationships_typed_merged_and_safe(tmp_path, capsys, data_dir, falkordb_server):
    graph = f"csv_{uuid.uuid4().hex[:6]}"
    people = tmp_path / "people.csv"
    people.write_text("name,born,active\nAda,1815,true\nAlan,1912,\nGrace,,false\n", encoding="utf-8")
    knows = tmp_path / "knows.csv"
    knows.write_text("from,to,since\nAda,Alan,1936.5\nAlan,Nobody,1\n", encoding="utf-8")
    base = ["--data-dir", data_dir, "load"]
    assert main([*base, str(people), "--graph", graph, "--label", "Person", "--key", "name"]) == 0
    assert main([*base, str(people), "--graph", graph, "--label", "Person", "--key", "name"]) == 0  # again: merged
    assert (
        main(
            [
                *base,
                str(knows),
                "--graph",
                graph,
                "--relationship",
                "KNOWS",
                "--start",
                "Person.name=from",
                "--end",
                "Person.name=to",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "3 :Person row(s) written" in out
    assert (
        "1 :KNOWS row(s) written, 1 skipped (end node :Person not found: 1)" in out
        and "row 3: end node :Person not found (name = 'Nobody')" in out
    )
    db = FalkorDBGraph(graph, host=falkordb_server.host, port=falkordb_server.port)
    rows = db.query("MATCH (p:Person) RETURN p.name, p.born, p.active ORDER BY p.name").rows
    assert rows == [["Ada", 1815, True], ["Alan", 1912, None], ["Grace", None, False]]
    assert db.query("MATCH (:Person)-[k:KNOWS]->(b:Person) RETURN b.name, k.since").rows == [["Alan", 1936.5]]
    # labels that are not identifiers are refused, not spliced into Cypher
    assert main([*base, str(people), "--graph", graph, "--label", "Person) DETACH DELETE (n"]) == 2
    assert "not a plain identifier" in capsys.readouterr().err
    assert main([*base, str(people), "--graph", graph]) == 2  # a CSV needs --label or --relationship
    assert main([*base, str(tmp_path / "missing.csv"), "--label", "X"]) == 2
    db.query("MATCH (n) DETACH DELETE n", allow_writes=True)


def test_serve_runs_langgraph_dev_offline_and_keeps_what_the_user_set():
    env = offline_environment({"PATH": "/bin"})
    assert (env["LANGGRAPH_CLI_NO_ANALYTICS"], env["LANGGRAPH_NO_VERSION_CHECK"], env["LANGSMITH_TRACING"]) == (
        "1",
        "true",
        "false",
    )
    assert offline_environment({"LANGSMITH_TRACING": "true"})["LANGSMITH_TRACING"] == "true"
    command = serve_command(port=8123)
    assert command[:4] == [sys.executable, "-m", "reflexion_agents.graphs.cli.langgraph_dev", "dev"]
    assert "--no-browser" in command and "--no-reload" in command
    assert command[command.index("--port") + 1] == "8123" and command[command.index("--config") + 1].endswith(
        "langgraph.json"
    )
    assert command[command.index("--n-jobs-per-worker") + 1] == str(DEFAULT_JOBS)  # not LangGraph's 10
    assert serve_command(jobs=80)[serve_command(jobs=80).index("--n-jobs-per-worker") + 1] == "80"


@pytest.mark.parametrize("jobs, said", [("0", "must be 1 or more, got 0"), ("many", "'many' is not a whole number")])
def test_serve_refuses_a_job_count_that_is_not_one_or_more(capsys, jobs, said):
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--jobs", jobs])
    assert exited.value.code == 2 and said in capsys.readouterr().err


def test_an_installed_package_without_the_repository_serves_the_registry(monkeypatch, tmp_path):
    """A wheel has no langgraph.json beside the package: `reflexion serve` writes one from the registry."""
    import json

    from reflexion_agents.graphs import registry

    monkeypatch.setattr(registry, "LANGGRAPH_JSON", tmp_path / "absent" / "langgraph.json")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    command = serve_command(port=8123)
    written = Path(command[command.index("--config") + 1])
    assert written.exists() and json.loads(written.read_text())["graphs"] == registry.langgraph_graphs()
    again = serve_command(port=8123)  # a second start writes the same file, leaving nothing behind
    assert again[again.index("--config") + 1] == str(written) and list((tmp_path / "cache").rglob("*.json")) == [
        written
    ]


def test_csv_values_are_read_strictly_and_malformed_files_are_refused(tmp_path, capsys, data_dir, falkordb_server):
    from reflexion_agents.nodes.graphdb.csv_loader import typed

    assert [typed(v) for v in ["42", "-7", "1936.5", "true", ""]] == [42, -7, 1936.5, True, None]
    assert [typed(v) for v in ["007", "NaN", "inf", "1_000", " 42 ", "123456789012345678901234567890"]] == [
        "007",
        "NaN",
        "inf",
        "1_000",
        " 42 ",
        "123456789012345678901234567890",
    ]
    graph = f"csv_{uuid.uuid4().hex[:6]}"
    base = ["--data-dir", data_dir, "load", "--graph", graph]
    extra = tmp_path / "extra.csv"
    extra.write_text("name,born\nAda,1815,oops\n", encoding="utf-8")
    assert (
        main([*base, str(extra), "--label", "Person"]) == 2
        and "row 2: 3 cells for 2 columns" in capsys.readouterr().err
    )
    twice = tmp_path / "twice.csv"
    twice.write_text("name,name\nAda,Bob\n", encoding="utf-8")
    assert main([*base, str(twice), "--label", "Person"]) == 2 and "more than once" in capsys.readouterr().err
    people = tmp_path / "people.csv"
    people.write_text("name\nAda\n", encoding="utf-8")
    knows = tmp_path / "knows.csv"
    knows.write_text("a,b\nAda,Nobody\n", encoding="utf-8")
    assert main([*base, str(people), "--label", "Person", "--key", "name"]) == 0
    assert (
        main([*base, str(knows), "--relationship", "KNOWS", "--start", "Person.name=a", "--end", "Person.name=b"]) == 0
    )
    assert (
        "0 :KNOWS row(s) written, 1 skipped" in capsys.readouterr().out
    )  # no node named Nobody: nothing written, and said
    FalkorDBGraph(graph, host=falkordb_server.host, port=falkordb_server.port).query(
        "MATCH (n) DETACH DELETE n", allow_writes=True
    )


def test_resume_refuses_a_thread_of_another_graph_and_an_edit_without_a_query(stub, capsys, data_dir):
    thread = f"cli-{uuid.uuid4().hex[:8]}"
    assert (
        main(
            [
                "--data-dir",
                data_dir,
                "ask",
                "Which movies did Tom Hanks act in?",
                "--flow",
                "naive",
                "--json",
                "--thread",
                thread,
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["--data-dir", data_dir, "resume", thread, "--json"]) == 0  # the thread names its flow
    assert json.loads(capsys.readouterr().out)["query"] == TOM_HANKS_QUERY
    assert main(["--data-dir", data_dir, "resume", thread, "--flow", "reflexion"]) == 2  # asked for another
    assert "belongs to text2cypher_naive" in capsys.readouterr().err
    assert main(["--data-dir", data_dir, "resume", thread, "--decision", "edit"]) == 2
    assert "--decision edit needs --query" in capsys.readouterr().err


def test_the_end_of_input_at_the_approval_prompt_rejects_the_query(stub, capsys, monkeypatch, data_dir):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?", "--approve"])
    out = capsys.readouterr().out
    assert code == 1 and "the query is rejected" in out and "Stopped: rejected" in out


def test_an_unusable_checkpoint_file_is_a_configuration_error(stub, capsys, monkeypatch, tmp_path, data_dir):
    (tmp_path / "not-sqlite").write_text("hello, this is not a database" * 100)
    monkeypatch.setenv("REFLEXION_CHECKPOINTS", str(tmp_path / "not-sqlite"))
    assert main(["--data-dir", data_dir, "ask", "Which movies did Tom Hanks act in?"]) == 2
    assert "cannot keep threads in" in capsys.readouterr().err


@pytest.mark.parametrize(
    "url, expected",
    [
        (
            "falkordb://u:p%40ss@db.internal:6390/social",
            {"host": "db.internal", "port": 6390, "graph": "social", "password": "p@ss"},
        ),
        (
            "neo4j+s://neo:secret@h.example:7687/films",
            {"uri": "neo4j+s://h.example:7687", "user": "neo", "database": "films"},
        ),
        ("bolt://h.example", {"uri": "bolt://h.example", "database": None}),
    ],
)
def test_database_urls_name_host_port_credentials_and_graph(url, expected):
    from reflexion_agents.nodes.graphdb.locations import connection_args_from_url

    args = connection_args_from_url(url)
    assert {k: args[k] for k in expected} == expected


@pytest.mark.parametrize(
    "url", ["falkordb://h:notaport", "falkordb://h:99999", "bolt://h?database=x", "http://h", "falkordb://"]
)
def test_a_bad_database_url_is_a_configuration_error(url):
    from reflexion_agents.nodes.graphdb.locations import connection_args_from_url
    from reflexion_agents.schemas.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        connection_args_from_url(url)
