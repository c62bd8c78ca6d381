"""What crosses the wire to and from a chat model, made safe at both ends.

Two kinds of reply get past a chat client's JSON parsing yet break what comes after:

- A lone surrogate (`"\\ud800"`) is valid JSON and arrives as such in a Python string, but
  UTF-8 cannot encode it: every later request holding it in the memory would fail in
  the client, so `sendable` shows the model U+FFFD where it wrote one. (Queries holding
  one are refused by `nodes.graphdb.cypher_text.refuse_unsendable`, with the reason.)
- Tool-call arguments that are JSON but not an object (`1`, `"text"`, `[1]`) make
  `langchain-openai` raise a pydantic error instead of returning the reply, so the
  responders would end the run after one request, where malformed JSON gets a
  corrective retry. `reply_from_client_error` turns that error back into the reply
  it stands for: an `AIMessage` whose tool calls are invalid, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import weakref
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import invalid_tool_call
from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_MESSAGE_FIELDS = ("content", "name", "tool_calls", "invalid_tool_calls", "additional_kwargs")
# Deeper than any schema a model fills: arguments nested past it are refused, not walked.
MAX_ARGUMENT_DEPTH = 64
_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}


def _strings(value: Any) -> Iterator[str]:
    """Every string in `value` (keys too), walked without recursion: a reply may nest its
    arguments thousands of levels deep, past Python's recursion limit."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _dirty(value: Any) -> bool:
    return any(LONE_SURROGATE.search(text) for text in _strings(value))


def _clean_leaf(value: Any) -> Any:
    return LONE_SURROGATE.sub(REPLACEMENT, value) if isinstance(value, str) else value


def _clean(value: Any) -> Any:
    """A copy of `value` with every lone surrogate replaced, built without recursion."""
    if not isinstance(value, (dict, list, tuple)):
        return _clean_leaf(value)
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, copy = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            child: Any = item
            if isinstance(item, (dict, list, tuple)):
                child = {} if isinstance(item, dict) else []
                stack.append((item, child))
            else:
                child = _clean_leaf(item)
            if isinstance(copy, dict):
                copy[_clean_leaf(key)] = child
            else:
                copy.append(child)
    return root


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply `value` nests objects and arrays, counted up to `limit` (then `limit` + 1)."""
    stack = [(value, 0)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            depth += 1
            if depth > limit:
                return limit + 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, as a plain `str`."""
    return LONE_SURROGATE.sub(REPLACEMENT, str(text))


# Messages already found clean, by identity: a run resends its whole memory on every call, and
# checking it all again each time grew with the square of the steps (a 1000-step run: 35 s).
_clean_messages: weakref.WeakValueDictionary[int, BaseMessage] = weakref.WeakValueDictionary()


def _encodes(message: BaseMessage) -> bool:
    """True when every field a client sends from encodes as UTF-8 (no lone surrogate anywhere).
    Messages are not changed once made, so one that passed once passes again."""
    if _clean_messages.get(id(message)) is message:
        return True
    # text fields at C speed (a tool result's rows are most of what a run sends); the rest as JSON
    fields = [getattr(message, f, None) for f in _MESSAGE_FIELDS]
    nested = [f for f in fields if f and not (isinstance(f, str) and (f.isascii() or not LONE_SURROGATE.search(f)))]
    try:
        if nested:
            json.dumps(nested, ensure_ascii=False, default=str).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):  # a field nested too deep is checked the slow way
        return False
    _clean_messages[id(message)] = message
    return True


def sendable(messages: list[BaseMessage]) -> list[BaseMessage]:
    """`messages` as a client can encode them: a message holding a lone surrogate anywhere it is
    sent from is copied with U+FFFD in its place; the others are passed on as they are."""
    out = []
    for message in messages:
        if _encodes(message):  # the common case, checked at C speed: a long run resends many messages
            out.append(message)
            continue
        dirty = [f for f in _MESSAGE_FIELDS if _dirty(getattr(message, f, None))]
        if dirty:
            message = message.model_copy(update={f: _clean(getattr(message, f)) for f in dirty})
        out.append(message)
    return out


