"""The JSON file of an evaluation report, written a trace at a time.

`reflexion eval` appends each finished question's trace to a `.jsonl` file as it ends
(`graphs.cli.evaluate`), and the run keeps none of them (`evaluate(keep_traces=False)`). The
report's JSON is then the summary and every trace read back from that file in the run's order
(the excluded questions first, then by fault kind and question), one line at a time: a
10,000-question run never holds its traces in memory, and the file reads as `EvaluationReport`.
"""

from __future__ import annotations

import json
from pathlib import Path

from reflexion_agents.schemas.evaluation import EvaluationReport

INDENT = 1


def _trace_key(trace: dict[str, object], faults: list[str]) -> tuple[int, int]:
    """Where a trace comes in the report: by fault kind (the corrupting model runs each kind in turn),
    then by its question's place in the dataset."""
    fault = trace.get("fault")
    kind = faults.index(fault) if isinstance(fault, str) and fault in faults else -1
    index = trace.get("index")
    return kind, index if isinstance(index, int) else -1


def write_report(report: EvaluationReport, traces_file: Path, path: Path) -> None:
    """`report` as JSON at `path`, its `traces` followed by those in `traces_file`, in order."""
    faults = [str(kind) for kind in report.options.get("faults", [])] if report.model == "corrupt" else []
    places: list[tuple[tuple[int, int], int]] = []
    with traces_file.open("rb") as lines:
        offset = 0
        for line in lines:
            if line.strip():
                places.append((_trace_key(json.loads(line), faults), offset))
            offset += len(line)
        places.sort()
        head = report.model_dump(mode="json", exclude={"traces"})
        partial = path.with_name(path.name + ".partial")  # a full disk leaves no half report under the name
        with partial.open("w", encoding="utf-8") as out:
            out.write("{\n")
            for name, value in head.items():
                out.write(f"{' ' * INDENT}{json.dumps(name)}: {json.dumps(value, indent=INDENT)},\n")
            out.write(f'{" " * INDENT}"traces": [')
            written = 0
            for trace in report.traces:
                out.write(("," if written else "") + "\n" + trace.model_dump_json())
                written += 1
            for _, offset in places:
                lines.seek(offset)
                out.write(("," if written else "") + "\n" + lines.readline().decode("utf-8").rstrip("\n"))
                written += 1
            out.write("\n]\n}\n")
    partial.replace(path)
