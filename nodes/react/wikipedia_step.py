"""The tool step of the text-protocol ReAct agent: run `search`, `lookup` or `finish`.

The observation goes back as a user message (`Observation N ...`), as the model
made no tool call to answer. The page last searched and the lookup positions
are state fields, so each thread reads its own page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage

from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.nodes.prompts.react_text import CORRECTIVE_MESSAGE, observation_text
from reflexion_agents.nodes.tools.functions import FINISH
from reflexion_agents.nodes.tools.wikipedia import Observation, WikipediaTools
from reflexion_agents.schemas.react import ReActAction
from reflexion_agents.schemas.reflexion import ToolOutcome, ToolRun


def _outcome(
    action: ReActAction, text: str, *, executed: bool, error: str | None = None, source: str | None = None
) -> ToolOutcome:
    return ToolOutcome(
        step=0,
        action=action.action,
        executed=executed,
        non_empty=executed and error is None and bool(text),
        content=text,
        error=error,
        source=source,
        detail={"thought": action.thought, "tool": action.tool, "args": action.args},
    )


def run_wikipedia_action(tools: WikipediaTools, action: ReActAction, state: Mapping[str, Any]) -> ToolRun:
    step = state.get("steps", 0) + 1
    argument = str(action.args.get("argument", ""))
    if action.tool is None:  # the Gemini ReAct notebook's corrective message; the failed call still counts
        text = f"{CORRECTIVE_MESSAGE} ({action.error})"
        return ToolRun(
            HumanMessage(content=observation_text(step, text)),
            _outcome(action, text, executed=False, error=action.error),
        )
    if action.tool == FINISH:  # the answer, for people (a lone surrogate shows as U+FFFD); nothing to observe
        return ToolRun(None, _outcome(action, without_surrogates(argument), executed=True))
    update: dict[str, Any] = {}
    if action.tool == "search":
        observation: Observation = tools.search(argument)
        if observation.page is not None:
            update = {"page": observation.page.title, "lookups": {}}
    else:
        lookups = dict(state.get("lookups") or {})
        key = argument.lower()
        observation = tools.lookup(argument, state.get("page"), lookups.get(key, 0))
        lookups[key] = lookups.get(key, 0) + 1
        update = {"lookups": lookups}
    source = observation.page.url if observation.page is not None and observation.error is None else None
    outcome = _outcome(action, observation.text, executed=True, error=observation.error, source=source)
    return ToolRun(HumanMessage(content=observation_text(step, observation.text)), outcome, update)
