"""`KGQueryReflexionAgent`: biochatter's knowledge-graph agent, over the graph `build_kg_query_graph`
builds (graphs/kg_query_graph.py). It drafts a Cypher query, runs it, scores the rows and revises.

Usage as in biochatter, whose names, argument order and hooks it keeps:

    agent = KGQueryReflexionAgent(conversation_factory, connection_args)   # or by keyword
    result = agent.execute(question, kg_prompt)

A biochatter subclass may override `_create_initial_responder` / `_create_revise_responder`
(returning `ResponderWithRetries`), `_tool_function`, and `_connect_db` / `_query_graph_database`
(its own database); those hooks are then handed to the graph in place of its own parts.

With no `connection_args` it uses the database the environment names
(`REFLEXION_DATABASE_URL`, default the embedded FalkorDB with the movies graph);
with no `conversation_factory` it builds the chat model from the environment.
A run's context may name another model or database, lower the limits, or ask
for approval before each query runs (`schemas.run_context.KGQueryContext`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import BaseMessage, ToolMessage
from typing_extensions import Unpack

from reflexion_agents.graphs import kg_query_graph as kg_parts
from reflexion_agents.graphs.engine import ReflexionAgent
from reflexion_agents.graphs.hook_run import calling_hook, hook_run
from reflexion_agents.graphs.kg_query_graph import KGQuery, kg_query_parts
from reflexion_agents.graphs.kg_query_tool import KGQueryTool, ReviseResponder
from reflexion_agents.graphs.loop_nodes import built_in_hooks
from reflexion_agents.graphs.loop_parts import LoopParts, Turn
from reflexion_agents.graphs.runner import RunOptions
from reflexion_agents.nodes.common.responder import Responder
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries
from reflexion_agents.nodes.graphdb.hook_database import HookDatabase, connect_hook
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.run_databases import RunDatabases
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.nodes.reflexion.steps import last_tool_call_id, latest_action
from reflexion_agents.nodes.run_context import APPROVAL_ENV, env_flag
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.kg_query import GenerateQuery, KGQueryResult, ReviseQuery
from reflexion_agents.schemas.reflexion import ReflexionState, ToolRun
from reflexion_agents.schemas.run_context import KGQueryContext
from reflexion_agents.schemas.settings import KG_QUERY_DEFAULTS, AgentSettings, KGQuerySettings, checked_settings

__all__ = ["GenerateQuery", "KGQueryReflexionAgent", "ResponderWithRetries", "ReviseQuery", "ReviseResponder"]

RESPONDER_HOOKS = {"draft": "_create_initial_responder", "revise": "_create_revise_responder"}


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
        self.query_timeout, self.row_cap = settings.query_timeout, settings.row_cap
        self.rows_in_message = settings.rows_in_message
        self.allow_writes = settings.allow_writes
        self.map_values, self.repair_queries = settings.map_values, settings.repair_queries
        self.require_approval = env_flag(APPROVAL_ENV) if require_approval is None else require_approval
        # A subclass that overrides `_query_graph_database` (as biochatter's do) queries its own database:
        # the agent then opens none and reads no schema of its own. One that overrides the tool step runs
        # whatever it runs: the agent checks nothing.
        own = KGQueryReflexionAgent
        self.own_database = type(self)._query_graph_database is not own._query_graph_database
        self.checks_its_actions = not self.own_database and all(
            getattr(type(self), hook) is getattr(own, hook) for hook in ("_tool_function", "_run_tool")
        )
        self.kg = KGQuery(
            settings=settings,
            models=self.models,
            databases=RunDatabases(self.connection_args, database),
            tool=KGQueryTool(
                query_lang=self.query_lang,
                rows_in_message=settings.rows_in_message,
                repair_queries=settings.repair_queries,
                map_values=settings.map_values,
                max_retries=settings.max_model_retries,
            ),
            require_approval=self.require_approval,
            checks_its_actions=self.checks_its_actions,
        )
        if self.own_database:
            self.kg.own_database = HookDatabase(self._connect_db, self._query_graph_database)  # type: ignore[assignment]
        self.databases, self.tool = self.kg.databases, self.kg.tool

    @property
    def db(self) -> GraphDatabase:
        """The agent's own graph database. Opened on first use, so a database that is down is a stop
        reason, not a crash at construction."""
        return self.databases.for_run(self.own_settings().context)

    @property
    def dialect(self) -> str:
        """The agent's database dialect, known without connecting (a given kg_prompt needs no database)."""
        return self.databases.dialect_for(self.own_settings().context)

    def schema_prompt(self) -> str:
        """The kg_prompt built from the live schema, used when `execute` gets no prompt."""
        return self.tool.schema_texts(self.db).full

    # -- biochatter's hooks -------------------------------------------------------------

    def _create_initial_responder(self, prompt: str | None = None) -> Responder:
        """biochatter's hook: the draft's responder, over the agent's own model and database."""
        return kg_parts.responder(self.kg, "draft", prompt, hook_run(self.own_settings))

    def _create_revise_responder(self, prompt: str | None = None) -> Responder:
        """biochatter's hook: a revision's responder. A given kg_prompt is the user's: every revision
        is sent it as it is. Otherwise a revision is sent the schema's names, and the dialect notes too
        when the result it judges is an error (most often a construct the database does not support)."""
        return kg_parts.responder(self.kg, "revise", prompt, hook_run(self.own_settings))

    def _connect_db(self) -> None:
        """biochatter's hook: open the database the queries run on (the agent's own by default)."""
        _ = self.db

    def _query_graph_database(self, query: str) -> list[Any]:
        """biochatter's hook: run `query` and return `[rows]`, the rows as dicts, read-only unless
        `allow_writes`. The agent's own tool step does not go through it (it keeps errors,
        truncation and timeouts in the outcome); when a subclass overrides it, the tool step runs
        queries through `_connect_db()` and the override instead of the agent's database."""
        self._connect_db()
        run = hook_run(self.own_settings)
        return [self.databases.for_run(run.context).query(query, **kg_parts.query_limits(run)).records()]

    def _tool_function(self, state: list[BaseMessage]) -> ToolMessage:
        """biochatter's hook: run the newest query in the memory against the agent's own database."""
        return self._query_message(latest_action(state), last_tool_call_id(state), hook_run(self.own_settings))

    # -- the graph's parts, with a subclass's hooks in place of those they replace ---------------

    def _query_message(
        self, query: str, tool_call_id: str, run: RunSettings | None = None, *, note: str = "", repair: bool = True
    ) -> ToolMessage:
        """Check `query` against the run's graph (the agent's own outside a run), run it and describe the
        outcome (`graphs.kg_query_graph.query_message`)."""
        return kg_parts.query_message(
            self.kg, query, tool_call_id, run or self.own_settings(), note=note, repair=repair
        )

    def _tool_ready(self, state: ReflexionState, run: RunSettings) -> None:
        """The database reached before the first model call (`graphs.kg_query_graph.tool_ready`); a
        subclass's own database is reached through its `_connect_db`."""
        if self.own_database:
            connect_hook(self._connect_db)
        elif self.checks_its_actions:
            kg_parts.tool_ready(self.kg, state, run)

    def _tool_ready_quick(self, state: ReflexionState, run: RunSettings) -> bool:
        """The package's own check reads nothing once the schema is read (no kg_prompt given); a
        subclass's own database or `_tool_ready` may read anything."""
        if self.own_database or not built_in_hooks(self, "_tool_ready", "_question_message"):
            return False
        return not self.checks_its_actions or kg_parts.tool_ready_quick(self.kg, state, run)

    def _responder_ready(self, turn: Turn, prompt: str | None, run: RunSettings) -> bool:
        """A subclass's own responder hooks may read anything: they are built in a worker thread."""
        return built_in_hooks(self, *RESPONDER_HOOKS.values()) and kg_parts.responder_ready(self.kg, turn, prompt, run)

    def _responder(self, turn: Turn, prompt: str | None, run: RunSettings) -> Responder | ResponderWithRetries:
        """The run's responder, over the run's model and database; a subclass's own responder hook
        (biochatter's, which knows nothing of a run) when it has one."""
        if not built_in_hooks(self, RESPONDER_HOOKS[turn]):
            return calling_hook(run, super()._responder, turn, prompt, run)
        return kg_parts.responder(self.kg, turn, prompt, run)

    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        """Run the pending query (`graphs.kg_query_graph.run_query`); a subclass's own `_tool_function`
        runs the model's query when it has one."""
        if built_in_hooks(self, "_tool_function"):
            return kg_parts.run_query(self.kg, state, run)
        if not run.limit("require_approval"):
            return calling_hook(run, super()._run_tool, state, run)

        def message_for(query: str, call_id: str, run: RunSettings, **options: Any) -> ToolMessage:
            if options:  # what the reviewer approved by name or wrote runs unrepaired, on the agent's database
                return self._query_message(query, call_id, run, **options)
            return calling_hook(run, self._tool_function, cast(list[BaseMessage], state["messages"]))

        return kg_parts.reviewed_run(self.kg, state, run, message_for)

    def _stop_after_tool(self, state: ReflexionState, run: RunSettings) -> str | None:
        return kg_parts.stop_after_tool(state, run)

    def parts(self) -> LoopParts:
        """The graph's parts (`graphs.kg_query_graph.kg_query_parts`), this agent's hooks in place."""
        return kg_query_parts(self.kg, self.rules(), **self.hook_parts())

    def close(self) -> None:
        """Close the database connections this agent opened."""
        self.databases.close()
        self.tool.clear()

    def execute(self, question: str, kg_prompt: str | None = None, **options: Unpack[RunOptions]) -> KGQueryResult:
        """Run the loop; `kg_prompt` defaults to one built from the live schema."""
        return super().execute(question, kg_prompt, **options)

    async def aexecute(
        self, question: str, kg_prompt: str | None = None, **options: Unpack[RunOptions]
    ) -> KGQueryResult:
        return await super().aexecute(question, kg_prompt, **options)
