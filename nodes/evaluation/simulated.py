"""A simulated chat model that misbehaves the way real ones do, for `reflexion eval --model simulated`.

It knows each question's gold query and gold rows, as a capable model knows what it is asked, and
makes the mistakes real models make, each as often as `Misbehaviour` says:

- **Faulty first drafts**: the gold query with one mistake of `faults.MODEL_FAULTS` (a relationship
  turned round, a label, property or value recased, a variable left unbound, a syntax slip, an
  invented property). The draft depends on the seed and the question only, so every agent and flow
  evaluated with the same seed gets the same first drafts.
- **Faulty revisions**: a query it rewrites carries a new mistake now and then.
- **Repeats**: it sends back the query it wrote last instead of a new one.
- **Self-scoring**: asked to score the result it was shown, it scores the revision it is writing
  instead (high, however poor the result was).
- **Odd score forms**: "8/10", "eight", "80%", "8 out of 10".
- **Prose-wrapped JSON**: a reply with the arguments as JSON inside prose instead of a tool call.

It reads a request as a model does, never by the project's prompt wording: the tool it is bound
to call (and that tool's declared fields), the question of the run, and the result it is shown
(the rows, as the JSON lines a result is printed with, the row count, or that there were no rows
or an error). It judges a result right when the rows shown are the gold rows.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from reflexion_agents.nodes.evaluation.faults import FAULTS, MODEL_FAULTS
from reflexion_agents.nodes.evaluation.oracle import GoldRun, gold_run_of, plain_reply
from reflexion_agents.nodes.evaluation.scoring import normalise_value

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
ROW_COUNT = re.compile(r"\b(\d+)(?:\s+or\s+more)?\s+rows?\b", re.IGNORECASE)
NO_ROWS = re.compile(r"\bno rows\b|\b0 rows\b", re.IGNORECASE)


#: The rates of `Misbehaviour`, as `reflexion eval` takes them (`--draft-faults`, ...).
RATES = ("draft_faults", "revision_faults", "repeats", "self_scoring", "odd_scores", "prose_json")


@dataclass(frozen=True)
class Misbehaviour:
    """How often the simulated model goes wrong: each rate a probability from 0 to 1."""

    draft_faults: float = 0.5  # first drafts with one mistake
    revision_faults: float = 0.25  # rewritten queries (those not sent back unchanged) with a new mistake
    repeats: float = 0.1  # rewrites that send the last query back instead
    self_scoring: float = 0.5  # scores that judge the model's own revision, not the result shown
    odd_scores: float = 0.3  # scores written "8/10", "eight", "80%", "8 out of 10"
    prose_json: float = 0.1  # replies with JSON in prose instead of a tool call
    seed: int = 0

    def __post_init__(self) -> None:
        for name in RATES:
            rate = getattr(self, name)
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
                raise ValueError(f"{name} must be a probability from 0 to 1, got {rate!r}")


@dataclass
class Shown:
    """What a request shows of a query's result, read as a model reads it."""

    kind: str  # "rows", "empty" (no rows), "failed" (no result: an error, a refusal, nothing run)
    rows: list[list[Any]] = field(default_factory=list)
    count: int = 0


