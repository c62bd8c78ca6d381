"""An evaluation of any length holds what its running questions need, not what it has done: the gold
results wait on disk, finished traces go to `on_done` (the command's `.jsonl` file) and no further,
and the report's JSON file is written from that file, a trace at a time, in the run's order."""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.evaluation.gold import GoldResult
from reflexion_agents.nodes.evaluation.gold_store import GoldStore
from reflexion_agents.schemas.evaluation import EvaluationReport, QuestionTrace


def answered_traces_alive() -> int:
    """Traces of scored questions still reachable anywhere in this process."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, QuestionTrace) and o.answer is not None)


def run(movies_db, keep: bool, seen: list[int]) -> EvaluationReport:
    items = load_dataset(limit=60)
    done = lambda trace: seen.append(trace.index)  # noqa: E731 - keeps the index, not the trace
    return asyncio.run(
        evaluate(agent="reflexion", model="oracle", items=items, db=movies_db, on_done=done, keep_traces=keep)
    )


def test_a_streamed_run_keeps_no_finished_trace_and_scores_as_a_kept_one(movies_db):
    seen: list[int] = []
    before = answered_traces_alive()  # another test's, if any
    streamed = run(movies_db, False, seen)
    assert answered_traces_alive() == before  # nothing held a scored trace once `on_done` had it
    assert all(t.excluded for t in streamed.traces) and len(seen) == streamed.overall.scored > 40
    kept = run(movies_db, True, [])
    assert answered_traces_alive() == before + kept.overall.scored  # the probe finds traces that are kept
    ignore = {"latency_p50_s", "latency_p95_s"}
    assert streamed.overall.model_dump(exclude=ignore) == kept.overall.model_dump(exclude=ignore)
    assert [g.model_dump(exclude=ignore) for g in streamed.by_type] == [
        g.model_dump(exclude=ignore) for g in kept.by_type
    ]
    assert [t.index for t in kept.traces if not t.excluded] == sorted(seen)  # kept: in the dataset's order


def _read_in_another_process(path: str, index: int, answer: multiprocessing.Queue) -> None:
    with GoldStore(path) as store:
        answer.put(store[index].rows)


@pytest.mark.integration
def test_gold_results_wait_on_disk_where_a_worker_process_reads_them():
    store = GoldStore()
    rows = [[n, f"movie {n}", {"released": 1999 + n}] for n in range(500)]
    store[7] = GoldResult(["n", "title", "props"], rows)
    store[9] = GoldResult(error="SyntaxError: nope", reason="syntax")
    assert store[7].rows == rows and store[9].error == "SyntaxError: nope" and list(store) == [7, 9]
    with pytest.raises(KeyError):
        store[8]
    answer: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    reader = multiprocessing.get_context("spawn").Process(
        target=_read_in_another_process, args=(str(store.path), 7, answer)
    )
    reader.start()
    assert answer.get(timeout=60) == rows
    reader.join(timeout=60)
    path = store.path
    store.close()
    assert not path.exists()  # the run's file goes with the run


def test_the_report_file_holds_every_trace_in_the_runs_order(falkordb_server, movies_db, tmp_path):
    faults = ["write_clause", "syntax_error"]  # not in name order: the report keeps the run's
    where = ["--data-dir", str(falkordb_server.data_dir), "eval", "--out", str(tmp_path)]
    code = main([*where, "--model", "corrupt", "--limit", "45", "--faults", ",".join(faults)])
    assert code == 0
    (json_file,) = tmp_path.glob("*.json")
    report = EvaluationReport.model_validate_json(json_file.read_text(encoding="utf-8"))
    excluded = [t for t in report.traces if t.excluded and t.fault is None]
    scored = report.traces[len(excluded) :]
    assert all(t.answer is None for t in excluded)
    places = [(faults.index(t.fault), t.index) for t in scored]  # type: ignore[arg-type]
    assert places == sorted(places) and len(places) == report.overall.scored + report.not_applicable
    assert {t.fault for t in scored} == set(faults)
    assert json.loads(json_file.read_text(encoding="utf-8"))["overall"]["correct"] == report.overall.correct
    assert not list(tmp_path.glob("*.jsonl"))


def test_an_empty_traces_file_still_makes_a_report(tmp_path):
    from reflexion_agents.nodes.evaluation.report import group_score
    from reflexion_agents.nodes.evaluation.report_file import write_report

    report = EvaluationReport(
        agent="reflexion",
        model="oracle",
        dataset="none.csv",
        backend="falkordb",
        questions=0,
        excluded=0,
        excluded_reasons={},
        overall=group_score("all", []),
        by_type=[],
        wall_s=0.0,
        concurrency=1,
        traces=[],
    )
    lines = tmp_path / "traces.jsonl"
    lines.write_text("")
    write_report(report, lines, tmp_path / "report.json")
    assert EvaluationReport.model_validate_json((tmp_path / "report.json").read_text()) == report
