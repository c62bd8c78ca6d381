"""The loop's nodes (each sync and async) and the graph they make, over an agent's parts.

The nodes are the same for every agent: `draft` asks the question (or ends a run that has none, or
whose tool cannot be reached), `execute_tool` runs the pending action (or skips one that already
ran), `revise` asks again, and `reply`, the last, says the answer as an AI message. Each node is a
function of the state and LangGraph's runtime: it computes the run's settings once
(`nodes.run_settings.run_settings`, from the state and `runtime.context`) and hands them to the
parts it calls; the first node keeps what the run started with in the state. What differs between
agents is only their parts (`graphs.loop_parts.LoopParts`), and the labels on the routes.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Command

from reflexion_agents.graphs.labelled_routes import chooser, destinations_of
from reflexion_agents.graphs.loop_parts import LoopParts, Turn
from reflexion_agents.nodes.common.reply import REPLY_NODE, reply_update
from reflexion_agents.nodes.common.responder import ResponderReply
from reflexion_agents.nodes.common.responder_with_retries import arespond_with, respond_with
from reflexion_agents.nodes.common.turns import new_user_message
from reflexion_agents.nodes.reflexion.prompt_view import prompt_messages
from reflexion_agents.nodes.reflexion.steps import (
    draft_update,
    fresh_run,
    stopped_tool_message,
    tool_update,
    unavailable_tool_run,
    with_notice,
)
from reflexion_agents.nodes.run_settings import RunSettings, run_settings
from reflexion_agents.schemas.errors import DatabaseUnavailableError
from reflexion_agents.schemas.reflexion import ReflexionState
from reflexion_agents.schemas.state_channels import changes_only, state_after

#: The nodes of every agent built on the loop, in the order a run meets them.
LOOP_NODES = ("draft", "execute_tool", "revise", REPLY_NODE)

NodeBody = Callable[[Any, RunSettings], Any]


class SyncAndAsyncNode(Runnable[Any, Any]):
    """A graph node `(state, runtime) -> update` with a body for each call style: `graph.invoke` runs
    `func`, `graph.ainvoke` (and the server) awaits `afunc`, so an async run never holds a thread per
    question. Both get LangGraph's `Runtime` of the run, as a plain function node with a `runtime`
    parameter does.

    A plain function given to `add_node` has only one style (LangGraph runs a sync one in a thread
    for `ainvoke`); langchain's `RunnableLambda` takes both but inspects both signatures on every
    call and traces each node a second time, inside the run LangGraph already makes for the node.
    LangGraph runs a node in that run's config context, so `get_runtime()` and the callbacks work
    inside the bodies as in any node."""

    def __init__(
        self, name: str, func: Callable[[Any, Runtime[Any]], Any], afunc: Callable[[Any, Runtime[Any]], Any]
    ) -> None:
        self.name, self.func, self.afunc = name, func, afunc

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.func(input, get_runtime())

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self.afunc(input, get_runtime())


#: Runs whose later nodes' settings are remembered (more than run at once in `reflexion eval`).
SETTINGS_KEPT = 256


class LoopNodes:
    """The nodes of one agent's loop."""

    def __init__(self, parts: LoopParts) -> None:
        self.parts = parts
        #: Settings of the later nodes of recent runs, by (what the run stored, this invocation's context):
        #: both are the same objects at every node of a run, and the settings a pure function of them.
        self._later_settings: dict[tuple[int, int], tuple[Any, Any, RunSettings]] = {}
        self._later_settings_lock = threading.Lock()  # runs in several threads share an agent

    def prompt_view(self, state: ReflexionState) -> list[BaseMessage]:
        """The memory as the model sees it: older tool results shortened when `tool_results_in_prompt` is set."""
        return prompt_messages(state["messages"], self.parts.tool_results_in_prompt)

    def asked(
        self, state: ReflexionState, run: RunSettings
    ) -> tuple[dict[str, Any], ReflexionState, dict[str, Any] | None]:
        """(the question update, the state the draft sees, or the update that ends the run before the
        draft: no question, or a tool that cannot be reached).

        A run started with messages only (LangGraph server, Studio, `graph.invoke`) asks its last user
        message; one started with `question` alone (a client's `{"question": ...}`) has it enter the
        memory. A user message is this run's only if no run took it before (`asked_id`): a run that
        paused or was cut off leaves its own question last, and must not answer it again."""
        messages = state.get("messages") or []
        question = (state.get("question") or "").strip()
        asked: dict[str, Any] = {}
        last = new_user_message(state)
        before = messages[:-1] if last is not None else messages
        message: BaseMessage | None = last
        if last is not None and last.content != self.parts.question_message(question).content:
            question = last.text.strip()  # a user message, not shaped as `execute` shapes its own
            asked["question"] = question
            message = self.parts.question_message(question)
            message.id = last.id  # replaces the raw message in the memory
        elif last is None and question:
            message = self.parts.question_message(question)
            message.id = str(uuid.uuid4())
        memory: list[BaseMessage] = list(messages)
        if message is not None:
            written: list[BaseMessage] = [] if message is last else [message]
            abandoned = stopped_tool_message(before, "a new question came first")
            if abandoned is not None:  # the run before paused on a tool call and was left: answer it first
                message = message.model_copy(update={"id": str(uuid.uuid4())})
                written = [*([RemoveMessage(id=last.id)] if last is not None and last.id else []), abandoned, message]
            asked["asked_id"] = message.id
            if written:
                asked["messages"] = written
            memory = [*before, *([abandoned] if abandoned is not None else []), message]
        state = {**state, **asked, "messages": memory}  # type: ignore[typeddict-item]
        if not (state.get("question") or "").strip():
            error = "the run has no question: send a non-empty user message"
            return asked, state, {**asked, **fresh_run(), "stop_reason": "invalid_input", "error": error}
        try:
            self.parts.tool_ready(state, run)
        except DatabaseUnavailableError as e:
            return asked, state, {**asked, **fresh_run(), "stop_reason": "tool_unavailable", "error": str(e)}
        return asked, state, None

    def drafted(self, asked: dict[str, Any], reply: ResponderReply) -> dict[str, Any]:
        update = draft_update(reply, self.parts.action_of)
        if asked:
            update = {**asked, **update, "messages": [*asked.get("messages", []), *update.get("messages", [])]}
        return update

    def draft(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        asked, state, ended = self.asked(state, run)
        if ended is not None:
            return ended
        responder = self.parts.responder("draft", state.get("prompt"), run)
        return self.drafted(asked, respond_with(responder, self.prompt_view(state)))

    async def aresponder(self, turn: Turn, prompt: str | None, run: RunSettings) -> Any:
        """This turn's responder, built in a worker thread unless the agent says building it is quick."""
        if self.parts.responder_ready(turn, prompt, run):
            return self.parts.responder(turn, prompt, run)
        return await asyncio.to_thread(self.parts.responder, turn, prompt, run)

    async def adraft(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        # Checking the tool may read the database: off the event loop, unless it reads nothing this time.
        if self.parts.tool_ready_quick(state, run):
            asked, state, ended = self.asked(state, run)
        else:
            asked, state, ended = await asyncio.to_thread(self.asked, state, run)
        if ended is not None:
            return ended
        responder = await self.aresponder("draft", state.get("prompt"), run)
        return self.drafted(asked, await arespond_with(responder, self.prompt_view(state)))

    def revise(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        reply = respond_with(self.parts.responder("revise", state.get("prompt"), run), self.prompt_view(state))
        return self.parts.revised(state, reply, run)

    async def arevise(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        responder = await self.aresponder("revise", state.get("prompt"), run)
        return self.parts.revised(state, await arespond_with(responder, self.prompt_view(state)), run)

    def execute_tool(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        skipped = self.parts.skipped(state)
        if skipped is not None:
            return tool_update(state, with_notice(skipped, state.get("notice")))
        try:
            tool_run = self.parts.run_tool(state, run)
        except DatabaseUnavailableError as e:
            return tool_update(state, unavailable_tool_run(state, e), stop_reason="tool_unavailable")
        update = tool_update(state, with_notice(tool_run, state.get("notice")))
        update["stop_reason"] = self.parts.stop_after_tool(state_after(state, update), run)
        return update

    async def aexecute_tool(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        return await asyncio.to_thread(self.execute_tool, state, run)

    def reply(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        """The answer message and output fields, from the same typed result `execute` returns. A
        revision whose tool call nothing answered (a route of a user's own that ended the run with no
        stop reason) is answered first, so the memory stays a tool conversation a thread can go on with."""
        update = reply_update(self.parts.result_of(state), state.get("stop_reason"))
        reason = state.get("stop_reason")
        unanswered = stopped_tool_message(
            state.get("messages") or [], f"the loop stopped ({reason or 'its route ended it'})"
        )
        if unanswered is not None:
            update["messages"] = [unanswered, *update["messages"]]
        return update

    async def areply(self, state: ReflexionState, run: RunSettings) -> dict[str, Any]:
        # a result of the user's own may read anything: keep it off the event loop
        if not self.parts.result_blocks:
            return self.reply(state, run)
        return await asyncio.to_thread(self.reply, state, run)

    @staticmethod
    def route_after_draft(state: ReflexionState) -> Literal["execute_tool", "__end__"]:
        """Only a draft the model could not produce (or a run with no question) ends the run here."""
        return "__end__" if state.get("stop_reason") else "execute_tool"

    @staticmethod
    def route_after_execute_tool(state: ReflexionState) -> Literal["revise", "__end__"]:
        return "__end__" if state.get("stop_reason") else "revise"

    def settings(self, state: ReflexionState, runtime: Runtime[Any], starts: bool) -> RunSettings:
        """This node's run settings: at the first node, those the run starts with (kept in the state,
        so a resumed run keeps its settings and limits whoever resumes it: `nodes.run_limits`);
        later, those it started with under what this invocation's context lowers."""
        parts, stored, given = self.parts, state.get("run_context"), runtime.context
        if starts:
            return run_settings(stored, given, schema=parts.context_schema, limits=parts.limits, graph=parts.name)
        key = (id(stored), id(given))
        hit = self._later_settings.get(key)
        if hit is not None and hit[0] is stored and hit[1] is given:  # the ids were not reused
            return hit[2]
        run = run_settings(stored, given, schema=parts.context_schema, limits=parts.limits)
        with self._later_settings_lock:
            while len(self._later_settings) >= SETTINGS_KEPT:  # the oldest run's first
                del self._later_settings[next(iter(self._later_settings))]
            self._later_settings[key] = (stored, given, run)
        return run

    def in_run(
        self, name: str, node: NodeBody, anode: NodeBody, choose: Callable[[Any], Any] | None = None
    ) -> SyncAndAsyncNode:
        """The node `name` as a graph node `(state, runtime)`: its body gets the run's settings, and the
        run's first node keeps them in the state. With `choose` (a pure route, `labelled_routes.chooser`),
        the node routes itself: `Command(update, goto=choose(the state its update makes))`. A
        conditional edge would do the same, but LangGraph copies every channel of the state to show
        its router the state (`local_read`), at every step."""
        starts = name == "draft"

        def finished(state: ReflexionState, update: dict[str, Any], run: RunSettings) -> Any:
            update = changes_only(state, {**update, "run_context": run.started} if starts else update)
            return update if choose is None else Command(update=update, goto=choose(state_after(state, update)))

        def sync(state: ReflexionState, runtime: Runtime[Any]) -> Any:
            run = self.settings(state, runtime, starts)
            return finished(state, node(state, run), run)

        async def asynchronous(state: ReflexionState, runtime: Runtime[Any]) -> Any:
            run = self.settings(state, runtime, starts)
            return finished(state, await anode(state, run), run)

        return SyncAndAsyncNode(name, sync, asynchronous)

    def builder(self) -> StateGraph[Any, Any, Any, Any]:
        """The loop's graph, not yet compiled: the agent's schemas, its nodes and their labelled routes."""
        parts = self.parts
        builder: StateGraph[Any, Any, Any, Any] = StateGraph(
            parts.state_schema,
            context_schema=parts.context_schema,
            input_schema=parts.input_schema,
            output_schema=parts.output_schema,
        )
        labels = parts.labels
        for name, body, abody, route, onward in (
            ("draft", self.draft, self.adraft, self.route_after_draft, "execute_tool"),
            ("execute_tool", self.execute_tool, self.aexecute_tool, self.route_after_execute_tool, "revise"),
            ("revise", self.revise, self.arevise, parts.route_after_revise, "execute_tool"),
        ):
            go_on, stop = labels[name]
            exits = {onward: (go_on, onward), END: (stop, REPLY_NODE)}
            node = self.in_run(name, body, abody, chooser(route, exits))
            builder.add_node(name, node, destinations=destinations_of(exits))
        builder.add_node(REPLY_NODE, self.in_run(REPLY_NODE, self.reply, self.areply))
        builder.add_edge(START, "draft")
        builder.add_edge(REPLY_NODE, END)
        return builder


def built_in_hooks(agent: Any, *names: str) -> bool:
    """Whether these hooks of `agent` are this package's own: not replaced on the instance, nor
    overridden by a class of the user's (whose hook may read a file or a database, so an async run
    calls it in a worker thread). Asked at every step: what the class says is found once."""
    instance = vars(agent)
    if any(name in instance for name in names):
        return False
    key = (type(agent), names)
    if key not in _CLASS_HOOKS_BUILT_IN:
        package = __package__.rpartition(".")[0] if __package__ else ""
        owners = (next(c for c in type(agent).__mro__ if name in vars(c)) for name in names)
        _CLASS_HOOKS_BUILT_IN[key] = all(owner.__module__.startswith(f"{package}.") for owner in owners)
    return _CLASS_HOOKS_BUILT_IN[key]


#: By (an agent's class, hook names): whether a class of this package defines each of them.
_CLASS_HOOKS_BUILT_IN: dict[tuple[type, tuple[str, ...]], bool] = {}


def build_loop_graph(parts: LoopParts, checkpointer: Any = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The loop of `parts`, compiled: nodes run sync under `invoke` and async under `ainvoke`. Any caller
    (a notebook, LangGraph server) gets a recursion limit that fits any step limit a run may ask for."""
    compiled = LoopNodes(parts).builder().compile(checkpointer=checkpointer, name=parts.name)
    return compiled.with_config(recursion_limit=parts.recursion_limit())
