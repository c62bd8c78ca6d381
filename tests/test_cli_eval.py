"""`reflexion eval` on the shipped movies questions and the real embedded database: the files it
writes, its exit codes, and its refusals of bad settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.eval_processes import workers_for
from tests.helpers import graph_fingerprint


@pytest.fixture
def data_dir(falkordb_server, movies_db) -> str:
    return str(falkordb_server.data_dir)


def run_eval(data_dir: str, out: Path, *options: str) -> int:
    return main(["--data-dir", data_dir, "eval", "--out", str(out), *options])


def written(out: Path) -> tuple[dict, str]:
    (json_file,) = out.glob("*.json")
    (md_file,) = out.glob("*.md")
    assert not list(out.glob("*.jsonl"))  # the running log is gone once the JSON holds every trace
    return json.loads(json_file.read_text()), md_file.read_text()


def test_oracle_writes_every_trace_and_the_summary(data_dir, tmp_path, capsys):
    assert run_eval(data_dir, tmp_path, "--model", "oracle", "--limit", "60", "--min-accuracy", "100") == 0
    report, summary = written(tmp_path)
    traces = report["traces"]
    assert len(traces) == 60 and report["questions"] == 60
    scored = [t for t in traces if t["correct"] is not None]
    assert scored and all(t["correct"] for t in scored)
    assert len(scored) + report["excluded"] == 60 and all(t["excluded"] for t in traces if t["correct"] is None)
    first = scored[0]
    assert first["answer"]["cypher"] and first["answer"]["llm_calls"] >= 1 and first["latency_s"] > 0
    assert report["options"]["max_steps"] == 10
    assert "| all | " in summary and "100.0%" in summary and "Per question type" in summary
    assert summary in capsys.readouterr().out


def test_corrupting_model_reports_each_fault_and_writes_never_land(data_dir, movies_db, tmp_path):
    before = graph_fingerprint(movies_db)
    code = run_eval(data_dir, tmp_path, "--model", "corrupt", "--limit", "40", "--faults", "write_clause,syntax_error")
    report, summary = written(tmp_path)
    assert code == 0 and graph_fingerprint(movies_db) == before
    assert [g["name"] for g in report["by_fault"]] == ["syntax_error", "write_clause"]
    assert all(g["correct"] == g["scored"] > 0 and g["mean_steps"] >= 2 for g in report["by_fault"])
    assert "Per fault kind" in summary


def test_a_flow_without_retries_falls_below_the_target_and_exits_1(data_dir, tmp_path, capsys):
    code = run_eval(
        data_dir,
        tmp_path,
        "--agent",
        "naive",
        "--model",
        "corrupt",
        "--faults",
        "syntax_error",
        "--limit",
        "20",
        "--min-accuracy",
        "50",
    )
    report, _ = written(tmp_path)
    assert code == 1 and report["overall"]["correct"] == 0 and report["overall"]["executable"] == 0
    assert "below --min-accuracy" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options, message",
    [
        (["--model", "oracle", "--faults", "syntax_error"], "--model corrupt only"),
        (["--model", "corrupt", "--faults", "typo_fault"], "typo_fault"),
        (["--model", "oracle", "--limit", "0"], "--limit"),
        (["--model", "oracle", "--concurrency", "0"], "--concurrency"),
        (["--model", "oracle", "--min-accuracy", "120"], "--min-accuracy"),
    ],
)
def test_bad_settings_are_configuration_errors(data_dir, tmp_path, capsys, options, message):
    assert run_eval(data_dir, tmp_path / "out", *options) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_dataset_without_the_columns_is_refused(data_dir, tmp_path, capsys):
    bad = tmp_path / "pairs.csv"
    bad.write_text("text,query\nWho?,MATCH (n) RETURN n\n")
    assert run_eval(data_dir, tmp_path / "out", "--model", "oracle", "--dataset", str(bad)) == 2
    assert "lacks the column(s) cypher, question" in capsys.readouterr().err


def test_any_csv_with_the_columns_works(data_dir, tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(
        "question,cypher\n"
        "How many movies are there?,MATCH (m:Movie) RETURN count(m) AS n\n"
        "Who directed The Matrix?,"
        "MATCH (p:Person)-[:DIRECTED]->(:Movie {title: 'The Matrix'}) RETURN p.name ORDER BY p.name\n"
    )
    assert (
        run_eval(data_dir, tmp_path / "out", "--model", "oracle", "--dataset", str(pairs), "--agent", "retry_evaluate")
        == 0
    )
    report, _ = written(tmp_path / "out")
    assert report["overall"]["scored"] == 2 and report["overall"]["correct"] == 2
    assert [g["name"] for g in report["by_type"]] == ["all"]


@pytest.mark.parametrize(
    "options, message",
    [
        (["--query-timeout", "nan"], "--query-timeout"),
        (["--query-timeout", "inf"], "--query-timeout"),
        (["--max-steps", "0"], "--max-steps"),
        (["--workers", "0"], "--workers"),
        (["--faults", ""], "names no fault kind"),
    ],
)
def test_more_bad_settings_exit_2_before_anything_runs(data_dir, tmp_path, capsys, options, message):
    model = ["--model", "corrupt"] if "--faults" in options else ["--model", "oracle"]
    assert run_eval(data_dir, tmp_path / "out", *model, *options) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_short_csv_rows_are_skipped_and_an_unwritable_directory_is_refused(data_dir, tmp_path, capsys):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("question,cypher\nhello\nHow many movies?,MATCH (m:Movie) RETURN count(m)\n")
    assert run_eval(data_dir, tmp_path / "out", "--model", "oracle", "--dataset", str(pairs)) == 0
    assert written(tmp_path / "out")[0]["questions"] == 1
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    assert run_eval(data_dir, blocked / "out", "--model", "oracle", "--dataset", str(pairs)) == 2
    assert "cannot write results" in capsys.readouterr().err


def test_two_runs_in_the_same_second_keep_their_own_files(data_dir, tmp_path):
    for _ in range(2):
        assert run_eval(data_dir, tmp_path, "--model", "oracle", "--limit", "3") == 0
    assert len(list(tmp_path.glob("*.json"))) == 2 and len(list(tmp_path.glob("*.md"))) == 2


def test_an_interrupted_run_keeps_the_questions_it_finished(data_dir, tmp_path, monkeypatch, capsys):
    def interrupt(report):  # the run is stopped once every question has finished, before the files are written
        raise KeyboardInterrupt

    monkeypatch.setattr("reflexion_agents.graphs.cli.evaluate.markdown", interrupt)
    assert run_eval(data_dir, tmp_path, "--model", "oracle", "--limit", "12") == 130
    (log,) = tmp_path.glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) >= 10 and all(line["correct"] for line in lines)
    assert "finished questions are in" in capsys.readouterr().err


def test_two_worker_processes_score_every_question_as_one_process_does(data_dir, tmp_path):
    """The questions shared between two processes (graphs/eval_processes.py): the same traces, in the
    same order, each question's answer the same; the report says how many processes ran."""
    faults = ("--model", "corrupt", "--faults", "relationship_direction,syntax_error", "--limit", "120")
    assert run_eval(data_dir, tmp_path / "one", *faults, "--workers", "1") == 0
    assert run_eval(data_dir, tmp_path / "two", *faults, "--workers", "2") == 0
    (one, _), (two, _) = written(tmp_path / "one"), written(tmp_path / "two")
    assert (one["options"]["workers"], two["options"]["workers"]) == (1, 2)

    def answers(report: dict) -> list[tuple]:
        return [(t["index"], t["fault"], t["correct"], (t["answer"] or {}).get("cypher")) for t in report["traces"]]

    assert answers(one) == answers(two) and len(answers(two)) > 200
    kept = ("name", "scored", "correct", "mean_steps", "mean_llm_calls", "stop_reasons")  # not the timings

    def groups(report: dict) -> list[dict]:
        return [{k: g[k] for k in kept} for g in report["by_fault"]]

    assert groups(one) == groups(two) and len(groups(two)) == 2


