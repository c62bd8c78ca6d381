"""When the Reflexion loop stops, and which executed outcome becomes the answer.

Evidence before belief. biochatter's rules end a run on a score above 7 or on any non-empty result.
Real models break both: many score the revision they are writing rather than the result they were
shown (a high score on an empty result then ends the run with nothing), and a result with rows can
be the wrong rows (a relationship read the other way round). So a score, rows, or no rows end the
run only when the evidence agrees:

- the revision **keeps the query** that gave the result (it proposes the same query, or none). A
  revision that rewrites the query says the model is not done, whatever it scored: a high score
  next to a new query most likely judges the new query, which has not run yet. It runs first.
- the query **ran without error**, and the schema check (`nodes.graphdb.query_check`) found
  nothing wrong in it (no label, property or relationship in that direction the graph lacks, no
  value the graph holds only in other forms).
- **rows** end the run with a score above the threshold (`score_threshold`), or without a score
  that rejects them (`non_empty_result`: no score below the middle of the scale; with
  `trust_non_empty_result=False`, no score at all).
- **no rows** end the run (`empty_result`) only when the check looked up everything the query
  names and found it, except values stored in no form at all: then "no rows" is the answer (no
  Movie is titled "Inception"), unless the revision's score rejects it. Where the check could not
  look everything up (a subclass's own database, a path, a value compared in a form it does not
  read), a score above the threshold is the only evidence (`score_threshold`), as in biochatter.
- a query naming what the graph does not hold (a property no Movie has) never answers. When the
  model keeps it once more after being told so and after its repeat was refused, the question asks
  for what the graph does not hold: the run ends `not_in_graph`, with that query's result and the
  check's findings, rather than cycling through variants of it until the step limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from reflexion_agents.schemas.reflexion import ACCEPTING, StopReason, ToolOutcome
from reflexion_agents.schemas.reply_text import STOP_WORDS

#: A score below the middle of the 0-10 scale says the result does not answer the question.
REJECTING_BELOW = 5.0


def already_ran(action: str | None, outcomes: list[Mapping[str, Any]], key: Callable[[str], str]) -> int | None:
    """The step at which the same action already ran, as written or as repaired, or None; `key`
    says what makes two actions the same (for queries: `nodes.graphdb.cypher_text.normalise_query`)."""
    wanted = key(action or "")
    return next((int(o["step"]) for o in outcomes if o["executed"] and wanted in _keyed_forms(o, key)), None)


def _forms(outcome: Mapping[str, Any]) -> set[str]:
    """The action as it ran and as it was written (before the schema check repaired it), read from an
    outcome's dump: the rules read many outcomes at every step, and validating each would cost more."""
    check = outcome.get("check")
    return {outcome["action"]} | ({check["written"]} if check else set())


def _keyed_forms(outcome: Mapping[str, Any], key: Callable[[str], str]) -> set[str]:
    return {key(form) for form in _forms(outcome)}


def keeps(action: str | None, outcome: ToolOutcome, key: Callable[[str], str]) -> bool:
    """Whether a revision proposing `action` keeps the action that gave `outcome`: the same one (as
    written or as run), or none at all."""
    if not (action or "").strip():
        return True
    return key(action or "") in _keyed_forms(outcome.model_dump(include={"action", "check"}), key)


def judged_index(outcomes: list[Mapping[str, Any]], key: Callable[[str], str]) -> int | None:
    """Which step's result the newest revision judged: the newest step, or, when that step ran nothing
    because its query had already run, the step that ran it (the model was told to look there).
    `outcomes` are `ToolOutcome` dumps, as the state holds them."""
    if not outcomes:
        return None
    last = outcomes[-1]
    if last["executed"] or last.get("error") is not None:
        return len(outcomes) - 1
    wanted = key(last["action"])
    ran = (i for i in range(len(outcomes) - 1, -1, -1) if outcomes[i]["executed"])
    return next((i for i in ran if wanted in _keyed_forms(outcomes[i], key)), len(outcomes) - 1)


def judged_outcome(outcomes: list[Mapping[str, Any]], key: Callable[[str], str]) -> ToolOutcome | None:
    """The outcome at `judged_index`, read whole (only that one is validated)."""
    at = judged_index(outcomes, key)
    return None if at is None else ToolOutcome.model_validate(outcomes[at])


def _judged(state: Mapping[str, Any], key: Callable[[str], str]) -> ToolOutcome | None:
    return judged_outcome(state.get("outcomes") or [], key)


def accepted(
    state: Mapping[str, Any], *, score_threshold: float, trust_non_empty_result: bool, key: Callable[[str], str]
) -> StopReason | None:
    """The stop reason that takes the last result as the answer, or None (see the module docstring)."""
    judged, score = _judged(state, key), state.get("last_score")
    if judged is None or not judged.executed or judged.error is not None:
        return None
    if not keeps(state.get("action"), judged, key):
        return None
    if judged.check is not None and judged.check.blocking:
        # naming what the graph lacks, kept once more after its repeat was refused: the model has
        # nothing else to ask of this graph
        outcomes = state.get("outcomes") or []
        refused_before = bool(outcomes) and not outcomes[-1]["executed"]
        return "not_in_graph" if judged.check.missing and refused_before else None
    high = score is not None and score > score_threshold
    rejecting = score is not None and (score < REJECTING_BELOW or not trust_non_empty_result)
    if judged.non_empty:
        return "score_threshold" if high else (None if rejecting else "non_empty_result")
    if judged.check is not None and judged.check.verified:
        return None if score is not None and score < REJECTING_BELOW else "empty_result"
    return "score_threshold" if high else None


