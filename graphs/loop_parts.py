"""What an agent's loop is made of, as plain functions: the one thing `build_loop_graph` takes.

LangGraph's own agents are a function that takes a model and tools and returns a compiled graph of
node functions. The loop is built the same way: `build_loop_graph(parts)` wires the four nodes
(`graphs.loop_nodes`) over the functions in `LoopParts`, and knows nothing of classes. The knowledge-
graph agent's parts are made by `graphs.kg_query_graph.kg_query_parts` from a model and a database;
the agent classes (biochatter's `ReflexionAgent` and `KGQueryReflexionAgent`, the ReAct and
extraction agents) hand their hooks over as these functions.

Every function that takes part in a run gets the run's settings (`run`, `nodes.run_settings`);
none reads anything else that changes per run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

from reflexion_agents.nodes.common.responder import ResponderReply
from reflexion_agents.nodes.run_settings import LimitsRule, RunSettings
from reflexion_agents.schemas.reflexion import ToolRun

Turn = Literal["draft", "revise"]
State = Mapping[str, Any]
Route = Callable[[Any], Any]


def question_message(question: str) -> HumanMessage:
    """How a question enters the memory, unless an agent says otherwise."""
    return HumanMessage(content=question)


def nothing_skipped(state: State) -> ToolRun | None:
    return None


def no_stop_after_tool(state: State, run: RunSettings) -> str | None:
    return None


def always_ready(state: State, run: RunSettings) -> None:
    """A tool that needs no check before the first model call."""


def checked_in_thread(state: State, run: RunSettings) -> bool:
    """The tool's check may read anything (a database, a file): an async run makes it in a thread."""
    return False


def built_in_thread(turn: Turn, prompt: str | None, run: RunSettings) -> bool:
    """Building a responder may read anything (a database, a file): an async run does it in a thread."""
    return False


def route_on_stop(state: Any) -> Literal["execute_tool", "__end__"]:
    """Run the pending action, or end once a stop reason is set."""
    return "__end__" if state.get("stop_reason") else "execute_tool"


@dataclass(frozen=True)
class LoopParts:
    """An agent's loop: its name and schemas, how each turn is answered, what the tool step runs, when
    the run stops and what it returns."""

    name: str
    state_schema: type
    context_schema: type[BaseModel]
    input_schema: type
    output_schema: type
    #: The limits in force in a run (`nodes.run_settings.LimitsRule`): the agent's, lowered by the run.
    limits: LimitsRule
    #: The responder answering a turn (anything with `respond`/`arespond`).
    responder: Callable[[Turn, str | None, RunSettings], Any]
    #: The action a parsed draft or revision proposes, as the text the tool step runs.
    action_of: Callable[[BaseModel], str]
    #: Run the pending action.
    run_tool: Callable[[Any, RunSettings], ToolRun]
    #: The state update of a revise turn, with the stop reason it ends the run with, if any.
    revised: Callable[[Any, ResponderReply, RunSettings], dict[str, Any]]
    #: The typed result of a finished run, read from the state.
    result_of: Callable[[Any], Any]
    #: What the drawing writes on each node's two exits: (going on, stopping).
    labels: Mapping[str, tuple[str, str]]
    #: The highest step limit a run may ask for; the compiled graph's recursion limit fits it.
    max_steps_ceiling: int
    question_message: Callable[[str], BaseMessage] = question_message
    #: Raise `DatabaseUnavailableError` when the tool cannot be reached (before any model call).
    tool_ready: Callable[[Any, RunSettings], None] = always_ready
    #: Whether `tool_ready` reads nothing this time (what it checks is known already): an async run
    #: then checks on the event loop instead of in a worker thread.
    tool_ready_quick: Callable[[Any, RunSettings], bool] = checked_in_thread
    #: Whether building a turn's responder is quick (nothing to read): an async run then builds it on
    #: the event loop instead of in a worker thread.
    responder_ready: Callable[[Turn, str | None, RunSettings], bool] = built_in_thread
    #: A tool step that runs nothing (the action already ran), or None to run the action.
    skipped: Callable[[Any], ToolRun | None] = nothing_skipped
    #: A stop reason checked as soon as the tool ran, before the model is called again.
    stop_after_tool: Callable[[Any, RunSettings], str | None] = no_stop_after_tool
    #: After a revision: run the revised action, or end (the route reads the state only).
    route_after_revise: Route = route_on_stop
    #: Whether `result_of` may block (a user's own may read anything): async runs call it in a thread.
    result_blocks: bool = False
    #: Newest tool results the model sees whole, older ones without their rows (None: all whole).
    tool_results_in_prompt: int | None = None

    def recursion_limit(self, steps: int | None = None) -> int:
        return loop_recursion_limit(self.max_steps_ceiling, steps)


def loop_recursion_limit(max_steps_ceiling: int, steps: int | None = None) -> int:
    """LangGraph's recursion limit for a loop: each step is execute_tool + revise; the draft and a
    margin come on top. A resumed run may have recorded more steps than the ceiling: its limit is the
    run's (`steps`)."""
    return 2 * max(max_steps_ceiling, steps or 0) + 5
