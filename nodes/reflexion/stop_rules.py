"""When the Reflexion loop stops, and which executed outcome becomes the answer."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schemas.reflexion import StopReason, ToolOutcome


def already_ran(action: str | None, outcomes: list[Mapping[str, Any]], key: Callable[[str], str]) -> int | None:
    """The step at which the same action already ran, or None; `key` says what makes two actions
    the same (for queries: `nodes.graphdb.cypher_text.normalise_query`)."""
    wanted = key(action or "")
    return next((o["step"] for o in outcomes if o["executed"] and key(o["action"]) == wanted), None)


def satisfied_by_score(state: Mapping[str, Any], score_threshold: float) -> bool | None:
    """Whether a revision's high score may end the run: None when the score is not above the
    threshold; False when it is, but cannot be believed; True when it ends the run.

    A model may score either reading of `score`: the result it was shown (as the prompt asks) or
    the revision it just wrote (as many models do). The score is believed only when the newest
    tool step ran without error. After an error (or a step that ran nothing) a high score most
    likely judges the fix, which has not run: the fix runs and is scored in turn, so a run never
    ends satisfied on a failed query while a different revision is waiting."""
    score = state.get("last_score")
    if score is None or score <= score_threshold:
        return None
    outcomes = state.get("outcomes") or []
    if not outcomes:
        return False
    judged = ToolOutcome.model_validate(outcomes[-1])
    return judged.executed and judged.error is None


def unbelieved_score_note(state: Mapping[str, Any]) -> str:
    """What the model is told when its high score was not taken as final (see `satisfied_by_score`)."""
    outcomes = state.get("outcomes") or []
    judged = ToolOutcome.model_validate(outcomes[-1]) if outcomes else None
    why = (
        "the query it judged failed" if judged is not None and judged.executed else "no query ran at the step it judged"
    )
    return f"Note: your score {state.get('last_score'):g} was not taken as final because {why}."


def check_stop(
    state: Mapping[str, Any],
    *,
    max_steps: int,
    score_threshold: float,
    max_repeats: int,
    trust_non_empty_result: bool,
) -> StopReason | None:
    """The stop rules after a revise step, in order; None means run the revised action.

    With `trust_non_empty_result` (the documented rule) any non-empty result ends the loop, even
    one the revision scored low; without it, only a non-empty result the revision gave no score.
    A score above the threshold counts only as `satisfied_by_score` allows."""
    outcomes = state.get("outcomes") or []
    last = ToolOutcome.model_validate(outcomes[-1]) if outcomes else None
    if state.get("steps", 0) >= max_steps:
        return "max_steps"
    if satisfied_by_score(state, score_threshold):
        return "score_threshold"
    score = state.get("last_score")
    if last is not None and last.executed and last.non_empty and (trust_non_empty_result or score is None):
        return "non_empty_result"
    if state.get("repeats", 0) >= max_repeats:
        return "no_progress"
    return None


def _rank(outcome: ToolOutcome) -> tuple[bool, bool, float, int]:
    return (
        outcome.error is None,
        outcome.non_empty,
        outcome.score if outcome.score is not None else -1.0,
        outcome.step,
    )


def answer_outcome(outcomes: list[ToolOutcome], stop_reason: str | None) -> ToolOutcome | None:
    """The executed outcome to return: the last one when the loop was satisfied, else the best so far."""
    executed = [o for o in outcomes if o.executed]
    if not executed:
        return None
    if stop_reason in ("score_threshold", "non_empty_result"):
        return executed[-1]
    return max(executed, key=_rank)
