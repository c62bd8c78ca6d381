"""The knowledge-graph agent as a graph built by a function, as LangGraph's own agents are:

    graph = build_kg_query_graph(model, database, max_steps=5)
    graph.invoke({"messages": [("user", "Who directed The Matrix?")]}, context={"row_cap": 50})

The nodes are the loop's (`graphs.loop_nodes`: `(state, runtime) -> update`, pure routers); what
they call is here, as functions over `KGQuery`, the agent's resources: its settings, its chat
models, its databases and what it knows of each (`graphs.kg_query_tool.KGQueryTool`). Every function
that takes part in a run gets the run's settings (`run`); a run's context may name another model
or database, lower the limits, or ask for approval before each query.

biochatter's `KGQueryReflexionAgent` (graphs/kg_query_agent.py) is these parts with a subclass's
hooks handed over in place of the ones they replace (its own database, responders or tool step).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from reflexion_agents.graphs.kg_query_tool import KGQueryTool
from reflexion_agents.graphs.loop_parts import LoopParts, Turn
from reflexion_agents.graphs.reflexion_parts import ReflexionRules, reflexion_parts
from reflexion_agents.nodes.common.approval import approval_request, read_decision
from reflexion_agents.nodes.common.responder import Responder
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.run_databases import RunDatabases
from reflexion_agents.nodes.models.run_models import RunModels
from reflexion_agents.nodes.reflexion.steps import last_tool_call_id, latest_action, run_from_message
from reflexion_agents.nodes.run_context import APPROVAL_ENV, env_flag, lower
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.errors import DatabaseUnavailableError, GraphDatabaseError
from reflexion_agents.schemas.kg_query import KGQueryResult
from reflexion_agents.schemas.reflexion import ReflexionInput, ReflexionOutput, ReflexionState, ToolOutcome, ToolRun
from reflexion_agents.schemas.run_context import KGQueryContext
from reflexion_agents.schemas.settings import KGQuerySettings

REJECTED = "RejectedByReviewer"
NAME = "KGQueryReflexionAgent"  # the name its threads are stored under, the same as the class's
#: The query runs on a database and returns its message: (query, tool call id, run, note, repair).
QueryMessage = Callable[..., ToolMessage]


@dataclass
class KGQuery:
    """The knowledge-graph agent's resources: settings, models, databases, and per-database knowledge."""

    settings: KGQuerySettings
    models: RunModels
    databases: RunDatabases
    tool: KGQueryTool
    require_approval: bool
    #: Whether the queries run on the agent's database, checked against its schema (a biochatter
    #: subclass with its own database or tool step runs its own, unchecked).
    checks_its_actions: bool = True
    #: A subclass's own database, as a `GraphDatabase` (`HookDatabase`), or None.
    own_database: GraphDatabase | None = field(default=None)

    @classmethod
    def of(
        cls,
        settings: KGQuerySettings,
        conversation_factory: Callable[[], Any],
        connection_args: dict[str, Any] | None = None,
        database: GraphDatabase | None = None,
        query_lang: str = "Cypher",
    ) -> KGQuery:
        approval = settings.require_approval
        return cls(
            settings=settings,
            models=RunModels(conversation_factory),
            databases=RunDatabases(dict(connection_args or {}), database),
            tool=KGQueryTool(
                query_lang=query_lang,
                rows_in_message=settings.rows_in_message,
                repair_queries=settings.repair_queries,
                map_values=settings.map_values,
                max_retries=settings.max_model_retries,
            ),
            require_approval=env_flag(APPROVAL_ENV) if approval is None else approval,
        )

    def database(self, run: RunSettings) -> GraphDatabase:
        """The database a run's queries run on: a subclass's own, else the one the run names, else the agent's."""
        return self.own_database or self.databases.for_run(run.context)


def kg_limits(kg: KGQuery, rules: ReflexionRules) -> Callable[[Any, Mapping[str, Any]], dict[str, Any]]:
    """The step limit and score threshold (`ReflexionRules.limits`), the timeout and row cap (a run may
    lower the agent's), whether writes may run (a run started read-only stays read-only, whoever
    resumes it), whether each query waits for approval (a run may ask for it, never turn it off)."""
    settings = kg.settings

    def limits(context: Any, recorded: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **rules.limits(context, recorded),
            "query_timeout": lower(context.query_timeout, recorded.get("query_timeout", settings.query_timeout)),
            "row_cap": lower(context.row_cap, recorded.get("row_cap", settings.row_cap)),
            "allow_writes": settings.allow_writes and recorded.get("allow_writes", True),
            "require_approval": kg.require_approval
            or bool(context.require_approval)
            or bool(recorded.get("require_approval", False)),
        }

    return limits


