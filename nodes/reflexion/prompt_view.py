"""What the model is shown of the memory: every message, with the rows of older results left out.

The memory grows by a draft or revision and a tool result at every step, and each prompt carries
it all; rows of results the loop has moved past cost tokens on every later call without helping
the model judge the newest one (benchmarks/prompt_growth.py). Within the current question, the
last `keep` results that returned rows stay whole; older ones keep their notes, their row count
and columns (the `Result:` line, however many lines the query before it spans) and lose their
rows. Errors, skipped repeats, stop notes and earlier questions' answers keep their rows. Every
result, the newest and errors included, loses its `Query:` line when the tool call it answers
proposed that very query: the model sees it there, right before the result, so the line only
repeats it (a query the check repaired or a reviewer replaced differs from the call's, and stays).
A tool call is shown without its empty arguments (a draft's `reflection: ""`, `search_queries: []`):
an argument left out reads the same, and every later call resends it. The memory keeps every field
of the parsed reply (biochatter's hooks read them).
Only the prompt is trimmed: the memory, the outcomes and the checkpoints keep every row.

`judges_error` tells whether the newest result is a database error, for prompts that depend on it
(the knowledge-graph agent's revision is sent the dialect notes only then).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from reflexion_agents.nodes.reflexion.steps import action_from_args

RESULT_LINE = "Result: "  # see nodes.tools.cypher.describe_result
QUERY_LINE = "Query: "


def _artifact(message: ToolMessage) -> dict[str, Any]:
    """The outcome facts a tool result's message carries (`steps.message_artifact`): `rows` is a count
    there, a list in a hook's own message."""
    artifact = message.artifact
    if isinstance(artifact, BaseModel):
        return artifact.model_dump()
    return artifact if isinstance(artifact, dict) else {}


def _rows_start(message: BaseMessage) -> int | None:
    """The line where a result's rows begin, or None when the message is not a result with rows."""
    if not isinstance(message, ToolMessage):
        return None
    outcome = _artifact(message)
    if not outcome.get("executed") or outcome.get("error") or not outcome.get("rows"):
        return None
    lines = str(message.content).split("\n")
    header = next((i for i, line in enumerate(lines) if line.startswith(RESULT_LINE)), None)
    return header + 1 if header is not None and header + 1 < len(lines) else None


def _call_texts(messages: Sequence[BaseMessage]) -> dict[str, set[str]]:
    """The action every tool call in `messages` proposes (a revision's revised query, not the query it
    judged), by call id: the text a result's `Query:` line repeats when it ran as proposed."""
    return {
        str(call.get("id")): {action_from_args(call.get("args") or {}).strip()} - {""}
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
    }


#: Shortened copies already made, by the original's identity (the original is kept with its copy,
#: so an id is never reused while cached): each call of a run shortens the same old results, and
#: the same copy lets the client-side checks that remember messages by identity (`sendable`) skip it.
SHORTENED_KEPT = 256
_shortened_copies: OrderedDict[tuple[int, int, bool], tuple[BaseMessage, BaseMessage]] = OrderedDict()
_shortened_lock = threading.Lock()
M = TypeVar("M", bound=BaseMessage)


def _copy_of(message: M, kind: tuple[int, bool], make: Callable[[], M]) -> M:
    """The shortened copy of `message` made by `make`, once per message and kind of shortening."""
    key = (id(message), *kind)
    with _shortened_lock:
        kept = _shortened_copies.get(key)
        if kept is not None and kept[0] is message:
            _shortened_copies.move_to_end(key)
            return cast(M, kept[1])
    copy = make()
    with _shortened_lock:
        _shortened_copies[key] = (message, copy)
        while len(_shortened_copies) > SHORTENED_KEPT:
            _shortened_copies.popitem(last=False)
    return copy


def _shortened(message: ToolMessage, rows_start: int, called_with: set[str]) -> ToolMessage:
    """The result without its rows, and without its `Query:` lines when the call it answers shows that
    very query (the line repeats it): its notes, row count and columns stay."""
    lines = str(message.content).split("\n")
    header = lines[: rows_start - 1]
    query_at = next((i for i, line in enumerate(header) if line.startswith(QUERY_LINE)), None)
    drop_query = query_at is not None and "\n".join(header[query_at:])[len(QUERY_LINE) :].strip() in called_with
    if drop_query:
        header = header[:query_at]
    note = f"[{len(lines) - rows_start} rows not repeated]"
    content = [*header, lines[rows_start - 1], note]  # joined only when no copy is kept yet
    return _copy_of(
        message, (rows_start, drop_query), lambda: message.model_copy(update={"content": "\n".join(content)})
    )


def prompt_messages(messages: Sequence[BaseMessage], keep_tool_results: int | None) -> list[BaseMessage]:
    """`messages` with the rows of all but the last `keep_tool_results` results of the current
    question left out (None keeps every row), and no result repeating the query its call shows."""
    question = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    old: dict[int, int] = {}
    if keep_tool_results is not None:
        results = [(i, start) for i, m in enumerate(messages) if i > question and (start := _rows_start(m)) is not None]
        old = dict(results[: max(0, len(results) - keep_tool_results)])
    calls = _call_texts(messages) if any(isinstance(m, ToolMessage) for m in messages) else {}
    shown: list[BaseMessage] = []
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage) and m.tool_calls:
            m = _without_empty_arguments(m)
        elif isinstance(m, ToolMessage):
            called_with = calls.get(str(m.tool_call_id), set())
            m = _shortened(m, old[i], called_with) if i in old else _without_repeated_query(m, called_with)
        shown.append(m)
    return shown


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _without_empty_arguments(message: AIMessage) -> AIMessage:
    """The tool call without the arguments it left empty (a copy, kept like a shortened result)."""
    if not any(_empty(v) for call in message.tool_calls for v in (call.get("args") or {}).values()):
        return message

    def trimmed() -> AIMessage:
        calls = [
            {**c, "args": {k: v for k, v in (c.get("args") or {}).items() if not _empty(v)}} for c in message.tool_calls
        ]
        return message.model_copy(update={"tool_calls": calls})

    return _copy_of(message, (-2, False), trimmed)


def _without_repeated_query(message: ToolMessage, called_with: set[str]) -> ToolMessage:
    """The result without its `Query:` line when the call it answers shows that very query (a query the
    check repaired differs, and stays): the model reads it once, in its own call."""
    content = message.content
    if not isinstance(content, str) or QUERY_LINE not in content:
        return message
    repeated = next((f"{QUERY_LINE}{text}\n" for text in called_with if f"{QUERY_LINE}{text}\n" in content), None)
    if repeated is None:
        return message
    return _copy_of(
        message, (-1, True), lambda: message.model_copy(update={"content": content.replace(repeated, "", 1)})
    )


def judges_error(messages: Sequence[BaseMessage]) -> bool:
    """Whether the newest tool result in `messages` is a query the database refused or failed."""
    latest = next((m for m in reversed(messages) if isinstance(m, ToolMessage)), None)
    outcome = _artifact(latest) if latest is not None else {}
    return bool(outcome.get("executed") and outcome.get("error"))
