"""`reflexion ask` and `reflexion resume`: a knowledge-graph question, with live progress, optional
approval of each query at the terminal, and threads that survive the process (SQLite checkpoints).

A spinner names the step in progress while finished steps print above it; on a
terminal that is not interactive (a pipe, CI) only the step lines print.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from rich.console import Console
from rich.prompt import Prompt

from reflexion_agents.graphs.cli.catalog import require_graph
from reflexion_agents.graphs.cli.exit_codes import exit_code
from reflexion_agents.graphs.runner import ResumeOptions, Runner, RunTarget
from reflexion_agents.graphs.text2cypher_flow import FLOWS, Text2CypherFlow
from reflexion_agents.nodes.graphdb import connect
from reflexion_agents.nodes.graphdb.connect import load_demo_if_new, open_database, opened
from reflexion_agents.nodes.graphdb.locations import DEFAULT_GRAPH, backend_is_embedded, default_connection_args
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.run_result import RunResult
from reflexion_agents.schemas.text2cypher import Flow

NEXT_STEP = {
    "draft": "running the query",
    "execute_tool": "the model scores the result",
    "revise": "running the revised query",
}


class LiveProgress:
    """A spinner naming what runs now; `line` prints a finished step above it."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console, self.enabled = console, enabled
        self._status: Any = None

    def __enter__(self) -> LiveProgress:
        if self.enabled:
            self._status = self.console.status("the model drafts a query")
            self._status.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._status is not None:
            self._status.stop()

    def line(self, text: str) -> None:
        if self.enabled:
            self.console.print(text, highlight=False, markup=False)

    def now(self, what: str) -> None:
        if self._status is not None:
            self._status.update(what)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The spinner stopped while the person is asked: a live display redraws over a prompt and
        what is typed, so neither would show."""
        if self._status is not None:
            self._status.stop()
        try:
            yield
        finally:
            if self._status is not None:
                self._status.start()


def database(args: argparse.Namespace) -> Any:
    """The environment's database (`$REFLEXION_DATABASE_URL`, else `$NEO4J_URI`, else the embedded
    one), `--graph` naming a graph on it (a Neo4j database under Neo4j: never a silent switch to the
    embedded demo); `--data-dir` names the embedded database. Without either, the environment's graph
    (`$REFLEXION_GRAPH`), by default the embedded movies graph."""
    if args.data_dir is None:
        where = default_connection_args(args.graph)
        if args.graph is None or not backend_is_embedded(where):
            # a peer that is no database, or one down: exit 3 with the reason, never a traceback
            return opened(open_database, where)
    where = {"backend": "falkordb", "graph": args.graph or DEFAULT_GRAPH, "data_dir": args.data_dir}
    db = connect(where)
    if load_demo_if_new(db, where) is None:
        require_graph(db)
    return db


def _reflexion_agent(model: Any, db: Any, max_steps: int | None) -> RunTarget[Any]:
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent

    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=db, max_steps=max_steps).runner.target


def _flow(flow: Flow, model: Any, db: Any, max_steps: int | None) -> RunTarget[Any]:
    if max_steps is not None:  # a limit given must hold, not be ignored
        raise ConfigurationError(f"--max-steps limits the reflexion loop; the {flow} flow has no step limit")
    return Text2CypherFlow(flow, conversation_factory=lambda: model, database=db)


#: What `--flow` may name: each builds its agent or flow from (model, database, --max-steps).
ASKABLE: dict[str, Callable[[Any, Any, int | None], RunTarget[Any]]] = {
    "reflexion": _reflexion_agent,
    **{flow: partial(_flow, flow) for flow in FLOWS},
}


def runner(args: argparse.Namespace) -> Runner[Any]:
    """The runner of the agent or flow `--flow` names, on the embedded database. The agent's step
    limit is `--max-steps` (default 30) for a run it starts; a run it resumes keeps the limit it was
    started with (`run_context` below)."""
    build = ASKABLE[args.flow or "reflexion"]
    model = chat_model_from_env(args.model)
    return Runner(build(model, database(args), args.max_steps))


def run_context(args: argparse.Namespace) -> dict[str, Any] | None:
    """The context `ask` or `resume` sends. On `resume`, an explicit `--max-steps` is sent as the run's
    context: lower than the limit the run started with, it takes effect; higher, the run refuses it
    with a configuration error (exit 2) instead of silently running more, or fewer, steps than asked."""
    context: dict[str, Any] = {}
    if args.approve and args.command == "ask":
        context["require_approval"] = True
    if args.max_steps is not None and args.command == "resume":
        context["max_steps"] = args.max_steps
    return context or None


def edited(shown: str, console: Console) -> str:
    """The query to run instead. On a terminal the one shown is already on the line, to edit in place
    (readline's editing keys; Ctrl-U clears it); elsewhere (a pipe) the line typed is the query."""
    try:
        import readline
    except ImportError:  # no readline (Windows): type the query
        readline = None  # type: ignore[assignment]
    if readline is None or not sys.stdin.isatty():
        return Prompt.ask("Query to run instead", console=console)
    readline.set_startup_hook(lambda: readline.insert_text(shown))
    try:
        return input("Query to run instead (edit it; Ctrl-U clears): ")
    finally:
        readline.set_startup_hook()


def decide(pending: dict[str, Any], console: Console) -> Any:
    """Ask the person at the terminal what to do with the query a run paused on; the end of the
    input (a closed pipe) rejects it, so nothing runs unapproved."""
    console.print(f"\n[bold]Approve this query?[/bold] (step {pending.get('step')})", highlight=False)
    console.print(f"  {pending.get('query')}", highlight=False, markup=False)
    try:
        choice = Prompt.ask(
            "\\[a]pprove, \\[e]dit or \\[r]eject", choices=["a", "e", "r"], default="a", console=console
        )
        if choice == "e":
            query = ""
            while not query.strip():
                query = edited(str(pending.get("query") or ""), console)
            return {"action": "edit", "query": query}
        if choice == "a":
            return "approve"
        return {
            "action": "reject",
            "reason": Prompt.ask("Why (optional)", default="", console=console) or "rejected at the terminal",
        }
    except EOFError:
        console.print("No answer (end of input): the query is rejected.")
        return {"action": "reject", "reason": "no answer at the terminal"}


def _run(runner: Runner[Any], args: argparse.Namespace, progress: LiveProgress, start: Any) -> Any:
    """Run (or resume) until the run ends; with approval at the terminal, each pause asks the person.
    The agent reports its steps (`on_step`), a flow its events (`on_event`): each prints what it hears."""
    from reflexion_agents.graphs.main import print_step

    def on_step(step: int, node: str, message: Any, update: dict[str, Any]) -> None:
        if node not in NEXT_STEP:  # a flow's node: its events say what happens
            return
        if progress.enabled:
            print_step(step, node, message, update)
        progress.now(NEXT_STEP[node])

    def on_event(event: dict[str, Any]) -> None:
        progress.line(f"[{event['label']}] {json.dumps(event['payload'], default=str, ensure_ascii=False)[:200]}")
        progress.now(f"after {event['label'].lower()}")

    callbacks: ResumeOptions = {"on_step": on_step, "on_event": on_event}
    result = start(callbacks)
    while result.stop_reason == "awaiting_approval" and args.approve and not args.json:
        with progress.paused():
            decision = decide(result.pending_approval, progress.console)
        result = runner.resume(result.thread_id, decision, **callbacks)
    return result


def report(result: RunResult, args: argparse.Namespace, out: Console) -> int:
    code = exit_code(result)
    if args.json:
        print(json.dumps(result.json_view(), ensure_ascii=False, default=str))
    else:
        out.print("\n" + result.summary(), highlight=False, markup=False)
    if not args.json and result.pending_approval is not None:
        out.print(
            f"Paused before: {result.pending_approval['query']}\n"
            f"Resume: reflexion resume {result.thread_id} --decision approve|reject"
        )
    elif not args.json:
        out.print(f"[dim]thread {result.thread_id}[/dim]")
    return code


def cmd_ask(args: argparse.Namespace, out: Console) -> int:
    # the thread is named before the run starts, so an interrupted run can be told how to resume
    args.thread = args.thread or uuid.uuid4().hex
    target = runner(args)
    if not args.json:
        out.print(f"[bold]Question:[/bold] {args.question}", highlight=False)
    context = run_context(args)
    with LiveProgress(out, enabled=not args.json) as progress:
        result = _run(
            target, args, progress, lambda cb: target.ask(args.question, thread_id=args.thread, context=context, **cb)
        )
    return report(result, args, out)


def stored_thread(args: argparse.Namespace) -> None:
    """`resume`'s thread as stored: a prefix of one thread's id becomes that id, and with no `--flow`
    the agent or flow is the one that started the thread (a thread names its graph)."""
    from reflexion_agents.graphs.cli.threads import resolve_thread, thread_graph
    from reflexion_agents.nodes.checkpoints import durable_checkpointer

    saver = durable_checkpointer()
    if saver is None:  # nothing is kept: the runner says so
        return
    args.thread_id = resolve_thread(saver, args.thread_id)
    owner = thread_graph(saver, args.thread_id) or ""
    if args.flow is None:
        flow = owner.removeprefix("text2cypher_")
        args.flow = flow if flow in ASKABLE and flow != owner else "reflexion"


def cmd_resume(args: argparse.Namespace, out: Console) -> int:
    stored_thread(args)
    target = runner(args)
    decision: Any = None
    if args.decision == "edit":
        if not (args.query or "").strip():
            raise ConfigurationError("--decision edit needs --query with the query to run instead")
        decision = {"action": "edit", "query": args.query}
    elif args.decision:
        decision = (
            {"action": args.decision, "reason": args.query}
            if args.decision == "reject" and args.query
            else args.decision
        )
    with LiveProgress(out, enabled=not args.json) as progress:
        context = run_context(args)
        result = _run(target, args, progress, lambda cb: target.resume(args.thread_id, decision, context=context, **cb))
    return report(result, args, out)
