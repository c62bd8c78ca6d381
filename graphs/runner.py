"""`Runner`: the one way every agent and flow runs its compiled graph.

An agent or a flow says what it is (`RunTarget`: its graph, checkpointer, name, context schema,
how a question enters it and how its final state becomes a result); the runner does the rest,
the same for all of them: the run's config and thread, the context checked before anything runs,
the stream with pause detection, progress events and step reports, the result with its thread and
pending approval, and the resume of a stored thread. The command line, the evaluation and
`make run` hold a runner and never ask which kind of agent they run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, Generic, Protocol, TypedDict, TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StreamMode
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.nodes.checkpoints import INTERRUPT, paused_on, resume_plan
from reflexion_agents.nodes.common.reply import REPLY_NODE
from reflexion_agents.nodes.run_context import checked_context
from reflexion_agents.nodes.run_limits import limits_of
from reflexion_agents.schemas.run_result import RunResult

ResultT = TypeVar("ResultT", bound=RunResult)

StepCallback = Callable[[int, str, BaseMessage | None, dict[str, Any]], None]
"""Told of every finished node: (step, node name, the node's own message or None, its state update)."""
EventCallback = Callable[[dict[str, Any]], None]
"""Told of every progress event a step writes (`{"label", "payload"}`; the text-to-Cypher flows write them)."""

#: Values (the state after each step, with the pause when there is one) always; updates (which
#: node did what) only when someone hears of each step, custom (progress events) only when someone
#: listens: each mode LangGraph streams costs every step of every run.
STATE: StreamMode = "values"
STEPS: StreamMode = "updates"
EVENTS: StreamMode = "custom"


class ResumeOptions(TypedDict, total=False):
    """How a stored run is continued: its settings, and who hears of its progress."""

    context: dict[str, Any] | None  # this run's settings (the target's `context_schema`)
    #: LangChain's config, passed to the graph: `callbacks`, `tags`, `metadata`, `run_name`,
    #: `max_concurrency`, `configurable` (its `thread_id` is the run's thread when `thread_id` is not given).
    config: RunnableConfig | None
    on_step: StepCallback | None
    on_event: EventCallback | None


class RunOptions(ResumeOptions, total=False):
    """How one run is made: its thread, its settings, and who hears of its progress."""

    thread_id: str | None  # the checkpointed thread to run in (a new one when unset)


def checked_options(options: Mapping[str, Any], allowed: Any = RunOptions) -> None:
    """Refuse an option a run does not take, naming it, as Python refuses an unknown keyword argument:
    `thread="t"` or `callbacks=[...]` must not be dropped without a word."""
    known: frozenset[str] = allowed.__optional_keys__ | allowed.__required_keys__
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"unexpected keyword argument{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}; a run takes "
            f"{', '.join(sorted(known))} (callbacks, tags, metadata and run_name go in config=)"
        )


class RunTarget(Protocol[ResultT]):
    """What a runner drives: an agent (`graphs.loop_target.LoopTarget`) or a flow."""

    @property
    def checkpointer(self) -> Any: ...

    @property
    def context_schema(self) -> type[BaseModel]: ...

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]: ...

    @property
    def graph_name(self) -> str:
        """The name a thread is stored under: a thread is resumed only by the graph that wrote it."""
        ...

    def question_input(self, question: str) -> dict[str, Any]:
        """The graph's input for `question` (a bad question is a `ConfigurationError` here)."""
        ...

    def recursion_limit(self, steps: int | None = None) -> int:
        """LangGraph's recursion limit for a run allowed `steps` steps (None: the target's own)."""
        ...

    def result_of(self, state: dict[str, Any]) -> ResultT:
        """The typed result of a run's final state."""
        ...

    def log_step(self, step: int, node: str, message: BaseMessage | None) -> None: ...

    def logs_steps(self) -> bool:
        """Whether `log_step` does anything now: the steps are streamed only for someone to hear."""
        ...

    def log_result(self, result: ResultT) -> None: ...


class _Run(Generic[ResultT]):
    """One run in progress: what the stream said so far (state, pause), turned into events and a result."""

    def __init__(
        self, runner: Runner[ResultT], inputs: Any, options: RunOptions, steps: int | None, events: bool
    ) -> None:
        target = runner.target
        self.runner, self.on_step = runner, options.get("on_step")
        steps_heard = self.on_step is not None or target.logs_steps()
        self.modes = [STATE, *([STEPS] if steps_heard else []), *([EVENTS] if events else [])]
        checked_options(options)
        self.config = runner.config(options.get("thread_id"), steps, options.get("config"))
        self.context = checked_context(target.context_schema, options.get("context"))
        self.state: dict[str, Any] = inputs if isinstance(inputs, dict) else {}
        self.pending: Any = None

    def take(self, mode: str, chunk: Any) -> dict[str, Any] | None:
        """Record one streamed chunk; a progress event is returned to pass on."""
        if mode == EVENTS:
            event: dict[str, Any] = chunk
            return event
        if mode == STATE:
            paused = paused_on(chunk)
            if paused is not None:  # a pause comes as the state with the interrupt under its own key
                self.pending = paused
                chunk = {k: v for k, v in chunk.items() if k != INTERRUPT}
            self.state = chunk
            return None
        for node, update in chunk.items():
            # `reply` says the result again, as a message: step hooks hear the steps, `log_result` the result
            if node not in (INTERRUPT, REPLY_NODE):
                self._report(node, update or {})
        return None

    def _report(self, node: str, update: dict[str, Any]) -> None:
        messages = update.get("messages") or []
        message = messages[0] if messages else None  # the node's own message comes first
        step = update.get("steps", self.state.get("steps", 0))
        self.runner.target.log_step(step, node, message)
        if self.on_step is not None:
            self.on_step(step, node, message, update)

    def result(self) -> ResultT:
        return self.runner.finish(self.state, self.config, self.pending)


