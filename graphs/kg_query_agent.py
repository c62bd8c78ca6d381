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

from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.types import interrupt
from typing_extensions import Unpack

from reflexion_agents.graphs.engine import ReflexionAgent
from reflexion_agents.graphs.kg_query_tool import KGQueryTool, ReviseResponder
from reflexion_agents.graphs.loop_nodes import built_in_hooks
from reflexion_agents.graphs.loop_parts import Turn
from reflexion_agents.graphs.loop_target import question_input
from reflexion_agents.graphs.runner import RunOptions
from reflexion_agents.nodes.common.approval import approval_request, read_decision
from reflexion_agents.nodes.common.responder import Responder
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries
from reflexion_agents.nodes.graphdb.hook_database import HookDatabase, connect_hook
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.run_databases import RunDatabases
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.nodes.reflexion.steps import last_tool_call_id, latest_action, run_from_message
from reflexion_agents.nodes.run_context import APPROVAL_ENV, env_flag, lower
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.errors import ConfigurationError, DatabaseUnavailableError, GraphDatabaseError
from reflexion_agents.schemas.kg_query import GenerateQuery, KGQueryResult, ReviseQuery
from reflexion_agents.schemas.reflexion import ReflexionState, ToolOutcome, ToolRun
from reflexion_agents.schemas.run_context import KGQueryContext
from reflexion_agents.schemas.settings import KG_QUERY_DEFAULTS, AgentSettings, KGQuerySettings, checked_settings

__all__ = ["GenerateQuery", "KGQueryReflexionAgent", "ResponderWithRetries", "ReviseQuery", "ReviseResponder"]

