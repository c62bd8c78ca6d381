"""Scores per group of questions, and the Markdown summary of a report."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable

from reflexion_agents.schemas.evaluation import EvaluationReport, GroupScore, QuestionTrace


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def group_score(name: str, traces: Iterable[QuestionTrace]) -> GroupScore:
    scored = [t for t in traces if t.correct is not None and t.answer is not None]
    answers = [t.answer for t in scored if t.answer is not None]
    non_empty = [t for t in scored if t.gold_rows]
    correct = sum(1 for t in scored if t.correct)

    def mean(values: list[int]) -> float:
        return statistics.fmean(values) if values else 0.0

    def per_correct(total: float) -> float:
        return total / correct if correct else 0.0

    return GroupScore(
        name=name,
        scored=len(scored),
        correct=correct,
        executable=sum(1 for a in answers if a.executed),
        gold_non_empty=len(non_empty),
        correct_non_empty=sum(1 for t in non_empty if t.correct),
        mean_steps=mean([a.steps for a in answers]),
        mean_llm_calls=mean([a.llm_calls for a in answers]),
        mean_input_tokens=mean([a.input_tokens for a in answers]),
        mean_output_tokens=mean([a.output_tokens for a in answers]),
        tokens_per_correct=per_correct(sum(a.input_tokens + a.output_tokens for a in answers)),
        llm_calls_per_correct=per_correct(sum(a.llm_calls for a in answers)),
        latency_p50_s=_percentile([t.latency_s or 0.0 for t in scored], 0.5),
        latency_p95_s=_percentile([t.latency_s or 0.0 for t in scored], 0.95),
        stop_reasons=dict(Counter(a.stop_reason or "none" for a in answers).most_common()),
    )


def groups(traces: list[QuestionTrace], key: Callable[[QuestionTrace], str | None]) -> list[GroupScore]:
    names = sorted({k for t in traces if (k := key(t)) is not None})
    return [group_score(name, [t for t in traces if key(t) == name]) for name in names]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _row(group: GroupScore) -> str:
    stops = ", ".join(f"{k} {v}" for k, v in group.stop_reasons.items())
    return (
        f"| {group.name} | {group.scored} | {_pct(group.correct, group.scored)} "
        f"| {_pct(group.correct_non_empty, group.gold_non_empty)} "
        f"| {_pct(group.executable, group.scored)} | {group.mean_steps:.2f} | {group.mean_llm_calls:.2f} "
        f"| {group.mean_input_tokens:.0f} / {group.mean_output_tokens:.0f} | {group.tokens_per_correct:.0f} "
        f"| {group.latency_p50_s:.3f} / {group.latency_p95_s:.3f} | {stops} |"
    )


HEADER = (
    "| group | scored | execution accuracy | on non-empty gold | executable | steps | LLM calls "
    "| tokens in / out | tokens per correct answer | latency p50 / p95 (s) | stop reasons |"
    "\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
)


FAULT_HEADINGS = {
    "corrupt": "Per fault kind (first draft faulty, revisions correct):",
    "simulated": "Per fault of the first draft (`none`: a right draft; revisions err too, see the options):",
}


def markdown(report: EvaluationReport) -> str:
    """The summary tables: overall, per fault kind (corrupting model), per question type."""
    reasons = "; ".join(
        f"{reason} ({n})" for reason, n in sorted(report.excluded_reasons.items(), key=lambda x: (-x[1], x[0]))
    )
    lines = [
        f"# Evaluation: {report.agent} with the {report.model} model",
        "",
        f"{report.questions} questions from `{report.dataset}` on {report.backend}; {report.excluded} excluded "
        f"because their gold query does not run there{': ' + reasons if reasons else ''}."
        + (f" {report.not_applicable} question-fault pairs did not apply." if report.not_applicable else ""),
        f"Wall time {report.wall_s:.1f} s at concurrency {report.concurrency}.",
        "",
        HEADER,
        _row(report.overall),
    ]
    if report.by_fault:
        lines += [
            "",
            FAULT_HEADINGS.get(report.model, "Per fault kind:"),
            "",
            HEADER,
            *(_row(g) for g in report.by_fault),
        ]
    lines += ["", "Per question type:", "", HEADER, *(_row(g) for g in report.by_type)]
    return "\n".join(lines) + "\n"
