"""`reflexion`: the command line of the project.

    reflexion ask "Who directed The Matrix?" [--flow reflexion|naive|retry|retry_evaluate|planner] [--approve] [--json]
    reflexion resume THREAD_ID [--decision approve|edit|reject [--query ...]]   # an interrupted or paused run
    reflexion threads [list|show ID|delete ID]   # the runs kept for resuming
    reflexion graphs [drop NAME --yes]    # the registered graphs, and those in the embedded database with counts
    reflexion schema NAME                 # a graph's schema as the prompts show it
    reflexion examples load NAME file.csv # few-shot examples for a graph, each checked read-only
    reflexion draw text2cypher_planner out.png   # a picture (.png, .svg), or .mmd for Mermaid text
    reflexion load script.cypher --graph mygraph [--csv-dir DIR]  # a Neo4j import script, LOAD CSV included
    reflexion load people.csv --label Person --key name             # CSV rows as nodes
    reflexion load acted.csv --relationship ACTED_IN --start Person.name=person --end Movie.title=movie
    reflexion serve [--port 2024]         # every graph behind LangGraph's server, offline
    reflexion scale --processes 2         # the same from several processes over PostgreSQL and Redis
    reflexion eval --model oracle|corrupt|simulated|openai:gpt-4o-mini [--agent retry_evaluate] [--limit 100]
    reflexion react "What is 465 times 321?" [--agent tools|wikipedia] [--sample-corpus] [--json]
    reflexion extract "I own a Fiat Panda with 45Hp." [--schema package.module:Model] [--json]

Exit codes (`EXIT_CODES`, shown by every `--help`): 0 answered, 1 no usable answer (eval: accuracy below
--min-accuracy), 2 configuration error (no model key, a missing provider package, an unknown graph or flow),
3 database unavailable (before or during the run), 130 interrupted.

This module declares every command's arguments and help; the commands run in the modules beside it:
`ask` (ask, resume), `catalog` (load, graphs, schema, examples), `evaluate` (eval), `agents` (react,
extract) and `serve` (the server launcher); `draw` is here. A command's module, and with it LangGraph,
LangChain and the database drivers (a second or more to import), is imported only when that command
runs: `--help` and an argument error answer at once. So this module imports nothing heavy, and the
values its help shows come from `schemas.constants`, not from the pydantic settings that check them.
The graphs `graphs`, `draw` and `serve` name are those of `graphs.registry`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reflexion_agents.graphs.cli.exit_codes import (
    EXIT_ANSWERED,
    EXIT_CONFIGURATION,
    EXIT_DATABASE,
    EXIT_INTERRUPTED,
    MEANINGS,
)
from reflexion_agents.graphs.cli.serve import DEFAULT_HOST, DEFAULT_JOBS, DEFAULT_PORT, DEFAULT_SCALE_JOBS
from reflexion_agents.nodes.evaluation.faults import FAULTS
from reflexion_agents.schemas.constants import (
    AGENT_MAX_STEPS,
    DEFAULT_MODEL,
    EVAL_MAX_STEPS,
    EVAL_QUERY_TIMEOUT_S,
    EXTRACTION_MAX_RETRIES,
    FLOW_NAMES,
    MAX_STEPS_LIMIT,
    MODEL_ENV,
)
from reflexion_agents.schemas.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    GraphDatabaseError,
    ScriptError,
)

#: How a failed import script's statement is named, by its fault (`ScriptError.fault`).
SCRIPT_FAULTS = {
    "dialect": "Not in FalkorDB's dialect",
    "data": "The database refused the script's data",
    "script": "The script failed",
}

if TYPE_CHECKING:
    from rich.console import Console

Command = Callable[[argparse.Namespace, "Console"], int]


class LazyCommand:
    """The command `name` of `graphs.cli.<module>`, imported when it runs, not when the parser is built.
    (A plain class: `dataclasses` would cost the parser more to import than the rest of it.)"""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, args: argparse.Namespace, out: Console) -> int:
        command: Command = getattr(importlib.import_module(f"reflexion_agents.graphs.cli.{self.module}"), self.name)
        return command(args, out)

    def __repr__(self) -> str:
        return f"LazyCommand({self.module!r}, {self.name!r})"


def cmd_draw(args: argparse.Namespace, out: Console) -> int:
    from reflexion_agents.graphs import registry
    from reflexion_agents.graphs.drawing import draw_to_file

    target = draw_to_file(registry.graph(args.name), args.output)
    out.print(f"Wrote {target}", highlight=False)
    return EXIT_ANSWERED


def cmd_serve(args: argparse.Namespace, out: Console) -> int:
    from reflexion_agents.graphs import registry
    from reflexion_agents.graphs.cli.serve import refuse_busy_port, serve

    refuse_busy_port(args.host, args.port)  # before saying where it serves
    out.print(f"Serving {len(registry.names())} graphs on http://{args.host}:{args.port} (Ctrl-C stops)")
    serve(args.host, args.port, args.reload, args.jobs)
    return EXIT_ANSWERED  # pragma: no cover - serve() replaces the process


def cmd_scale(args: argparse.Namespace, out: Console) -> int:
    from reflexion_agents.graphs.cli.scale_out import default_state_dir, scale

    state_dir = Path(args.state_dir) if args.state_dir else default_state_dir()
    say = lambda line: out.print(line, highlight=False)  # noqa: E731
    scale(args.processes, host=args.host, port=args.port, jobs=args.jobs, state_dir=state_dir, say=say)
    return EXIT_ANSWERED


def _run_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--agent",
        "--flow",
        dest="flow",
        choices=["reflexion", *FLOW_NAMES],
        default=None,
        help="the Reflexion agent or a text-to-Cypher flow (default reflexion; `resume`: the one that "
        "started the thread); `eval --agent` takes the same names",
    )
    command.add_argument(
        "--graph",
        help="a graph of the embedded database "
        "(default: $REFLEXION_DATABASE_URL and $REFLEXION_GRAPH, else the embedded movies graph)",
    )
    command.add_argument("--model", help="e.g. openai:gpt-4o-mini (default: $REFLEXION_MODEL)")
    command.add_argument(
        "--max-steps",
        type=int,
        help=f"step limit of the reflexion loop (default {AGENT_MAX_STEPS}); a run keeps the one it "
        "started with: `resume` may lower it, never raise it",
    )
    command.add_argument("--approve", action="store_true", help="ask at the terminal before each generated query runs")
    command.add_argument("--json", action="store_true", help="print the result as one JSON object")


def _add_run_commands(commands: Any) -> None:
    ask = commands.add_parser("ask", help="ask a knowledge-graph question")
    ask.add_argument("question", help="the question, in plain language")
    _run_options(ask)
    ask.add_argument("--thread", help="the thread id to store the run under (default: a new one)")
    ask.set_defaults(run=LazyCommand("ask", "cmd_ask"))
    resume = commands.add_parser("resume", help="resume an interrupted run, or answer a run paused for approval")
    resume.add_argument("thread_id", help="the thread the run is stored under (printed by `ask`)")
    resume.add_argument("--decision", choices=["approve", "edit", "reject"], help="for a run paused before a query")
    resume.add_argument("--query", help="with --decision edit: the query to run instead; with reject: why")
    _run_options(resume)
    resume.set_defaults(run=LazyCommand("ask", "cmd_resume"))
    draw = commands.add_parser("draw", help="draw a registered graph to a .png or .svg picture, or .mmd Mermaid text")
    draw.add_argument("name", help="a registered graph (see `reflexion graphs`)")
    draw.add_argument("output", help="the file to write: .png or .svg, or .mmd (or .md) for Mermaid text")
    draw.set_defaults(run=cmd_draw)


def _add_threads_command(commands: Any) -> None:
    threads = commands.add_parser("threads", help="list, show or delete the runs kept for resuming")
    threads.add_argument(
        "action", nargs="?", choices=["list", "show", "delete"], default="list", help="list (default), show or delete"
    )
    threads.add_argument("thread_id", nargs="?", help="with show or delete: the thread")
    threads.add_argument("--limit", type=int, default=20, help="list: the newest N threads (default 20)")
    threads.add_argument("--json", action="store_true", help="print JSON")
    threads.set_defaults(run=LazyCommand("threads", "cmd_threads"))


def _add_graph_commands(commands: Any) -> None:
    load = commands.add_parser("load", help="load a Cypher script or a CSV file into a graph of the embedded database")
    load.add_argument("file", help="a .cypher script (LOAD CSV included), or a .csv file with a header row")
    load.add_argument(
        "--graph", help="the graph to load into (default: named after the file; never the movies demo unless named)"
    )
    load.add_argument(
        "--csv-dir",
        help="a folder holding the CSV files a script's LOAD CSV names (matched by path, then file name); "
        "with the script's own folder, the only place LOAD CSV reads files from",
    )
    load.add_argument(
        "--allow-http",
        action="store_true",
        help="let a script's LOAD CSV fetch http(s) URLs not found in the folders (off by default)",
    )
    load.add_argument("--label", help="CSV: each row is a node with this label")
    load.add_argument("--key", help="CSV nodes: merge rows on this column (no duplicates on reload)")
    load.add_argument("--relationship", help="CSV: each row is a relationship of this type")
    load.add_argument("--start", help="CSV relationships: Label.property=column of the start node")
    load.add_argument("--end", help="CSV relationships: Label.property=column of the end node")
    load.add_argument(
        "--properties",
        help="CSV relationships: the columns that become properties, comma-separated ('' for none; default all others)",
    )
    load.add_argument(
        "--types",
        help="CSV: column types, e.g. id=string,price=float (string, integer, float, boolean); "
        "default: inferred per column",
    )
    load.add_argument("--all-strings", action="store_true", help="CSV: read every value as text")
    load.add_argument(
        "--lenient",
        action="store_true",
        help="CSV: skip malformed rows and bad values, and count them, instead of refusing the file",
    )
    load.set_defaults(run=LazyCommand("catalog", "cmd_load"))
    graphs = commands.add_parser(
        "graphs", help="list the graphs (registered, and in the embedded database), or drop one"
    )
    graphs.add_argument("action", nargs="?", choices=["list", "drop"], default="list", help="list (default) or drop")
    graphs.add_argument("name", nargs="?", help="with drop: the graph to drop")
    graphs.add_argument("--yes", action="store_true", help="with drop: do not ask")
    graphs.add_argument(
        "--registered-only", action="store_true", help="only the registered graphs (no database is started)"
    )
    graphs.add_argument("--json", action="store_true", help="print the list as JSON")
    graphs.set_defaults(run=LazyCommand("catalog", "cmd_graphs"))
    schema = commands.add_parser("schema", help="print the schema of a graph as the prompts show it")
    schema.add_argument("graph", help="a graph of the embedded database")
    schema.add_argument("--json", action="store_true", help="print the schema as JSON")
    schema.set_defaults(run=LazyCommand("catalog", "cmd_schema"))
    examples = commands.add_parser("examples", help="give a graph few-shot examples for the text-to-Cypher flows")
    examples.add_argument("action", choices=["load"], help="load: add the file's examples")
    examples.add_argument("graph", help="the graph the examples are for")
    examples.add_argument("file", help="a CSV file with question and cypher columns")
    examples.set_defaults(run=LazyCommand("catalog", "cmd_examples"))


#: The simulated model's rates as options: (flag, default, what it sets); `Misbehaviour` holds the same defaults
#: (a test checks they agree), written here so `--help` needs no import of the evaluation.
SIMULATED_RATES = (
    ("--draft-faults", 0.5, "share of first drafts with one mistake"),
    ("--revision-faults", 0.25, "share of rewritten queries (not sent back) with a new mistake"),
    ("--repeats", 0.1, "share of rewrites that send the last query back"),
    ("--self-scoring", 0.5, "share of scores that judge the model's own revision, not the result"),
    ("--odd-scores", 0.3, "share of scores written as '8/10', 'eight', '80%%'"),
    ("--prose-json", 0.1, "share of replies with JSON in prose instead of a tool call"),
)


def _add_eval_command(commands: Any) -> None:
    ev = commands.add_parser("eval", help="score execution accuracy over (question, gold Cypher) pairs")
    ev.add_argument(  # the names of graphs.evaluation.AGENTS (a test checks they agree)
        "--agent",
        "--flow",
        dest="agent",
        choices=("reflexion", *FLOW_NAMES),
        default="reflexion",
        help="the Reflexion agent or a text-to-Cypher flow to score (default reflexion)",
    )
    ev.add_argument(
        "--model",
        help="oracle, corrupt, simulated, or a chat model such as openai:gpt-4o-mini "
        f"(default: ${MODEL_ENV}, else {DEFAULT_MODEL})",
    )
    ev.add_argument(
        "--dataset",
        # no default here: `cmd_eval` fills in nodes.graphdb.demo_data.MOVIES_QUESTIONS_CSV (that module imports
        # pydantic)
        help="a CSV with question and cypher columns (default: the 767 movies questions)",
    )
    ev.add_argument(
        "--graph", help="a graph of the embedded database (default: the environment's database, else the movies graph)"
    )
    ev.add_argument("--limit", type=int, help="only the first N questions")
    ev.add_argument("--concurrency", type=int, default=8, help="questions running at once (default 8)")
    ev.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes sharing the questions, each running --concurrency at once (default 1; one is used "
        "for fewer than 50 questions a process or a Neo4j database)",
    )
    ev.add_argument(
        "--max-steps",
        type=int,
        default=EVAL_MAX_STEPS,
        help=f"step limit of the reflexion agent per question (default {EVAL_MAX_STEPS})",
    )
    ev.add_argument(
        "--query-timeout",
        type=float,
        default=EVAL_QUERY_TIMEOUT_S,
        help=f"seconds per query, gold and generated (default {EVAL_QUERY_TIMEOUT_S:g})",
    )
    ev.add_argument("--faults", help=f"corrupt model: comma-separated fault kinds (default all: {', '.join(FAULTS)})")
    simulated = ev.add_argument_group(
        "the simulated model (--model simulated)",
        "a model that misbehaves as real ones do, each rate a probability from 0 to 1; the first drafts depend on "
        "the seed and the question only, so every agent and flow gets the same ones",
    )
    for flag, default, what in SIMULATED_RATES:
        simulated.add_argument(flag, type=float, help=f"{what} (default {default:g})")
    simulated.add_argument("--seed", type=int, help="seed of the simulated model's choices (default 0)")
    ev.add_argument(
        "--no-trust-non-empty",
        action="store_true",
        help="reflexion: rows end the run only with a score above the threshold, or with none at all",
    )
    ev.add_argument(
        "--out", default="eval-results", help="directory for the JSON trace and Markdown summary (default eval-results)"
    )
    ev.add_argument("--min-accuracy", type=float, help="exit 1 when execution accuracy (percent) is below this")
    ev.add_argument(
        "--force",
        action="store_true",
        help="score a dataset that does not fit the graph (most gold results empty, foreign labels)",
    )
    ev.set_defaults(run=LazyCommand("evaluate", "cmd_eval"))


def _add_agent_commands(commands: Any) -> None:
    react = commands.add_parser("react", help="run a ReAct agent")
    react.add_argument("question", help="the question, in plain language")
    react.add_argument(
        "--agent",
        choices=["tools", "wikipedia"],
        default="tools",
        help="tools: arithmetic tools and the model; wikipedia: search and look up (default tools)",
    )
    react.add_argument(
        "--sample-corpus", action="store_true", help="Wikipedia: the offline sample instead of the live API"
    )
    react.add_argument("--model", help=f"e.g. openai:gpt-4o-mini (default: ${MODEL_ENV}, else {DEFAULT_MODEL})")
    react.add_argument("--json", action="store_true", help="print the result as one JSON object")
    react.set_defaults(run=LazyCommand("agents", "cmd_react"))
    extract = commands.add_parser("extract", help="extract validated structured output from a passage")
    extract.add_argument("passage", help="the text to extract from")
    extract.add_argument(
        "--schema", default="reflexion_agents.schemas.extraction:CarCollection", help="package.module:PydanticModel"
    )
    extract.add_argument(
        "--max-retries",
        type=int,
        default=EXTRACTION_MAX_RETRIES,
        # the words of setting_help(ExtractionSettings, "max_retries"), which imports pydantic (a test checks they
        # agree)
        help="Attempts after the first whose output does not validate "
        f"(an integer from 0 to {MAX_STEPS_LIMIT - 1}; default {EXTRACTION_MAX_RETRIES}).",
    )
    extract.add_argument("--model", help=f"e.g. openai:gpt-4o-mini (default: ${MODEL_ENV}, else {DEFAULT_MODEL})")
    extract.add_argument("--json", action="store_true", help="print the result as one JSON object")
    extract.set_defaults(run=LazyCommand("agents", "cmd_extract"))


def positive_int(text: str) -> int:
    """A count of one or more, refused by argparse (exit 2, with usage) otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _server_options(command: argparse.ArgumentParser, port_help: str, jobs: int, jobs_help: str) -> None:
    """The address, port and runs at once of a command that serves the graphs (`serve`, `scale`)."""
    command.add_argument("--host", default=DEFAULT_HOST, help=f"the address to listen on (default {DEFAULT_HOST})")
    command.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"{port_help} (default {DEFAULT_PORT})")
    command.add_argument("--jobs", type=positive_int, default=jobs, help=f"{jobs_help} (default {jobs})")