REJECTED = "RejectedByReviewer"
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
        self.query_timeout = settings.query_timeout
        self.row_cap = settings.row_cap
        self.rows_in_message = settings.rows_in_message
        self.allow_writes = settings.allow_writes
        self.map_values, self.repair_queries = settings.map_values, settings.repair_queries
        self.require_approval = env_flag(APPROVAL_ENV) if require_approval is None else require_approval
        self.databases = RunDatabases(self.connection_args, database)
        self.tool = KGQueryTool(
            query_lang=self.query_lang,
            rows_in_message=self.rows_in_message,
            repair_queries=self.repair_queries,
            map_values=self.map_values,
            max_retries=self.max_model_retries,
        )
        # A subclass that overrides `_query_graph_database` (as biochatter's do) queries its own database:
        # the agent then opens none and reads no schema of its own. One that overrides the tool step
        # runs whatever it runs: the agent checks nothing.
        own = KGQueryReflexionAgent
        self.own_database = type(self)._query_graph_database is not own._query_graph_database
        self.checks_its_actions = not self.own_database and all(
            getattr(type(self), hook) is getattr(own, hook) for hook in ("_tool_function", "_run_tool")
        )

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

    def _tool_ready(self, state: ReflexionState, run: RunSettings) -> None:
        """Reach the database before the first model call: a database that is down ends the run
        `tool_unavailable` at once (the schema read, or a cheap catalogue call when a kg_prompt
        was given), and the model is never asked to write a query for nothing. Other database
        errors (no rights to the catalogue, say) are left to the tool step to report. A subclass's
        own database is reached through its `_connect_db`."""
        if self.own_database:
            connect_hook(self._connect_db)
            return
        if not self.checks_its_actions:
            return
        try:
            db = self.databases.for_run(run.context)
            if state.get("prompt") is None:
                self.tool.schema_texts(db)
            else:
                db.labels()
        except DatabaseUnavailableError:
            raise
        except GraphDatabaseError:
            return

    def _responder_ready(self, turn: Turn, prompt: str | None, run: RunSettings) -> bool:
        """A responder needs the schema, read from the database once per database (a given kg_prompt
        needs none): once it is cached (the draft's tool check reads it), building one reads nothing.
        A subclass's own responder hooks may read anything: they are built in a worker thread."""
        if not self.models.ready(run.context.model) or not built_in_hooks(self, *RESPONDER_HOOKS.values()):
            return False
        if self.own_database or prompt is not None:
            return True
        db = self.databases.opened_for(run.context)
        return db is not None and self.tool.schema_known(db)

    def _responder(self, turn: Turn, prompt: str | None, run: RunSettings) -> Responder | ResponderWithRetries:
        """The run's responder, over the run's model and database; a subclass's own responder hook
        (biochatter's, which knows nothing of a run) when it has one."""
        if not built_in_hooks(self, RESPONDER_HOOKS[turn]):
            return super()._responder(turn, prompt, run)
        db = None if self.own_database else self.databases.for_run(run.context)
        dialect = self.databases.dialect_for(run.context)
        return self.tool.responder(self.models.for_run(run.context.model), turn == "draft", prompt, db, dialect)

    def _create_initial_responder(self, prompt: str | None = None) -> Responder:
        """biochatter's hook: the draft's responder, over the agent's own model and database."""
        return own_responder(self, "draft", prompt)

    def _create_revise_responder(self, prompt: str | None = None) -> Responder:
        """biochatter's hook: a revision's responder. A given kg_prompt is the user's: every revision
        is sent it as it is. Otherwise a revision is sent the schema's names, and the dialect notes too
        when the result it judges is an error (most often a construct the database does not support)."""
        return own_responder(self, "revise", prompt)

    def _connect_db(self) -> None:
        """biochatter's hook: open the database the queries run on (the agent's own by default)."""
        _ = self.db

    def _query_graph_database(self, query: str) -> list[Any]:
        """biochatter's hook: run `query` and return `[rows]`, the rows as dicts, read-only unless
        `allow_writes`. The agent's own tool step does not go through it (it keeps errors,
        truncation and timeouts in the outcome); when a subclass overrides it, the tool step runs
        queries through `_connect_db()` and the override instead of the agent's database."""
        self._connect_db()
        return [self.db.query(query, **query_limits(self.own_settings())).records()]

    def _limits(self, context: Any, recorded: Any) -> dict[str, Any]:
        """The step limit, and the timeout and row cap (a run may lower the agent's); whether writes may
        run (a run started read-only stays read-only, whoever resumes it); whether each query waits for
        approval (a run may ask for it, never turn it off; an agent without it that resumes the run
        does not either)."""
        return {
            **super()._limits(context, recorded),
            "query_timeout": lower(context.query_timeout, recorded.get("query_timeout", self.query_timeout)),
            "row_cap": lower(context.row_cap, recorded.get("row_cap", self.row_cap)),
            "allow_writes": self.allow_writes and recorded.get("allow_writes", True),
            "require_approval": self.require_approval
            or bool(context.require_approval)
            or bool(recorded.get("require_approval", False)),
        }

    def _tool_function(self, state: list[BaseMessage]) -> ToolMessage:
        """biochatter's hook: run the newest query in the memory against the agent's own database."""
        return self._query_message(latest_action(state), last_tool_call_id(state))

    def _query_message(
        self, query: str, tool_call_id: str, run: RunSettings | None = None, *, note: str = "", repair: bool = True
    ) -> ToolMessage:
        """Check `query` against the run's graph (the agent's own outside a run), run it (repaired) and
        describe the outcome; on a subclass's own database, run it through its hooks, unchecked."""
        run = run or self.own_settings()
        if self.own_database:
            runs_on: GraphDatabase = HookDatabase(self._connect_db, self._query_graph_database)  # type: ignore[assignment]
        else:
            runs_on = self.databases.for_run(run.context)
        checks_on = runs_on if self.checks_its_actions else None
        return self.tool.query_message(
            runs_on, checks_on, query, tool_call_id, query_limits(run), note=note, repair=repair
        )

    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        """Run the pending query; with approval on, pause first (LangGraph `interrupt`) and run
        what the reviewer approved or wrote instead, or nothing if they rejected it."""
        messages = state["messages"]
        if not run.limit("require_approval"):
            if not built_in_hooks(self, "_tool_function"):
                return super()._run_tool(state, run)
            return run_from_message(
                state, self._query_message(latest_action(messages), last_tool_call_id(messages), run)
            )
        return reviewed_run(self, state, run)

    def _stop_after_tool(self, state: ReflexionState, run: RunSettings) -> str | None:
        outcomes = state.get("outcomes") or []
        return "rejected" if outcomes and outcomes[-1].get("error_type") == REJECTED else None

    def _route_labels(self) -> dict[str, tuple[str, str]]:
        labels = super()._route_labels()
        return {**labels, "execute_tool": (labels["execute_tool"][0], "rejected by the reviewer, database down")}

    def close(self) -> None:
        """Close the database connections this agent opened."""
        self.databases.close()
        self.tool.clear()

    def execute(self, question: str, kg_prompt: str | None = None, **options: Unpack[RunOptions]) -> KGQueryResult:
        """Run the loop; `kg_prompt` defaults to one built from the live schema."""
        return self.runner.run(question_input(self, question, kg_prompt), **options)

    async def aexecute(
        self, question: str, kg_prompt: str | None = None, **options: Unpack[RunOptions]
    ) -> KGQueryResult:
        return await self.runner.arun(question_input(self, question, kg_prompt), **options)


