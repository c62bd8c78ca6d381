"""Prompt tokens per question as the Reflexion loop runs more iterations: `KGQueryReflexionAgent`
against biochatter's `KGQueryReflexionAgent` on the same trajectory.

    python -m benchmarks.prompt_growth [--iterations 1,2,3,4,5,6,7,8]

One iteration is a query run and the revision that judges it; a question of N iterations makes
N + 1 model calls (the draft and N revisions). A scripted model runs N distinct queries of 25
movies or more each on the movies graph, every revision scoring 2 but the last; our agent runs
them with its defaults, except that a result with rows does not end the run by itself
(`trust_non_empty_result=False`, or every question would end after one iteration). The same
trajectory (question, queries, rows, model replies) is then replayed through a reproduction of the
messages biochatter's chat client is sent, built from its source (biocypher/biochatter, the
versions of `kg_langgraph_agent.py` and `langgraph_agent_base.py` with `ReflexionAgentResult`):

- `biochatter/langgraph_agent_base.py`, `ReflexionAgent._build_graph` and
  `ResponderWithRetries.respond`: the draft and revise nodes call
  `runnable.invoke({"messages": state})` with the whole `MessagesState` memory: the question, every
  draft and revision as the model sent it, every `ToolMessage` whole.
- `biochatter/kg_langgraph_agent.py`, `KGQueryReflexionAgent.__init__`: the actor prompt
  template, `ChatPromptTemplate.from_messages([("system", <role, time, {instruction}>),
  MessagesPlaceholder("messages"), ("system", <note>)])`, its time `datetime.now().isoformat()`.
  `_create_initial_responder`: `{instruction}` is the prompt given to `execute` (the kg_prompt
  `BioCypherPromptEngine.generate_query_prompt` makes, the schema); tools bound with
  `llm.bind_tools(tools=[GenerateQuery], tool_choice="GenerateQuery")`.
  `_create_revise_responder`: `{instruction}` is its fixed `revision_instruction` (no schema),
  `ReviseQuery` bound. `_tool_function`: each result is
  `ToolMessage(json.dumps({"query": query, "result": records}))`, every record the database
  returned (`neo4j_utils.Driver.query(query)[0]`, dicts keyed by column).
- `GenerateQuery` / `ReviseQuery` (same file): the tool definitions, as `bind_tools` sends them
  (`convert_to_openai_tool`).

The schema part of biochatter's draft instruction is our own kg_prompt (the text our draft
carries), so the comparison is about the message pattern, not about two ways of describing a
schema. biochatter's revisions carry the `search_queries` its `ReviseQuery` requires (empty), as
our memory keeps them.

Tokens are counted by one function for both sides (`prompt_tokens`): the text of every message,
the arguments of every tool call, and the tool definitions bound to the call, as the chat payload
carries them. With tiktoken and its `o200k_base` encoding available offline, tokens are counted
with it; otherwise at four characters a token (the line under the table says which).

The prompt strings of biochatter quoted below are test data for the reproduction, not code of
this project's agents.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

from benchmarks.harness import loop_script, machine, movies_database
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel

QUESTION = "List movies with their tagline."
QUERY = (
    "MATCH (m:Movie) RETURN m.title AS title, m.released AS released, m.tagline AS tagline "
    "ORDER BY m.title LIMIT {limit}"
)
#: The other kind of trajectory: every query returns nothing (a misspelt title), so every revision
#: judges an empty result, which is when a revision is sent more of the schema.
EMPTY_QUERY = "MATCH (m:Movie {{title: 'The Matrix {limit}'}}) RETURN m.title AS title, m.tagline AS tagline"
#: (the queries, whether `execute` is given the kg_prompt, as biochatter's users call it): the agent
#: reading the schema itself, the kg_prompt given, every query returning nothing.
TRAJECTORIES = {"rows": (QUERY, False), "kg_prompt": (QUERY, True), "no_rows": (EMPTY_QUERY, False)}
ITERATIONS = "1,2,3,4,5,6,7,8,9,10"
#: Targets: our tokens per question as a share of biochatter's, at most: at every iteration count,
#: and at 5 iterations where the rows resent make biochatter's questions grow.
TARGET_EVERY, TARGET_AT_5 = 1.00, 0.50

# -- biochatter's prompt strings (biochatter/kg_langgraph_agent.py, KGQueryReflexionAgent) --------

BIOCHATTER_ACTOR_SYSTEM = (
    "As a senior biomedical researcher and graph database expert, "
    "your task is to generate 'Cypher' queries to extract data from our graph database based on the user's question. "
    """Current time {time}. {instruction}"""
)
BIOCHATTER_ACTOR_NOTE = (
    "Note: 1. Only generate query according to the user's question above.\n"
    "2. Please limit the results to a maximum of 30 items"
)
BIOCHATTER_REVISION_INSTRUCTION = """
        Revise your previous query using the query result and follow the guidelines:
        1. If you consistently obtain empty results, please consider removing constraints such as relationship constraints to try to obtain a result.
        2. You should use previous critique to improve your query.
        3. Only generate a query without returning any other text.
        """  # noqa: E501 (quoted as it is sent, indentation included)


class BiochatterGenerateQuery(BaseModel):
    """Generate the query."""

    answer: str = Field(description="Cypher query for graph database according to user's question.")
    reflection: str = Field(description="Your reflection on the initial answer, critique of what to improve")
    search_queries: list[str] = Field(description="query for graph database")


class BiochatterReviseQuery(BiochatterGenerateQuery):
    """Revise your previous query according to your question."""

    revised_query: str = Field(description="Revised query based on the reflection.")
    score: str = Field(
        description="the score for the query based on its query result and relevance to the user's question,"
        " with 0 representing the lowest score and 10 representing the highest score."
    )


def _biochatter_tool(schema: type[BaseModel]) -> dict[str, Any]:
    tool = convert_to_openai_tool(schema)
    tool["function"]["name"] = schema.__name__.removeprefix("Biochatter")  # its classes' own names
    return tool


BIOCHATTER_TOOLS = {
    "draft": [_biochatter_tool(BiochatterGenerateQuery)],
    "revise": [_biochatter_tool(BiochatterReviseQuery)],
}

# -- counting ----------------------------------------------------------------------------------


O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def _tiktoken_counter() -> tuple[str, Callable[[str], int]] | None:
    """tiktoken's o200k_base, when tiktoken is installed and its encoding file is already in the
    cache tiktoken reads (it is never downloaded here, so the counter does not depend on the network)."""
    try:
        import tiktoken
    except ImportError:
        return None
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    cache = os.path.join(tempfile.gettempdir(), "data-gym-cache") if cache is None else cache
    if not cache or not os.path.exists(os.path.join(cache, hashlib.sha1(O200K_URL.encode()).hexdigest())):
        return None
    try:
        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:
        return None
    return "tiktoken o200k_base", lambda text: len(encoding.encode(text, disallowed_special=()))


COUNTER_NAME, _count = _tiktoken_counter() or ("characters / 4", lambda text: len(text) // 4)


def payload_text(messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]]) -> str:
    """What a chat call carries that the model reads: message text, tool-call arguments, tool definitions."""
    parts = [str(m.content) for m in messages]
    parts += [json.dumps(c["args"]) for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    parts += [json.dumps(t) for t in tools]
    return "\n".join(parts)


def prompt_tokens(messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]] = ()) -> int:
    """The prompt tokens of one chat call, the same way for both agents."""
    return _count(payload_text(messages, tools))


# -- the trajectory and the two message patterns -----------------------------------------------


@dataclass
class Trajectory:
    """What a run did: the question, the kg_prompt, each model reply's tool call, each query's rows."""

    question: str
    kg_prompt: str
    replies: list[tuple[str, dict[str, Any]]]  # (tool name, arguments), the draft first
    results: list[tuple[str, list[dict[str, Any]]]]  # (query, records) per iteration


@dataclass
class Calls:
    """Every chat call of a question: (messages, tools bound)."""

    calls: list[tuple[list[BaseMessage], list[dict[str, Any]]]]

    def tokens(self, *, tools: bool = True) -> int:
        return sum(prompt_tokens(messages, bound if tools else ()) for messages, bound in self.calls)


def ours(db: Any, iterations: int, query: str = QUERY, given_prompt: bool = False) -> tuple[Calls, Trajectory]:
    """Our agent, with its defaults, on `iterations` distinct queries (given the kg_prompt if
    `given_prompt`, as `execute(question, kg_prompt)`): its calls and its trajectory."""
    script = loop_script([query.format(limit=25 + i) for i in range(iterations)])
    model = ScriptedChatModel(replies=script)
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model,
        database=db,
        max_steps=iterations,
        checkpointer=None,
        trust_non_empty_result=False,
    )
    result = agent.execute(QUESTION, agent.schema_prompt() if given_prompt else None)
    assert result.steps == iterations, (result.steps, result.stop_reason)
    assert len(model.calls) == iterations + 1, len(model.calls)
    replies = [(r.tool_calls[0]["name"], dict(r.tool_calls[0]["args"])) for r in script]
    results = [(o.action, [dict(zip(o.columns, row, strict=True)) for row in o.rows]) for o in result.outcomes]
    trajectory = Trajectory(QUESTION, agent.schema_prompt(), replies, results)
    return Calls(list(zip(model.calls, model.bound_tools, strict=True))), trajectory


def biochatter(trajectory: Trajectory, now: str) -> Calls:
    """The chat calls biochatter's `KGQueryReflexionAgent` makes on `trajectory` (see the module docstring)."""
    template = ChatPromptTemplate.from_messages(
        [
            ("system", BIOCHATTER_ACTOR_SYSTEM),
            MessagesPlaceholder(variable_name="messages"),
            ("system", BIOCHATTER_ACTOR_NOTE),
        ]
    ).partial(time=now)
    draft_prompt = template.partial(instruction=trajectory.kg_prompt)
    revise_prompt = template.partial(instruction=BIOCHATTER_REVISION_INSTRUCTION)
    memory: list[BaseMessage] = [HumanMessage(content=trajectory.question)]
    calls: Calls = Calls([])
    for i, (name, args) in enumerate(trajectory.replies):
        turn = "draft" if i == 0 else "revise"
        prompt = draft_prompt if turn == "draft" else revise_prompt
        calls.calls.append((prompt.invoke({"messages": memory}).to_messages(), BIOCHATTER_TOOLS[turn]))
        if i == len(trajectory.results):
            break  # the last revision ends the run
        call_id = f"call_{i}"
        sent = args if turn == "draft" else {"search_queries": [], **args, "score": str(args.get("score"))}
        memory.append(
            AIMessage(content="", tool_calls=[{"name": name, "args": sent, "id": call_id, "type": "tool_call"}])
        )
        query, records = trajectory.results[i]
        memory.append(ToolMessage(content=json.dumps({"query": query, "result": records}), tool_call_id=call_id))
    return calls


