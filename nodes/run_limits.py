"""A run's limits, recorded in its state when it starts, so they belong to the run and not to whoever
resumes it.

An agent's limits (steps, query timeout, row cap, read-only, approval) are constructor options, and
a run's context may lower them. Both are gone once the process is: `reflexion ask --max-steps 3`,
killed, then `reflexion resume T` would run under the defaults of the agent that resumes it (30
steps), and a Python `other_agent.resume(thread_id)` likewise. So the first node of a run records the
limits in force in the run's stored context (`run_context[LIMITS_KEY]`, checkpointed with every
step), and every later node computes its settings from them (`nodes.run_settings`): the resuming
agent's own settings no longer apply to a run it did not start.

A resume may tighten a recorded limit (a lower step limit, timeout or row cap takes effect, as a
run's context may always lower an agent's) but never loosen it: `refuse_raised_limits` says so
before anything runs. Otherwise a kill and a resume would be a way around any limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reflexion_agents.schemas.errors import ConfigurationError

LIMITS_KEY = "__limits__"  # kept in a run's stored context (`run_context`), beside the context it began with
#: Limits a resume may lower but not raise; None is "no limit".
NUMERIC_LIMITS = ("max_steps", "query_timeout", "row_cap", "max_llm_calls", "max_retries")


def limits_of(run_context: Mapping[str, Any] | None) -> dict[str, Any]:
    """The limits recorded in a run's stored context; {} for a run started before they were recorded."""
    return dict((run_context or {}).get(LIMITS_KEY) or {})


def with_limits(run_context: Mapping[str, Any], limits: Mapping[str, Any]) -> dict[str, Any]:
    """`run_context` with `limits` recorded in it (what a run's first node stores)."""
    return {**run_context, LIMITS_KEY: dict(limits)}


def refuse_raised_limits(run_context: Mapping[str, Any] | None, asked: Any) -> None:
    """Refuse to continue a run (its stored `run_context`) under a context (`asked`: this invocation's)
    that would raise a limit the run was started with; a lower one takes effect, and the context the run
    started with (capped then by the agent, as now) is no change. A `ConfigurationError` naming each raised
    limit and the run's value, raised by the resumed run's first node before it does anything
    (LangGraph server passes the message on, as for any `ConfigurationError`)."""
    stored, started = limits_of(run_context), run_context or {}
    if asked is not None and not isinstance(asked, Mapping):  # a context model instance
        asked = asked.model_dump(exclude_none=True) if hasattr(asked, "model_dump") else {}
    raised = []
    for name in NUMERIC_LIMITS:
        value, wanted = stored.get(name), (asked or {}).get(name)
        # value None: no limit, anything lowers it; the context the run started with: no change
        if wanted is None or wanted == started.get(name) or value is None:
            continue
        if wanted > value:
            raised.append(f"{name}={wanted!r} (the run's: {value!r})")
    if raised:
        raise ConfigurationError(
            "this run was started with lower limits than the resume asks for: "
            f"{', '.join(raised)}. A run keeps the limits it started with; a resume may only lower them. "
            "Start a new run to use higher limits."
        )
