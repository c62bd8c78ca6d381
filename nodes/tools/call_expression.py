"""The JSON-in-text action format of ReAct: `{"thought": ..., "action": "fn(a=1, b=2)"}`.

The action is parsed with `ast` and its arguments read with `ast.literal_eval`,
so nothing the model writes is ever evaluated: a name, an attribute, a call
inside the arguments or `**kwargs` is refused with a message saying so.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

MAX_EXPRESSION_CHARS = 4000  # longer text is not a tool call; it would only cost parse time and memory


class CallExpressionError(ValueError):
    """The action is not a call of one tool with literal arguments."""


def parse_call_expression(expression: str) -> tuple[str, list[Any], dict[str, Any]]:
    """(tool name, positional arguments, keyword arguments) of `name(arg, key=value)`."""
    text = expression.strip()
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CallExpressionError(
            f"the action is {len(text)} characters long; a call is at most {MAX_EXPRESSION_CHARS}"
        )
    try:
        tree = ast.parse(text, mode="eval")
        call = tree.body
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            raise CallExpressionError(f"`{text[:200]}` is not a call of a tool by name, such as `add(a=1, b=2)`")
        args = [_literal(text, node) for node in call.args]
        kwargs: dict[str, Any] = {}
        for keyword in call.keywords:
            if keyword.arg is None:
                raise CallExpressionError("`**` arguments are not allowed; name each argument")
            kwargs[keyword.arg] = _literal(text, keyword.value)
    except SyntaxError as e:
        raise CallExpressionError(f"`{text[:200]}` is not a valid call expression ({e.msg})") from e
    except (RecursionError, MemoryError) as e:  # deeply nested input: refuse it, never crash the run
        raise CallExpressionError("the action is nested too deeply to be a tool call") from e
    return call.func.id, args, kwargs


def _literal(text: str, node: ast.expr) -> Any:
    if isinstance(node, ast.Starred):
        raise CallExpressionError("`*` arguments are not allowed; write each value")
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError) as e:
        shown = (ast.get_source_segment(text, node) or "?")[:200]
        raise CallExpressionError(
            f"the argument `{shown}` is not a literal value (a number, string, list or dict)"
        ) from e


def _value(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def render_call(name: str, args: list[Any] | tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> str:
    """The call expression for a tool call: `multiply(a=3, b=4)`."""
    parts = [_value(a) for a in args] + [f"{k}={_value(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


class FunctionExpression(BaseModel):
    """An example of a correct step, shown to the model: a thought and the call it leads to."""

    thought: str = ""
    action: str

    @classmethod
    def from_function(
        cls, func: Callable[..., Any], thought: str = "", *args: Any, **kwargs: Any
    ) -> FunctionExpression:
        """The example `func(*args, **kwargs)`, checked against the function's signature."""
        try:
            inspect.signature(func).bind(*args, **kwargs)
        except TypeError as e:
            raise CallExpressionError(f"the example does not fit {func.__name__}{inspect.signature(func)}: {e}") from e
        return cls(thought=thought, action=render_call(func.__name__, args, kwargs))
