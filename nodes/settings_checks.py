"""Settings checked where they are given (a constructor), so a bad one fails at once with its name,
not later inside a run with a TypeError, an OverflowError or a silent wrong limit.

The agents' and flows' settings are pydantic models (`schemas.settings`), checked with
`schemas.settings.checked_settings`; `whole_number` checks one value that no
settings model holds (an environment variable's), with the same rules and message.
"""

from __future__ import annotations

from typing import Any

from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.settings import checked_value


def whole_number(name: str, value: Any, *, low: int, high: int | None = None, none: bool = False) -> Any:
    """`value` if it is an int from `low` to `high` (or None when `none`); a bool or "5" is not."""
    return checked_value(name, value, annotation=int | None if none else int, ge=low, le=high)


def checkpointer_setting(value: Any) -> Any:
    """A checkpointer: None, the durable default, or an object with LangGraph's saver methods."""
    from reflexion_agents.nodes.checkpoints import DURABLE

    if value is None or value == DURABLE or (hasattr(value, "get_tuple") and hasattr(value, "put")):
        return value
    raise ConfigurationError(f"checkpointer must be None, {DURABLE!r} or a LangGraph checkpointer, got {value!r}")
