"""Seeded model replies, good and broken, for the reply fuzzer (`tests/test_reply_fuzz.py`).

`FuzzModel(seed)` answers OpenAI chat requests (through `tests/openai_stub.py`): for
each request it writes the reply a cooperative model would give for the tool it is
asked for, then, with some probability, breaks it in one of the ways real models
and proxies do (malformed or non-object arguments, wrong or missing fields, 1 MB
strings, control characters, lone surrogates, unreadable scores, text instead of a
tool call, empty replies, unknown tools). The choice depends only on the seed and
on the request's content, never on timing, so parallel requests (the planner's
sub-questions) get the same replies in every run of a seed: a failure reproduces.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.helpers import TOM_HANKS_QUERY
from tests.openai_stub import StubReply, tool_names

_CALL_ID = re.compile(r"call_[0-9a-f]{12}")
MATRIX_QUERY = "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p:Person) RETURN p.name AS director"
MEGABYTE = 1_000_000
SURROGATES = ("\ud800", "\udfff", "\udbff", "\udc00")
CONTROLS = ("\x00", "\x01", "\x08", "\x1b", "\x7f", "\x0b", "\u2028", "\u0085")
UNICODE = ("é", "漢字", "🙂", "\u200b", "\ufeff", "\u202e", "e\u0301")
# Scores as models write them, readable or not; raw JSON numbers JSON cannot hold go in as text.
SCORES: tuple[Any, ...] = (
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "8/0",
    "9/10",
    -1,
    11,
    1e308,
    [9],
    None,
    "nine",
    {"score": 9},
    True,
    "",
)
RAW_SCORES = ("NaN", "Infinity", "-Infinity", "1e309", "-1e309")
# Tool-call arguments that are JSON, but not an object (the client turns null, [], 0 and "" into {}).
NON_OBJECTS = (
    "1",
    '"text"',
    "null",
    "[]",
    "[1, 2]",
    "true",
    "0",
    "-3.5",
    '""',
    '["a"]',
    '"\\ud800"',
    "1e309",
    "NaN",
)
JUNK: tuple[Any, ...] = (
    None,
    0,
    -1,
    3.5,
    True,
    "",
    "text",
    [],
    [1, "a"],
    {},
    {"nested": [None]},
    "\ud800",
    10**30,
)
SUB_QUESTIONS = ["Which movies did Tom Hanks act in?", "Who directed The Matrix?"]


def _good_args(tool: str, request: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The arguments a cooperative model gives for `tool`."""
    query = rng.choice((TOM_HANKS_QUERY, MATRIX_QUERY))
    last = request["messages"][-1]
    return {
        "GenerateQuery": lambda: {"answer": query, "reflection": "draft", "search_queries": []},
        "ReviseQuery": lambda: {
            "answer": "",
            "reflection": "fine",
            "revised_query": query,
            "score": rng.choice((6, 9)),
        },
        "GuardrailDecision": lambda: {"answerable": True, "reason": "movies"},
        "CypherQuery": lambda: {"cypher": query},
        "Evaluation": lambda: {"ok": rng.random() < 0.7, "critique": "check the direction"},
        "Summary": lambda: {"answer": "Tom Hanks acted in Cast Away."},
        "SubQuestions": lambda: {"questions": rng.sample(SUB_QUESTIONS, k=rng.randint(1, 2))},
        "InformationCheck": lambda: {"enough": rng.random() < 0.7, "missing": ["Who directed The Matrix?"]},
        "CarCollection": lambda: {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]},
        "multiply": lambda: {"a": 6, "b": 7},
        "add": lambda: {"a": 40, "b": 2},
        "llm_tool": lambda: {"input": "What is the capital of France?"},
        "finish": lambda: {"answer": str(last.get("content") or "42")},
    }.get(tool, lambda: {"input": "anything"})()


def _good(request: dict[str, Any], rng: random.Random) -> StubReply:
    offered = tool_names(request)
    if not offered:  # the text-protocol Wikipedia agent: no tools, actions written as text
        action = rng.choice(("<search>Milhouse</search>", "<lookup>named</lookup>", "<finish>Richard Nixon</finish>"))
        return {"text": f"Thought 1\nI should act.\nAction 1\n{action}"}
    choice = request.get("tool_choice")
    forced = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    if forced:
        tool = forced
    elif request["messages"][-1]["role"] == "user":
        tool = rng.choice([t for t in offered if t != "finish"] or offered)
    else:
        tool = "finish"
    return {"tool": tool, "args": _good_args(tool, request, rng)}