def not_an_object(raw: Any) -> str | None:
    """Why tool-call arguments `raw` (their JSON text) are unusable when they are JSON but not an
    object, or nested too deep to read, said so the model can fix them; None for an object, or
    for text that is not JSON."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    except RecursionError:  # JSON nested past what the parser follows (about a thousand levels)
        return f"the tool call arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    if not isinstance(raw, str) or isinstance(value, dict):
        return None
    kind = _JSON_TYPES.get(type(value), "a value")
    return f"the tool call arguments are {raw.strip()[:200]} ({kind}), not a JSON object of named arguments"


def shown_calls(calls: list[Any]) -> str:
    """Tool calls as JSON text for a corrective message, even when nested too deep to encode."""
    try:
        return json.dumps(calls, default=str)
    except (RecursionError, ValueError):
        return "(tool calls nested too deep to show)"


# More tokens than any model call spends: a count above it is the provider's mistake, not usage.
MAX_TOKEN_COUNT = 10**9
_COUNTS = ("input_tokens", "output_tokens", "total_tokens")
_USAGE = TypeAdapter(UsageMetadata)


def token_count(value: Any) -> int:
    """A token count as the provider reported it, made usable: a whole number in
    [0, MAX_TOKEN_COUNT]. A reply whose usage says `"many"`, `-5`, `1e300` or `null` must not
    end the run that received it, nor poison the totals, so such a count is taken as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if value != value or value < 0 or value > MAX_TOKEN_COUNT:  # NaN, negative, absurd
        return 0
    return int(value)


def usable_reply(reply: Any) -> Any:
    """`reply` with token counts a message can be rebuilt from. Chat clients pass the provider's
    usage on unchecked, so a reply saying `"prompt_tokens": "many"` arrives whole, and copying it
    into the memory (which validates) would then fail; its counts are read with `token_count`."""
    meta = getattr(reply, "usage_metadata", None)
    if not isinstance(reply, AIMessage) or meta is None:
        return reply
    if isinstance(meta, dict) and all(token_count(meta.get(k)) == meta.get(k) for k in _COUNTS):
        try:
            _USAGE.validate_python(meta)  # the details too (cached, reasoning tokens), as AIMessage checks them
            return reply
        except ValidationError:
            pass
    counts = {k: token_count(meta.get(k)) for k in _COUNTS} if isinstance(meta, dict) else dict.fromkeys(_COUNTS, 0)
    return reply.model_copy(update={"usage_metadata": counts})


def _is_arguments_error(error: ErrorDetails) -> bool:
    loc = tuple(error.get("loc") or ())
    return len(loc) == 3 and loc[0] == "tool_calls" and loc[2] == "args"


def reply_from_client_error(error: BaseException) -> AIMessage | None:
    """The reply behind a client's refusal to build it because tool-call arguments are not a JSON
    object, as an `AIMessage` with those calls invalid (their names and ids are lost with the
    message); None for any other error, which stays a failed call."""
    if not isinstance(error, ValidationError) or error.title != "AIMessage":
        return None
    errors = error.errors()
    if not errors or not all(_is_arguments_error(e) for e in errors):
        return None
    calls = []
    for e in errors:
        shown = json.dumps(e.get("input"), default=str)
        calls.append(invalid_tool_call(name=None, args=shown, id=None, error=not_an_object(shown)))
    return AIMessage(content="", invalid_tool_calls=calls)


#: Errors that say the model's server could not be reached (the OpenAI client's, httpx's, the OS's).
_UNREACHABLE = {"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ConnectionError"}
_ENDPOINT_FIELDS = ("openai_api_base", "base_url", "api_base", "anthropic_api_url", "endpoint")


def model_endpoint(model: Any) -> str | None:
    """The address a chat model (or a binding of one) sends its calls to, when it says."""
    while hasattr(model, "bound"):
        model = model.bound
    for field in _ENDPOINT_FIELDS:
        value = getattr(model, field, None)
        if isinstance(value, str) and value:
            return value
    if "OpenAI" in type(model).__name__:  # no base URL set: the client's own default applies
        return os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    return None


def model_call_failure(error: BaseException, model: Any) -> str:
    """What a failed model call is reported as: the client's error, and, when the server could not
    be reached, which address was tried (a client's "Connection error." alone does not say)."""
    text = f"the model call failed: {type(error).__name__}: {error}"
    chain: BaseException | None = error
    seen: set[int] = set()
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        if type(chain).__name__ in _UNREACHABLE or isinstance(chain, ConnectionError):
            where = model_endpoint(model)
            return f"{text} (no answer from {where}; check OPENAI_BASE_URL or the model's base_url)" if where else text
        chain = chain.__cause__ or chain.__context__
    return text
