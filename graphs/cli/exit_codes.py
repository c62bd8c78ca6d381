"""The exit codes every command of the project uses, as `reflexion --help` and the README list them.

The command line's parser imports this module: it imports no pydantic model at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reflexion_agents.schemas.run_result import RunResult

EXIT_ANSWERED = 0
EXIT_NO_ANSWER = 1
EXIT_CONFIGURATION = 2
EXIT_DATABASE = 3
EXIT_INTERRUPTED = 130  # as shells report SIGINT

#: What each code means, as every `--help` lists it.
MEANINGS = {
    EXIT_ANSWERED: "the run answered",
    EXIT_NO_ANSWER: "no usable answer, or a run paused for approval (eval: accuracy below --min-accuracy)",
    EXIT_CONFIGURATION: "configuration error: bad arguments or settings, no model key, a missing provider package, "
    "an unknown graph or flow",
    EXIT_DATABASE: "the database could not be reached, before or during the run",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); an `ask` or `resume` run continues with `reflexion resume THREAD_ID`",
}


def exit_code(result: RunResult) -> int:
    """The exit code of a finished run, whichever agent or flow made it."""
    if result.stop_reason == "tool_unavailable":
        return EXIT_DATABASE
    if result.pending_approval is not None:  # paused: nothing is answered until someone decides
        return EXIT_NO_ANSWER
    return EXIT_ANSWERED if result.answered else EXIT_NO_ANSWER