def _add_serve_command(commands: Any) -> None:
    serve = commands.add_parser("serve", help="serve every registered graph with LangGraph's server (offline)")
    _server_options(serve, "the port to listen on", DEFAULT_JOBS, "runs served at once; more wait in line")
    serve.add_argument("--reload", action="store_true", help="restart when the code changes")
    serve.set_defaults(run=cmd_serve)
    scale = commands.add_parser(
        "scale",
        help="serve every registered graph from several server processes over one PostgreSQL and one Redis",
        description="Needs the `scale` extra in an environment of its own: make scale does it all.",
    )
    scale.add_argument("--processes", type=positive_int, default=2, help="server processes (default 2)")
    port_help = "the first process's port; the next ones follow"
    _server_options(scale, port_help, DEFAULT_SCALE_JOBS, "runs each process serves at once")
    scale.add_argument(
        "--state-dir",
        default=None,
        help="PostgreSQL's and Redis's data, logs and servers.json (default: $REFLEXION_DATA_DIR/scale)",
    )
    scale.set_defaults(run=cmd_scale)


EXIT_CODES = "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in MEANINGS.items())


def _global_options(suppressed: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name (`reflexion ask --data-dir D ...`).
    On the commands their default is left out, so one given before the command is not undone."""
    options = argparse.ArgumentParser(add_help=False)
    default = argparse.SUPPRESS if suppressed else None
    options.add_argument(
        "--data-dir", default=default, help="embedded database directory (default: $REFLEXION_DATA_DIR)"
    )
    return options


class _Version(argparse.Action):
    """`--version`: the installed package's version, read only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            sys.stdout.write(f"reflexion {version('reflexion-agents')}\n")
        except PackageNotFoundError:  # a source tree that was never installed
            sys.stdout.write("reflexion (not installed)\n")
        parser.exit()


if TYPE_CHECKING:  # generic for the type checker only: the class is not subscriptable at run time
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _SubParsers = argparse._SubParsersAction


class _Commands(_SubParsers):
    """Subcommands that take the global options too."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("parents", []).append(_global_options(suppressed=True))
        kwargs.setdefault("epilog", EXIT_CODES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        added: argparse.ArgumentParser = super().add_parser(name, **kwargs)
        return added


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="reflexion",
        description="Self-correcting LLM agents over knowledge graphs.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_global_options(suppressed=False)],
    )
    root.add_argument("--version", action=_Version)
    root.register("action", "parsers", _Commands)
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run_commands(commands)
    _add_threads_command(commands)
    _add_graph_commands(commands)
    _add_agent_commands(commands)
    _add_eval_command(commands)
    _add_serve_command(commands)
    return root


def saved_thread(thread_id: str, question: str | None = None) -> bool:
    """Whether a run of `thread_id` is kept, so `reflexion resume` can continue it: with `question`, a
    run of that question (a thread's earlier, finished question is not the one interrupted)."""
    try:
        from reflexion_agents.nodes.checkpoints import durable_checkpointer

        saver = durable_checkpointer()
        saved = saver.get_tuple({"configurable": {"thread_id": thread_id}}) if saver is not None else None
    except Exception:  # the store cannot be read: do not promise a resume
        return False
    if saved is None:
        return False
    values = saved.checkpoint.get("channel_values") or {}
    return question is None or (values.get("question") == question.strip() and not values.get("stop_reason"))


def main(argv: list[str] | None = None) -> int:
    if not (sys.argv[1:] if argv is None else argv):  # a bare `reflexion`: what it can do, not a usage error
        parser().print_help()
        return EXIT_ANSWERED
    args = parser().parse_args(argv)
    from rich.console import Console  # after the arguments are read: `--help` and an argument error need no rich
    from rich.markup import escape

    for stream in (sys.stdout, sys.stderr):  # a model-written lone surrogate must not end the output
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)  # never break a query or path

    def failed(title: str, error: BaseException, code: int, message: str | None = None) -> int:
        """Say why on stderr; with --json, also as one JSON object on stdout, for scripts."""
        text = message or str(error)
        err.print(f"[red]{title}:[/red] {escape(text)}", highlight=False)
        if getattr(args, "json", False):
            document = {"error": type(error).__name__, "kind": title, "message": text, "exit_code": code}
            print(json.dumps(document, ensure_ascii=False), flush=True)
        return code

    try:
        code: int = args.run(args, out)
        return code
    except ScriptError as e:  # a script's statement: said as FalkorDB's dialect, the data, or the script
        return failed(SCRIPT_FAULTS.get(e.fault, "The script failed"), e, EXIT_CONFIGURATION)
    except ConfigurationError as e:
        return failed("Configuration error", e, EXIT_CONFIGURATION)
    except DatabaseUnavailableError as e:
        return failed("Database unavailable", e, EXIT_DATABASE)
    except GraphDatabaseError as e:  # the database refused a statement (a loader's data, say)
        return failed("The database refused it", e, EXIT_CONFIGURATION)
    except KeyboardInterrupt as e:
        thread = getattr(args, "thread", None) or getattr(args, "thread_id", None)
        said = "stopped."
        if args.command in ("ask", "resume"):
            said = (
                f"resume it with `reflexion resume {thread}`."
                if thread and saved_thread(thread, getattr(args, "question", None))
                else "stopped before anything was saved: ask again."
            )
        return failed("Interrupted", e, EXIT_INTERRUPTED, said)