class Runner(Generic[ResultT]):
    """Runs, streams and resumes one target's graph; every agent and flow holds one."""

    def __init__(self, target: RunTarget[ResultT]) -> None:
        self.target = target

    def config(
        self, thread_id: str | None = None, steps: int | None = None, given: RunnableConfig | None = None
    ) -> RunnableConfig:
        """The run's config: LangChain's `given` one (callbacks, tags, metadata, run name), a recursion
        limit that fits its steps (or the given one, if higher), and its thread when checkpointed."""
        config: RunnableConfig = {**(given or {})}
        config["recursion_limit"] = max(self.target.recursion_limit(steps), int(config.get("recursion_limit") or 0))
        configurable = dict(config.get("configurable") or {})
        thread_id = thread_id or configurable.get("thread_id")
        if self.target.checkpointer is not None:
            configurable["thread_id"] = thread_id or uuid.uuid4().hex
        if configurable:
            config["configurable"] = configurable
        return config

    def finish(self, state: dict[str, Any], config: RunnableConfig, pending: Any = None) -> ResultT:
        """The result of a run's final state, with its thread and, for a paused run, what it waits on."""
        extra: dict[str, Any] = {"thread_id": config.get("configurable", {}).get("thread_id")}
        if pending is not None:
            extra.update(stop_reason="awaiting_approval", pending_approval=pending)
        result = self.target.result_of(state)
        if isinstance(result, BaseModel):  # a biochatter-style `_parse_final_result` may return a plain object
            result = result.model_copy(update={k: v for k, v in extra.items() if k in type(result).model_fields})
        self.target.log_result(result)
        return result

    # -- running -----------------------------------------------------------------

    def events(
        self, inputs: Any, steps: int | None = None, with_events: bool = True, /, **options: Unpack[RunOptions]
    ) -> Iterator[Any]:
        """Each progress event as it happens (unless `with_events` is false), then the result (the last item)."""
        run = _Run(self, inputs, options, steps, events=with_events)
        for mode, chunk in self.target.graph.stream(inputs, run.config, stream_mode=run.modes, context=run.context):
            if (event := run.take(mode, chunk)) is not None:
                yield event
        yield run.result()

    async def aevents(
        self, inputs: Any, steps: int | None = None, with_events: bool = True, /, **options: Unpack[RunOptions]
    ) -> AsyncIterator[Any]:
        """`events`, asynchronously: model calls are awaited, blocking steps run in worker threads."""
        run = _Run(self, inputs, options, steps, events=with_events)
        stream = self.target.graph.astream(inputs, run.config, stream_mode=run.modes, context=run.context)
        async for mode, chunk in stream:
            if (event := run.take(mode, chunk)) is not None:
                yield event
        yield run.result()

    def run(self, inputs: Any, steps: int | None = None, /, **options: Unpack[RunOptions]) -> ResultT:
        """Run the graph from `inputs` to its end (or its pause); progress goes to the callbacks."""
        on_event, last = options.get("on_event"), None
        # progress events are streamed only when someone listens (LangGraph routes each step's writer then)
        for last in self.events(inputs, steps, on_event is not None, **options):
            if on_event is not None and isinstance(last, dict):  # a progress event; the result comes last
                on_event(last)
        return last  # type: ignore[return-value]  # `events` always ends with the result

    async def arun(self, inputs: Any, steps: int | None = None, /, **options: Unpack[RunOptions]) -> ResultT:
        on_event, last = options.get("on_event"), None
        async for last in self.aevents(inputs, steps, on_event is not None, **options):
            if on_event is not None and isinstance(last, dict):
                on_event(last)
        return last  # type: ignore[return-value]

    def ask(self, question: str, **options: Unpack[RunOptions]) -> ResultT:
        """Answer `question` in a new run (or as the next question of `thread_id`)."""
        return self.run(self.target.question_input(question), **options)

    async def aask(self, question: str, **options: Unpack[RunOptions]) -> ResultT:
        return await self.arun(self.target.question_input(question), **options)

    # -- resuming ----------------------------------------------------------------

    def _resume_plan(self, thread_id: str, approval: Any) -> tuple[Any, ResultT | None, int | None]:
        """(the input that continues the thread, its result if it has finished, the step limit it
        started with, which the recursion limit must fit). Reads the checkpointer: blocking."""
        target = self.target
        inputs, finished = resume_plan(target.graph, target.checkpointer, thread_id, approval, target.graph_name)
        if finished is not None:
            return None, self.finish(finished, self.config(thread_id)), None
        values = target.graph.get_state({"configurable": {"thread_id": thread_id}}).values
        return inputs, None, limits_of(values.get("run_context")).get("max_steps")

    def resume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> ResultT:
        """Continue the run stored in `thread_id` from its last saved step: after a crash or Ctrl-C,
        or, with `approval` ("approve", {"action": "edit", "query": ...}, "reject"), after a pause.
        A finished run returns its result again without calling the model. The run keeps the limits
        it started with: a `context` may lower them, one that would raise them is refused."""
        checked_options(options, ResumeOptions)
        inputs, done, steps = self._resume_plan(thread_id, approval)
        return done if done is not None else self.run(inputs, steps, thread_id=thread_id, **options)

    async def aresume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> ResultT:
        checked_options(options, ResumeOptions)
        inputs, done, steps = await asyncio.to_thread(self._resume_plan, thread_id, approval)
        return done if done is not None else await self.arun(inputs, steps, thread_id=thread_id, **options)
