"""The shape the code keeps so a contributor can read it: no class in graphs/ or nodes/ with more than
20 methods (properties and dunders included). A class that grows past it splits its concerns
(as `FalkorDBGraph` keeps its graph-wide operations in `falkordb_graph_ops`)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST_METHODS = 20


def classes_and_methods() -> list[tuple[int, str]]:
    found = []
    for folder in ("graphs", "nodes"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    methods = [b for b in node.body if isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef)]
                    found.append((len(methods), f"{path.relative_to(ROOT)}:{node.name}"))
    return found


def test_no_class_has_more_than_twenty_methods():
    found = classes_and_methods()
    assert len(found) > 50  # the walk found the package's classes
    assert [name for count, name in found if count > MOST_METHODS] == []
