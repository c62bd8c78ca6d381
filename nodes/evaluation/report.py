"""Scores per group of questions, and the Markdown summary of a report."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from reflexion_agents.schemas.evaluation import EvaluationReport, GroupScore, QuestionTrace


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class ScoreTally:
    """A group's scores summed as its questions finish: what `GroupScore` needs of each trace, kept
    without the trace (its rows, its query), so a run of any length holds a few numbers a
    question (its latency, for the percentiles) and no answer."""

    def __init__(self) -> None:
        self.scored = self.correct = self.executable = self.gold_non_empty = self.correct_non_empty = 0
        self.steps = self.llm_calls = self.input_tokens = self.output_tokens = 0
        self.latencies = array("d")
        self.stop_reasons: Counter[str] = Counter()

    def add(self, trace: QuestionTrace) -> None:
        answer = trace.answer
        if trace.correct is None or answer is None:  # excluded, or its fault did not apply
            return
        self.scored += 1
        self.correct += bool(trace.correct)
        self.executable += answer.executed
        if trace.gold_rows:
            self.gold_non_empty += 1
            self.correct_non_empty += bool(trace.correct)
        self.steps += answer.steps
        self.llm_calls += answer.llm_calls
        self.input_tokens += answer.input_tokens
        self.output_tokens += answer.output_tokens
        self.latencies.append(trace.latency_s or 0.0)
        self.stop_reasons[answer.stop_reason or "none"] += 1

    def score(self, name: str) -> GroupScore:
        def mean(total: int) -> float:
            return total / self.scored if self.scored else 0.0

        def per_correct(total: int) -> float:
            return total / self.correct if self.correct else 0.0

        return GroupScore(
            name=name,
            scored=self.scored,
            correct=self.correct,
            executable=self.executable,
            gold_non_empty=self.gold_non_empty,
            correct_non_empty=self.correct_non_empty,
            mean_steps=mean(self.steps),
            mean_llm_calls=mean(self.llm_calls),
            mean_input_tokens=mean(self.input_tokens),
            mean_output_tokens=mean(self.output_tokens),
            tokens_per_correct=per_correct(self.input_tokens + self.output_tokens),
            llm_calls_per_correct=per_correct(self.llm_calls),
            latency_p50_s=_percentile(self.latencies, 0.5),
            latency_p95_s=_percentile(self.latencies, 0.95),
            stop_reasons=dict(self.stop_reasons.most_common()),
        )


class GroupedTally:
    """One `ScoreTally` per group `key` names (a question type, a fault kind); None: no group."""

    def __init__(self, key: Callable[[QuestionTrace], str | None]) -> None:
        self.key = key
        self.tallies: dict[str, ScoreTally] = {}

    def add(self, trace: QuestionTrace) -> None:
        name = self.key(trace)
        if name is not None:
            self.tallies.setdefault(name, ScoreTally()).add(trace)

    def scores(self) -> list[GroupScore]:
        return [self.tallies[name].score(name) for name in sorted(self.tallies)]


class ReportTally:
    """The scores an evaluation report shows, summed as its questions finish: overall, per question
    type and, for the fault-injecting models, per fault kind; and the questions a fault did not fit."""

    def __init__(self, *, by_fault: bool) -> None:
        self.overall = ScoreTally()
        self.by_type = GroupedTally(lambda trace: trace.type)
        self.by_fault = GroupedTally(lambda trace: trace.fault) if by_fault else None
        self.not_applicable = 0

    def add(self, trace: QuestionTrace) -> None:
        self.not_applicable += bool(trace.excluded)
        if trace.correct is None:
            return
        self.overall.add(trace)
        self.by_type.add(trace)
        if self.by_fault is not None:
            self.by_fault.add(trace)


def group_score(name: str, traces: Iterable[QuestionTrace]) -> GroupScore:
    tally = ScoreTally()
    for trace in traces:
        tally.add(trace)
    return tally.score(name)


def groups(traces: Iterable[QuestionTrace], key: Callable[[QuestionTrace], str | None]) -> list[GroupScore]:
    grouped = GroupedTally(key)
    for trace in traces:
        grouped.add(trace)
    return grouped.scores()


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
