"""Queries that stopped the embedded database once, never sent to it again.

`nodes.graphdb.crash_forms` refuses the forms known to kill FalkorDB; this catches the ones
nobody has found yet, after their first crash. When the server dies on a command, its crash
report in `falkordb.log` names it (`graph_command:GRAPH.RO_QUERY <query>`). Before the embedded
server is started again, those reports are read and the queries they name are kept in the data
directory (`quarantined-queries.json`), for as long as the directory lives: any process on it,
now or later, refuses to send them, as a query error the model can act on, instead of killing
the server again (and failing every other client's queries while it restarts). Delete the file
to send them again (after upgrading FalkorDB, say).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path

QUARANTINE_FILE = "quarantined-queries.json"
LOG_FILE = "falkordb.log"
# A crash report's command line; the text (the query, after any CYPHER parameter header) runs to
# the blank line before the report's next section.
_COMMAND = re.compile(r"^graph_command:GRAPH\.[A-Za-z_]+ (.*?)\n(?:\n|-{6} )", re.MULTILINE | re.DOTALL)


# The adapter's row-cap wrapper (FalkorDBGraph._wrapped): a query is the same query under any cap.
_ROW_CAP_WRAPPER = re.compile(r"CALL \{\n(.*)\n\} RETURN [^\n]* LIMIT \d+$", re.DOTALL)


_OUT_OF_MEMORY = "Out Of Memory allocating"  # Redis's last words when an allocation fails
_READY = "Ready to accept connections"


def canonical(text: str) -> str:
    """A sent command's text with the row-cap wrapper taken off (the parameter header stays)."""
    return _ROW_CAP_WRAPPER.sub(r"\1", text)


def crashed_commands(log_text: str) -> list[str]:
    """The command text of each crash report in a server log, oldest first."""
    return [match.group(1) for match in _COMMAND.finditer(log_text)]


class Quarantine:
    """The quarantined queries of one data directory (read again only when its file changes)."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / QUARANTINE_FILE
        self.log = Path(data_dir) / LOG_FILE
        self._lock = threading.Lock()
        self._seen: tuple[float, int] | None = None
        self._texts: frozenset[str] = frozenset()
        self.died_out_of_memory = False  # the server before the current one, as its log told at the restart

    def texts(self) -> frozenset[str]:
        """The quarantined command texts (as sent: parameter header and query)."""
        try:
            stat = self.path.stat()
        except OSError:
            return frozenset()
        with self._lock:
            if self._seen != (stat.st_mtime, stat.st_size):
                try:
                    loaded = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    loaded = []
                self._texts = frozenset(canonical(t) for t in loaded if isinstance(t, str))
                self._seen = (stat.st_mtime, stat.st_size)
            return self._texts

    def holds(self, sent: Iterable[str]) -> bool:
        """True when any of the command texts `sent` (as they would be sent) crashed the server before."""
        texts = self.texts()
        return bool(texts) and any(canonical(text) in texts for text in sent)

    def harvest(self) -> list[str]:
        """Add the commands the server log's crash reports name; the ones new to the quarantine.
        Also notes whether the last server died out of memory (`died_out_of_memory`)."""
        try:
            log_text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        self.died_out_of_memory = log_text.rfind(_OUT_OF_MEMORY) > log_text.rfind(_READY)
        known = self.texts()
        new = [text for text in dict.fromkeys(crashed_commands(log_text)) if canonical(text) not in known]
        if new:
            temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(sorted(known) + new, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(temporary, self.path)
            with contextlib.suppress(OSError):
                self.texts()
        return new


_quarantines: dict[Path, Quarantine] = {}
_quarantines_lock = threading.Lock()


def quarantine_of(data_dir: str | Path) -> Quarantine:
    """The one Quarantine of this process for `data_dir`."""
    key = Path(data_dir).resolve()
    with _quarantines_lock:
        if key not in _quarantines:
            _quarantines[key] = Quarantine(key)
        return _quarantines[key]
