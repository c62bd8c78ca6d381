"""What a new user finds beside the code: the licence pyproject names, an `.env.example` with every
environment variable the README's configuration table and the code read, and a server config that
reads `.env`."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_variables() -> set[str]:
    """The variables of the README's table under "## Configuration"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\nRun context", 1)[0]
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)`", section, re.M)) | set(
        re.findall(r"^\| `[A-Z_]+`, `([A-Z][A-Z0-9_]+)`", section, re.M)
    )


def code_variables() -> set[str]:
    """The project's own variables the package reads."""
    found: set[str] = set()
    for folder in ("graphs", "nodes", "schemas"):
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(re.findall(r"\bREFLEXION_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    return found


def test_the_env_example_names_every_variable_the_readme_and_the_code_read():
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    named = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example, re.M))
    wanted = readme_variables() | code_variables()
    assert {"OPENAI_API_KEY", "NEO4J_URI", "REFLEXION_MODEL"} <= wanted  # the table was read
    assert wanted - named == set()


def test_the_licence_is_the_one_pyproject_names_and_the_server_reads_dot_env():
    license_name = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    assert license_name == "MIT" and (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["env"] == ".env"
    assert ".env" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()


@pytest.mark.integration
def test_the_wheel_carries_every_file_of_the_package_folders(tmp_path):
    """A user who installs the wheel gets what the package reads beside its code: the checkpoint
    compression dictionary (without it no thread can be saved or read), the demo graphs, the web
    page. The wheel is built as pip builds it, and compared with the files git keeps in the folders."""
    import subprocess
    import sys
    import zipfile

    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("reflexion_agents-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    kept = subprocess.run(
        ["git", "ls-files", "graphs", "nodes", "schemas"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert kept and "nodes/checkpoint_dictionary_1.zdict" in kept
    assert [f for f in kept if f"reflexion_agents/{f}" not in packed] == []
