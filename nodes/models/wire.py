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
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.tool import invalid_tool_call
from pydantic import ValidationError
from pydantic_core import ErrorDetails

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_MESSAGE_FIELDS = ("content", "name", "tool_calls", "invalid_tool_calls", "additional_kwargs")
_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}


def _dirty(value: Any) -> bool:
    if isinstance(value, str):
        return LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_dirty(k) or _dirty(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_dirty(v) for v in value)
    return False


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


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
    fields = [getattr(message, f, None) for f in _MESSAGE_FIELDS]
    try:
        json.dumps(fields, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
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
    object, said so the model can fix them; None for an object, or for text that is not JSON."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    if not isinstance(raw, str) or isinstance(value, dict):
        return None
    kind = _JSON_TYPES.get(type(value), "a value")
    return f"the tool call arguments are {raw.strip()[:200]} ({kind}), not a JSON object of named arguments"


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
