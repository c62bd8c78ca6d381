"""What a `Runner` drives for an agent built on the loop (`graphs.runner.RunTarget`).

The agent says how a turn is answered; this says what the runner needs of any agent: its compiled
graph, the input a question makes, the recursion limit a step limit needs, the typed result of a
final state, and who hears of each step and of the result (the agent's `log_step` and
`_log_final_result` hooks when it has them, biochatter's names; else this module's logger at INFO).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langgraph.graph.state import CompiledStateGraph

from reflexion_agents.graphs.loop_nodes import build_loop_graph, built_in_hooks
from reflexion_agents.graphs.loop_parts import loop_recursion_limit
from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.schemas.errors import ConfigurationError

if TYPE_CHECKING:
    from reflexion_agents.graphs.loop import AgentLoop

logger = logging.getLogger("reflexion_agents.graphs.loop")


def compiled_loop(agent: AgentLoop[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent's state machine: its parts, built into a graph (`graphs.loop_nodes.build_loop_graph`)."""
    return build_loop_graph(agent.parts(), agent.checkpointer)


def question_input(agent: AgentLoop[Any], question: str, prompt: str | None = None) -> dict[str, Any]:
    """The graph's input for `question` (and a task prompt: the KG agent's kg_prompt)."""
    if not isinstance(question, str) or not question.strip():
        raise ConfigurationError("the question must be a non-empty string")
    question = question.strip()
    return {"messages": [agent._question_message(question)], "question": question, "prompt": prompt}


def log_step(step: int, node: str, output: BaseMessage | None) -> None:
    """A step, to this module's logger (a lone surrogate would make a UTF-8 handler print a traceback)."""
    if logger.isEnabledFor(logging.INFO):
        logger.info("step %d, %s: %s", step, node, without_surrogates(str(getattr(output, "content", output))))


def log_result(output: Any) -> None:
    if logger.isEnabledFor(logging.INFO):
        answer = getattr(output, "answer", getattr(output, "value", None))
        logger.info("final (%s): %s", output.stop_reason, without_surrogates(str(answer)))


class LoopTarget:
    """An agent, as its runner sees it."""

    def __init__(self, agent: AgentLoop[Any]) -> None:
        self.agent = agent

    @property
    def checkpointer(self) -> Any:
        return self.agent.checkpointer

    @property
    def context_schema(self) -> Any:
        return self.agent.context_schema

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        return self.agent.graph

    @property
    def graph_name(self) -> str:
        return self.agent.graph_name

    def question_input(self, question: str) -> dict[str, Any]:
        return question_input(self.agent, question)

    def recursion_limit(self, steps: int | None = None) -> int:
        """The run's recursion limit: the one the agent's graph was built with (from its step ceiling),
        or more for a resumed run that recorded more steps."""
        built = int(self.graph.config.get("recursion_limit") or 0) if self.graph.config else 0
        return max(built, loop_recursion_limit(0, steps))

    def result_of(self, state: dict[str, Any]) -> Any:
        return self.agent._parse_final_result(state)  # type: ignore[arg-type]

    def log_step(self, step: int, node: str, message: BaseMessage | None) -> None:
        """A `log_step` of the user's own, else biochatter's `_log_step_message`, else the logger."""
        hook = getattr(self.agent, "log_step", None) or getattr(self.agent, "_log_step_message", None)
        (hook or log_step)(step, node, message)

    def logs_steps(self) -> bool:
        """Whether anyone hears of each step (steps are streamed only then): biochatter's
        `agent_logger`, a `log_step` or `_log_step_message` of the user's own (a subclass's, or one set
        on the instance), or the logger at INFO."""
        own_hook = any(
            hasattr(self.agent, name) and not built_in_hooks(self.agent, name)
            for name in ("log_step", "_log_step_message")
        )
        return own_hook or getattr(self.agent, "agent_logger", None) is not None or logger.isEnabledFor(logging.INFO)

    def log_result(self, result: Any) -> None:
        hook = getattr(self.agent, "_log_final_result", None)
        (hook or log_result)(result)
