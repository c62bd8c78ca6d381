"""What every run returns besides its own answer: the one contract the runner, the command line and
the evaluation read, whichever agent or flow made the result."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class RunResult(BaseModel):
    """The thread a run lives in, the query it paused on, and whether it produced an answer."""

    thread_id: str | None = Field(
        default=None, description="The checkpointed thread; resume or continue it by this id."
    )
    pending_approval: dict[str, Any] | None = Field(
        default=None, description="The query a paused run waits on (stop reason awaiting_approval)."
    )

    @property
    def answered(self) -> bool:
        """Whether the run produced the answer it was asked for (each result type says what that is)."""
        raise NotImplementedError(f"{type(self).__name__} does not say when it has answered")
