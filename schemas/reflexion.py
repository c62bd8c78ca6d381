"""State, outcomes and results of the Reflexion engine.

Routers read the typed fields here; they never re-parse message text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from reflexion_agents.schemas.query_check import QueryCheck
from reflexion_agents.schemas.reply_text import fenced, markdown_table, stop_words
from reflexion_agents.schemas.run_result import RunResult
from reflexion_agents.schemas.state_channels import MessageMemory, OutcomeMemory

StopReason = Literal[
    "max_steps",  # the step limit was reached; the best result so far is returned
    "score_threshold",  # the revision kept the last action and scored its result above the threshold
    "non_empty_result",  # the revision kept the last action, whose result has rows it did not reject
    "empty_result",  # the revision kept the last query, which found no rows where all it names exists
    "not_in_graph",  # the revision kept, once more, a query naming what the graph does not hold
    "no_progress",  # the model kept proposing actions that had already run
    "model_error",  # the model's replies could not be used, even after retries
    "tool_unavailable",  # the tool (database) could not be reached
    "invalid_input",  # the run had no question (an empty or missing user message)
    "awaiting_approval",  # paused before an action runs: resume the thread with a decision
]
"""The engine's own stop reasons. An agent with reasons of its own (ReAct's `finished`, extraction's
`validated`, the reviewer's `rejected`) declares them in its own schema as
`Literal[StopReason, "its_reason"]`; the engine carries them as text in the state."""


#: The stop reasons that take the last result as the answer (`nodes.reflexion.stop_rules.accepted`).
ACCEPTING: tuple[str, ...] = ("score_threshold", "non_empty_result", "empty_result")

ROWS_SHOWN = 15  # rows a summary prints


class TokenUsage(BaseModel):
    """Model calls and tokens spent, failed attempts included."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


class ToolOutcome(BaseModel):
    """What one `execute_tool` step did with the current action."""

    step: int
    action: str
    executed: bool = Field(description="False when the action was skipped (it had already run).")
    non_empty: bool = False
    content: str = Field(default="", description="The text the model was shown.")
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    error_type: str | None = None
    score: float | None = Field(default=None, description="The revise step's score of this outcome.")
    source: str | None = Field(default=None, description="Where the observation came from (a page URL).")
    detail: dict[str, Any] = Field(
        default_factory=dict, description="Agent-specific facts (a ReAct thought, arguments)."
    )
    check: QueryCheck | None = Field(
        default=None, description="The schema check of the query before it ran: repairs made, what it found."
    )


class ReflexionState(TypedDict, total=False):
    """The graph's state: the message memory plus the typed fields the routers read.

    `outcomes` and `usage` hold plain dicts (`ToolOutcome` / `TokenUsage` dumps) so any
    checkpointer stores them without registering classes; read them with
    `nodes.reflexion.steps.outcomes_of` / `usage_of_state`. Every field but `messages`
    belongs to one run: the draft step resets them, so a thread can take a new question.
    """

    messages: MessageMemory
    question: str
    asked_id: str | None  # the user message a run took as its question: a later run does not take it again
    prompt: str | None
    action: str | None  # the action the next execute_tool step will run
    parsed_action: dict[str, Any] | None  # the newest draft/revise reply, parsed (a step schema dump)
    run_context: dict[str, Any]  # the context the run started with: a resume without one keeps these settings
    steps: int  # execute_tool steps taken in this run
    outcomes: OutcomeMemory  # one ToolOutcome per execute_tool step; revise scores the last
    last_score: float | None
    notice: str | None  # told to the model with the next tool result (a high score that was not believed)
    repeats: int  # consecutive actions that had already run
    stop_reason: str | None  # a `StopReason`, or one the agent declares in its own schema
    error: str | None
    usage: dict[str, int]  # TokenUsage of this run
    # written by the last node, `reply`, with the answer message (`RunResult.reply_fields`)
    answer: str | None
    query: str | None
    columns: list[str] | None
    rows: list[list[Any]] | None
    thread_id: str | None  # the run's thread, as a client continues it


class ReflexionInput(TypedDict, total=False):
    """What a run takes: a user message (as LangGraph server and Studio send it) or a question,
    and optionally the task prompt (for the knowledge-graph agent, the kg_prompt)."""

    messages: MessageMemory
    question: str
    prompt: str | None


class ReflexionOutput(TypedDict, total=False):
    """What a run returns: the answer (also the text of the last message, an `AIMessage`), what it is
    based on, the memory, why it stopped, and every step's outcome and cost."""

    answer: str | None
    query: str | None
    columns: list[str] | None
    rows: list[list[Any]] | None
    thread_id: str | None  # the run's thread, as a client continues it
    messages: MessageMemory
    question: str
    stop_reason: str | None
    steps: int
    outcomes: OutcomeMemory
    last_score: float | None
    usage: dict[str, int]
    error: str | None