def _stable_random(*parts: Any) -> random.Random:
    """A generator seeded from `parts` alone, the same in every process (Python's `hash` is not)."""
    digest = hashlib.sha256(json.dumps(parts, default=str).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _json_row(line: str) -> list[Any] | None:
    """The row a line shows: a JSON array of values, or an object of values keyed by column."""
    if not (line.startswith("{") and line.endswith("}")) and not (line.startswith("[") and line.endswith("]")):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else None


def read_result(text: str) -> Shown:
    """The result `text` shows: its rows (JSON lines, arrays or objects) and their count, or no rows, or
    none."""
    rows = [row for line in text.splitlines() if (row := _json_row(line.strip())) is not None]
    if rows:
        counted = ROW_COUNT.search(text)
        return Shown("rows", rows, int(counted.group(1)) if counted else len(rows))
    if NO_ROWS.search(text):
        return Shown("empty")
    return Shown("failed")


def _row_key(row: list[Any]) -> tuple[str, ...]:
    """A row as a model compares it: its values, in any column order."""
    return tuple(sorted(repr(normalise_value(v)) for v in row))


def looks_right(shown: Shown, gold_rows: list[list[Any]]) -> bool:
    """Whether the result shown is the gold result: no rows for no rows; otherwise as many rows, and
    every row shown one of the gold rows."""
    if shown.kind == "empty":
        return not gold_rows
    if shown.kind != "rows" or shown.count != len(gold_rows):
        return False
    seen, gold = Counter(_row_key(r) for r in shown.rows), Counter(_row_key(r) for r in gold_rows)
    return all(gold[key] >= n for key, n in seen.items())


def odd_score(score: int, rng: random.Random) -> str:
    """The score as some models write it."""
    forms = (f"{score}/10", NUMBER_WORDS[score], f"{score * 10}%", f"{score} out of 10")
    return rng.choice(forms)


@dataclass
class SimulatedRun(GoldRun):
    """One question's run under the simulated model: what it knows and what it wrote so far."""

    gold_rows: list[list[Any]] = field(default_factory=list)
    behaviour: Misbehaviour = field(default_factory=Misbehaviour)
    fault: str | None = None  # the first draft's mistake, None for a right draft
    written: list[str] = field(default_factory=list)
    calls: int = 0

    def rng(self) -> random.Random:
        """The generator of this run's next model call: seeded by the seed, the question and the call's
        number, so a run replays the same way."""
        self.calls += 1
        return _stable_random(self.behaviour.seed, self.question, self.calls)

    def write(self, query: str) -> str:
        self.written.append(query)
        return query

    def faulty(self, rng: random.Random) -> str:
        """The gold query with a new mistake (one it has not written yet), or the gold query when none
        is left."""
        fresh = [q for k in applicable_faults(self.gold) if (q := FAULTS[k](self.gold)) and q not in self.written]
        return rng.choice(fresh) if fresh else self.gold

    def rewrite(self, rng: random.Random) -> str:
        """A new query after a poor result: the last one again, a faulty one, or the gold query."""
        if self.written and rng.random() < self.behaviour.repeats:
            return self.write(self.written[-1])
        if rng.random() < self.behaviour.revision_faults:
            return self.write(self.faulty(rng))
        return self.write(self.gold)


def applicable_faults(gold: str) -> list[str]:
    """The model mistakes (`MODEL_FAULTS`) that change this gold query."""
    return [k for k in MODEL_FAULTS if (q := FAULTS[k](gold)) is not None and q != gold]


def simulated_run(question: str, gold: str, gold_rows: list[list[Any]], behaviour: Misbehaviour) -> SimulatedRun:
    """The run for one question; its first draft depends on the seed and the question only."""
    rng = _stable_random(behaviour.seed, question, "draft")
    run = SimulatedRun(question, gold, gold, gold_rows=[list(r) for r in gold_rows], behaviour=behaviour)
    if rng.random() < behaviour.draft_faults:
        kinds = applicable_faults(gold)
        if kinds:
            run.fault = rng.choice(kinds)
            run.draft = FAULTS[run.fault](gold) or gold
    return run


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _shown_to_revise(messages: list[BaseMessage]) -> Shown:
    """The result a revision judges: the newest tool result in the conversation."""
    latest = next((m for m in reversed(messages) if isinstance(m, ToolMessage)), None)
    return read_result(_text(latest)) if latest is not None else Shown("failed")


class SimulatedChatModel(BaseChatModel):
    """Answers whichever structured step it is bound to (see the module docstring)."""

    @property
    def _llm_type(self) -> str:
        return "simulated"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _revision(self, run: SimulatedRun, rng: random.Random, messages: list[BaseMessage]) -> dict[str, Any]:
        right = looks_right(_shown_to_revise(messages), run.gold_rows)
        previous = run.written[-1] if run.written else run.draft
        revised = run.write(previous) if right else run.rewrite(rng)
        if rng.random() < run.behaviour.self_scoring:
            score = rng.choice((8, 9, 10))  # its revision's, as it sees it
        else:
            score = rng.choice((8, 9, 10)) if right else rng.choice((1, 2, 3, 4))
        shown_score: Any = odd_score(score, rng) if rng.random() < run.behaviour.odd_scores else score
        return {
            "answer": previous,
            "reflection": "the result answers the question" if right else "the result does not answer the question",
            "search_queries": [],
            "revised_query": revised,
            "score": shown_score,
        }

    def _reply(self, tool: str, run: SimulatedRun, rng: random.Random, messages: list[BaseMessage]) -> dict[str, Any]:
        if tool == "GenerateQuery":
            query = run.write(run.draft) if not run.written else run.rewrite(rng)
            return {"answer": query, "reflection": "drafted from the schema", "search_queries": []}
        if tool == "ReviseQuery":
            return self._revision(run, rng, messages)
        if tool == "CypherQuery":
            return {"cypher": run.write(run.draft) if not run.written else run.rewrite(rng)}
        if tool == "Evaluation":
            right = looks_right(read_result("\n".join(_text(m) for m in messages)), run.gold_rows)
            return {"ok": right, "critique": "" if right else "These rows do not answer the question."}
        plain = plain_reply(tool, run)
        if plain is None:
            raise ValueError(f"the simulated model cannot answer the step {tool!r}")
        return plain

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        run = gold_run_of(run_manager)
        if not isinstance(run, SimulatedRun):
            raise RuntimeError("the simulated model was called outside an evaluation run (no SimulatedRun)")
        tools = kwargs.get("tools") or []
        if not tools:
            raise ValueError("the simulated model answers structured steps only (a tool must be bound)")
        function = tools[0]["function"]
        rng = run.rng()
        declared = set((function.get("parameters") or {}).get("properties") or {})
        args = {k: v for k, v in self._reply(function["name"], run, rng, messages).items() if k in declared}
        prompt = sum(len(_text(m)) for m in messages) // 4
        written = json.dumps(args, ensure_ascii=False)
        usage = {"input_tokens": prompt, "output_tokens": len(written) // 4, "total_tokens": prompt + len(written) // 4}
        if rng.random() < run.behaviour.prose_json:
            text = f"Here is my answer.\n```json\n{written}\n```\nLet me know if you need anything else."
            message = AIMessage(content=text, usage_metadata=usage)
        else:
            call = {"name": function["name"], "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call], usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message, text=written)])
