"""The tool step of the tool-calling ReAct agent: run one function call and observe its result.

Anything that goes wrong in the call (unknown tool, arguments that do not fit,
the function raising) becomes an observation with the error text: the model
reads it and tries again, and the loop goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from pydantic import ValidationError

from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.nodes.tools.functions import FunctionTool, ToolArgumentsError
from reflexion_agents.schemas.react import ReActAction
from reflexion_agents.schemas.reflexion import TokenUsage, ToolOutcome, ToolRun

# A tool the agent answers itself (the LLM fallback): returns (observation, usage of its model calls).
SpecialTool = Callable[[dict[str, Any]], tuple[str, TokenUsage]]


def _validation_text(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors())


def _call(
    tool: FunctionTool, args: dict[str, Any], special: SpecialTool | None
) -> tuple[str, str | None, TokenUsage | None]:
    """(observation, error, usage) of running `tool` on `args`."""
    try:
        if special is not None:
            tool.tool.args_schema.model_validate(args)  # type: ignore[union-attr]
            text, usage = special(args)
            return text, None, usage
        return str(tool.run(args)), None, None
    except ValidationError as e:
        text = f"the arguments do not fit {tool.name}{tool.signature}: {_validation_text(e)}"
        return f"Error: {text}", text, None
    except Exception as e:
        text = f"{type(e).__name__}: {e}"
        return f"Error: {text}", text, None


def run_function_action(
    tools: Mapping[str, FunctionTool], action: ReActAction, special: Mapping[str, SpecialTool] | None = None
) -> ToolRun:
    """Run `action` with `tools`; `special` tools are answered by the agent itself."""
    usage: TokenUsage | None = None
    args: dict[str, Any] = dict(action.args)
    executed = False
    if action.tool is None:
        error = action.error
    elif action.tool not in tools:
        error = f"there is no tool named `{action.tool}`; the tools are {', '.join(tools)}"
    else:
        try:
            args = tools[action.tool].arguments(action.positional, action.args)
        except ToolArgumentsError as e:
            error = str(e)
        else:
            observation, error, usage = _call(tools[action.tool], args, (special or {}).get(action.tool))
            executed = True
    if not executed:
        observation = f"Error: {error}"
    # What the model and the user read is text: a lone surrogate (in a reply echoed back) shows as U+FFFD.
    observation = without_surrogates(observation)
    error = without_surrogates(error) if error is not None else None
    # A note (extra calls dropped) is for the model; it never becomes part of a result or an answer.
    shown = f"{observation}\n({action.note})" if action.note else observation
    outcome = ToolOutcome(
        step=0,
        action=action.action,
        executed=executed,
        non_empty=executed and error is None and bool(observation),
        content=observation,
        error=error,
        detail={"thought": action.thought, "tool": action.tool, "args": args},
    )
    if action.call_id:
        message: ToolMessage | HumanMessage = ToolMessage(content=shown, tool_call_id=action.call_id, name=action.tool)
    else:
        message = HumanMessage(content=f"Observation: {shown}")
    return ToolRun(message, outcome, usage=usage)