def query_limits(run: RunSettings) -> dict[str, Any]:
    """A query's timeout and row cap, and whether it may write, from the run's limits."""
    return {
        "timeout": run.limit("query_timeout"),
        "row_cap": run.limit("row_cap"),
        "allow_writes": run.limit("allow_writes"),
    }


def tool_ready(kg: KGQuery, state: Mapping[str, Any], run: RunSettings) -> None:
    """Reach the database before the first model call: one that is down ends the run `tool_unavailable`
    at once (the schema read, or a cheap catalogue call when a kg_prompt was given), and the model is
    never asked to write a query for nothing. Other database errors (no rights to the catalogue, say)
    are left to the tool step to report."""
    try:
        db = kg.databases.for_run(run.context)
        if state.get("prompt") is None:
            kg.tool.schema_texts(db)
        else:
            db.labels()
    except DatabaseUnavailableError:
        raise
    except GraphDatabaseError:
        return


def tool_ready_quick(kg: KGQuery, state: Mapping[str, Any], run: RunSettings) -> bool:
    """Whether `tool_ready` reads nothing: no kg_prompt (which has it ask the catalogue) and the
    run's database opened with its schema texts read already."""
    if state.get("prompt") is not None:
        return False
    db = kg.databases.opened_for(run.context)
    return db is not None and kg.tool.schema_known(db)


def responder(kg: KGQuery, turn: Turn, prompt: str | None, run: RunSettings) -> Responder:
    """The turn's responder over the run's model and database (the schema of a subclass's own database
    is unknown: the prompt then says so)."""
    db = None if kg.own_database is not None else kg.databases.for_run(run.context)
    dialect = kg.databases.dialect_for(run.context)
    return kg.tool.responder(kg.models.for_run(run.context.model), turn == "draft", prompt, db, dialect)


def responder_ready(kg: KGQuery, turn: Turn, prompt: str | None, run: RunSettings) -> bool:
    """Building a responder reads the schema once per database, and looks at it again once a second
    (a draft given a kg_prompt needs none; a revision always reads the schema's names): once it is
    kept and needs no look, and the model is made, building one reads nothing."""
    if not kg.models.ready(run.context.model):
        return False
    if kg.own_database is not None or (prompt is not None and turn == "draft"):
        return True
    db = kg.databases.opened_for(run.context)
    return db is not None and kg.tool.schema_known(db)


def query_message(
    kg: KGQuery, query: str, tool_call_id: str, run: RunSettings, *, note: str = "", repair: bool = True
) -> ToolMessage:
    """Check `query` against the run's graph, run it (repaired) and describe the outcome; on a
    subclass's own database, run it there, unchecked."""
    runs_on = kg.database(run)
    checks_on = runs_on if kg.checks_its_actions else None
    return kg.tool.query_message(runs_on, checks_on, query, tool_call_id, query_limits(run), note=note, repair=repair)


def run_query(kg: KGQuery, state: Mapping[str, Any], run: RunSettings) -> ToolRun:
    """The tool step: run the pending query, once a person approved it when the run asks for approval."""
    if run.limit("require_approval"):
        return reviewed_run(kg, state, run, lambda *args, **kw: query_message(kg, *args, **kw))
    messages = state["messages"]
    return run_from_message(state, query_message(kg, latest_action(messages), last_tool_call_id(messages), run))