@pytest.mark.unit
def test_workers_are_used_only_where_they_can_be():
    class Reachable:  # a database another process can reach by address
        @property
        def connection_args(self) -> dict:
            return {"graph": "movies", "host": "127.0.0.1", "port": 1}

    assert workers_for(4, 120, Reachable(), None) == 2  # 50 questions a process at least
    assert workers_for(2, 1000, Reachable(), None) == 2
    assert workers_for(2, 1000, object(), None) == 1  # no address: a Neo4j driver, a database of one's own
    assert workers_for(2, 1000, Reachable(), object()) == 1  # a model object cannot cross processes
    assert workers_for(1, 1000, Reachable(), None) == 1


def dies_at_once(plans, finished, counter) -> None:  # a helper killed before it could say anything
    import os

    plans.get()
    os._exit(3)


def test_a_worker_that_dies_stops_the_run_with_its_exit_code(monkeypatch):
    from reflexion_agents.graphs import eval_processes
    from reflexion_agents.schemas.errors import ConfigurationError

    monkeypatch.setattr(eval_processes, "_work", dies_at_once)
    plan = eval_processes.WorkPlan({}, "reflexion", "oracle", [], "", [None], 1, 1, 1.0, True, None)
    pool = eval_processes.WorkerPool(1)
    try:
        pool.plan(plan, 1)
        with pytest.raises(ConfigurationError, match="exit code 3"):
            pool.collect(lambda trace: None, timeout_s=600)
    finally:
        pool.close()


