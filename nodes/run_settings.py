"""One run's settings at one node, computed by one pure function from the state and the runtime.

Every node of every agent and flow starts the same way:

    run = run_settings(state.get("run_context"), runtime.context, schema=..., limits=..., graph=...)

and hands `run` to whatever it calls: nothing reads a setting from anywhere else (no context
variable, no attribute that changes per run). The inputs are all a run has:

- what the run started with, kept in its state by its first node (`run_context`: the context it
  was given, which graph owns the thread, and the limits then in force), so a resume in another
  process, by another agent, keeps them;
- this invocation's context (LangGraph's `runtime.context`), which may lower a limit, never raise
  it (`nodes.run_limits.refuse_raised_limits`);
- the agent's own settings, through `limits(context, recorded)`: the agent's rule for each limit
  (a pure function of the context and what the run recorded, over the agent's constructor options).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from reflexion_agents.nodes.run_context import GRAPH_KEY, context_values, merged_context
from reflexion_agents.nodes.run_limits import limits_of, refuse_raised_limits, with_limits

#: An agent's rule for its limits: (this run's context, the limits the run recorded) -> the limits in force.
LimitsRule = Callable[[Any, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class RunSettings:
    """What one node of one run may read: the run's context (its `context_schema`) and its limits."""

    context: Any
    limits: Mapping[str, Any] = field(default_factory=dict)
    #: What the run's first node keeps in the state (None at every later node).
    started: dict[str, Any] | None = None

    def limit(self, name: str) -> Any:
        return self.limits.get(name)


def run_settings(
    stored: Mapping[str, Any] | None,
    given: Any,
    *,
    schema: type[BaseModel],
    limits: LimitsRule,
    graph: str | None = None,
) -> RunSettings:
    """The settings of the node about to run.

    `graph` is set at a run's first node only: the run starts from this invocation's context alone
    (not from the run before it in the thread), and what it starts with is returned as `started`,
    for the node to keep in the state. At every later node the stored context is read back under
    this invocation's, and a context that would raise a recorded limit is refused."""
    asked = context_values(given)
    if graph is not None:
        context = merged_context(schema, {}, asked)
        in_force = limits(context, {})
        return RunSettings(context, in_force, with_limits({**asked, GRAPH_KEY: graph}, in_force))
    refuse_raised_limits(stored, asked)
    context = merged_context(schema, dict(stored or {}), asked)
    return RunSettings(context, limits(context, limits_of(stored)))


def own_settings(schema: type[BaseModel], limits: LimitsRule) -> RunSettings:
    """The settings outside any run (a hook called directly): the agent's own."""
    context = schema()
    return RunSettings(context, limits(context, {}))
