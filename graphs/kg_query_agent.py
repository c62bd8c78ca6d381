"""`KGQueryReflexionAgent`: drafts a Cypher query, runs it, scores the rows and revises.

Usage as in biochatter, whose names, argument order and hooks it keeps:

    agent = KGQueryReflexionAgent(conversation_factory, connection_args)   # or by keyword
    result = agent.execute(question, kg_prompt)

A biochatter subclass may override `_create_initial_responder` / `_create_revise_responder`
(returning `ResponderWithRetries`) and `_connect_db` / `_query_graph_database` (its own
database); the engine then calls those instead of its own.

With no `connection_args` it uses the database the environment names
(`REFLEXION_DATABASE_URL`, default the embedded FalkorDB with the movies graph);
with no `conversation_factory` it builds the chat model from the environment.
A run's context may name another model or database, lower the limits, or ask
for approval before each query runs (`schemas.run_context.KGQueryContext`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.types import interrupt
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.graphs.engine import ReflexionAgent
from reflexion_agents.graphs.loop import Turn
from reflexion_agents.graphs.runner import RunOptions
from reflexion_agents.nodes.common.approval import approval_request, read_decision
from reflexion_agents.nodes.common.responder import Responder, system_message
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries
from reflexion_agents.nodes.common.schema_text import DIALECT_NOTES
from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
from reflexion_agents.nodes.graphdb.hook_database import HookDatabase, connect_hook
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.query_check import QueryChecker
from reflexion_agents.nodes.graphdb.run_databases import RunDatabases
from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.nodes.models.wire import sendable
from reflexion_agents.nodes.prompts.kg_query import (
    DRAFT_INSTRUCTION,
    QUERY_SYSTEM_PROMPT,
    REVISE_INSTRUCTION,
    SchemaPrompts,
    schema_prompts,
)
from reflexion_agents.nodes.reflexion.prompt_view import judges_error
from reflexion_agents.nodes.reflexion.steps import last_tool_call_id, latest_action, run_from_message
from reflexion_agents.nodes.run_context import APPROVAL_ENV, env_flag, lower
from reflexion_agents.nodes.run_limits import recorded
from reflexion_agents.nodes.text2cypher.context import emit
from reflexion_agents.nodes.tools.cypher import run_cypher
from reflexion_agents.schemas.errors import ConfigurationError, DatabaseUnavailableError, GraphDatabaseError
from reflexion_agents.schemas.kg_query import GenerateQuery, KGQueryResult, ReviseQuery
from reflexion_agents.schemas.query_check import QueryCheck
from reflexion_agents.schemas.reflexion import ReflexionState, ToolOutcome, ToolRun
from reflexion_agents.schemas.run_context import KGQueryContext
from reflexion_agents.schemas.settings import KG_QUERY_DEFAULTS, AgentSettings, KGQuerySettings, checked_settings

__all__ = ["GenerateQuery", "KGQueryReflexionAgent", "ResponderWithRetries", "ReviseQuery"]

REJECTED = "RejectedByReviewer"
NO_SCHEMA = "(No schema is known for this database: write the query from the question.)"
FACTS_MAX_AGE_S = 300.0  # how long values and properties looked up by the schema check are kept


class ReviseResponder(Responder):
    """The revise step's responder, whose system message depends on the result it judges.

    biochatter's revise prompt carries no schema, but every result whole; resending the whole
    kg_prompt with every revision instead made a question cost more than biochatter's at one and
    two iterations (benchmarks/prompt_growth.py). A revision is sent `plain` (the instruction and
    the schema's names: labels, relationship patterns, property names), and one judging a database
    error `after_error` (the same and the dialect notes: what the database does not support is
    what such an error most often names). The choice is made per call, from the messages sent."""

    def __init__(
        self, model: BaseChatModel, schema: type[BaseModel], plain: str, after_error: str, max_retries: int = 2
    ) -> None:
        super().__init__(model, schema, plain, max_retries)
        self.plain, self.after_error = plain, after_error

    def system_prompt_for(self, messages: list[BaseMessage]) -> str:
        return self.after_error if judges_error(messages) else self.plain

    def _prompt(self, messages: list[BaseMessage], feedback: list[BaseMessage]) -> list[BaseMessage]:
        return sendable([system_message(self.system_prompt_for(messages)), *messages, *feedback])


class KGQueryReflexionAgent(ReflexionAgent[KGQueryResult]):
    """Reflexion over knowledge-graph queries, read-only unless `allow_writes=True`."""

    context_schema = KGQueryContext
    result_type = KGQueryResult

    def __init__(
        self,
        conversation_factory: Callable[[], Any] | None = None,
        connection_args: dict[str, Any] | None = None,
        query_lang: str | None = "Cypher",
        max_steps: int | None = KG_QUERY_DEFAULTS.max_steps,
        *,
        database: GraphDatabase | None = None,
        query_timeout: float | None = KG_QUERY_DEFAULTS.query_timeout,
        row_cap: int | None = KG_QUERY_DEFAULTS.row_cap,
        rows_in_message: int = KG_QUERY_DEFAULTS.rows_in_message,
        allow_writes: bool = KG_QUERY_DEFAULTS.allow_writes,
        require_approval: bool | None = KG_QUERY_DEFAULTS.require_approval,
        **engine_options: Any,
    ) -> None:
        if isinstance(conversation_factory, dict) or callable(connection_args):
            raise ConfigurationError(
                "KGQueryReflexionAgent takes conversation_factory first, then connection_args (biochatter's order); "
                "pass them by keyword to be explicit"
            )
        if connection_args is not None and not isinstance(connection_args, dict):
            raise ConfigurationError(f"connection_args must be a dict, got {type(connection_args).__name__}")
        # The engine's own options (checkpointer, logger) are not settings; the rest are checked here.
        engine = {k: engine_options.pop(k) for k in ("checkpointer", "agent_logger") if k in engine_options}
        settings = checked_settings(
            KGQuerySettings,
            max_steps=KG_QUERY_DEFAULTS.max_steps if max_steps is None else max_steps,
            query_timeout=query_timeout,
            row_cap=row_cap,
            rows_in_message=rows_in_message,
            allow_writes=allow_writes,
            require_approval=require_approval,
            **engine_options,
        )
        agent_fields = AgentSettings.model_fields
        super().__init__(
            conversation_factory or chat_model_from_env,
            **{k: v for k, v in settings.model_dump().items() if k in agent_fields},
            **engine,
        )
        self.settings = settings
        self.connection_args = dict(connection_args or {})
        self.query_lang = query_lang or "Cypher"
        self.query_timeout = settings.query_timeout
        self.row_cap = settings.row_cap
        self.rows_in_message = settings.rows_in_message
        self.allow_writes = settings.allow_writes
        self.map_values, self.repair_queries = settings.map_values, settings.repair_queries
        self.require_approval = env_flag(APPROVAL_ENV) if require_approval is None else require_approval
        self.databases = RunDatabases(self.connection_args, database)
        self._schema_prompts = KeyedCache()  # one `SchemaPrompts` per database
        self._facts = KeyedCache()  # one `GraphFacts` per database, for the schema check

    @property
    def db(self) -> GraphDatabase:
        """This run's graph database: the one its context names, else the agent's own. Opened on
        first use, so a database that is down is a stop reason, not a crash at construction."""
        return self.databases.for_run(self.run_context())

    @property
    def dialect(self) -> str:
        """The run's database dialect, known without connecting (a given kg_prompt needs no database)."""
        return self.databases.dialect_for(self.run_context())

    def schema_prompt(self) -> str:
        """The kg_prompt built from the live schema, used when `execute` gets no prompt."""
        return self._schema_texts().full

    def _schema_texts(self) -> SchemaPrompts:
        """The kg_prompt and the compact schema of this run's database, read once per database."""
        db = self.db
        # keyed by the object (adapters hash by identity): an id could be reused by a later database
        return self._schema_prompts.get(cast(Hashable, db), lambda: schema_prompts(db.schema(), dialect=db.dialect))

    def _brings_own_database(self) -> bool:
        """A subclass that overrides `_query_graph_database` (as biochatter's do) queries its own
        database: the agent then opens none and reads no schema of its own."""
        return type(self)._query_graph_database is not KGQueryReflexionAgent._query_graph_database

    def _uses_agent_database(self) -> bool:
        """Whether the tool step queries the agent's own database (no overridden tool or query hook)."""
        own = KGQueryReflexionAgent
        return not self._brings_own_database() and all(
            getattr(type(self), hook) is getattr(own, hook) for hook in ("_tool_function", "_run_tool")
        )

    def _tool_ready(self, state: ReflexionState) -> None:
        """Reach the database before the first model call: a database that is down ends the run
        `tool_unavailable` at once (the schema read, or a cheap catalogue call when a kg_prompt
        was given), and the model is never asked to write a query for nothing. Other database
        errors (no rights to the catalogue, say) are left to the tool step to report. A subclass's
        own database is reached through its `_connect_db`."""
        if self._brings_own_database():
            connect_hook(self._connect_db)
            return
        if not self._uses_agent_database():
            return
        try:
            if state.get("prompt") is None:
                self.schema_prompt()
            else:
                self.db.labels()
        except DatabaseUnavailableError:
            raise
        except GraphDatabaseError:
            return

    def _responder_ready(self, turn: Turn, prompt: str | None) -> bool:
        """A responder needs the schema, read from the database once per database (a given kg_prompt
        needs none): once it is cached (the draft's tool check reads it), building one reads nothing.
        A subclass's own responder hooks may read anything: they are built in a worker thread."""
        if not self._model_ready() or not self._built_in_hooks("_create_initial_responder", "_create_revise_responder"):
            return False
        if self._brings_own_database() or prompt is not None:
            return True
        db = self.databases.opened_for(self.run_context())
        return db is not None and self._schema_prompts.peek(cast(Hashable, db)) is not None

    def _checks_its_actions(self) -> bool:
        """The agent's own tool step checks each query (`nodes.graphdb.query_check`); a subclass's own
        database or tool does not."""
        return not self._brings_own_database() and self._uses_agent_database()

    def _checker(self) -> QueryChecker | None:
        """The schema check of this run's database (`nodes.graphdb.query_check`), or None when the queries
        run on a subclass's own database or the schema cannot be read: they then run unchecked. Values
        looked up are kept `FACTS_MAX_AGE_S`, so changed data is seen."""
        if not self._checks_its_actions():
            return None
        db = self.db
        try:
            schema = self._schema_texts().schema
        except GraphDatabaseError:
            return None
        key = cast(Hashable, db)
        facts = self._facts.get(key, lambda: GraphFacts(db, schema))
        if time.monotonic() - facts.created_at > FACTS_MAX_AGE_S:
            self._facts.clear()
            facts = self._facts.get(key, lambda: GraphFacts(db, schema))
        return QueryChecker(facts, repair=self.repair_queries, map_values=self.map_values)

    def _checked(self, query: str, *, repair: bool = True, report: bool = True) -> QueryCheck | None:
        """`query` checked against the graph (repairs applied unless `repair` is false), or None when no
        check can be made; what it repaired or found goes to the stream when `report`."""
        checker = self._checker()
        if checker is None:
            return None
        if not repair:
            checker = QueryChecker(checker.facts, repair=False, map_values=False)
        check = checker.check(query)
        if report and (check.repairs or check.findings):
            emit("Query check", query=check.query, repairs=check.repairs, findings=check.findings)
        return check

    def _connect_db(self) -> None:
        """biochatter's hook: open the database the queries run on (the agent's own by default)."""
        _ = self.db

    def _query_graph_database(self, query: str) -> list[Any]:
        """biochatter's hook: run `query` and return `[rows]`, the rows as dicts, read-only unless
        `allow_writes`. The agent's own tool step does not go through it (it keeps errors,
        truncation and timeouts in the outcome); when a subclass overrides it, the tool step runs
        queries through `_connect_db()` and the override instead of the agent's database."""
        self._connect_db()
        return [self.db.query(query, **self._query_limits()).records()]

    def _query_limits(self) -> dict[str, Any]:
        """This run's timeout and row cap (a run may lower the agent's), and whether writes may run.
        Once the run has started they are the ones it recorded, not those of an agent resuming it."""
        ctx = self.run_context()
        return {
            "timeout": lower(ctx.query_timeout, recorded("query_timeout", self.query_timeout)),
            "row_cap": lower(ctx.row_cap, recorded("row_cap", self.row_cap)),
            # a run started read-only stays read-only, whoever resumes it
            "allow_writes": self.allow_writes and recorded("allow_writes", True),
        }

    def _run_limits(self) -> dict[str, Any]:
        limits = self._query_limits()
        return {
            **super()._run_limits(),
            "query_timeout": limits["timeout"],
            "row_cap": limits["row_cap"],
            "allow_writes": limits["allow_writes"],
            "require_approval": self._approval_required(),
        }

    def _tool_database(self) -> GraphDatabase:
        """The database the tool step queries: a subclass's own through its hooks, else the agent's."""
        if self._brings_own_database():
            return HookDatabase(self._connect_db, self._query_graph_database)  # type: ignore[return-value]
        return self.db

    def _schema_text(self, prompt: str | None) -> str:
        """The schema a draft is sent, and a revision judging no rows: the given kg_prompt, else the
        one built from the live schema."""
        if prompt is not None:
            return prompt
        if self._brings_own_database():
            return NO_SCHEMA
        try:
            return self._schema_texts().full
        except GraphDatabaseError as e:  # down since `_tool_ready`: the tool step reports it
            return f"(The schema could not be read: {e})"

    def _schema_names(self) -> str:
        """The schema a revision is sent when the agent read the schema itself: the names of the
        database the queries run on (`compact_schema_text`), read once per database."""
        if self._brings_own_database():
            return ""
        try:
            return self._schema_texts().compact
        except GraphDatabaseError:  # down since `_tool_ready`: the tool step reports it
            return ""

    def _header(self, instruction: str) -> str:
        return QUERY_SYSTEM_PROMPT.format(
            query_lang=self.query_lang, time=time.strftime("%Y-%m-%d %H:%M"), instruction=instruction
        )

    def _system_prompt(self, instruction: str, prompt: str | None) -> str:
        """The header with `instruction`, the whole schema text and the dialect notes."""
        schema = self._schema_text(prompt)
        dialect_note = DIALECT_NOTES.get(self.dialect, "")  # type: ignore[call-overload]
        if dialect_note and dialect_note in schema:
            dialect_note = ""
        return "\n\n".join(part for part in (self._header(instruction), schema, dialect_note) if part)

    def _create_initial_responder(self, prompt: str | None = None) -> Responder:
        return Responder(
            self.chat, GenerateQuery, self._system_prompt(DRAFT_INSTRUCTION, prompt), self.max_model_retries
        )

    def _create_revise_responder(self, prompt: str | None = None) -> Responder:
        """A given kg_prompt is the user's: every revision is sent it as it is. Otherwise a revision
        is sent the schema's names, and the dialect notes too when the result it judges is an error
        (most often a construct the database does not support)."""
        if prompt is not None:
            return Responder(
                self.chat, ReviseQuery, self._system_prompt(REVISE_INSTRUCTION, prompt), self.max_model_retries
            )
        plain = "\n\n".join(part for part in (self._header(REVISE_INSTRUCTION), self._schema_names()) if part)
        dialect_note = DIALECT_NOTES.get(self.dialect, "")  # type: ignore[call-overload]
        after_error = "\n\n".join(part for part in (plain, dialect_note) if part)
        return ReviseResponder(self.chat, ReviseQuery, plain, after_error, self.max_model_retries)

    def _tool_function(self, state: list[BaseMessage]) -> ToolMessage:
        """Run the newest query in the memory against the graph database."""
        return self._query_message(latest_action(state), last_tool_call_id(state))

    def _query_message(self, query: str, tool_call_id: str, note: str = "", *, repair: bool = True) -> ToolMessage:
        """Check `query` against the graph, run it (repaired) and describe the outcome: what the check
        repaired or found comes first, so the revision reads it with the result."""
        check = self._checked(query, repair=repair)
        to_run = check.query if check is not None else query
        outcome = run_cypher(
            self._tool_database(), to_run, rows_in_message=self.rows_in_message, **self._query_limits()
        )
        notes = "\n".join(part for part in (note, check.notes() if check is not None else "") if part)
        update: dict[str, Any] = {"check": check}
        if notes:
            update["content"] = f"{notes}\n{outcome.content}"
        outcome = outcome.model_copy(update=update)
        return ToolMessage(content=outcome.content, tool_call_id=tool_call_id, artifact=outcome.model_dump())

    def _approval_required(self) -> bool:
        """The agent's setting, the run's, or the one the run started with: a run may ask for
        approval, never turn it off, and an agent without it that resumes the run does not either."""
        started = bool(recorded("require_approval", False))
        return self.require_approval or bool(self.run_context().require_approval) or started

    def _run_tool(self, state: ReflexionState) -> ToolRun:
        """Run the pending query; with approval on, pause first (LangGraph `interrupt`) and run
        what the reviewer approved or wrote instead, or nothing if they rejected it."""
        if not self._approval_required():
            return super()._run_tool(state)
        written = latest_action(state["messages"])
        # the reviewer sees the query that would run, repairs made; the run reports them when it runs
        check = self._checked(written, report=False)
        query = check.query if check is not None else written
        call_id = last_tool_call_id(state["messages"])
        decision = read_decision(
            interrupt(approval_request(state.get("question", ""), query, state.get("steps", 0) + 1))
        )
        if decision.action == "reject":
            content = f"Not executed: the reviewer rejected this query ({decision.reason})."
            outcome = ToolOutcome(
                step=0, action=query, executed=False, content=content, error=decision.reason, error_type=REJECTED
            )
            message = ToolMessage(content=content, tool_call_id=call_id, artifact=outcome.model_dump())
            return ToolRun(message=message, outcome=outcome, update={"error": f"rejected: {decision.reason}"})
        if decision.action == "approve" and decision.query and decision.query != query:
            # what was approved runs as approved: the graph changed since, and the check would repair otherwise
            message = self._query_message(decision.query, call_id, repair=False)
            run = run_from_message(state, message)
            run.update["action"] = decision.query
            return run
        if decision.action == "edit" and decision.query != query:
            message = self._query_message(  # a person's query runs as written; the check only reports
                decision.query or "",
                call_id,
                note=f"The reviewer replaced the query with: {decision.query}",
                repair=False,
            )
            run = run_from_message(state, message)
            run.update["action"] = decision.query  # the query that ran, for the repeat check and the result
            return run
        return super()._run_tool(state)

    def _stop_after_tool(self, state: ReflexionState) -> str | None:
        outcomes = state.get("outcomes") or []
        return "rejected" if outcomes and outcomes[-1].get("error_type") == REJECTED else None

    def _route_labels(self) -> dict[str, tuple[str, str]]:
        labels = super()._route_labels()
        return {**labels, "execute_tool": (labels["execute_tool"][0], "rejected by the reviewer, database down")}

    def close(self) -> None:
        """Close the database connections this agent opened."""
        self.databases.close()
        self._schema_prompts.clear()
        self._facts.clear()

    def execute(self, question: str, kg_prompt: str | None = None, **options: Unpack[RunOptions]) -> KGQueryResult:
        """Run the loop; `kg_prompt` defaults to one built from the live schema."""
        return self.runner.run(self.question_input(question, kg_prompt), **options)

    async def aexecute(
        self, question: str, kg_prompt: str | None = None, **options: Unpack[RunOptions]
    ) -> KGQueryResult:
        return await self.runner.arun(self.question_input(question, kg_prompt), **options)
