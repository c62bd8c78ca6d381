"""`make run`: ask the movies graph a question and watch the agent work.

    python -m reflexion_agents.graphs.main "Who directed The Matrix?" [--model openai:gpt-4o-mini] [--max-steps 30]

The database is the environment's (`$REFLEXION_DATABASE_URL`, else `$NEO4J_URI`, else the
embedded FalkorDB, whose movies graph is loaded on first use).

Exit codes: 0 answered, 1 stopped without a usable answer, 2 configuration
error (no model key, a missing provider package), 3 database unavailable.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from reflexion_agents.graphs.cli.ask import ASKABLE
from reflexion_agents.graphs.cli.exit_codes import EXIT_CONFIGURATION, EXIT_DATABASE, exit_code
from reflexion_agents.graphs.runner import Runner
from reflexion_agents.nodes.graphdb import connect
from reflexion_agents.nodes.graphdb.connect import load_demo_if_new
from reflexion_agents.nodes.graphdb.locations import default_connection_args
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.schemas.errors import ConfigurationError, DatabaseUnavailableError
from reflexion_agents.schemas.reflexion import ToolOutcome
from reflexion_agents.schemas.run_result import RunResult
from reflexion_agents.schemas.settings import AGENT_DEFAULTS

DEFAULT_QUESTION = "Which movies did Tom Hanks act in?"


def print_step(step: int, node: str, message: BaseMessage | None, update: dict[str, Any]) -> None:
    if node == "draft" and isinstance(message, AIMessage):
        print(f"[draft] query: {message.tool_calls[0]['args'].get('answer')}", flush=True)
    elif node == "execute_tool":
        outcome = ToolOutcome.model_validate(update["outcomes"][-1])
        if outcome.check is not None and (outcome.check.repairs or outcome.check.findings):
            print(f"[check {step}] {outcome.check.notes()}", flush=True)
        if outcome.error_type == "RejectedByReviewer":
            print(f"[execute {step}] not run: {outcome.error}", flush=True)
        elif update.get("stop_reason") == "tool_unavailable":
            print(f"[execute {step}] the database is unavailable: {outcome.error}", flush=True)
        elif not outcome.executed:
            print(f"[execute {step}] skipped: the query already ran", flush=True)
        elif outcome.error:
            print(f"[execute {step}] error ({outcome.error_type}): {outcome.error}", flush=True)
        else:
            more = "+" if outcome.truncated else ""
            rows = json.dumps(outcome.rows[:3], ensure_ascii=False, default=str)  # as the summary shows rows
            print(
                f"[execute {step}] {len(outcome.rows)}{more} row(s) of {', '.join(outcome.columns)}: {rows}", flush=True
            )
    elif node == "revise" and isinstance(message, AIMessage):
        args = message.tool_calls[0]["args"]
        score = args.get("score")
        said = "no score" if score in (None, "") else f"score {score}"
        print(f"[revise {step}] {said}; next query: {args.get('revised_query')}", flush=True)
        if update.get("notice"):
            print(f"[revise {step}] {update['notice']}", flush=True)
    elif node in ("draft", "revise") and update.get("stop_reason") == "model_error":
        print(f"[{node}] the model's reply could not be used: {update.get('error')}", flush=True)


def print_result(result: RunResult) -> None:
    print("\n" + result.summary())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Ask the embedded movies knowledge graph a question.")
    parser.add_argument("question", nargs="?", default=DEFAULT_QUESTION)
    parser.add_argument("--model", help="model name, e.g. openai:gpt-4o-mini (default: $REFLEXION_MODEL)")
    parser.add_argument(
        "--max-steps", type=int, help=f"step limit of the reflexion loop (default {AGENT_DEFAULTS.max_steps})"
    )
    parser.add_argument("--data-dir", help="embedded database directory (default: $REFLEXION_DATA_DIR)")
    args = parser.parse_args(argv)
    try:
        model = chat_model_from_env(args.model)
        where = {"backend": "falkordb", "data_dir": args.data_dir} if args.data_dir else default_connection_args()
        db = connect(where)
        report = load_demo_if_new(db, where)
        if report is not None:
            print(f"Loaded the movies graph ({report.executed} statements).", flush=True)
        runner = Runner(ASKABLE["reflexion"](model, db, args.max_steps))  # what `reflexion ask` runs
        print(f"Question: {args.question}", flush=True)
        result = runner.ask(args.question, on_step=print_step)
    except ConfigurationError as e:
        print(f"Configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIGURATION
    except DatabaseUnavailableError as e:
        print(f"Database unavailable: {e}", file=sys.stderr)
        return EXIT_DATABASE
    print_result(result)
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