class ReflexionAgentResult(RunResult):
    """The end of one run: the answer that was actually executed, its result, and why it stopped."""

    #: How the answer message names the action, and the language its code block is marked with.
    action_noun: ClassVar[str] = "action"
    action_language: ClassVar[str] = ""

    answer: str | None = Field(description="The executed action chosen as the answer (a query).")
    tool_result: list[list[Any]] | None = Field(description="Rows (or output) of that action.")
    columns: list[str] = Field(default_factory=list)
    truncated: bool = False
    stop_reason: str | None = Field(description="A `StopReason`, or one of the agent's own.")
    steps: int = 0
    score: float | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    error: str | None = None
    outcomes: list[ToolOutcome] = Field(default_factory=list)

    @property
    def answered(self) -> bool:
        """An action ran and gave a result (possibly empty rows); False when nothing usable ran."""
        return self.tool_result is not None

    restated_fields: ClassVar[tuple[str, ...]] = ("tool_result",)

    @property
    def rows(self) -> list[Any] | None:
        """The answer's rows (`tool_result`, biochatter's name), None when its query failed or none ran."""
        return self.tool_result

    @property
    def query(self) -> str | None:
        return self.answer

    @property
    def query_rows(self) -> list[list[Any]]:
        return self.tool_result or []

    @property
    def query_ran(self) -> bool:
        return self.tool_result is not None

    @property
    def queries_tried(self) -> int:
        return self.steps

    @property
    def check(self) -> QueryCheck | None:
        """The schema check of the answer's query: the repairs made before it ran, and what it found."""
        chosen = self._answer_outcome()
        return chosen.check if chosen is not None else None

    def summary(self) -> str:
        lines = [
            f"Stopped: {self.stop_reason} after {self.steps} step(s); "
            f"{'no score' if self.score is None else f'score {self.score:g}'}; "
            f"{self.usage.llm_calls} model call(s), {self.usage.total_tokens} tokens."
        ]
        if self.answer is None:
            return "\n".join([*lines, f"No query was executed. {self.error or ''}"])
        lines.append(f"Answer query: {self.answer}")
        if self.tool_result is None:
            return "\n".join([*lines, f"It failed: {self.error}"])
        more = "+, truncated" if self.truncated else ""
        lines.append(f"Rows ({len(self.tool_result)}{more}), columns {', '.join(self.columns)}:")
        lines += ["  " + json.dumps(row, ensure_ascii=False, default=str) for row in self.tool_result[:ROWS_SHOWN]]
        if len(self.tool_result) > ROWS_SHOWN:
            lines.append(f"  ... {len(self.tool_result) - ROWS_SHOWN} more")
        return "\n".join(lines)

    def reply_text(self) -> str:
        """The action that answers (or the best one that ran, or the last one tried), what it returned
        (rows as a Markdown table, capped, the row cap's cut said; or its error), and why the run
        stopped, in plain words."""
        noun, chosen = self.action_noun, self._answer_outcome()
        parts = []
        if self.answer is None:
            parts.append(f"No {noun} ran." + (f" {self.error}" if self.error else ""))
        else:
            if self.tool_result is None:
                said = f"The last {noun} tried:"
            elif self.stop_reason in ACCEPTING:
                said = f"The {noun} that answers:"
            else:
                said = f"The best {noun} that ran:"
            parts += [said, fenced(self.answer, self.action_language)]
            if chosen is not None and chosen.check is not None and chosen.check.notes():
                parts.append(chosen.check.notes())
            parts.append(self._result_text(chosen))
        if self.stop_reason:
            why = stop_words(self.stop_reason)
            told = self.answer is None or self.error == (chosen.error if chosen else None)
            if self.error and not told:  # the run's own error (the model's), not the action's, shown above
                why += f" ({self.error})"
            parts.append(f"Stopped: {why} (after {self.steps} step{'s' * (self.steps != 1)}).")
        return "\n\n".join(parts)

    def _answer_outcome(self) -> ToolOutcome | None:
        """The step that ran the answer's action (the newest, if it ran more than once)."""
        ran = [o for o in self.outcomes if o.executed and o.action == self.answer]
        return ran[-1] if ran else None

    def _result_text(self, chosen: ToolOutcome | None) -> str:
        """What the answering action returned: its rows as a table, else the text a tool without rows
        (biochatter's plain `ToolMessage`) answered with, else its own error."""
        if self.tool_result is None:
            return f"It failed: {chosen.error if chosen and chosen.error else self.error}"
        if not self.tool_result and not self.columns and chosen is not None and chosen.content.strip():
            return "It returned:\n\n" + fenced(chosen.content.strip())
        return markdown_table(self.columns, self.tool_result, self.truncated)

    def reply_fields(self) -> dict[str, Any]:
        rows = self.tool_result
        return {"query": self.answer, "columns": self.columns if rows is not None else None, "rows": rows}


@dataclass
class ToolRun:
    """What an agent's tool step produced, for the engine to record.

    `message` is what the model reads next: a ToolMessage answering its tool call, or a
    HumanMessage for text protocols (no tool call to answer), or None to add nothing.
    `update` holds state fields the agent keeps beyond the engine's (a last-read page);
    `usage` counts model calls the tool made itself.
    """

    message: BaseMessage | None
    outcome: ToolOutcome
    update: dict[str, Any] = field(default_factory=dict)
    usage: TokenUsage | None = None
