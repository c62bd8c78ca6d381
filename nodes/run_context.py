"""Reading a run's context: what the invocation sent, over what the run started with.

A run's settings (model, database, limits) come in LangGraph's context. The run's first node keeps
them in the state, so a resumed run keeps its settings when the resume sends none; these helpers
read the merged view, check a context before a run starts, and say which graph owns a thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reflexion_agents.schemas.errors import ConfigurationError

C = TypeVar("C", bound=BaseModel)

APPROVAL_ENV = "REFLEXION_REQUIRE_APPROVAL"


_STORED: ContextVar[dict[str, Any] | None] = ContextVar("stored_run_context", default=None)
#: `current_context`'s answers within one `stored_context` block, per schema: a node reads its
#: settings many times (model, limits, approval), and each read validated the merged context anew.
#: Each answer is kept with the LangGraph runtime it was read in, and reused only in that runtime: a
#: run started inside a node (a flow's own start, a nested graph) has a context of its own.
_READ: ContextVar[dict[type[BaseModel], tuple[Any, BaseModel]] | None] = ContextVar("read_run_context", default=None)


@contextmanager
def stored_context(values: dict[str, Any] | None) -> Iterator[None]:
    """Within this block, `current_context` also reads `values`: the context the run started with,
    kept in its state, so a resumed run keeps its settings when the resume sends none. The block is
    one node's call, whose invocation context cannot change, so what it reads is read once."""
    token, read = _STORED.set(values), _READ.set({})
    try:
        yield
    finally:
        _READ.reset(read)
        _STORED.reset(token)


GRAPH_KEY = "__graph__"  # kept with a run's stored context: which graph the thread belongs to


def check_thread_graph(values: dict[str, Any], graph: str, thread_id: str) -> None:
    """Refuse to resume a thread another graph wrote (it would silently do nothing or the wrong thing)."""
    owner = (values.get("run_context") or {}).get(GRAPH_KEY)
    if owner is not None and owner != graph:
        raise ConfigurationError(
            f"thread {thread_id!r} belongs to {owner}, not {graph}: "
            "resume it with that graph (reflexion resume --flow ...)"
        )


def started_context(graph: str) -> dict[str, Any]:
    """What a run's first node keeps in the state: the context the run was started with, and which
    graph the thread belongs to."""
    return {**runtime_context(), GRAPH_KEY: graph}


def runtime_context() -> dict[str, Any]:
    """The context this invocation was given (fields that were set), {} outside a run."""
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a graph run (a unit test of a step, say)
        return {}
    context = getattr(runtime, "context", None)
    if context is None:
        return {}
    if isinstance(context, BaseModel):
        return context.model_dump(exclude_none=True)
    if isinstance(context, dict):
        return {k: v for k, v in context.items() if v is not None}
    raise ConfigurationError(f"a run's context must be a mapping, got {type(context).__name__}")


def current_context(schema: type[C]) -> C:
    """This run's settings as `schema`: what the invocation sent, over what the run started with.
    Approval, once asked for in a run, stays on for the rest of it."""
    read, runtime = _READ.get(), _runtime()
    if read is not None and schema in read and read[schema][0] is runtime:
        return read[schema][1]  # type: ignore[return-value]
    settings = _merged_context(schema)
    if read is not None:
        read[schema] = (runtime, settings)
    return settings


def _runtime() -> Any:
    """LangGraph's runtime of the graph run this code is in, or None outside one."""
    from langgraph.runtime import get_runtime

    try:
        return get_runtime()
    except RuntimeError:
        return None


def _merged_context(schema: type[C]) -> C:
    stored, given = _STORED.get() or {}, runtime_context()
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
