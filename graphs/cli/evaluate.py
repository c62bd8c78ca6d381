"""`reflexion eval`: score an agent or flow over a (question, gold Cypher) dataset.

    reflexion eval --model oracle                       # must be 100%: checks the harness
    reflexion eval --model corrupt --faults syntax_error,write_clause
    reflexion eval --model simulated --self-scoring 0.8 --seed 3
    reflexion eval --agent retry_evaluate --model openai:gpt-4o-mini --limit 100 --concurrency 4

Writes `<out>/<agent>-<model>-<time>.json` (every question's trace) and `.md` (the summary
tables), and prints the summary. Each finished question is appended to a `.jsonl` file as it
ends, so an interrupted run keeps what it measured (questions excluded for their gold query are
in the final JSON only), and the run keeps no trace in memory: the JSON file is written from that
one (`nodes.evaluation.report_file`), so a run of 10,000 questions holds no more than one of 100.
A progress bar runs on stderr when it is a terminal.

The command's arguments are declared in `graphs.cli`, which imports this module when it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import math
import os
import re
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from reflexion_agents.graphs.cli.ask import database
from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.evaluation.faults import FAULTS
from reflexion_agents.nodes.evaluation.report import markdown
from reflexion_agents.nodes.evaluation.report_file import write_report
from reflexion_agents.nodes.evaluation.simulated import RATES, Misbehaviour
from reflexion_agents.nodes.graphdb.demo_data import MOVIES_QUESTIONS_CSV
from reflexion_agents.schemas.constants import DEFAULT_MODEL, MAX_STEPS_LIMIT, MODEL_ENV
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.evaluation import QuestionTrace

EXIT_DONE, EXIT_BELOW_TARGET = 0, 1


def _faults(spec: str | None, model: str) -> list[str] | None:
    if spec is None:
        return None
    if model != "corrupt":
        raise ConfigurationError("--faults applies to --model corrupt only")
    kinds = [k.strip() for k in spec.split(",") if k.strip()]
    unknown = sorted(set(kinds) - set(FAULTS))
    if unknown:
        raise ConfigurationError(f"unknown fault kind(s) {', '.join(unknown)}; choose from {', '.join(FAULTS)}")
    if not kinds:
        raise ConfigurationError(f"--faults names no fault kind; choose from {', '.join(FAULTS)}")
    return kinds


def _misbehaviour(args: argparse.Namespace, model: str) -> Misbehaviour | None:
    """The simulated model's rates from the options (its defaults for those not given); None for
    another model, which refuses them."""
    given = {name: value for name in (*RATES, "seed") if (value := getattr(args, name, None)) is not None}
    if model != "simulated":
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ConfigurationError(f"only --model simulated takes {flags}")
        return None
    for name in RATES:
        rate = given.get(name)
        if rate is not None and not (math.isfinite(rate) and 0 <= rate <= 1):
            raise ConfigurationError(f"--{name.replace('_', '-')} must be a probability from 0 to 1, got {rate:g}")
    return Misbehaviour(**given)


def _check_numbers(args: argparse.Namespace) -> None:
    if args.limit is not None and args.limit < 1:
        raise ConfigurationError(f"--limit must be at least 1, got {args.limit}")
    if args.concurrency < 1:
        raise ConfigurationError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.workers < 1:
        raise ConfigurationError(f"--workers must be at least 1, got {args.workers}")
    if not (math.isfinite(args.query_timeout) and args.query_timeout > 0):
        raise ConfigurationError(f"--query-timeout must be a positive number of seconds, got {args.query_timeout}")
    if not 1 <= args.max_steps <= MAX_STEPS_LIMIT:
        raise ConfigurationError(f"--max-steps must be from 1 to {MAX_STEPS_LIMIT}, got {args.max_steps}")
    if args.min_accuracy is not None and not 0 <= args.min_accuracy <= 100:
        raise ConfigurationError(f"--min-accuracy is a percentage from 0 to 100, got {args.min_accuracy}")


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, the innermost first: what a run
    that fails before measuring anything removes again."""
    return [p for p in [folder, *folder.parents] if not p.exists()]


