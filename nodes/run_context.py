"""Reading a run's context: what the invocation sent, over what the run started with.

A run's settings (model, database, limits) come in LangGraph's context. The run's first node keeps
them in the state, so a resumed run keeps its settings when the resume sends none; these helpers
read the merged view, check a context before a run starts, and say which graph owns a thread.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reflexion_agents.schemas.errors import ConfigurationError

C = TypeVar("C", bound=BaseModel)

APPROVAL_ENV = "REFLEXION_REQUIRE_APPROVAL"


GRAPH_KEY = "__graph__"  # kept with a run's stored context: which graph the thread belongs to


def check_thread_graph(values: dict[str, Any], graph: str, thread_id: str) -> None:
    """Refuse to resume a thread another graph wrote (it would silently do nothing or the wrong thing)."""
    owner = (values.get("run_context") or {}).get(GRAPH_KEY)
    if owner is not None and owner != graph:
        raise ConfigurationError(
            f"thread {thread_id!r} belongs to {owner}, not {graph}: "
            "resume it with that graph (reflexion resume --flow ...)"
        )


def context_values(context: Any) -> dict[str, Any]:
    """The fields a run's context set (LangGraph's `runtime.context`: a model instance, a mapping or
    None), as a mapping without the unset ones."""
    if context is None:
        return {}
    if isinstance(context, BaseModel):
        return context.model_dump(exclude_none=True)
    if isinstance(context, dict):
        return {k: v for k, v in context.items() if v is not None}
    raise ConfigurationError(f"a run's context must be a mapping, got {type(context).__name__}")


def merged_context(schema: type[C], stored: dict[str, Any], given: dict[str, Any]) -> C:
    """A run's settings as `schema`: what the invocation sent (`given`), over what the run started
    with (`stored`). Approval, once asked for in a run, stays on for the rest of it."""
    merged = {**stored, **given}
    if stored.get("require_approval") or given.get("require_approval"):
        merged["require_approval"] = True
    try:
        return schema.model_validate({k: v for k, v in merged.items() if k in schema.model_fields})
    except (ValidationError, TypeError, ValueError) as e:
        raise ConfigurationError(f"invalid run context: {e}") from e


def checked_context(schema: type[BaseModel], context: Any) -> Any:
    """`context` as given, once it fits `schema`; a value that does not is a `ConfigurationError`
    naming the field, and a field the schema does not have is named with the fields it has
    (LangGraph would raise pydantic's own error from inside the run; its server drops the field)."""
    if isinstance(context, dict):
        unknown = sorted(str(key) for key in context if key not in schema.model_fields)
        if unknown:
            raise ConfigurationError(
                f"unknown run context field{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}; "
                f"the fields are: {', '.join(schema.model_fields)}"
            )
        try:
            schema.model_validate(context)
        except ValidationError as e:
            fields = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
            raise ConfigurationError(f"invalid run context: {fields}") from e
    return context


def lower(asked: float | None, own: float | None) -> float | None:
    """A run may lower a limit, never raise it: the smaller of the two (None is no limit)."""
    if asked is None:
        return own
    return asked if own is None else min(asked, own)


FLAG_VALUES = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def env_flag(name: str) -> bool:
    """A yes/no environment variable: 1, true, yes, on or 0, false, no, off (any case), unset or empty
    for no. Anything else is a configuration error naming it: a setting that guards something (approval
    before each query) must not read "maybe" as off."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return False
    if raw not in FLAG_VALUES:
        raise ConfigurationError(
            f"${name} is {os.environ[name]!r}; write 1, true, yes or on to turn it on, 0, false, no or off (or leave "
            "it unset) to turn it off"
        )
    return FLAG_VALUES[raw]
