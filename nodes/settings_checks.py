"""Settings checked where they are given (a constructor), so a bad one fails at once with its name,
not later inside a run with a TypeError, an OverflowError or a silent wrong limit."""

from __future__ import annotations

import math
from typing import Any

from schemas.errors import ConfigurationError


def whole_number(name: str, value: Any, *, low: int, high: int | None = None, none: bool = False) -> Any:
    """`value` if it is an int from `low` to `high` (or None when `none`)."""
    if value is None and none:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ConfigurationError(f"{name} must be an integer {bound}{' or None' if none else ''}, got {value!r}")
    return value


def seconds(name: str, value: Any, *, none: bool = True, high: float = 86_400.0) -> Any:
    """`value` if it is a finite number of seconds above 0 and at most a day (or None when `none`)."""
    if value is None and none:
        return value
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value <= high
    ):
        raise ConfigurationError(
            f"{name} must be a number of seconds above 0 and at most {high:g}{' or None' if none else ''}, got {value!r}"
        )
    return float(value)


def checkpointer_setting(value: Any) -> Any:
    """A checkpointer: None, the durable default, or an object with LangGraph's saver methods."""
    from nodes.checkpoints import DURABLE

    if value is None or value == DURABLE or (hasattr(value, "get_tuple") and hasattr(value, "put")):
        return value
    raise ConfigurationError(f"checkpointer must be None, {DURABLE!r} or a LangGraph checkpointer, got {value!r}")
