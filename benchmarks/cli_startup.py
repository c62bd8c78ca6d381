"""Cold start of the command line: how long `reflexion --help` takes, and how much memory, in a fresh process.

    python -m benchmarks.cli_startup [--runs 7]

Every answer the command line gives without running anything (its help, an argument error) should
come at once; importing LangGraph alone takes about a second, so those answers must import none
of LangGraph, LangChain or the database drivers. Each command runs in a fresh process, after one
warm-up run that fills the OS file cache; the commands take turns, so a burst of load from other
processes falls on all of them alike. Wall time and peak RSS (`ru_maxrss` of that child, from
`os.wait4`) are medians. Importing LangGraph's `StateGraph` is the baseline the ratios compare
with; a bare `python -c pass` is the floor no command goes below.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.harness import machine

TARGET_S = 0.5
BASELINE = "import StateGraph (baseline)"

# Linux carries a process's peak RSS over exec, and a spawned child starts out with the peak of the
# process that spawned it: children of this process would all report its own peak (it imports the
# harness). So each command is spawned by this minimal interpreter (about 8.5 MB, less than any
# Python process it measures), which times the command alone and reports its `ru_maxrss`.
SPAWNER = """
import os, sys, time
devnull = os.open(os.devnull, os.O_WRONLY)
started = time.perf_counter()
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
code = os.waitstatus_to_exitcode(status)
print(wall, usage.ru_maxrss)
sys.exit(code)
"""


def commands() -> dict[str, list[str]]:
    python = sys.executable
    reflexion = str(Path(python).parent / "reflexion")  # the console script pyproject installs beside python
    return {
        "reflexion --help": [reflexion, "--help"],
        "reflexion ask --help": [reflexion, "ask", "--help"],
        BASELINE: [python, "-c", "from langgraph.graph import StateGraph"],
        "python -c pass (floor)": [python, "-c", "pass"],
    }


def run_once(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one fresh process running `command`, spawned by `SPAWNER`."""
    spawner = [sys.executable, "-S", "-I", "-c", SPAWNER, *command]
    done = subprocess.run(spawner, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    wall, max_rss_kb = done.stdout.split()
    return float(wall), int(max_rss_kb) / 1024  # ru_maxrss is in kB on Linux


def measure(runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Every command `runs` times (after one warm-up run each), the commands taking turns."""
    todo = commands()
    for command in todo.values():
        run_once(command)
    samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in todo}
    for _ in range(runs):
        for name, command in todo.items():
            wall, rss = run_once(command)
            samples[name][0].append(wall)
            samples[name][1].append(rss)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="measured runs of each command (default 7)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    samples = measure(args.runs)
    baseline = statistics.median(samples[BASELINE][0])
    print("| command | wall median (s) | wall min (s) | peak RSS median (MB) | wall vs baseline |")
    print("|---|---:|---:|---:|---:|")
    for name, (walls, rss) in samples.items():
        wall = statistics.median(walls)
        print(f"| {name} | {wall:.3f} | {min(walls):.3f} | {statistics.median(rss):.1f} | {wall / baseline:.2f}x |")
    print(f"\nFresh processes, median of {args.runs} runs after 1 warm-up run each.")
    print(f"Machine: {machine()}")
    measured = statistics.median(samples["reflexion --help"][0])
    verdict = "PASS" if measured < TARGET_S else "FAIL"
    print(f"RESULT cli_startup {measured:.2f}s <{TARGET_S:g}s {verdict}")


if __name__ == "__main__":
    main()
