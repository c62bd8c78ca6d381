"""Tools from plain Python functions (type hints and docstring become the schema the model sees) or
LangChain tools (`@tool`, `StructuredTool`, any `BaseTool`, used with their own schema).

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
from langchain_core.utils.function_calling import convert_to_openai_tool

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


JSON_TYPES = {
    "integer": "int",
    "number": "float",
    "string": "str",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}


def offered_parameters(tool: BaseTool) -> dict[str, Any]:
    """A LangChain tool's parameters as the model is offered them (`bind_tools` sends this schema): a
    `Tool` without an argument schema takes one string, named `__arg1` there."""
    parameters = convert_to_openai_tool(tool)["function"].get("parameters") or {}
    properties: dict[str, Any] = parameters.get("properties") or {}
    return properties


def schema_signature(properties: dict[str, Any]) -> str:
    """A call signature read from a tool's offered parameters: `(a: int, b: int = 2)`."""
    parts = []
    for name, spec in properties.items():
        kind = JSON_TYPES.get(str(spec.get("type")), "Any") if isinstance(spec, dict) else "Any"
        default = f" = {spec['default']!r}" if isinstance(spec, dict) and "default" in spec else ""
        parts.append(f"{name}: {kind}{default}")
    return f"({', '.join(parts)})"


class FunctionTool:
    """One tool offered to the model: a plain function, or a LangChain tool (`@tool`, `StructuredTool`,
    any `BaseTool`) used as it is."""

    def __init__(
        self, func: Callable[..., Any] | BaseTool, *, name: str | None = None, description: str | None = None
    ) -> None:
        if isinstance(func, BaseTool):
            self._from_langchain(func, name, description)
            return
        if not callable(func):
            raise ConfigurationError(f"a tool must be a function or a LangChain tool, got {type(func).__name__}")
        if inspect.iscoroutinefunction(func):
            raise ConfigurationError(f"tool {func.__name__!r} is async; pass a plain (sync) function")
        self.name = name or func.__name__
        try:
            signature = inspect.signature(func, eval_str=True)
        except (NameError, TypeError):  # a hint that cannot be resolved: show it as written
            signature = inspect.signature(func)
        self.signature = str(signature)
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
            p.name for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def _from_langchain(self, tool: BaseTool, name: str | None, description: str | None) -> None:
        """A LangChain tool: its name, description and argument schema are the model's to see, and its own
        `invoke` runs it (its `handle_tool_error` applies). One that only runs async is refused: the tool
        step runs sync in a worker thread."""
        if isinstance(tool, StructuredTool) and tool.func is None:
            raise ConfigurationError(f"tool {tool.name!r} has only an async body; give it a sync one too")
        renamed = {"name": name} if name and name != tool.name else {}
        described = {"description": description} if description else {}
        if renamed or described:  # what the model is offered, natively or in the text prompt
            tool = tool.model_copy(update={**renamed, **described})
        self.tool, self.name = tool, tool.name
        self.description = " ".join((tool.description or tool.name).split())
        offered = offered_parameters(tool)
        self.signature = schema_signature(offered)
        self.parameters = list(offered)

    def describe(self) -> str:
        """How the tool is listed in a text prompt: its call signature and what it does."""
        return f"{self.name}{self.signature}\n{self.description}"

    def arguments(self, positional: Sequence[Any], named: dict[str, Any]) -> dict[str, Any]:
        """Positional and named arguments as one mapping of parameter names."""
        names = self.parameters
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
        """Validate `args` against the schema and call the tool; its exceptions propagate. A LangChain
        tool's `ToolMessage` or content-and-artifact reply gives its content."""
        result = self.tool.invoke(args)
        return getattr(result, "content", result)


def function_tools(tools: Sequence[Callable[..., Any] | BaseTool | FunctionTool]) -> dict[str, FunctionTool]:
    """The tools by name; two tools with one name are a configuration error."""
    by_name: dict[str, FunctionTool] = {}
    for tool in tools:
        wrapped = tool if isinstance(tool, FunctionTool) else FunctionTool(tool)
        if wrapped.name in by_name:
            raise ConfigurationError(f"two tools are named {wrapped.name!r}")
        by_name[wrapped.name] = wrapped
    return by_name
