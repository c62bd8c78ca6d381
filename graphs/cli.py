"""`reflexion`: the command line of the project.

    reflexion ask "Who directed The Matrix?" [--flow reflexion|naive|retry|retry_evaluate|planner] [--approve] [--json]
    reflexion resume THREAD_ID [--decision approve|edit|reject [--query ...]]   # an interrupted or paused run
    reflexion graphs [drop NAME --yes]    # the graphs of langgraph.json, and those in the embedded database with counts
    reflexion schema NAME                 # a graph's schema as the prompts show it
    reflexion examples load NAME file.csv # few-shot examples for a graph, each checked read-only
    reflexion draw text2cypher_planner out.png   # a picture (PNG needs pygraphviz; .mmd writes Mermaid text)
    reflexion load script.cypher --graph mygraph [--csv-dir DIR]  # a Neo4j import script, LOAD CSV included
    reflexion load people.csv --label Person --key name             # CSV rows as nodes
    reflexion load acted.csv --relationship ACTED_IN --start Person.name=person --end Movie.title=movie
    reflexion serve [--port 2024]         # every graph behind LangGraph's server, offline
    reflexion eval --model oracle|corrupt|openai:gpt-4o-mini [--agent retry_evaluate] [--limit 100]
    reflexion react "What is 465 times 321?" [--agent tools|wikipedia] [--sample-corpus] [--json]
    reflexion extract "I own a Fiat Panda with 45Hp." [--schema package.module:Model] [--json]

Exit codes: 0 answered, 1 no usable answer (eval: accuracy below --min-accuracy), 2 configuration error (no model key,
a missing provider package, an unknown graph or flow), 3 database unavailable (before or during the run).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from graphs.cli_ask import LiveProgress, cmd_ask, cmd_resume
from graphs.cli_eval import add_eval_command
from graphs.cli_graphs import add_graph_commands
from graphs.exit_codes import EXIT_ANSWERED, EXIT_CONFIGURATION, EXIT_DATABASE, EXIT_NO_ANSWER
from graphs.serve import LANGGRAPH_JSON
from graphs.text2cypher_flow import FLOWS
from nodes.models.resolve import chat_model_from_env
from schemas.errors import ConfigurationError, DatabaseUnavailableError, GraphDatabaseError


def registered_graphs() -> dict[str, str]:
    return json.loads(LANGGRAPH_JSON.read_text())["graphs"]


def load_graph(name: str) -> Any:
    """The compiled graph `langgraph.json` registers as `name`."""
    graphs = registered_graphs()
    if name not in graphs:
        raise ConfigurationError(f"unknown graph {name!r}; the graphs are {', '.join(sorted(graphs))}")
    module_name, _, attribute = graphs[name].partition(":")  # module syntax: the installed package, any cwd
    module = importlib.import_module(module_name)
    return getattr(module, attribute)


def _finish(payload: dict[str, Any], answered: bool, text: str, args: argparse.Namespace, out: Console) -> int:
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, default=str))
    else:
        out.print(f"\n[bold]Stopped:[/bold] {payload['stop_reason']}\n{text}")
    return EXIT_ANSWERED if answered else EXIT_NO_ANSWER


def cmd_react(args: argparse.Namespace, out: Console) -> int:
    model = chat_model_from_env(args.model)
    if args.agent == "wikipedia":
        from graphs.wikipedia_react_agent import WikipediaReActAgent
        from nodes.tools.wikipedia import WikipediaTools

        tools = WikipediaTools.sample() if args.sample_corpus else None
        agent: Any = WikipediaReActAgent(lambda: model, wikipedia=tools)
    else:
        from graphs.react_agent import ReActAgent
        from nodes.tools.arithmetic import ARITHMETIC_TOOLS

        agent = ReActAgent(ARITHMETIC_TOOLS, lambda: model, add_llm_as_fallback=True)

    with LiveProgress(out, enabled=not args.json) as progress:
        progress.now("the model chooses an action")

        def step(number: int, node: str, message: Any, update: dict[str, Any]) -> None:
            for outcome in (update.get("outcomes") or [])[-1:] if node == "execute_tool" else []:
                progress.line(f"[step {number}] {outcome['action']} -> {outcome['content'][:200]}")
            progress.now("running the action" if node != "execute_tool" else "the model chooses the next action")

        result = agent.execute(args.question, on_step=step)
    text = f"{result.answer}" + (f"\nsources: {', '.join(result.sources)}" if result.sources else "")
    return _finish(result.model_dump(mode="json"), result.finished, text, args, out)


def _schema_class(spec: str) -> Any:
    module_name, _, class_name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as e:
        raise ConfigurationError(f"cannot import the schema {spec!r} (write package.module:ClassName): {e}") from e


def cmd_extract(args: argparse.Namespace, out: Console) -> int:
    from graphs.structured_output_agent import StructuredOutputReflectionAgent

    model = chat_model_from_env(args.model)
    agent = StructuredOutputReflectionAgent(_schema_class(args.schema), lambda: model, max_retries=args.max_retries)
    result = agent.extract(args.passage)
    payload = {
        **result.model_dump(mode="json"),
        "value": result.value.model_dump(mode="json") if result.value else None,
    }
    text = (
        json.dumps(payload["value"], ensure_ascii=False, indent=1) if result.ok else f"No valid output: {result.error}"
    )
    return _finish(payload, result.ok, text, args, out)


def cmd_draw(args: argparse.Namespace, out: Console) -> int:
    from graphs.drawing import draw_to_file

    target = draw_to_file(load_graph(args.name), args.output)
    out.print(f"Wrote {target}", highlight=False)
    return EXIT_ANSWERED


def cmd_serve(args: argparse.Namespace, out: Console) -> int:
    from graphs.serve import serve

    out.print(f"Serving {len(registered_graphs())} graphs on http://{args.host}:{args.port} (Ctrl-C stops)")
    serve(args.host, args.port, args.reload)
    return EXIT_ANSWERED  # pragma: no cover - serve() replaces the process


def _run_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--flow", choices=["reflexion", *FLOWS], default="reflexion")
    command.add_argument(
        "--graph",
        help="a graph of the embedded database (default: $REFLEXION_DATABASE_URL and $REFLEXION_GRAPH, else the embedded movies graph)",
    )
    command.add_argument("--model", help="e.g. openai:gpt-4o-mini (default: $REFLEXION_MODEL)")
    command.add_argument(
        "--max-steps",
        type=int,
        help="step limit of the reflexion loop (default 30); a run keeps the one it started with: "
        "`resume` may lower it, never raise it",
    )
    command.add_argument("--approve", action="store_true", help="ask at the terminal before each generated query runs")
    command.add_argument("--json", action="store_true", help="print the result as one JSON object")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="reflexion", description="Self-correcting LLM agents over knowledge graphs.")
    root.add_argument("--data-dir", help="embedded database directory (default: $REFLEXION_DATA_DIR)")
    commands = root.add_subparsers(dest="command", required=True)
    ask = commands.add_parser("ask", help="ask a knowledge-graph question")
    ask.add_argument("question")
    _run_options(ask)
    ask.add_argument("--thread", help="the thread id to store the run under (default: a new one)")
    ask.set_defaults(run=cmd_ask)
    resume = commands.add_parser("resume", help="resume an interrupted run, or answer a run paused for approval")
    resume.add_argument("thread_id")
    resume.add_argument("--decision", choices=["approve", "edit", "reject"], help="for a run paused before a query")
    resume.add_argument("--query", help="with --decision edit: the query to run instead; with reject: why")
    _run_options(resume)
    resume.set_defaults(run=cmd_resume)
    draw = commands.add_parser("draw", help="draw a registered graph to a .png or .mmd file")
    draw.add_argument("name")
    draw.add_argument("output")
    draw.set_defaults(run=cmd_draw)
    add_graph_commands(commands)
    react = commands.add_parser("react", help="run a ReAct agent")
    react.add_argument("question")
    react.add_argument("--agent", choices=["tools", "wikipedia"], default="tools")
    react.add_argument(
        "--sample-corpus", action="store_true", help="Wikipedia: the offline sample instead of the live API"
    )
    react.add_argument("--model")
    react.add_argument("--json", action="store_true")
    react.set_defaults(run=cmd_react)
    extract = commands.add_parser("extract", help="extract validated structured output from a passage")
    extract.add_argument("passage")
    extract.add_argument("--schema", default="schemas.extraction:CarCollection", help="package.module:PydanticModel")
    extract.add_argument("--max-retries", type=int, default=3)
    extract.add_argument("--model")
    extract.add_argument("--json", action="store_true")
    extract.set_defaults(run=cmd_extract)
    add_eval_command(commands)
    serve = commands.add_parser("serve", help="serve every registered graph with LangGraph's server (offline)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=2024)
    serve.add_argument("--reload", action="store_true", help="restart when the code changes")
    serve.set_defaults(run=cmd_serve)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    for stream in (sys.stdout, sys.stderr):  # a model-written lone surrogate must not end the output
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)  # never break a query or path
    try:
        return args.run(args, out)
    except ConfigurationError as e:
        err.print(f"[red]Configuration error:[/red] {escape(str(e))}", highlight=False)
        return EXIT_CONFIGURATION
    except DatabaseUnavailableError as e:
        err.print(f"[red]Database unavailable:[/red] {escape(str(e))}", highlight=False)
        return EXIT_DATABASE
    except GraphDatabaseError as e:  # the database refused a statement (a loader's data, say)
        err.print(f"[red]The database refused it:[/red] {escape(str(e))}", highlight=False)
        return EXIT_CONFIGURATION
    except KeyboardInterrupt:
        resumable = args.command in ("ask", "resume")
        err.print(
            "Interrupted"
            + (": a run with a thread id resumes with `reflexion resume THREAD_ID`." if resumable else ".")
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
