"""Tools from plain Python functions: type hints and docstring become the schema the model sees.

LangChain's `StructuredTool` builds the schema and validates (and coerces) the
arguments; this wrapper adds what a ReAct loop needs: positional arguments mapped
to names, unknown argument names refused rather than silently dropped, and a
one-paragraph description for prompts of models without native tool calling.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from reflexion_agents.schemas.errors import ConfigurationError


def finish(answer: str) -> str:
    """Finish the task with answer."""
    if not answer.strip():  # the run would end "finished" with nothing to show: the model is told instead
        raise ValueError("the answer is empty: call finish with the answer itself")
    return answer


FINISH = "finish"
LLM_FALLBACK = "llm_tool"
LLM_FALLBACK_DESCRIPTION = (
    "I answer any input query with llm's world knowledge. Use me as a fallback tool or when the query is simple."
)


class ToolArgumentsError(ValueError):
    """The arguments do not fit the tool's parameters."""


class FunctionTool:
    """One plain function offered to the model as a tool."""

    def __init__(self, func: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> None:
        if not callable(func):
            raise ConfigurationError(f"a tool must be a function, got {type(func).__name__}")
        if inspect.iscoroutinefunction(func):
            raise ConfigurationError(f"tool {func.__name__!r} is async; pass a plain (sync) function")
        self.func = func
        self.name = name or func.__name__
        try:
            self.signature = inspect.signature(func, eval_str=True)
        except (NameError, TypeError):  # a hint that cannot be resolved: show it as written
            self.signature = inspect.signature(func)
        if description or not inspect.getdoc(func):
            # Without a docstring, the signature is the best description there is.
            self.tool: BaseTool = StructuredTool.from_function(
                func, name=self.name, description=description or f"{self.name}{self.signature}"
            )
        else:  # the summary describes the tool; an Args section (if any) describes each parameter
            self.tool = StructuredTool.from_function(
                func, name=self.name, parse_docstring=True, error_on_invalid_docstring=False
            )
        self.description = " ".join(self.tool.description.split())
        self.parameters = [
            p for p in self.signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def describe(self) -> str:
        """How the tool is listed in a text prompt: its call signature and what it does."""
        return f"{self.name}{self.signature}\n{self.description}"

    def arguments(self, positional: Sequence[Any], named: dict[str, Any]) -> dict[str, Any]:
        """Positional and named arguments as one mapping of parameter names."""
        names = [p.name for p in self.parameters]
        if len(positional) > len(names):
            raise ToolArgumentsError(
                f"{self.name} takes {len(names)} arguments ({', '.join(names)}), got {len(positional)} positional"
            )
        args = dict(zip(names, positional, strict=False))  # at most as many values as names: checked above
        for key, value in named.items():
            if key in args:
                raise ToolArgumentsError(f"{self.name} got two values for {key!r}")
            args[key] = value
        unknown = sorted(set(args) - set(names))
        if unknown:
            raise ToolArgumentsError(
                f"{self.name} has no parameter {', '.join(map(repr, unknown))}; its parameters are {', '.join(names)}"
            )
        return args

    def run(self, args: dict[str, Any]) -> Any:
        """Validate `args` against the schema and call the function; its exceptions propagate."""
        return self.tool.invoke(args)


def function_tools(tools: Sequence[Callable[..., Any] | FunctionTool]) -> dict[str, FunctionTool]:
    """The tools by name; two tools with one name are a configuration error."""
    by_name: dict[str, FunctionTool] = {}
    for tool in tools:
        wrapped = tool if isinstance(tool, FunctionTool) else FunctionTool(tool)
        if wrapped.name in by_name:
            raise ConfigurationError(f"two tools are named {wrapped.name!r}")
        by_name[wrapped.name] = wrapped
    return by_name
