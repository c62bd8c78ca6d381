"""The Reflexion loop's own parts, as functions: scored revisions, the stop rules, the skipping of an
action that already ran, and a result that is the best executed action.

`reflexion_parts(rules, ...)` makes the loop's `LoopParts` from them and from what a Reflexion agent
supplies (its responders and its tool step). `graphs.kg_query_graph` builds the knowledge-graph agent
on it; biochatter's `ReflexionAgent` (graphs/engine.py) hands its hooks to the same functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from reflexion_agents.graphs.loop_parts import LoopParts, route_on_stop
from reflexion_agents.nodes.common.responder import ResponderReply
from reflexion_agents.nodes.graphdb.cypher_text import normalise_query
from reflexion_agents.nodes.reflexion.scoring import parse_score
from reflexion_agents.nodes.reflexion.steps import (
    default_action_of,
    outcomes_of,
    revise_update,
    skipped_tool_run,
    stopped_tool_message,
    usage_of_state,
)
from reflexion_agents.nodes.reflexion.stop_rules import (
    STOP_RULES,
    StopRule,
    answer_outcome,
    check_stop,
    not_final_note,
    stop_labels,
)
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.reflexion import ReflexionAgentResult, ToolRun
from reflexion_agents.schemas.state_channels import state_after


def score_of(parsed: BaseModel) -> float | None:
    """A revision's score, read as `nodes.reflexion.scoring` reads what models write."""
    return parse_score(getattr(parsed, "score", None))


@dataclass(frozen=True)
class ReflexionRules:
    """What decides a Reflexion run: the agent's settings (by name: `max_steps`, `score_threshold`,
    `max_repeats`, `trust_non_empty_result`, and any a stop rule of its own reads), the stop rules, what
    makes two actions the same (`key`), and the result a run returns."""

    settings: Mapping[str, Any]
    result_type: type[ReflexionAgentResult] = ReflexionAgentResult
    #: Whether the tool step checks each action against what the tool holds (`ToolOutcome.check`):
    #: only then can no rows be taken as the answer (`empty_result`, `not_in_graph`).
    checks_its_actions: bool = False
    stop_rules: tuple[StopRule, ...] = STOP_RULES
    key: Callable[[str], str] = normalise_query
    action_of: Callable[[BaseModel], str] = default_action_of
    #: A stop rule of the agent's own, called in place of the rules (biochatter subclasses override one).
    stop_reason: Callable[[Any, RunSettings], str | None] | None = field(default=None)

    @property
    def action_noun(self) -> str:
        return self.result_type.action_noun

    def limits(self, context: Any, recorded: Mapping[str, Any]) -> dict[str, Any]:
        """The step limit (the run's, at most the agent's; else the one it started with, else the
        agent's) and the score a revision must pass (the run's, else the recorded one, else the agent's)."""
        ceiling, asked_steps = recorded.get("max_steps", self.settings["max_steps"]), context.max_steps
        asked = getattr(context, "score_threshold", None)
        threshold = float(asked) if asked is not None else recorded.get("score_threshold", self.threshold)
        return {
            "max_steps": ceiling if asked_steps is None else min(asked_steps, ceiling),
            "score_threshold": threshold,
        }

    @property
    def threshold(self) -> float:
        return float(self.settings["score_threshold"])

    def stop(self, state: Mapping[str, Any], run: RunSettings) -> str | None:
        """The stop rules, in order (`nodes.reflexion.stop_rules`: what evidence each needs), over the
        agent's settings under the run's limits."""
        return check_stop(state, {**self.settings, **run.limits}, self.key, self.stop_rules)

    def revised(self, state: Mapping[str, Any], reply: ResponderReply, run: RunSettings) -> dict[str, Any]:
        """A revise turn's update: the revision, its score, and the stop reason it ends the run with (its
        tool call then answered), or the note telling the model why its score did not end the run."""
        update = revise_update(state, reply, score_of, self.action_of, self.key)
        if "stop_reason" not in update:
            revised = state_after(state, update)
            stop = self.stop_reason or self.stop
            update["stop_reason"] = reason = stop(revised, run)
            stopped = stopped_tool_message(update["messages"], f"the loop stopped ({reason})") if reason else None
            if stopped is not None:
                update["messages"].append(stopped)
            elif not reason:
                update["notice"] = not_final_note(revised, run.limit("score_threshold"), self.key)
        return update

    def skipped(self, state: Mapping[str, Any]) -> ToolRun | None:
        return skipped_tool_run(state, self.key, self.action_noun)

    def result_of(self, state: Mapping[str, Any]) -> ReflexionAgentResult:
        """The result of a finished run: the executed action chosen as the answer, and its rows."""
        outcomes = outcomes_of(state)
        chosen = answer_outcome(outcomes, state.get("stop_reason"), self.key)
        return self.result_type(
            answer=chosen.action if chosen else None,
            tool_result=chosen.rows if chosen and chosen.error is None else None,
            columns=chosen.columns if chosen else [],
            truncated=chosen.truncated if chosen else False,
            stop_reason=state.get("stop_reason"),
            steps=state.get("steps", 0),
            score=state.get("last_score"),
            usage=usage_of_state(state),
            error=state.get("error") or (chosen.error if chosen else None),
            outcomes=outcomes,
        )

    def labels(self) -> dict[str, tuple[str, str]]:
        settings = {**self.settings, "checks_its_actions": self.checks_its_actions}
        return {
            "draft": (f"{self.action_noun} drafted", "no question, model error, database down"),
            "execute_tool": ("score the result", "database down"),
            "revise": ("revise", f"{stop_labels(settings, self.stop_rules)}, model error"),
        }


def reflexion_parts(rules: ReflexionRules, **parts: Any) -> LoopParts:
    """The loop's parts of a Reflexion agent: `rules` decide revisions, stops and the result; `parts`
    give the rest (`name`, the schemas, `responder`, `run_tool`, and any other `LoopParts` field, which
    replaces what `rules` would give)."""
    given: dict[str, Any] = {
        "limits": rules.limits,
        "action_of": rules.action_of,
        "revised": rules.revised,
        "result_of": rules.result_of,
        "labels": rules.labels(),
        "max_steps_ceiling": rules.settings["max_steps"],
        "skipped": rules.skipped,
        "route_after_revise": route_on_stop,
        "tool_results_in_prompt": rules.settings.get("tool_results_in_prompt"),
    }
    return LoopParts(**{**given, **parts})