def _output_paths(out: str, agent: str, model: str) -> tuple[Path, Path, Path]:
    """Fresh file names in `out` (created): two runs started in the same second get their own."""
    folder = Path(out)
    stem = f"{agent}-{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for attempt in range(1000):
            name = stem if attempt == 0 else f"{stem}-{attempt}"
            if (folder / f"{name}.json").exists():  # a finished run's
                continue
            try:
                (folder / f"{name}.jsonl").open("x").close()  # claims the name from a running one
            except FileExistsError:
                continue
            return folder / f"{name}.json", folder / f"{name}.md", folder / f"{name}.jsonl"
    except OSError as e:
        raise ConfigurationError(f"cannot write results in {folder}: {e}") from e
    raise ConfigurationError(f"cannot find a free file name for {stem} in {folder}")


def cmd_eval(args: argparse.Namespace, out: Console) -> int:
    if args.dataset is None:  # the parser leaves it: naming the file would import pydantic for every --help
        args.dataset = str(MOVIES_QUESTIONS_CSV)
    _check_numbers(args)
    model = args.model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
    faults = _faults(args.faults, model)
    misbehaviour = _misbehaviour(args, model)
    items = load_dataset(args.dataset, limit=args.limit)
    if not items:
        raise ConfigurationError(f"the dataset {args.dataset} has no (question, cypher) rows")
    db = database(args)
    new_folders = _missing_folders(Path(args.out))
    json_path, md_path, lines_path = _output_paths(args.out, args.agent, model)
    err = Console(stderr=True)
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[correct]} correct"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not err.is_terminal,
    )
    task = bar.add_task(f"{args.agent} / {model}", total=None, correct=0)

    try:
        report = _run(args, model, faults, misbehaviour, items, db, lines_path, bar, task)
        summary = markdown(report)
        try:
            write_report(report, lines_path, json_path)
            md_path.write_text(summary, encoding="utf-8")
        except OSError as e:
            raise ConfigurationError(f"cannot write the results ({e}); the traces so far are in {lines_path}") from e
    except BaseException as e:
        if not lines_path.exists() or lines_path.stat().st_size == 0:  # nothing measured: nothing left behind
            lines_path.unlink(missing_ok=True)
            for folder in new_folders:  # the innermost first; one that holds anything stays
                with contextlib.suppress(OSError):
                    folder.rmdir()
        elif isinstance(e, KeyboardInterrupt):
            err.print(f"Interrupted: the finished questions are in {lines_path}", highlight=False)
        raise
    lines_path.unlink(missing_ok=True)  # the JSON file holds every trace now
    out.print(summary, markup=False, highlight=False)
    out.print(f"Traces: {json_path}\nSummary: {md_path}", highlight=False)
    accuracy = 100 * report.overall.correct / report.overall.scored if report.overall.scored else 0.0
    if args.min_accuracy is not None and accuracy < args.min_accuracy:
        err.print(f"Execution accuracy {accuracy:.1f}% is below --min-accuracy {args.min_accuracy}%", highlight=False)
        return EXIT_BELOW_TARGET
    return EXIT_DONE


def _run(
    args: argparse.Namespace,
    model: str,
    faults: list[str] | None,
    misbehaviour: Misbehaviour | None,
    items: list[Any],
    db: Any,
    lines_path: Path,
    bar: Progress,
    task: Any,
) -> Any:
    """The evaluation, each finished question appended to `lines_path` and shown on the bar."""
    correct = 0
    with lines_path.open("a", encoding="utf-8") as lines, bar:

        def started(total: int) -> None:
            bar.update(task, total=total)

        def done(trace: QuestionTrace) -> None:
            nonlocal correct
            correct += bool(trace.correct)
            lines.write(trace.model_dump_json() + "\n")
            lines.flush()
            bar.update(task, advance=1, correct=correct)

        evaluation = evaluate(
            agent=args.agent,
            model=model,
            items=items,
            db=db,
            dataset=args.dataset,
            concurrency=args.concurrency,
            max_steps=args.max_steps,
            query_timeout=args.query_timeout,
            faults=faults,
            trust_non_empty_result=not args.no_trust_non_empty,
            on_start=started,
            on_done=done,
            force=args.force,
            misbehaviour=misbehaviour,
            workers=args.workers,
            keep_traces=False,  # each is in `lines_path`; the JSON file reads them back from there
        )
        # What is loaded by now lives to the run's end: a full collection that walked it all (~0.1 s
        # each) would land in the middle of the questions. Given back afterwards (a caller of `main`
        # in its own process keeps collecting it).
        gc.freeze()
        try:
            return asyncio.run(evaluation)
        finally:
            gc.unfreeze()
