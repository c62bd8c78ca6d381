"""`Text2CypherFlow`: the four text-to-Cypher flows as LangGraph graphs over the graph-database protocol.

    flow = Text2CypherFlow("retry_evaluate")            # or "naive", "retry", "planner"
    result = flow.ask("Which movies did Tom Hanks act in?")
    result.answer, result.cypher, result.rows, result.stop_reason
    for event in flow.stream("Who directed The Matrix?"):   # progress events, then the result
        print(event)

naive:          guardrail -> generate -> map_values -> execute -> summarize
retry:          ... execute -(error)-> correct -> map_values -> execute ...
retry_evaluate: ... execute -> evaluate -(poor rows)-> correct ...; a corrected query the
                evaluator accepts is stored as a new few-shot example
planner:        guardrail -> plan -> subquery x N (parallel, `Send`) -> check -> (next round) -> summarize
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from nodes.checkpoints import DURABLE, paused_on, resolve_checkpointer, resume_plan
from nodes.graphdb.connect import open_database, opened
from nodes.graphdb.demo_data import is_movies_graph
from nodes.graphdb.locations import default_connection_args, run_database_args
from nodes.graphdb.protocol import (
    DEFAULT_QUERY_TIMEOUT_S,
    DEFAULT_ROW_CAP,
    GraphDatabase,
    graph_exists,
)
from nodes.keyed_cache import KeyedCache
from nodes.models.resolve import chat_model_from_env, resolve_chat_model
from nodes.run_context import (
    APPROVAL_ENV,
    checked_context,
    current_context,
    env_flag,
    lower,
    runtime_context,
    started_context,
    stored_context,
)
from nodes.run_limits import recorded, recorded_limits, refuse_raised_limits, with_limits
from nodes.settings_checks import checkpointer_setting, seconds, whole_number
from nodes.text2cypher import planner, steps
from nodes.text2cypher.context import FlowContext, usage_total
from nodes.text2cypher.fewshots import SEED_EXAMPLES, Embedder, FewShotStore, MemoryFewShotStore
from nodes.text2cypher.schema_pruning import DEFAULT_SCHEMA_CHARS
from schemas.errors import ConfigurationError, DatabaseUnavailableError, GraphDatabaseError
from schemas.run_context import Text2CypherContext
from schemas.text2cypher import (
    Attempt,
    Flow,
    SubAnswer,
    Text2CypherInput,
    Text2CypherOutput,
    Text2CypherResult,
    Text2CypherState,
    ValueMapping,
)

logger = logging.getLogger(__name__)

FLOWS: tuple[Flow, ...] = ("naive", "retry", "retry_evaluate", "planner")
#: `seed_examples`' default: the movies examples, for the movies demo graph only.
DEMO_EXAMPLES: Any = Path("<the movies examples, for the movies graph only>")
DEFAULT_MAX_LLM_CALLS = 12
RUN_LIMITS = ("max_llm_calls", "max_retries", "row_cap", "query_timeout")  # a run's context may lower each


def text_question(question: Any) -> str:
    """The question, if it is text (an empty one ends the run `invalid_input`, as on the server)."""
    if not isinstance(question, str):
        raise ConfigurationError(f"the question must be text, got {type(question).__name__}")
    return question


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
        max_retries: int = 3,
        max_llm_calls: int = DEFAULT_MAX_LLM_CALLS,
        row_cap: int = DEFAULT_ROW_CAP,
        query_timeout: float | None = DEFAULT_QUERY_TIMEOUT_S,
        few_shot_k: int = 5,
        schema_chars: int = DEFAULT_SCHEMA_CHARS,
        learn: bool = True,
        cache_seconds: float = 300.0,
        require_approval: bool | None = None,
        map_values: bool = True,
        checkpointer: Any = DURABLE,
    ) -> None:
        if flow not in FLOWS:
            raise ConfigurationError(f"unknown flow {flow!r}; choose one of {', '.join(FLOWS)}")
        whole_number("max_retries", max_retries, low=0, high=20)
        whole_number("max_llm_calls", max_llm_calls, low=1, high=200)
        whole_number("row_cap", row_cap, low=1, high=100_000)
        whole_number("few_shot_k", few_shot_k, low=0, high=50)
        whole_number("schema_chars", schema_chars, low=200, high=1_000_000)
        query_timeout = seconds("query_timeout", query_timeout)
        seconds("cache_seconds", cache_seconds, none=False, high=7 * 86_400.0)
        self.flow: Flow = flow
        self.connection_args = dict(connection_args or {})
        self.conversation_factory = conversation_factory or chat_model_from_env
        self._database, self._fewshots, self.seed_examples, self.embed = database, fewshots, seed_examples, embed
        self.limits = {
            "max_retries": max_retries,
            "max_llm_calls": max_llm_calls,
            "row_cap": row_cap,
            "query_timeout": query_timeout,
            "few_shot_k": few_shot_k,
            "schema_chars": schema_chars,
            "learn": learn,
            "cache_seconds": cache_seconds,
            "require_approval": env_flag(APPROVAL_ENV) if require_approval is None else require_approval,
            "map_values": bool(map_values),
        }
        self.checkpointer = resolve_checkpointer(checkpointer_setting(checkpointer))
        self._contexts = KeyedCache()  # one FlowContext per (model, database, limits) a run asks for
        self._databases = KeyedCache()  # databases opened here, by connection arguments
        self._stores = KeyedCache()  # one example store per database
        self._graph: CompiledStateGraph | None = None

    # -- dependencies, made on first use so a graph compiles with no model or database --

    @property
    def context(self) -> FlowContext:
        """This run's dependencies: the model, database and limits its context names (shared by
        every run that names the same), else the flow's own."""
        run = current_context(Text2CypherContext)
        limits = self._run_limits(run)
        key = (run.model, run.database_url, run.graph, tuple(sorted(limits.items())))
        return self._contexts.get(key, lambda: self._make_context(run, limits))

    def _run_limits(self, run: Text2CypherContext) -> dict[str, Any]:
        """This run's limits: the flow's, which its context may lower; once the run has started, the
        ones it recorded (`nodes.run_limits`), so a flow built with other limits that resumes it keeps
        them."""
        limits = {k: lower(getattr(run, k), recorded(k, self.limits[k])) for k in RUN_LIMITS}
        # a run may add approval, never remove it; may turn value mapping off, never on
        approval = self.limits["require_approval"] or bool(run.require_approval)
        limits["require_approval"] = approval or bool(recorded("require_approval", False))
        mapping = self.limits["map_values"] and run.map_values is not False
        limits["map_values"] = mapping and bool(recorded("map_values", True))
        return limits

    def _make_context(self, run: Text2CypherContext, limits: dict[str, Any]) -> FlowContext:
        args = run_database_args(
            run, self.connection_args, given_object=self._database is not None, own_db=self._database
        )
        if args is None and self._database is not None:
            db = self._database
        else:
            args = args or self.connection_args or default_connection_args()
            key = repr(sorted(args.items()))
            db = self._databases.get(key, lambda: opened(lambda: open_database(args), args))
        store = self._fewshots if isinstance(self._fewshots, (FewShotStore, MemoryFewShotStore)) else None
        if self._fewshots is True:
            # keyed by the object (no id reuse); it lists the server's graphs: the first command that a
            # peer which is no database fails
            store = self._stores.get(db, lambda: opened(lambda: self._default_store(db), args))
        model = chat_model_from_env(run.model) if run.model else resolve_chat_model(self.conversation_factory())
        return FlowContext(
            model=model,
            db=db,
            flow=self.flow,
            store=store,
            examples_on_graph=self._fewshots is True,
            **{**self.limits, **limits},  # type: ignore[arg-type]
        )

    def _default_store(self, db: GraphDatabase) -> FewShotStore | MemoryFewShotStore | None:
        """The graph's own examples: on FalkorDB a graph of their own beside the data; elsewhere in
        memory (the data's own database is never written to unasked: pass
        `fewshots=FewShotStore(examples_db)` for that). The movies examples seed only the movies
        demo graph; another graph starts empty and learns its own, or takes `seed_examples`. A graph
        that does not exist gets no store, so a run never creates anything for it."""
        if not graph_exists(db):
            return None
        store: FewShotStore | MemoryFewShotStore = (
            FewShotStore(db, embed=self.embed)
            if db.dialect == "falkordb" and hasattr(db, "sibling")
            else MemoryFewShotStore()
        )
        seed = self.seed_examples
        if seed is DEMO_EXAMPLES:
            seed = SEED_EXAMPLES if is_movies_graph(db) else None
        try:
            if seed and store.count() == 0:
                store.seed_from_csv(seed)
        except GraphDatabaseError as e:  # no rights to write, say: run without the seed examples
            logger.warning("the few-shot examples could not be seeded: %s", e)
        return store

    def _node(self, step: Callable[[Any, FlowContext], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
        def node(state: Any) -> dict[str, Any]:
            refuse_raised_limits(state.get("run_context"), runtime_context())
            started = state.get("run_context")  # the settings and limits the run started with
            with stored_context(started), recorded_limits(started):
                try:
                    context = self.context
                except DatabaseUnavailableError as e:  # a database that is down is a typed stop, not a crash
                    return {"stop_reason": "tool_unavailable", "error": str(e)}
                return step(state, context)

        node.__name__ = step.__name__
        return node

    # -- routers ---------------------------------------------------------------

    @staticmethod
    def _after_start(state: Text2CypherState) -> Literal["guardrail", "__end__"]:
        return END if state.get("stop_reason") else "guardrail"

    def _after_guardrail(self, state: Text2CypherState) -> Literal["generate", "plan", "__end__"]:
        if state.get("stop_reason"):
            return END
        return "plan" if self.flow == "planner" else "generate"

    @staticmethod
    def _after_query_written(state: Text2CypherState) -> Literal["map_values", "summarize"]:
        return "summarize" if state.get("stop_reason") else "map_values"

    def _context_of(self, state: Mapping[str, Any]) -> FlowContext:
        with stored_context(state.get("run_context")), recorded_limits(state.get("run_context")):
            return self.context

    def _start(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The first node: resets the per-question fields and keeps the context the run started with and
        the limits in force, for a resume (by this flow or another, in this process or the next)."""
        graph = f"text2cypher_{self.flow}"
        with recorded_limits(None):  # the flow's own, not those of a run this one runs inside
            limits = self._run_limits(current_context(Text2CypherContext))
        return {**steps.start(state), "run_context": with_limits(started_context(graph), limits)}

    def _after_execute(self, state: Text2CypherState) -> Literal["correct", "evaluate", "summarize"]:
        ctx = self._context_of(state)
        if state.get("stop_reason") or self.flow == "naive":
            return "summarize"
        if state.get("feedback"):  # the database's error
            return "correct" if ctx.can_correct(state) else "summarize"
        return "evaluate" if self.flow == "retry_evaluate" else "summarize"

    def _after_evaluate(self, state: Text2CypherState) -> Literal["correct", "summarize"]:
        if state.get("stop_reason") or state.get("evaluated_ok"):
            return "summarize"
        return "correct" if self._context_of(state).can_correct(state) else "summarize"

    @staticmethod
    def _fan_out(state: Text2CypherState) -> list[Send] | Literal["summarize"]:
        """One parallel `subquery` branch per pending sub-question, or on to the summary."""
        if state.get("stop_reason") or not state.get("pending"):
            return "summarize"
        return [
            Send(
                "subquery",
                {
                    "sub": q,
                    "question": state["question"],
                    "round": state.get("round", 1),
                    "run_context": state.get("run_context"),
                },
            )
            for q in state["pending"]
        ]

    # -- graphs ----------------------------------------------------------------

    def build_graph(self) -> CompiledStateGraph:
        builder = StateGraph(
            Text2CypherState,
            context_schema=Text2CypherContext,
            input_schema=Text2CypherInput,
            output_schema=Text2CypherOutput,
        )
        builder.add_node("start", self._start)  # needs neither model nor database
        builder.add_node("guardrail", self._node(steps.guardrail))
        builder.add_edge(START, "start")
        builder.add_conditional_edges("start", self._after_start)
        builder.add_conditional_edges(
            "guardrail",
            self._after_guardrail,
            ["generate", "__end__"] if self.flow != "planner" else ["plan", "__end__"],
        )
        if self.flow == "planner":
            builder.add_node("plan", self._node(planner.plan))
            builder.add_node("subquery", self._node(planner.subquery))
            builder.add_node("check", self._node(planner.check))
            builder.add_node("summarize", self._node(planner.summarize_plan))
            builder.add_conditional_edges("plan", self._fan_out, ["subquery", "summarize"])
            builder.add_edge("subquery", "check")
            builder.add_conditional_edges("check", self._fan_out, ["subquery", "summarize"])
        else:
            for name, step in (
                ("generate", steps.generate),
                ("map_values", steps.map_values),
                ("execute", steps.execute),
                ("summarize", steps.summarize),
            ):
                builder.add_node(name, self._node(step))
            builder.add_conditional_edges("generate", self._after_query_written)
            builder.add_edge("map_values", "execute")
            execute_targets = {
                "naive": ["summarize"],
                "retry": ["correct", "summarize"],
                "retry_evaluate": ["correct", "evaluate", "summarize"],
            }
            builder.add_conditional_edges("execute", self._after_execute, execute_targets[self.flow])
            if self.flow != "naive":
                builder.add_node("correct", self._node(steps.correct))
                builder.add_conditional_edges("correct", self._after_query_written)
            if self.flow == "retry_evaluate":
                builder.add_node("evaluate", self._node(steps.evaluate))
                builder.add_conditional_edges("evaluate", self._after_evaluate)
        builder.add_edge("summarize", END)
        return builder.compile(checkpointer=self.checkpointer, name=f"text2cypher_{self.flow}")

    @property
    def graph(self) -> CompiledStateGraph:
        if self._graph is None:
            self._graph = self.build_graph()
        return self._graph

    # -- running ---------------------------------------------------------------

    def _config(self, thread_id: str | None) -> dict[str, Any]:
        config: dict[str, Any] = {"recursion_limit": 100}
        if self.checkpointer is not None:
            config["configurable"] = {"thread_id": thread_id or uuid.uuid4().hex}
        return config

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

    def _finished(self, state: dict[str, Any], config: dict[str, Any], pending: Any = None) -> Text2CypherResult:
        result = self.result(state)
        extra: dict[str, Any] = {"thread_id": config.get("configurable", {}).get("thread_id")}
        if pending is not None:
            extra.update(stop_reason="awaiting_approval", pending_approval=pending)
        return result.model_copy(update=extra)

    def _stream(
        self, inputs: Any, thread_id: str | None, context: dict[str, Any] | None
    ) -> Iterator[dict[str, Any] | Text2CypherResult]:
        state: dict[str, Any] = {}
        pending = None
        config = self._config(thread_id)
        context = checked_context(Text2CypherContext, context)
        for mode, chunk in self.graph.stream(
            inputs, config, stream_mode=["custom", "values", "updates"], context=context
        ):
            if mode == "custom":
                yield chunk
            elif mode == "values":
                state = chunk
            else:
                pending = paused_on(chunk) or pending
        yield self._finished(state, config, pending)

    def stream(
        self, question: str, *, thread_id: str | None = None, context: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any] | Text2CypherResult]:
        """Each step's progress event (`{"label", "payload"}`) as it happens, then the result.
        `context` holds this run's settings (`Text2CypherContext`: model, database, limits, approval)."""
        return self._stream({"question": text_question(question)}, thread_id, context)

    def ask(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        context: dict[str, Any] | None = None,
    ) -> Text2CypherResult:
        """Answer `question`; `on_event` receives each progress event."""
        return self._drain(self.stream(question, thread_id=thread_id, context=context), on_event)

    @staticmethod
    def _drain(
        events: Iterator[dict[str, Any] | Text2CypherResult], on_event: Callable[[dict[str, Any]], None] | None
    ) -> Text2CypherResult:
        for item in events:
            if isinstance(item, Text2CypherResult):
                return item
            if on_event is not None:
                on_event(item)
        raise AssertionError("the stream ended without a result")  # pragma: no cover - stream always ends with one

    def resume(
        self,
        thread_id: str,
        approval: Any = None,
        *,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        context: dict[str, Any] | None = None,
    ) -> Text2CypherResult:
        """Continue the run stored in `thread_id` from its last saved step (after a crash, or with
        `approval` after a pause for approval); a finished run returns its result again."""
        inputs, finished = resume_plan(self.graph, self.checkpointer, thread_id, approval, f"text2cypher_{self.flow}")
        if finished is not None:
            return self._finished(finished, self._config(thread_id))
        return self._drain(self._stream(inputs, thread_id, context), on_event)

    async def aask(
        self, question: str, *, thread_id: str | None = None, context: dict[str, Any] | None = None
    ) -> Text2CypherResult:
        """`ask`, from async code: the graph runs its steps in worker threads."""
        config = self._config(thread_id)
        state = await self.graph.ainvoke(
            {"question": text_question(question)}, config, context=checked_context(Text2CypherContext, context)
        )
        return self._finished(state, config, paused_on(state))

    def close(self) -> None:
        """Close the databases this flow opened."""
        for db in self._databases.values():
            db.close()
        self._databases.clear()
        self._stores.clear()
        self._contexts.clear()
