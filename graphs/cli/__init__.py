"""`reflexion`: the command line of the project.

    reflexion ask "Who directed The Matrix?" [--flow reflexion|naive|retry|retry_evaluate|planner] [--approve] [--json]
    reflexion resume THREAD_ID [--decision approve|edit|reject [--query ...]]   # an interrupted or paused run
    reflexion graphs [drop NAME --yes]    # the registered graphs, and those in the embedded database with counts
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

The commands live beside this parser: `ask` (ask, resume), `catalog` (load, graphs, schema, examples),
`evaluate` (eval), `agents` (react, extract) and `serve` (the server launcher); `draw` is here.
The graphs `graphs`, `draw` and `serve` name are those of `graphs.registry`.
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.markup import escape

from graphs.cli.agents import cmd_extract, cmd_react
from graphs.cli.ask import cmd_ask, cmd_resume
from graphs.cli.catalog import add_graph_commands
from graphs.cli.evaluate import add_eval_command
from graphs.cli.exit_codes import EXIT_ANSWERED, EXIT_CONFIGURATION, EXIT_DATABASE
from graphs.text2cypher_flow import FLOWS
from schemas.errors import ConfigurationError, DatabaseUnavailableError, GraphDatabaseError
from schemas.settings import AGENT_DEFAULTS, EXTRACTION_DEFAULTS, ExtractionSettings, setting_help


def cmd_draw(args: argparse.Namespace, out: Console) -> int:
    from graphs import registry
    from graphs.drawing import draw_to_file

    target = draw_to_file(registry.graph(args.name), args.output)
    out.print(f"Wrote {target}", highlight=False)
    return EXIT_ANSWERED


def cmd_serve(args: argparse.Namespace, out: Console) -> int:
    from graphs import registry
    from graphs.cli.serve import serve

    out.print(f"Serving {len(registry.names())} graphs on http://{args.host}:{args.port} (Ctrl-C stops)")
    serve(args.host, args.port, args.reload)
    return EXIT_ANSWERED  # pragma: no cover - serve() replaces the process


def _run_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--flow", choices=["reflexion", *FLOWS], default="reflexion")
    command.add_argument(
        "--graph",
        help="a graph of the embedded database "
        "(default: $REFLEXION_DATABASE_URL and $REFLEXION_GRAPH, else the embedded movies graph)",
    )
    command.add_argument("--model", help="e.g. openai:gpt-4o-mini (default: $REFLEXION_MODEL)")
    command.add_argument(
        "--max-steps",
        type=int,
        help=f"step limit of the reflexion loop (default {AGENT_DEFAULTS.max_steps}); a run keeps the one it "
        "started with: `resume` may lower it, never raise it",
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
    extract.add_argument(
        "--max-retries",
        type=int,
        default=EXTRACTION_DEFAULTS.max_retries,
        help=setting_help(ExtractionSettings, "max_retries"),
    )
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
