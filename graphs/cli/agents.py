"""`reflexion react` and `reflexion extract`: the ReAct agents and the structured-output agent.

    reflexion react "What is 465 times 321?" [--agent tools|wikipedia] [--sample-corpus] [--json]
    reflexion extract "I own a Fiat Panda with 45Hp." [--schema package.module:Model] [--json]

Each builds its agent with the model `--model` names (default: the environment's) and exits 0 when
the run answered (`react`: finished; `extract`: the output validated), else 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
from typing import Any

from rich.console import Console

from reflexion_agents.graphs.cli.ask import LiveProgress
from reflexion_agents.graphs.cli.exit_codes import exit_code
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.run_result import RunResult


def _finish(result: RunResult, payload: dict[str, Any], args: argparse.Namespace, out: Console) -> int:
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, default=str))
    else:
        out.print("\n" + result.summary(), highlight=False, markup=False)
    return exit_code(result)


def cmd_react(args: argparse.Namespace, out: Console) -> int:
    model = chat_model_from_env(args.model)
    if args.agent == "wikipedia":
        from reflexion_agents.graphs.wikipedia_react_agent import WikipediaReActAgent
        from reflexion_agents.nodes.tools.wikipedia import WikipediaTools

        tools = WikipediaTools.sample() if args.sample_corpus else None
        agent: Any = WikipediaReActAgent(lambda: model, wikipedia=tools)
    else:
        from reflexion_agents.graphs.react_agent import ReActAgent
        from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS

        agent = ReActAgent(ARITHMETIC_TOOLS, lambda: model, add_llm_as_fallback=True)

    with LiveProgress(out, enabled=not args.json) as progress:
        progress.now("the model chooses an action")

        def step(number: int, node: str, message: Any, update: dict[str, Any]) -> None:
            for outcome in (update.get("outcomes") or [])[-1:] if node == "execute_tool" else []:
                progress.line(f"[step {number}] {outcome['action']} -> {outcome['content'][:200]}")
            progress.now("running the action" if node != "execute_tool" else "the model chooses the next action")

        result = agent.execute(args.question, on_step=step)
    return _finish(result, result.json_view(), args, out)


def _schema_class(spec: str) -> Any:
    module_name, _, class_name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as e:
        raise ConfigurationError(f"cannot import the schema {spec!r} (write package.module:ClassName): {e}") from e


def cmd_extract(args: argparse.Namespace, out: Console) -> int:
    from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent

    model = chat_model_from_env(args.model)
    agent = StructuredOutputReflectionAgent(_schema_class(args.schema), lambda: model, max_retries=args.max_retries)
    result = agent.extract(args.passage)
    return _finish(result, result.json_view(), args, out)
