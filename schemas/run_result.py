"""What every run returns besides its own answer: the one contract the runner, the command line and
the evaluation read, whichever agent or flow made the result."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, Field

from reflexion_agents.schemas.reply_text import stop_words


class RunResult(BaseModel):
    """The thread a run lives in, the query it paused on, and whether it produced an answer."""

    stop_reason: str | None = Field(
        default=None, description="Why the run stopped (each result type lists its reasons)."
    )
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

    def summary(self) -> str:
        """The result in plain words, as the command line prints it (each result type says it)."""
        raise NotImplementedError(f"{type(self).__name__} has no summary")

    def reply_text(self) -> str:
        """The answer as a chat shows it: the text of the `AIMessage` every run ends with (each result
        type says it; `schemas.reply_text` has the shared pieces)."""
        raise NotImplementedError(f"{type(self).__name__} has no reply text")

    def output(self) -> dict[str, Any]:
        """The answer as every client reads it, the same fields with the same meaning for every agent and
        flow, and those of the server's graph output: `answer` (the answer in words: the text of
        `reply_text`, or a flow's summary), `query`, `columns` and `rows` (what it rests on; None where no
        query ran), `stop_reason`, `thread_id`, and `pending_approval` for a paused run."""
        try:
            fields = {"answer": self.reply_text(), **self.reply_fields()}
        except NotImplementedError:
            fields = {
                "answer": f"Stopped: {stop_words(self.stop_reason)}.",
                "query": None,
                "columns": None,
                "rows": None,
            }
        return {
            **fields,
            "stop_reason": self.stop_reason,
            "thread_id": self.thread_id,
            "pending_approval": self.pending_approval,
        }

    def json_view(self) -> dict[str, Any]:
        """What `--json` prints: `output()`, then the result's other fields (steps, usage, outcomes, ...),
        leaving out those `output()` says again under its own name."""
        said = self.output()
        rest = self.model_dump(mode="json", exclude=set(said) | set(self.restated_fields))
        return {**said, **rest}

    #: Fields of a result type that `output()` says under another name (the KG agent's `tool_result` is
    #: its `rows`, a flow's `cypher` its `query`).
    restated_fields: ClassVar[tuple[str, ...]] = ()

    def reply_fields(self) -> dict[str, Any]:
        """The output fields a client reads at the top level, beside `answer` (the answer in words, the
        text of `reply_text` unless a result type says it otherwise): `query`, `columns`, `rows`, what the
        answer is based on (None where no query ran, or the agent runs none)."""
        return {"query": None, "columns": None, "rows": None}


class QueryAnswer(Protocol):
    """What a question answered with a database query comes to, for the evaluation to score:
    the knowledge-graph agent's result and the text-to-Cypher flows' result both say it."""

    @property
    def query(self) -> str | None:
        """The query the answer is based on."""
        ...

    @property
    def query_rows(self) -> list[list[Any]]: ...

    @property
    def query_ran(self) -> bool:
        """The answer's query ran without an error."""
        ...

    @property
    def queries_tried(self) -> int: ...
