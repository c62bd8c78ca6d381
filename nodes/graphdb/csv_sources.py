"""Where a script's `LOAD CSV` may read from, confined the way Neo4j confines it.

Neo4j reads `file:///` URLs under its import directory only (`server.directories.import`):
`file:///people.csv` is `<import>/people.csv`, and a path that leads out of it is refused. The
loader does the same with its import folders: `--csv-dir` and the folder of the script file.

- `file:///x.csv`, `x.csv` and `/x.csv` all name `x.csv` in an import folder; an http(s) URL names
  its path there, else its file name (files downloaded once, loaded offline).
- The file's real path (symlinks followed, `..` resolved) must be inside the folder, a regular
  file (not a FIFO or a device that would block or never end), and never under /proc, /sys or /dev.
- An http(s) URL found in no folder is fetched only when the caller allows it (`--allow-http`);
  it is streamed to a temporary file, never held in memory whole.

A script given as text (no file) with no `--csv-dir` has no import folder: it may read no file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

from reflexion_agents.schemas.errors import ConfigurationError

FETCH_TIMEOUT_S = 30.0
NEVER_READ = (Path("/proc"), Path("/sys"), Path("/dev"))
RULE = "LOAD CSV reads only files inside the import folders (--csv-dir, and the script's own folder)"


def _never_read(path: Path) -> bool:
    return any(path == root or path.is_relative_to(root) for root in NEVER_READ)


def import_folders(csv_dir: Path | None, script_dir: Path | None) -> list[Path]:
    """The folders files may be read from, resolved; a folder under /proc, /sys or /dev is refused."""
    folders = []
    for folder in (csv_dir, script_dir):
        if folder is None:
            continue
        resolved = Path(folder).resolve()
        if _never_read(resolved):
            raise ConfigurationError(
                f"{folder} cannot be an import folder: files under /proc, /sys and /dev are never read"
            )
        if resolved not in folders:
            folders.append(resolved)
    return folders


def _inside(candidate: Path, folder: Path, url: str) -> Path | None:
    """`candidate`'s real path if it is a regular file inside `folder`; None if there is no such file;
    a ConfigurationError naming the rule if it leads out of the folder or is not a regular file."""
    if not os.path.lexists(candidate):
        return None
    real = candidate.resolve()
    if _never_read(real) or not real.is_relative_to(folder):
        raise ConfigurationError(f"{RULE}: {url!r} leads to {real}, outside {folder}")
    try:
        mode = real.stat().st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return None
    if not stat.S_ISREG(mode):
        raise ConfigurationError(f"{RULE}, and regular files only: {url!r} is {real}, not a regular file")
    return real


def locate(url: str, folders: list[Path]) -> Path | None:
    """The file in an import folder that `url` names (its path, then its file name), or None."""
    try:
        parts = urlsplit(url)
    except ValueError as e:
        raise ConfigurationError(f"the CSV URL {url!r} is malformed: {e}") from e
    path = unquote(parts.path if parts.scheme else url)
    if not path.strip("/"):
        return None
    relative = path.lstrip("/")
    for folder in folders:
        for candidate in (folder / relative, folder / Path(relative).name):
            found = _inside(candidate, folder, url)
            if found is not None:
                return found
    return None


@contextlib.contextmanager
def opened_csv(
    url: str, csv_dir: Path | None = None, script_dir: Path | None = None, *, allow_http: bool = False
) -> Iterator[IO[str]]:
    """The CSV file `url` names, open as text (UTF-8, a BOM dropped), read as it is consumed."""
    folders = import_folders(csv_dir, script_dir)
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError as e:
        raise ConfigurationError(f"the CSV URL {url!r} is malformed: {e}") from e
    if scheme not in ("", "file", "http", "https"):
        raise ConfigurationError(f"cannot read the CSV URL {url!r}: use file:///name.csv, a file name or http(s)://")
    found = locate(url, folders)
    if found is not None:
        with found.open(encoding="utf-8-sig", newline="") as handle:
            yield handle
        return
    if scheme in ("http", "https"):
        if not allow_http:
            name = Path(unquote(urlsplit(url).path)).name or "the file"
            raise ConfigurationError(
                f"the script reads {url}, and fetching URLs is off: put {name} in the --csv-dir folder "
                "(it is found by name), or pass --allow-http to fetch it"
            )
        with _fetched(url) as handle:
            yield handle
        return
    where = ", ".join(str(f) for f in folders) or "no folder: pass --csv-dir with the folder that holds it"
    raise ConfigurationError(f"the CSV file {url!r} was not found in the import folders ({where}); {RULE}")


@contextlib.contextmanager
def _fetched(url: str) -> Iterator[IO[str]]:
    """`url` downloaded, streamed to a temporary file, open as text."""
    import httpx

    with tempfile.TemporaryFile() as spool:
        try:
            with httpx.stream("GET", url, timeout=FETCH_TIMEOUT_S, follow_redirects=True) as response:
                response.raise_for_status()
                for chunk in response.iter_bytes():
                    spool.write(chunk)
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            raise ConfigurationError(f"cannot fetch {url} ({type(e).__name__}: {e})") from e
        spool.seek(0)
        with open(spool.fileno(), encoding="utf-8-sig", newline="", closefd=False) as handle:
            yield handle
