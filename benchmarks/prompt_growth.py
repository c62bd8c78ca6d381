"""Prompt tokens per question as the Reflexion loop runs more iterations, with and without
trimming old tool results from the prompt (`tool_results_in_prompt`).

    python -m benchmarks.prompt_growth [--steps 1,2,4,8,16,30]

Every step appends a revision and a tool result to the memory, and every model call is sent the
whole memory, so the cost of a question grows with the square of its iterations. A scripted
model runs N distinct queries of 25 movies or more each (20 rows shown to the model per result) on the
movies graph. Tokens are counted as in the OpenAI chat payload (message text plus tool-call
arguments), at four characters a token.
"""

from __future__ import annotations

import argparse
import json

from langchain_core.messages import AIMessage, BaseMessage

from benchmarks.harness import loop_script, machine, movies_database
from graphs.kg_query_agent import KGQueryReflexionAgent
from nodes.models import ScriptedChatModel

QUERY = (
    "MATCH (m:Movie) RETURN m.title AS title, m.released AS released, m.tagline AS tagline "
    "ORDER BY m.title LIMIT {limit}"
)
SETTINGS = {"all results": None, "last 2 whole": 2, "last 1 whole": 1}


def tokens(messages: list[BaseMessage]) -> int:
    chars = sum(
        len(str(m.content)) + (len(json.dumps([c["args"] for c in m.tool_calls])) if isinstance(m, AIMessage) else 0)
        for m in messages
    )
    return chars // 4


def run(db, steps: int, keep: int | None) -> tuple[int, int, int]:
    """(prompt tokens of the whole question, of its last call, model calls) for a run of `steps` queries."""
    model = ScriptedChatModel(replies=loop_script([QUERY.format(limit=25 + i) for i in range(steps)]))
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model,
        database=db,
        max_steps=steps,
        checkpointer=None,
        trust_non_empty_result=False,
        tool_results_in_prompt=keep,
    )
    result = agent.execute("List movies with their tagline.")
    assert result.steps == steps, (result.steps, result.stop_reason)
    per_call = [tokens(call) for call in model.calls]
    return sum(per_call), per_call[-1], len(per_call)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="1,2,4,8,16,30")
    args = parser.parse_args()
    counts = [int(s) for s in args.steps.split(",")]
    with movies_database() as db:
        rows = {(n, name): run(db, n, keep) for n in counts for name, keep in SETTINGS.items()}
    names = list(SETTINGS)
    print("Prompt tokens per question (all model calls) / of the last call:\n")
    print("| queries run | model calls | " + " | ".join(names) + " | saved by last 2 whole |")
    print("|---:|---:|" + "---:|" * (len(names) + 1))
    for n in counts:
        cells = [f"{rows[n, name][0]:,} / {rows[n, name][1]:,}" for name in names]
        saved = 1 - rows[n, "last 2 whole"][0] / rows[n, "all results"][0]
        print(f"| {n} | {rows[n, names[0]][2]} | " + " | ".join(cells) + f" | {saved:.0%} |")
    print(f"\nMachine: {machine()}")


if __name__ == "__main__":
    main()