def reviewed_run(kg: KGQuery, state: Mapping[str, Any], run: RunSettings, message_for: QueryMessage) -> ToolRun:
    """The pending query, once a person has approved it (LangGraph `interrupt`): what they approved or
    wrote instead runs, or nothing if they rejected it. `message_for(query, call id, run, note=,
    repair=)` runs a query (a subclass's own tool step, when it has one, runs the model's)."""
    messages = state["messages"]
    written, call_id = latest_action(messages), last_tool_call_id(messages)
    # the reviewer sees the query that would run, repairs made; the run reports them when it runs
    check = kg.tool.checked(kg.database(run), written, report=False) if kg.checks_its_actions else None
    query = check.query if check is not None else written
    decision = read_decision(interrupt(approval_request(state.get("question", ""), query, state.get("steps", 0) + 1)))
    if decision.action == "reject":
        content = f"Not executed: the reviewer rejected this query ({decision.reason})."
        outcome = ToolOutcome(
            step=0, action=query, executed=False, content=content, error=decision.reason, error_type=REJECTED
        )
        message = ToolMessage(content=content, tool_call_id=call_id, artifact=outcome.model_dump())
        return ToolRun(message=message, outcome=outcome, update={"error": f"rejected: {decision.reason}"})
    instead: tuple[str | None, str] | None = None
    if decision.action == "approve" and decision.query and decision.query != query:
        instead = decision.query, ""  # what was approved runs as approved, though the check would repair it now
    elif decision.action == "edit" and decision.query != query:
        instead = decision.query, f"The reviewer replaced the query with: {decision.query}"  # runs as written
    if instead is None:
        return run_from_message(state, message_for(written, call_id, run))
    ran, note = instead
    tool_run = run_from_message(state, message_for(ran or "", call_id, run, note=note, repair=False))
    tool_run.update["action"] = ran  # the query that ran, for the repeat check and the result
    return tool_run


def stop_after_tool(state: Mapping[str, Any], run: RunSettings) -> str | None:
    """A query the reviewer rejected ends the run."""
    outcomes = state.get("outcomes") or []
    return "rejected" if outcomes and outcomes[-1].get("error_type") == REJECTED else None


def kg_labels(rules: ReflexionRules) -> dict[str, tuple[str, str]]:
    labels = rules.labels()
    return {**labels, "execute_tool": (labels["execute_tool"][0], "rejected by the reviewer, database down")}


def kg_query_parts(kg: KGQuery, rules: ReflexionRules, **replaced: Any) -> LoopParts:
    """The agent's loop parts; `replaced` are parts a subclass's hooks give instead (`LoopParts` fields)."""
    own: dict[str, Any] = {
        "name": NAME,
        "state_schema": ReflexionState,
        "context_schema": KGQueryContext,
        "input_schema": ReflexionInput,
        "output_schema": ReflexionOutput,
        "limits": kg_limits(kg, rules),
        "labels": kg_labels(rules),
        "responder": lambda turn, prompt, run: responder(kg, turn, prompt, run),
        "responder_ready": lambda turn, prompt, run: responder_ready(kg, turn, prompt, run),
        "tool_ready": lambda state, run: tool_ready(kg, state, run),
        "tool_ready_quick": lambda state, run: tool_ready_quick(kg, state, run),
        "run_tool": lambda state, run: run_query(kg, state, run),
        "stop_after_tool": stop_after_tool,
    }
    return reflexion_parts(rules, **{**own, **replaced})


def kg_rules(kg: KGQuery) -> ReflexionRules:
    return ReflexionRules(
        settings=kg.settings.model_dump(), result_type=KGQueryResult, checks_its_actions=kg.checks_its_actions
    )


def build_kg_query_graph(
    model: Any = None,
    database: GraphDatabase | None = None,
    *,
    checkpointer: Any = None,
    connection_args: dict[str, Any] | None = None,
    conversation_factory: Callable[[], Any] | None = None,
    query_lang: str = "Cypher",
    **settings: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The knowledge-graph Reflexion agent as a compiled graph: `model` is a LangChain chat model or a
    `provider:model` name (default: the environment's; or biochatter's `conversation_factory`),
    `database` a `GraphDatabase` (or `connection_args`; default: the one the environment names),
    `settings` the agent's (`KGQuerySettings`: `max_steps=5`, `row_cap=100`, ...), checked by name. No
    checkpointer unless given one, as `create_react_agent`."""
    from reflexion_agents.graphs.builders import compiled, factory_of
    from reflexion_agents.schemas.settings import checked_settings

    factory = factory_of(model, {"conversation_factory": conversation_factory})
    kg = KGQuery.of(checked_settings(KGQuerySettings, **settings), factory, connection_args, database, query_lang)
    return compiled(kg_query_parts(kg, kg_rules(kg)), checkpointer)
