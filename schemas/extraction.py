"""Attempts and results of the structured-output reflection agent, and the example models of the
reflection-workflow write-up (cars)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from reflexion_agents.schemas.reflexion import StopReason, TokenUsage
from reflexion_agents.schemas.reply_text import stop_words
from reflexion_agents.schemas.run_result import RunResult


class ExtractionAttempt(BaseModel):
    """One extraction: what the model returned and, if it did not validate, why."""

    attempt: int
    output: str = Field(description="The model's output as text (tool-call arguments as JSON).")
    error: str | None = None


ExtractionStopReason = Literal[StopReason, "validated"]
"""The engine's stop reasons, and `validated`: the last output passed validation."""


class ExtractionResult(RunResult):
    """The validated instance, or a failure that carries every attempt and its error."""

    value: Any = Field(default=None, description="An instance of the output schema, or None if none validated.")
    ok: bool
    stop_reason: ExtractionStopReason | None
    attempts: list[ExtractionAttempt] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.ok

    def summary(self) -> str:
        if not self.ok:
            return f"Stopped: {self.stop_reason}\nNo valid output: {self.error}"
        value = self.value.model_dump(mode="json") if isinstance(self.value, BaseModel) else self.value
        return f"Stopped: {self.stop_reason}\n{json.dumps(value, ensure_ascii=False, indent=1)}"

    def reply_text(self) -> str:
        """The validated object as JSON (the whole message, so a client can parse it), or why none
        validated."""
        if self.ok:
            value = self.value.model_dump(mode="json") if isinstance(self.value, BaseModel) else self.value
            return json.dumps(value, ensure_ascii=False, indent=2)
        return f"No valid output: {self.error}\n\nStopped: {stop_words(self.stop_reason)}."


class Car(BaseModel):
    brand: str
    model: str
    power: int


class CarCollection(BaseModel):
    """The reflection-workflow example: every car mentioned in a passage."""

    cars: list[Car]


class RawExtraction(BaseModel):
    """One extraction reply as the model gave it, before validation (the validate step judges it)."""

    output: str = Field(description="The reply as text: the text itself, or the tool call's arguments as JSON.")
    data: dict[str, Any] | None = Field(default=None, description="The tool call's arguments, if the reply was one.")
    call_id: str | None = None
    error: str | None = Field(
        default=None, description="Why the reply cannot be validated at all (bad JSON arguments)."
    )
