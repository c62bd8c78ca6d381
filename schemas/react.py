"""Actions, state and results of the ReAct agents (text protocol and tool calling)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reflexion_agents.schemas.reflexion import ReflexionState, StopReason, TokenUsage
from reflexion_agents.schemas.reply_text import stop_words
from reflexion_agents.schemas.run_result import RunResult


class ReActAction(BaseModel):
    """One model reply read as a ReAct step: a thought and the action it ends with.

    `tool` is None when no action could be read; `error` then says why, and the
    tool step answers with a corrective observation instead of running anything.
    """

    thought: str = ""
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    positional: list[Any] = Field(default_factory=list, description="Unnamed arguments of a call written as text.")
    action: str = Field(default="", description="The action as the model wrote it, e.g. multiply(a=3, b=4).")
    call_id: str | None = Field(default=None, description="The native tool call to answer, if the reply was one.")
    error: str | None = None
    note: str | None = Field(default=None, description="Something the observation must add (an extra call dropped).")


class WikipediaReActState(ReflexionState, total=False):
    """The engine's state plus the reading position the Wikipedia tools keep per thread."""

    page: str | None  # title of the last page searched successfully
    lookups: dict[str, int]  # lookup phrase -> matches already shown on that page


class ReActStep(BaseModel):
    """One thought, action and observation of a ReAct run."""

    step: int
    thought: str = ""
    action: str = ""
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    observation: str = ""
    error: str | None = None
    source: str | None = None


ReActStopReason = Literal[StopReason, "finished"]
"""The engine's stop reasons, and `finished`: the model ran its finish action."""


class ReActResult(RunResult):
    """The end of one ReAct run: the answer, how it was reached, and why the run stopped."""

    answer: str | None = Field(description="The finish action's answer, else the best observation so far.")
    finished: bool = Field(description="True when the model called finish; False for a best-effort answer.")
    stop_reason: ReActStopReason | None
    steps: list[ReActStep] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list, description="Pages consulted, in the order first used.")
    usage: TokenUsage = Field(default_factory=TokenUsage)
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.finished

    def summary(self) -> str:
        sources = f"\nsources: {', '.join(self.sources)}" if self.sources else ""
        return f"Stopped: {self.stop_reason}\n{self.answer}{sources}"

    def reply_text(self) -> str:
        """The final answer (and its sources); without one, the best observation so far, said as such,
        and why the run stopped."""
        sources = f"\n\nSources: {', '.join(self.sources)}" if self.sources else ""
        if self.finished:
            return f"{self.answer}{sources}"
        best = f"No final answer. The best observation so far:\n\n{self.answer}" if self.answer else "No answer."
        error = f" ({self.error})" if self.error else ""
        return f"{best}{sources}\n\nStopped: {stop_words(self.stop_reason)}{error}."
