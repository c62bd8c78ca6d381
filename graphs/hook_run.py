"""The run's settings for biochatter's hooks, which take none.

biochatter's hooks (`_create_initial_responder(prompt)`, `_tool_function(messages)`,
`_query_graph_database(query)`) have no place for a run's settings. A subclass that wraps one and
calls the package's own through `super()` (to log around it, say) must still get the run's model,
database and limits, and a run that started read-only must stay so. So where the package calls a
subclass's hook during a run, it hands the run's settings down in LangChain's config for that call
(`configurable`, as every LangChain runnable passes run-scoped values), and the package's own hooks
read them from there; outside a run (a hook called directly) they are the agent's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.runnables.config import set_config_context
from langgraph.config import get_config

from reflexion_agents.nodes.run_settings import RunSettings

T = TypeVar("T")
RUN_KEY = "__reflexion_run_settings__"


def calling_hook(run: RunSettings, hook: Callable[..., T], *args: Any) -> T:
    """`hook(*args)` with `run` in the config it sees (a subclass's hook, during a run)."""
    try:
        config = get_config()
    except RuntimeError:  # not in a graph run
        return hook(*args)
    child = {**config, "configurable": {**(config.get("configurable") or {}), RUN_KEY: run}}
    with set_config_context(child) as context:  # type: ignore[arg-type]
        return context.run(hook, *args)


def hook_run(own: Callable[[], RunSettings]) -> RunSettings:
    """The settings of the run that called this hook (`calling_hook`), else the agent's `own()`."""
    try:
        run = (get_config().get("configurable") or {}).get(RUN_KEY)
    except RuntimeError:
        run = None
    return run if isinstance(run, RunSettings) else own()