def own_responder(agent: KGQueryReflexionAgent, turn: Turn, prompt: str | None) -> Responder:
    """A turn's responder over the agent's own model and database (biochatter's hooks, called outside
    a run, know of no other)."""
    db = None if agent.own_database else agent.db
    return agent.tool.responder(agent.models.for_run(None), turn == "draft", prompt, db, agent.dialect)


def query_limits(run: RunSettings) -> dict[str, Any]:
    """A query's timeout and row cap, and whether it may write, from the run's limits."""
    return {
        "timeout": run.limit("query_timeout"),
        "row_cap": run.limit("row_cap"),
        "allow_writes": run.limit("allow_writes"),
    }


def reviewed_run(agent: KGQueryReflexionAgent, state: ReflexionState, run: RunSettings) -> ToolRun:
    """The pending query, once a person has approved it (LangGraph `interrupt`): what they approved or
    wrote instead runs, or nothing if they rejected it."""
    messages = state["messages"]
    written, call_id = latest_action(messages), last_tool_call_id(messages)
    # the reviewer sees the query that would run, repairs made; the run reports them when it runs
    db = agent.databases.for_run(run.context) if agent.checks_its_actions else None
    check = agent.tool.checked(db, written, report=False) if db is not None else None
    query = check.query if check is not None else written
    decision = read_decision(interrupt(approval_request(state.get("question", ""), query, state.get("steps", 0) + 1)))
    if decision.action == "reject":
        content = f"Not executed: the reviewer rejected this query ({decision.reason})."
        outcome = ToolOutcome(
            step=0, action=query, executed=False, content=content, error=decision.reason, error_type=REJECTED
        )
        message = ToolMessage(content=content, tool_call_id=call_id, artifact=outcome.model_dump())
        return ToolRun(message=message, outcome=outcome, update={"error": f"rejected: {decision.reason}"})
    if decision.action == "approve" and decision.query and decision.query != query:
        # what was approved runs as approved: the graph changed since, and the check would repair otherwise
        return ran_instead(agent, state, run, decision.query, note="")
    if decision.action == "edit" and decision.query != query:
        # a person's query runs as written; the check only reports
        return ran_instead(
            agent, state, run, decision.query, note=f"The reviewer replaced the query with: {decision.query}"
        )
    if not built_in_hooks(agent, "_tool_function"):
        return run_from_message(state, agent._tool_function(cast(list[BaseMessage], messages)))
    return run_from_message(state, agent._query_message(written, call_id, run))


def ran_instead(
    agent: KGQueryReflexionAgent, state: ReflexionState, run: RunSettings, query: str | None, note: str
) -> ToolRun:
    """The run of the query a reviewer approved by name or wrote, unrepaired, in place of the model's."""
    call_id = last_tool_call_id(state["messages"])
    tool_run = run_from_message(state, agent._query_message(query or "", call_id, run, note=note, repair=False))
    tool_run.update["action"] = query  # the query that ran, for the repeat check and the result
    return tool_run