# -- the report --------------------------------------------------------------------------------


def verdict(name: str, share: float, bound: float) -> str:
    """`RESULT <name> <measured> <target> PASS|FAIL`, the line scripts read."""
    return f"RESULT {name} {share:.0%} <={bound:.0%} {'PASS' if share <= bound else 'FAIL'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--iterations", default=ITERATIONS, help="comma-separated iteration counts")
    args = parser.parse_args()
    counts = sorted({int(s) for s in args.iterations.split(",")} | {5})
    now = datetime.now().isoformat()
    rows: dict[tuple[str, int], tuple[Calls, Calls]] = {}
    with movies_database() as db:
        for kind, (query, given_prompt) in TRAJECTORIES.items():
            for n in counts:
                mine, trajectory = ours(db, n, query, given_prompt)
                rows[kind, n] = (mine, biochatter(trajectory, now))
    shown = {
        "rows": "every query returns rows, the agent reads the schema",
        "kg_prompt": "every query returns rows, the kg_prompt given to execute()",
        "no_rows": "every query returns nothing",
    }
    for kind in TRAJECTORIES:
        print(f"Prompt tokens per question (all model calls), ours against biochatter's, {shown[kind]}:\n")
        print("| iterations | model calls | ours | biochatter's | ratio | ratio, tool definitions left out |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n in counts:
            mine, theirs = rows[kind, n]
            ratio, bare = mine.tokens() / theirs.tokens(), mine.tokens(tools=False) / theirs.tokens(tools=False)
            print(f"| {n} | {len(mine.calls)} | {mine.tokens():,} | {theirs.tokens():,} | {ratio:.0%} | {bare:.0%} |")
        print()
    print(f"Tokens: {COUNTER_NAME}, message text + tool-call arguments + tool definitions.")
    print(f"Machine: {machine()}\n")
    for kind in TRAJECTORIES:
        prefix = "prompt_growth" if kind == "rows" else f"prompt_growth_{kind}"
        highest = max(rows[kind, n][0].tokens() / rows[kind, n][1].tokens() for n in counts)
        print(verdict(f"{prefix}_highest", highest, TARGET_EVERY))
        if kind != "no_rows":  # with no rows to resend, biochatter's questions do not grow: nothing to halve
            mine, theirs = rows[kind, 5]
            print(verdict(f"{prefix}_5", mine.tokens() / theirs.tokens(), TARGET_AT_5))


if __name__ == "__main__":
    main()
