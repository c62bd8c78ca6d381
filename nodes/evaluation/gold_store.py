"""Gold results kept on disk while an evaluation runs, each read back when its question is scored.

A gold result holds up to `EVAL_ROW_CAP` rows; held in memory for every question, a 10,000-question
run would keep them all until its end. Here they go to a SQLite file in a temporary folder as the
gold queries run, and only the results of the questions being scored are in memory. Worker
processes (`graphs.eval_processes`) open the same file by its path. The file is the run's own and
is removed when the store closes; values are pickled, since they are read back only from there.
"""

from __future__ import annotations

import pickle
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path

from reflexion_agents.nodes.evaluation.gold import GoldResult

FILE_NAME = "gold.sqlite"


class GoldStore(MutableMapping[int, GoldResult]):
    """A mapping from a question's index to its gold result, in a SQLite file.

    `GoldStore()` makes a fresh file (removed by `close`, or by the interpreter's exit); `GoldStore(path)`
    opens one another process made, read-only."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._lock = threading.Lock()  # read from the event loop and from worker threads
        if path is not None:  # another process's file, read only: a wrong path is an error, not a new file
            self._folder = None
            self.path = Path(path)
            self._connection = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
            return
        self._folder = tempfile.TemporaryDirectory(prefix="reflexion-gold-")
        self.path = Path(self._folder.name) / FILE_NAME
        try:
            self._connection = sqlite3.connect(self.path, check_same_thread=False)
            # a scratch file that lives as long as the run: no journal, no waiting for the disk
            self._connection.execute("PRAGMA journal_mode=OFF")
            self._connection.execute("PRAGMA synchronous=OFF")
            self._connection.execute("CREATE TABLE gold (question INTEGER PRIMARY KEY, result BLOB NOT NULL)")
        except sqlite3.Error:
            self._folder.cleanup()
            raise

    def __setitem__(self, index: int, result: GoldResult) -> None:
        value = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock, self._connection:
            self._connection.execute("INSERT OR REPLACE INTO gold VALUES (?, ?)", (index, value))

    def __getitem__(self, index: int) -> GoldResult:
        with self._lock:
            row = self._connection.execute("SELECT result FROM gold WHERE question = ?", (index,)).fetchone()
        if row is None:
            raise KeyError(index)
        result: GoldResult = pickle.loads(row[0])  # this run's own file
        return result

    def __delitem__(self, index: int) -> None:
        with self._lock, self._connection:
            if not self._connection.execute("DELETE FROM gold WHERE question = ?", (index,)).rowcount:
                raise KeyError(index)

    def __iter__(self) -> Iterator[int]:
        with self._lock:
            indexes = [row[0] for row in self._connection.execute("SELECT question FROM gold ORDER BY question")]
        return iter(indexes)

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection.execute("SELECT count(*) FROM gold").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._connection.close()
        if self._folder is not None:
            self._folder.cleanup()

    def __enter__(self) -> GoldStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