def _insert(text: str, piece: str, rng: random.Random) -> str:
    at = rng.randint(0, len(text))
    return text[:at] + piece + text[at:]


def _strings(args: dict[str, Any]) -> list[str]:
    return [k for k, v in args.items() if isinstance(v, str)] or list(args) or ["answer"]


def _mutate_args(kind: str, args: dict[str, Any], rng: random.Random) -> dict[str, Any] | str:
    """`args` broken in one way: a dict (sent as JSON, surrogates as `\\ud800` escapes) or raw text."""
    args = dict(args)
    key = rng.choice(_strings(args))
    if kind == "malformed_json":
        text = json.dumps(args)
        cut = text[: rng.randint(0, len(text) - 1)]
        return rng.choice((cut, "{bad", "{'a': 1}", text + "}", text.replace('"', "", 1), ""))
    if kind == "non_object_args":
        return rng.choice(NON_OBJECTS)
    if kind == "wrong_type":
        args[rng.choice(list(args) or ["answer"])] = rng.choice(JUNK)
    elif kind == "missing_field":
        args.pop(rng.choice(list(args)), None) if args else None
    elif kind == "extra_field":
        args[rng.choice(("extra", "__proto__", "score", "", "\ud800"))] = rng.choice(JUNK)
    elif kind == "huge_string":
        piece = rng.choice(("x", "Tom Hanks ", "(", "'", "é"))
        args[key] = piece * (MEGABYTE // len(piece)) if rng.random() < 0.5 else "a" * MEGABYTE
    elif kind in ("control_chars", "lone_surrogate", "unicode"):
        pool = {"control_chars": CONTROLS, "lone_surrogate": SURROGATES, "unicode": UNICODE}[kind]
        for name in rng.sample(_strings(args), k=rng.randint(1, len(_strings(args)))):
            args[name] = _insert(str(args.get(name, "")), rng.choice(pool), rng)
    elif kind == "bad_score":
        if rng.random() < 0.3:  # a number JSON cannot hold, written raw
            raw = rng.choice(RAW_SCORES)
            return json.dumps({**args, "score": 0}).replace('"score": 0', f'"score": {raw}')
        args["score" if "score" in args or rng.random() < 0.5 else key] = rng.choice(SCORES)
    return args


TEXT_KINDS = (
    "huge_string",
    "control_chars",
    "lone_surrogate",
    "unicode",
    "plain_text",
    "empty",
    "unknown_tool",
    "absurd_usage",
    "refusal",
    "reasoning",
    "html",
)
TOOL_KINDS = (
    *TEXT_KINDS,
    "malformed_json",
    "non_object_args",
    "wrong_type",
    "missing_field",
    "extra_field",
    "bad_score",
    "json_in_text",
    "two_calls",
    "deep_nesting",
    "duplicate_ids",
    "huge_number",
)
# Token counts a proxy or a broken server may report.
USAGES: tuple[Any, ...] = (
    {"prompt_tokens": 1e300, "completion_tokens": 1e300, "total_tokens": 1e300},
    {"prompt_tokens": -5, "completion_tokens": -1, "total_tokens": -6},
    {"prompt_tokens": "many", "completion_tokens": None, "total_tokens": "x"},
    {"prompt_tokens": 10**40, "completion_tokens": 1, "total_tokens": 10**40},
    {"prompt_tokens": 3.7, "completion_tokens": 2.2, "total_tokens": 5.9},
    None,
    {},
)
PAGES = (
    "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>",
    "<!DOCTYPE html><html><body><p>Rate limit exceeded. Try again later.</p></body></html>",
)


def _text(rng: random.Random) -> str:
    return rng.choice(
        (
            "I think the answer is 42.",
            "Sure! Here is the query: MATCH (n) RETURN n",
            '```json\n{"oops": true}\n```',
            "\ud800",
            "Action 1\n<search>\ud800</search>",
            "<finish></finish>",
            "<lookup>" + "x" * 5000,
            "null",
            "[]",
        )
    )


def _nested(depth: int) -> str:
    """JSON text nesting objects `depth` levels deep."""
    return '{"a": ' * depth + "1" + "}" * depth


def _beside(kind: str, good: StubReply, rng: random.Random) -> StubReply | None:
    """The good reply with something odd beside it (the usage, a refusal, reasoning), or a page of HTML
    in its place; None for the other kinds."""
    if kind == "absurd_usage":
        return {**good, "usage": rng.choice(USAGES)}
    if kind == "refusal":
        return {"text": None, "message": {"refusal": "I'm sorry, I can't help with that request."}}
    if kind == "reasoning":
        thought = rng.choice(("Let me think step by step.", "\ud800", "x" * 10_000))
        return {**good, "message": {"reasoning_content": thought, "reasoning": thought}}
    if kind == "html":
        return {"text": rng.choice(PAGES)}
    return None


def broken(kind: str, good: StubReply, rng: random.Random) -> StubReply:
    """The good reply broken in the way `kind` names."""
    odd = _beside(kind, good, rng)
    if odd is not None:
        return odd
    if "text" in good and "tool" not in good:  # the text protocol
        if kind in ("huge_string", "control_chars", "lone_surrogate", "unicode"):
            pool = {
                "huge_string": ("x" * MEGABYTE,),
                "control_chars": CONTROLS,
                "lone_surrogate": SURROGATES,
                "unicode": UNICODE,
            }[kind]
            return {"text": _insert(good["text"], rng.choice(pool), rng)}
        if kind == "unknown_tool":
            return {"tool": "search", "args": {"query": "Milhouse"}}  # a tool call where none was offered
        return {"text": "" if kind == "empty" else _text(rng)}
    tool, args = good["tool"], good["args"]
    if kind == "plain_text":
        return {"text": _text(rng)}
    if kind == "json_in_text":
        text = json.dumps(args)
        return {"text": rng.choice((text, f"```json\n{text}\n```", json.dumps({"name": tool, "args": args})))}
    if kind == "empty":
        return rng.choice(({"text": ""}, {"text": None}, {"tool": tool, "args": ""}))
    if kind == "unknown_tool":
        return {"tool": rng.choice(("no_such_tool", "", "finish", "\ud800")), "args": args}
    if kind == "two_calls":  # parallel calls where one was asked for: the same tool twice, or another
        second = rng.choice(({"tool": tool, "args": args}, {"tool": "no_such_tool", "args": "1"}))
        return {"calls": [{"tool": tool, "args": args}, second]}
    if kind == "duplicate_ids":  # two calls under one id
        return {
            "calls": [{"tool": tool, "args": args, "id": "call_same"}, {"tool": tool, "args": args, "id": "call_same"}]
        }
    if kind == "deep_nesting":  # arguments, or one field, nested hundreds or thousands of levels deep
        depth = rng.choice((100, 500, 950, 2000, 5000))
        if rng.random() < 0.5:
            return {"tool": tool, "args": _nested(depth)}
        key = rng.choice(_strings(args))
        return {"tool": tool, "args": json.dumps({**args, key: 0}).replace(f'"{key}": 0', f'"{key}": {_nested(depth)}')}
    if kind == "huge_number":  # numbers JSON allows and Python reads, far out of any range
        key = rng.choice(list(args) or ["answer"])
        raw = rng.choice(("1" + "0" * 5000, "1e400", "-1e400", "12345678901234567890123456789"))
        return {"tool": tool, "args": json.dumps({**args, key: 0}).replace(f'"{key}": 0', f'"{key}": {raw}')}
    return {"tool": tool, "args": _mutate_args(kind, args, rng)}


class FuzzModel:
    """A stub reply function: good replies, each broken with probability `rate`, all from `seed`."""

    def __init__(self, seed: int, rate: float = 0.5) -> None:
        self.seed, self.rate = seed, rate
        self.kinds: Counter[str] = Counter()
        self.replies = 0
        self._lock = threading.Lock()

    def _rng(self, request: dict[str, Any]) -> random.Random:
        # System prompts aside (they hold few-shot examples earlier runs may have added) and tool-call ids
        # aside (the stub draws them at random; feedback quotes them): a replayed seed gets the same replies.
        messages = [m for m in request.get("messages", []) if m.get("role") != "system"]
        shown = [(m.get("role"), m.get("content"), m.get("name")) for m in messages]
        asked = json.dumps([shown, request.get("tool_choice"), tool_names(request)], default=str)
        text = _CALL_ID.sub("call_", asked)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
        return random.Random(f"{self.seed}:{digest.hexdigest()}")

    def __call__(self, request: dict[str, Any]) -> StubReply:
        rng = self._rng(request)
        good = _good(request, rng)
        kind = "good"
        if rng.random() < self.rate:
            kind = rng.choice(TEXT_KINDS if "tool" not in good else TOOL_KINDS)
        with self._lock:
            self.kinds[kind] += 1
            self.replies += 1
        return good if kind == "good" else broken(kind, good, rng)


FuzzReply = Callable[[dict[str, Any]], StubReply]
