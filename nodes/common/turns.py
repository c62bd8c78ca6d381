"""Which user message a run answers, in a thread that keeps every turn (agents and flows alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage


def new_user_message(state: Mapping[str, Any]) -> HumanMessage | None:
    """The thread's last message, when it is a user's that no run took as its question yet
    (`asked_id`, which each run records): a run that paused or was cut off leaves its own question
    last, and the next run must not answer it again."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if isinstance(last, HumanMessage) and (last.id is None or last.id != state.get("asked_id")):
        return last
    return None