def not_final_note(state: Mapping[str, Any], score_threshold: float, key: Callable[[str], str]) -> str | None:
    """What the model is told when its score was above the threshold but did not end the run, or None."""
    judged, score = _judged(state, key), state.get("last_score")
    if score is None or score <= score_threshold:
        return None
    if judged is None or not judged.executed:
        why = "no query ran at the step it judged"
    elif judged.error is not None:
        why = "the query it judged failed"
    elif not keeps(state.get("action"), judged, key):
        why = "you revised the query, and a revision is scored once it has run"
    elif judged.check is not None and judged.check.missing:
        why = "the query names what the graph does not hold (see the check with its result)"
    elif judged.check is not None and judged.check.blocking:
        why = "the check found the query wrong as written (see the check with its result)"
    else:  # a high score on a kept result that ran cleanly ends the run: no note is needed
        return None
    return f"Note: your score {score:g} did not end the run because {why}."


Rule = Callable[[Mapping[str, Any], Mapping[str, Any], Callable[[str], str]], "str | None"]
"""(the state after a revision, the run's settings, what makes two actions the same) -> a stop reason, or None."""


@dataclass(frozen=True)
class StopRule:
    """One stop rule: when it ends a run (`check`), with which reasons and how the answer says each
    (`says`), and what the drawing writes on the route it takes (`label`, from the run's settings).
    The words of a reason that is new are added to `STOP_WORDS`, so an answer says it in words."""

    name: str
    check: Rule
    says: Mapping[str, str]
    label: Callable[[Mapping[str, Any]], str]

    def __post_init__(self) -> None:
        for reason, words in self.says.items():
            STOP_WORDS.setdefault(reason, words)


def _step_limit(state: Mapping[str, Any], settings: Mapping[str, Any], key: Callable[[str], str]) -> str | None:
    return "max_steps" if state.get("steps", 0) >= settings["max_steps"] else None


def _accepted(state: Mapping[str, Any], settings: Mapping[str, Any], key: Callable[[str], str]) -> str | None:
    return accepted(
        state,
        score_threshold=settings["score_threshold"],
        trust_non_empty_result=settings["trust_non_empty_result"],
        key=key,
    )


def _no_progress(state: Mapping[str, Any], settings: Mapping[str, Any], key: Callable[[str], str]) -> str | None:
    return "no_progress" if state.get("repeats", 0) >= settings["max_repeats"] else None


def _accepted_label(settings: Mapping[str, Any]) -> str:
    non_empty = "non-empty result" if settings["trust_non_empty_result"] else "unscored non-empty result"
    empty = ", empty result, not in the graph" if settings.get("checks_its_actions") else ""
    return f"score > {settings['score_threshold']:g}, {non_empty}{empty}"


def _words(*reasons: str) -> dict[str, str]:
    return {reason: STOP_WORDS[reason] for reason in reasons}


#: The rules after a revise step, in order: the step limit, the result taken as the answer (`accepted`:
#: score above the threshold, non-empty result, empty result, not in the graph), no progress. A new rule
#: is a `StopRule` here, with its setting in `schemas.settings.AgentSettings` (the rules read the run's
#: settings by name) and its test; an agent may also run its own (`ReflexionAgent.stop_rules`).
STOP_RULES: tuple[StopRule, ...] = (
    StopRule("step limit", _step_limit, _words("max_steps"), lambda settings: "step limit"),
    StopRule("accepted", _accepted, _words(*ACCEPTING, "not_in_graph"), _accepted_label),
    StopRule("no progress", _no_progress, _words("no_progress"), lambda settings: "no progress"),
)


def check_stop(
    state: Mapping[str, Any],
    settings: Mapping[str, Any],
    key: Callable[[str], str],
    rules: tuple[StopRule, ...] = STOP_RULES,
) -> str | None:
    """The first of `rules` that ends the run after this revision (its stop reason), or None: run the
    revised action. `settings` are the run's, by name (`max_steps`, `score_threshold`, ...)."""
    for rule in rules:
        reason = rule.check(state, settings, key)
        if reason:
            return reason
    return None


def stop_labels(settings: Mapping[str, Any], rules: tuple[StopRule, ...] = STOP_RULES) -> str:
    """What the drawing writes on the revise step's route to the end: the rules' labels, the result
    taken as the answer first, as a reader asks "when does it stop with an answer?"."""
    ordered = sorted(rules, key=lambda rule: rule.name != "accepted")
    return ", ".join(label for label in (rule.label(settings) for rule in ordered) if label)


def _rank(outcome: ToolOutcome) -> tuple[bool, bool, bool, float, int]:
    """Better answers first: ran; named only what the graph holds; rows, or no rows that rest on what
    exists; scored higher; later."""
    check = outcome.check
    return (
        outcome.error is None,
        check is None or not check.blocking,
        outcome.non_empty or (check is not None and check.verified),
        outcome.score if outcome.score is not None else -1.0,
        outcome.step,
    )


def answer_outcome(
    outcomes: list[ToolOutcome], stop_reason: str | None, key: Callable[[str], str] = str.strip
) -> ToolOutcome | None:
    """The executed outcome to return: the one the loop took as the answer (`judged_outcome`), else the
    best so far; `key` says what makes two actions the same."""
    executed = [o for o in outcomes if o.executed]
    if not executed:
        return None
    if stop_reason in (*ACCEPTING, "not_in_graph"):
        at = judged_index([o.model_dump(include={"action", "check", "executed", "error"}) for o in outcomes], key)
        if at is not None and outcomes[at].executed:
            return outcomes[at]
    return max(executed, key=_rank)
