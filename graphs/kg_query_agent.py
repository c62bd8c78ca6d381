"""`KGQueryReflexionAgent`: drafts a Cypher query, runs it, scores the rows and revises.

Usage as in the seed:

    agent = KGQueryReflexionAgent(connection_args=..., conversation_factory=...)
    result = agent.execute(question, kg_prompt)

With no `connection_args` it uses the embedded FalkorDB; with no
`conversation_factory` it builds the chat model from the environment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from graphs.reflexion_agent import ReflexionAgent
from nodes.graphdb.connect import backend_of, connect
from nodes.graphdb.protocol import DEFAULT_QUERY_TIMEOUT_S, DEFAULT_ROW_CAP, GraphDatabase
from nodes.models.resolve import chat_model_from_env
from nodes.prompts.kg_query import DIALECT_NOTES, DRAFT_INSTRUCTION, QUERY_SYSTEM_PROMPT, REVISE_INSTRUCTION, build_kg_prompt
from nodes.reflexion.responder import Responder
from nodes.reflexion.steps import last_tool_call_id, latest_action
from nodes.reflexion.stop_rules import DEFAULT_MAX_STEPS
from nodes.tools.cypher import DEFAULT_ROWS_IN_MESSAGE, run_cypher
from schemas.errors import GraphDatabaseError
from schemas.kg_query import GenerateQuery, ReviseQuery


class KGQueryReflexionAgent(ReflexionAgent):
    """Reflexion over knowledge-graph queries, read-only unless `allow_writes=True`."""

    def __init__(
        self,
        connection_args: dict[str, Any] | None = None,
        conversation_factory: Callable[[], Any] | None = None,
        query_lang: str = "Cypher",
        max_steps: int = DEFAULT_MAX_STEPS,
        *,
        database: GraphDatabase | None = None,
        query_timeout: float | None = DEFAULT_QUERY_TIMEOUT_S,
        row_cap: int | None = DEFAULT_ROW_CAP,
        rows_in_message: int = DEFAULT_ROWS_IN_MESSAGE,
        allow_writes: bool = False,
        **engine_options: Any,
    ) -> None:
        super().__init__(conversation_factory or chat_model_from_env, max_steps, **engine_options)
        self.connection_args = dict(connection_args or {})
        self.query_lang = query_lang
        self.query_timeout, self.row_cap, self.rows_in_message = query_timeout, row_cap, rows_in_message
        self.allow_writes = allow_writes
        self._db = database
        self._owns_db = database is None
        self._schema_prompt: str | None = None

    @property
    def db(self) -> GraphDatabase:
        """The graph database, opened on first use (so a down database is a stop reason, not a crash)."""
        if self._db is None:
            self._db = connect(self.connection_args)
        return self._db

    @property
    def dialect(self) -> str:
        return self._db.dialect if self._db is not None else backend_of(self.connection_args)

    def schema_prompt(self) -> str:
        """The kg_prompt built from the live schema, used when `execute` gets no prompt."""
        if self._schema_prompt is None:
            self._schema_prompt = build_kg_prompt(self.db.schema(), dialect=self.db.dialect)
        return self._schema_prompt

    def _system_prompt(self, instruction: str, prompt: str | None) -> str:
        if prompt is None:
            try:
                prompt = self.schema_prompt()
            except GraphDatabaseError as e:  # the run still starts; the tool step reports the database
                prompt = f"(The schema could not be read: {e})"
        header = QUERY_SYSTEM_PROMPT.format(
            query_lang=self.query_lang, time=time.strftime("%Y-%m-%d %H:%M"), instruction=instruction
        )
        dialect_note = DIALECT_NOTES.get(self.dialect, "")  # type: ignore[call-overload]
        if dialect_note and dialect_note in prompt:
            dialect_note = ""
        return "\n\n".join(part for part in (header, prompt, dialect_note) if part)

    def _create_initial_responder(self, prompt: str | None = None) -> Responder:
        return Responder(self.chat, GenerateQuery, self._system_prompt(DRAFT_INSTRUCTION, prompt), self.max_model_retries)

    def _create_revise_responder(self, prompt: str | None = None) -> Responder:
        return Responder(self.chat, ReviseQuery, self._system_prompt(REVISE_INSTRUCTION, prompt), self.max_model_retries)

    def _tool_function(self, state: list[BaseMessage]) -> ToolMessage:
        """Run the newest query in the memory against the graph database."""
        query = latest_action(state)
        outcome = run_cypher(
            self.db,
            query,
            timeout=self.query_timeout,
            row_cap=self.row_cap,
            rows_in_message=self.rows_in_message,
            allow_writes=self.allow_writes,
        )
        return ToolMessage(content=outcome.content, tool_call_id=last_tool_call_id(state), artifact=outcome.model_dump())

    def close(self) -> None:
        """Close the database connection if this agent opened it."""
        if self._owns_db and self._db is not None:
            self._db.close()
            self._db = None

    def execute(self, question: str, kg_prompt: str | None = None, **kwargs: Any):  # type: ignore[override]
        """Run the loop; `kg_prompt` defaults to one built from the live schema."""
        return super().execute(question, kg_prompt, **kwargs)

    async def aexecute(self, question: str, kg_prompt: str | None = None, **kwargs: Any):  # type: ignore[override]
        return await super().aexecute(question, kg_prompt, **kwargs)