def test_helpers_started_for_a_run_that_never_plans_them_end_on_their_own():
    """Helpers start before the gold queries; a run that then fails (a dataset that does not fit) or
    needs fewer processes tells them to end: each exits by itself, none is left behind or killed."""
    from reflexion_agents.graphs import eval_processes

    pool = eval_processes.WorkerPool(2)
    pool.close()
    assert [w.exitcode for w in pool.workers] == [0, 0]


PLANNED_THEN_FAILED = """
from reflexion_agents.graphs.eval_processes import WorkerPool, WorkPlan
from reflexion_agents.nodes.evaluation.dataset import load_dataset

if __name__ == "__main__":
    plan = WorkPlan({"graph": "movies", "host": "127.0.0.1", "port": 1}, "reflexion", "oracle", load_dataset(),
                    "/nonexistent", [None], 8, 10, 5.0, True, None)
    pool = WorkerPool(2)
    pool.plan(plan, 2)  # larger than a pipe holds; the run then fails before a helper reads it
    pool.close()
"""


@pytest.mark.integration
def test_a_run_that_fails_after_planning_its_helpers_still_exits(tmp_path):
    """Helpers still starting are ended, and the plans they never read do not hold the command at its exit."""
    script = tmp_path / "planned_then_failed.py"
    script.write_text(PLANNED_THEN_FAILED)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.integration
def test_a_helper_interrupted_alone_stops_the_run_as_one_that_died():
    """Ctrl-C reaches the whole process group; a helper interrupted alone (`kill -INT`) must not look
    like one that finished, or the command would wait for it for a day."""
    import os
    import signal
    import time

    from reflexion_agents.graphs import eval_processes
    from reflexion_agents.schemas.errors import ConfigurationError

    pool = eval_processes.WorkerPool(1)
    try:
        time.sleep(3)  # most likely waiting for its plan by now; interrupted while importing it fails too
        os.kill(pool.workers[0].pid, signal.SIGINT)
        pool.workers[0].join(timeout=60)
        assert pool.workers[0].exitcode not in (None, 0)
        pool.plan(eval_processes.WorkPlan({}, "reflexion", "oracle", [], "", [None], 1, 1, 1.0, True, None), 1)
        with pytest.raises(ConfigurationError, match="died"):
            pool.collect(lambda trace: None, timeout_s=600)
    finally:
        pool.close()
