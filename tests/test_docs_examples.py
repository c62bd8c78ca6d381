"""The README and the pages under `docs/` as a reader meets them: every Python example compiles, every
relative link names a file that exists (and an anchor, a heading of that file as GitHub names it),
and every `reflexion` command in a shell example parses as written. Each failure names its file and
line."""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)=\"([^\"]+)\"")
# A code span: a run of backticks, then the shortest text (not across a blank line) up to a run of
# as many backticks.
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.S)
# An inline link or image, `[text](target)` or `[text](<target> "title")`; the text may hold
# brackets one level deep and run over lines.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^\s()<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
SHELL = {"", "bash", "sh", "shell", "console"}
COMMAND = re.compile(r"^(?:\.venv/bin/)?reflexion \w")


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, the line of its opening fence, and its text."""

    language: str
    fence_line: int
    code: str


@dataclass(frozen=True)
class Page:
    path: Path
    blocks: tuple[Block, ...]
    prose: str  # the page with every fenced block's lines blanked, so offsets keep their line numbers

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()


@cache
def read_page(path: Path) -> Page:
    blocks: list[Block] = []
    prose: list[str] = []
    fence: tuple[str, str, int] | None = None  # (marker, language, line) of the open block
    code: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if fence is None:
            opened = FENCE.match(line)
            if opened:
                fence, code = (opened.group(1), opened.group(2).lower(), number), []
                prose.append("")
            else:
                prose.append(line)
            continue
        prose.append("")
        marker, language, start = fence
        closing = line.strip()
        if closing and set(closing) == {marker[0]} and len(closing) >= len(marker):
            blocks.append(Block(language, start, "\n".join(code)))
            fence = None
        else:
            code.append(line)
    if fence is not None:  # an unclosed fence runs to the end of the page
        blocks.append(Block(fence[1], fence[2], "\n".join(code)))
    return Page(path, tuple(blocks), "\n".join(prose))


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def without_code_spans(text: str) -> str:
    """`text` with each code span blanked (its newlines kept), so what it quotes is not read as a link."""
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: the text (a link's text, code without its backticks),
    lowercase, punctuation other than hyphens and underscores removed, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors of a Markdown file: its headings' slugs (a repeated one numbered as GitHub numbers
    it: -1, -2, ...) and any explicit `<a name=...>` or `id=...`."""
    prose = read_page(path).prose
    found: set[str] = set(HTML_ANCHOR.findall(prose))
    seen: Counter[str] = Counter()
    for line in prose.splitlines():
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
            seen[base] += 1
    return frozenset(found)


def relative_links(page: Page) -> list[tuple[int, str]]:
    """Each relative link target of `page` (not a URL with a scheme), with its line."""
    prose = without_code_spans(page.prose)
    return [
        (line_of(prose, m.start()), m.group(1))
        for m in LINK.finditer(prose)
        if m.group(1) and not SCHEME.match(m.group(1))
    ]


def broken(page: Page, target: str) -> str | None:
    """Why `target`, a relative link of `page`, leads nowhere; None when it leads somewhere."""
    path_part, _, anchor = target.partition("#")
    destination = (page.path.parent / unquote(path_part)).resolve() if path_part else page.path
    if not destination.exists():
        return f"{path_part} does not exist"
    if not anchor:
        return None
    if destination.is_dir() or destination.suffix.lower() != ".md":
        return f"#{anchor} names a heading, but {path_part} is not a Markdown file"
    if unquote(anchor).lower() not in anchors(destination):
        return f"{destination.relative_to(ROOT).as_posix()} has no heading whose anchor is #{anchor}"
    return None


def python_blocks() -> list[tuple[Page, Block]]:
    return [
        (page, block)
        for page in map(read_page, PAGES)
        for block in page.blocks
        if block.language in {"python", "py", "python3"}
    ]


PYTHON_BLOCKS = python_blocks()


def test_the_readme_and_the_docs_pages_are_read():
    names = {path.relative_to(ROOT).as_posix() for path in PAGES}
    assert {"README.md", "docs/agents.md", "docs/security.md", "docs/development.md"} <= names
    readme = read_page(ROOT / "README.md")
    assert sum(block.language == "python" for block in readme.blocks) >= 3
    assert len(relative_links(readme)) >= 10


@pytest.mark.parametrize(
    ("page", "block"),
    PYTHON_BLOCKS,
    ids=[f"{page.name}:{block.fence_line + 1}" for page, block in PYTHON_BLOCKS],
)
def test_every_python_example_compiles(page: Page, block: Block):
    name = page.name
    source = "\n" * block.fence_line + block.code  # so an error's line number is the page's own
    try:
        compile(source, name, "exec")
    except SyntaxError as e:
        pytest.fail(f"{name}:{e.lineno}: the ```python block at line {block.fence_line} does not compile: {e.msg}")


@pytest.mark.parametrize("path", PAGES, ids=[path.relative_to(ROOT).as_posix() for path in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(path: Path):
    page = read_page(path)
    failures = [
        f"{page.name}:{line}: ({target}) {why}"
        for line, target in relative_links(page)
        if (why := broken(page, target)) is not None
    ]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", PAGES, ids=[path.relative_to(ROOT).as_posix() for path in PAGES])
def test_every_reflexion_command_in_a_shell_example_parses(path: Path):
    from reflexion_agents.graphs.cli import parser

    page = read_page(path)
    failures = []
    for block in page.blocks:
        if block.language not in SHELL:
            continue
        for offset, line in enumerate(block.code.splitlines(), 1):
            command = line.split("  #")[0].strip()
            if not COMMAND.match(command):
                continue
            try:
                parser().parse_args(shlex.split(command)[1:])
            except SystemExit:  # argparse's way of refusing an argument
                failures.append(f"{page.name}:{block.fence_line + offset}: {command}")
    assert not failures, "these commands do not parse:\n" + "\n".join(failures)


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Stop reasons: evidence before belief", "stop-reasons-evidence-before-belief"),
        ("The agent's options", "the-agents-options"),
        ("`make run`", "make-run"),
        ("Text-to-Cypher flows (`graphs/text2cypher_flow.py`)", "text-to-cypher-flows-graphstext2cypher_flowpy"),
        ("See [the flows](flows.md)", "see-the-flows"),
    ],
)
def test_anchors_are_made_as_github_makes_them(heading: str, anchor: str):
    assert slug(heading) == anchor
