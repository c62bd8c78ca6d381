"""`Text2CypherFlow`: the four text-to-Cypher flows as LangGraph graphs over the graph-database protocol.

    flow = Text2CypherFlow("retry_evaluate")            # or "naive", "retry", "planner"
    result = flow.ask("Which movies did Tom Hanks act in?")
    result.answer, result.cypher, result.rows, result.stop_reason
    for event in flow.stream("Who directed The Matrix?"):   # progress events, then the result
        print(event)

Each flow's graph is wired by its builder in `graphs.text2cypher_builders` (`FLOW_BUILDERS`); this
class gives the builder the steps as nodes bound to the run's model, database and limits, and runs it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import Unpack

from reflexion_agents.graphs.runner import ResumeOptions, Runner, RunOptions
from reflexion_agents.graphs.text2cypher_builders import FLOW_BUILDERS, Node, Step, Wiring
from reflexion_agents.graphs.text2cypher_builders import (
    FLOWS as FLOWS,  # the registry's names; the CLI takes them from here
)
from reflexion_agents.nodes.checkpoints import DURABLE, resolve_checkpointer
from reflexion_agents.nodes.common.reply import reply_update
from reflexion_agents.nodes.graphdb.connect import opened
from reflexion_agents.nodes.graphdb.demo_data import is_movies_graph
from reflexion_agents.nodes.graphdb.locations import default_connection_args
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase, graph_exists
from reflexion_agents.nodes.graphdb.run_databases import RunDatabases
from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.resolve import chat_model_from_env, resolve_chat_model
from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.nodes.run_context import APPROVAL_ENV, env_flag, lower
from reflexion_agents.nodes.run_settings import RunSettings, run_settings
from reflexion_agents.nodes.settings_checks import checkpointer_setting
from reflexion_agents.nodes.text2cypher import steps
from reflexion_agents.nodes.text2cypher.context import FlowContext, usage_total
from reflexion_agents.nodes.text2cypher.fewshots import SEED_EXAMPLES, Embedder, FewShotStore, MemoryFewShotStore
from reflexion_agents.schemas.errors import ConfigurationError, DatabaseUnavailableError, GraphDatabaseError
from reflexion_agents.schemas.run_context import Text2CypherContext
from reflexion_agents.schemas.settings import FLOW_DEFAULTS, FlowSettings, checked_settings
from reflexion_agents.schemas.text2cypher import (
    Attempt,
    Flow,
    SubAnswer,
    Text2CypherResult,
    ValueMapping,
)

logger = logging.getLogger(__name__)

#: `seed_examples`' default: the movies examples, for the movies demo graph only.
DEMO_EXAMPLES: Any = Path("<the movies examples, for the movies graph only>")
RECURSION_LIMIT = 100  # the planner's rounds of parallel sub-queries fit well within it
RUN_LIMITS = ("max_llm_calls", "max_retries", "row_cap", "query_timeout")  # a run's context may lower each


def text_question(question: Any) -> str:
    """The question, if it is text (an empty one ends the run `invalid_input`, as on the server)."""
    if not isinstance(question, str):
        raise ConfigurationError(f"the question must be text, got {type(question).__name__}")
    return question


def default_store(
    db: GraphDatabase, embed: Embedder | None, seed_examples: str | Path | None
) -> FewShotStore | MemoryFewShotStore | None:
    """The graph's own examples: on FalkorDB a graph of their own beside the data; elsewhere in
    memory (the data's own database is never written to unasked: pass
    `fewshots=FewShotStore(examples_db)` for that). The movies examples seed only the movies
    demo graph; another graph starts empty and learns its own, or takes `seed_examples`. A graph
    that does not exist gets no store, so a run never creates anything for it."""
    if not graph_exists(db):
        return None
    store: FewShotStore | MemoryFewShotStore = (
        FewShotStore(db, embed=embed) if db.dialect == "falkordb" and hasattr(db, "sibling") else MemoryFewShotStore()
    )
    seed = seed_examples
    if seed is DEMO_EXAMPLES:
        seed = SEED_EXAMPLES if is_movies_graph(db) else None
    try:
        if seed and store.count() == 0:
            store.seed_from_csv(seed)
    except GraphDatabaseError as e:  # no rights to write, say: run without the seed examples
        logger.warning("the few-shot examples could not be seeded: %s", e)
    return store


class Text2CypherFlow:
    """One flow, its model, database and example store; `ask` answers a question with it."""

    def __init__(
        self,
        flow: Flow = "retry_evaluate",
        connection_args: dict[str, Any] | None = None,
        conversation_factory: Callable[[], Any] | None = None,
        *,
        database: GraphDatabase | None = None,
        fewshots: FewShotStore | MemoryFewShotStore | bool = True,
        seed_examples: str | Path | None = DEMO_EXAMPLES,
        embed: Embedder | None = None,
        max_retries: int = FLOW_DEFAULTS.max_retries,
        max_llm_calls: int = FLOW_DEFAULTS.max_llm_calls,
        row_cap: int = FLOW_DEFAULTS.row_cap,
        query_timeout: float | None = FLOW_DEFAULTS.query_timeout,
        few_shot_k: int = FLOW_DEFAULTS.few_shot_k,
        schema_chars: int = FLOW_DEFAULTS.schema_chars,
        learn: bool = FLOW_DEFAULTS.learn,
        cache_seconds: float = FLOW_DEFAULTS.cache_seconds,
        require_approval: bool | None = FLOW_DEFAULTS.require_approval,
        map_values: bool = FLOW_DEFAULTS.map_values,
        repair_queries: bool = FLOW_DEFAULTS.repair_queries,
        checkpointer: Any = DURABLE,
    ) -> None:
        if flow not in FLOWS:
            raise ConfigurationError(f"unknown flow {flow!r}; choose one of {', '.join(FLOWS)}")
        settings = checked_settings(
            FlowSettings,
            max_retries=max_retries,
            max_llm_calls=max_llm_calls,
            row_cap=row_cap,
            query_timeout=query_timeout,
            few_shot_k=few_shot_k,
            schema_chars=schema_chars,
            learn=learn,
            cache_seconds=cache_seconds,
            require_approval=require_approval,
            map_values=map_values,
            repair_queries=repair_queries,
        )
        self.settings = settings  # as given (require_approval None: the environment's, in `limits`)
        self.flow: Flow = flow
        self.connection_args = dict(connection_args or {})
        self.conversation_factory = conversation_factory or chat_model_from_env
        self._database, self._fewshots, self.seed_examples, self.embed = database, fewshots, seed_examples, embed
        approval = settings.require_approval
        self.limits = {
            **settings.model_dump(),
            "require_approval": env_flag(APPROVAL_ENV) if approval is None else approval,
        }
        self.checkpointer = resolve_checkpointer(checkpointer_setting(checkpointer))
        self._contexts = KeyedCache()  # one FlowContext per (model, database, limits) a run asks for
        self.databases = RunDatabases(self.connection_args, database)  # the flow's, and those runs name
        self.runner: Runner[Text2CypherResult] = Runner(self)
        self._stores = KeyedCache()  # one example store per database
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self.graph_name = f"text2cypher_{flow}"  # the name its threads are stored under

    # -- dependencies, made on first use so a graph compiles with no model or database --

    def dependencies(self, run: RunSettings) -> FlowContext:
        """A run's dependencies: the model, database and limits its settings name (shared by every
        run that names the same), else the flow's own."""
        context, limits = run.context, dict(run.limits)
        key = (context.model, context.database_url, context.graph, tuple(sorted(limits.items())))
        return self._contexts.get(key, lambda: self._make_context(context, limits))

    def _limits(self, run: Any, recorded: Mapping[str, Any]) -> dict[str, Any]:
        """A run's limits: the flow's, which its context may lower; once the run has started, the
        ones it recorded (`nodes.run_limits`), so a flow built with other limits that resumes it keeps
        them."""
        limits = {k: lower(getattr(run, k), recorded.get(k, self.limits[k])) for k in RUN_LIMITS}
        # a run may add approval, never remove it; may turn value mapping off, never on
        approval = self.limits["require_approval"] or bool(run.require_approval)
        limits["require_approval"] = approval or bool(recorded.get("require_approval", False))
        mapping = self.limits["map_values"] and run.map_values is not False
        limits["map_values"] = mapping and bool(recorded.get("map_values", True))
        return limits

    def _make_context(self, run: Text2CypherContext, limits: dict[str, Any]) -> FlowContext:
        db = self.databases.for_run(run)
        args = self.databases.args_for(run) or (
            None if self._database is not None else self.connection_args or default_connection_args()
        )
        store = self._fewshots if isinstance(self._fewshots, (FewShotStore, MemoryFewShotStore)) else None
        if self._fewshots is True:
            # keyed by the object (no id reuse); it lists the server's graphs: the first command that a
            # peer which is no database fails
            store = self._stores.get(
                cast(Hashable, db), lambda: opened(lambda: default_store(db, self.embed, self.seed_examples), args)
            )
        model = chat_model_from_env(run.model) if run.model else resolve_chat_model(self.conversation_factory())
        wiring = FLOW_BUILDERS[self.flow]
        return FlowContext(
            model=model,
            db=db,
            store=store,
            examples_on_graph=self._fewshots is True,
            corrects=wiring.corrects,  # what the flow's wiring lets its steps do: they never ask its name
            evaluates=wiring.evaluates,
            **{**self.limits, **limits},
        )

    def _node(self, step: Step) -> Node:
        """`step` as a node `(state, runtime)`: it runs with the settings of the run it is in (those the
        run started with, for a resume, under limits the run may not have raised since)."""

        def node(state: Any, runtime: Runtime[Text2CypherContext]) -> dict[str, Any]:
            run = run_settings(
                state.get("run_context"), runtime.context, schema=Text2CypherContext, limits=self._limits
            )
            try:
                context = self.dependencies(run)
            except DatabaseUnavailableError as e:  # a database that is down is a typed stop, not a crash
                return {"stop_reason": "tool_unavailable", "error": str(e)}
            return step(state, context)

        node.__name__ = step.__name__
        return node

    def _start(self, state: Mapping[str, Any], runtime: Runtime[Text2CypherContext]) -> dict[str, Any]:
        """The first node: resets the per-question fields and keeps the context the run started with and
        the limits in force, for a resume (by this flow or another, in this process or the next)."""
        run = run_settings(None, runtime.context, schema=Text2CypherContext, limits=self._limits, graph=self.graph_name)
        return {**steps.start(state), "run_context": run.started}

    def _reply(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The last node: the answer message and output fields, from the typed result `ask` returns."""
        return reply_update(self.result(dict(state)), state.get("stop_reason"))

    # -- graphs ----------------------------------------------------------------

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The graph the flow's builder wires over this flow's nodes, compiled on first use."""
        if self._graph is None:
            wiring = Wiring(start=self._start, node=self._node, reply=self._reply)
            self._graph = (
                FLOW_BUILDERS[self.flow].build(wiring).compile(checkpointer=self.checkpointer, name=self.graph_name)
            )
        return self._graph

    # -- running (`graphs.runner.RunTarget`) -----------------------------------------

    context_schema = Text2CypherContext

    def question_input(self, question: str) -> dict[str, Any]:
        return {"question": text_question(question)}

    def recursion_limit(self, steps: int | None = None) -> int:
        return RECURSION_LIMIT

    def log_step(self, step: int, node: str, message: BaseMessage | None) -> None:
        """The flows report progress as events (`on_event`), not as step messages."""

    def logs_steps(self) -> bool:
        return False

    def log_result(self, result: Text2CypherResult) -> None:
        logger.info("text2cypher_%s: %s (%s)", self.flow, result.stop_reason, without_surrogates(str(result.answer)))

    def result(self, state: dict[str, Any]) -> Text2CypherResult:
        """The typed result of a finished run's state."""
        attempts = [Attempt.model_validate(a) for a in state.get("attempts") or []]
        subs = [SubAnswer.model_validate(s) for s in state.get("subanswers") or []]
        chosen = steps.best_attempt(attempts or [s.attempt for s in subs])
        return Text2CypherResult(
            answer=state.get("answer"),
            stop_reason=state.get("stop_reason"),
            cypher=chosen.cypher if chosen else None,
            columns=chosen.columns if chosen else [],
            rows=chosen.rows if chosen else [],
            truncated=chosen.truncated if chosen else False,
            mappings=[ValueMapping.model_validate(m) for m in (chosen.mappings if chosen else [])],
            attempts=attempts,
            subanswers=subs,
            suggestions=state.get("suggestions") or [],
            learned=bool(state.get("learned")),
            usage=usage_total(state),
            error=state.get("error"),
        )

    def result_of(self, state: dict[str, Any]) -> Text2CypherResult:
        """What `Runner` calls: `result`, a subclass's own included."""
        return self.result(state)

    def stream(self, question: str, **options: Unpack[RunOptions]) -> Iterator[dict[str, Any] | Text2CypherResult]:
        """Each step's progress event (`{"label", "payload"}`) as it happens, then the result.
        `context` holds this run's settings (`Text2CypherContext`: model, database, limits, approval)."""
        return self.runner.events(self.question_input(question), **options)

    def ask(self, question: str, **options: Unpack[RunOptions]) -> Text2CypherResult:
        """Answer `question`; `on_event` receives each progress event."""
        return self.runner.ask(question, **options)

    async def aask(self, question: str, **options: Unpack[RunOptions]) -> Text2CypherResult:
        """`ask`, from async code: model calls are awaited, the database steps run in worker threads."""
        return await self.runner.aask(question, **options)

    def resume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> Text2CypherResult:
        """Continue the run stored in `thread_id` from its last saved step (after a crash, or with
        `approval` after a pause for approval); a finished run returns its result again."""
        return self.runner.resume(thread_id, approval, **options)

    def close(self) -> None:
        """Close the databases this flow opened."""
        self.databases.close()
        self._stores.clear()
        self._contexts.clear()
