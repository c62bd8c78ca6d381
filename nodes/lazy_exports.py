"""A package's public names, each imported from its module on first use (PEP 562).

So `import reflexion_agents` and `import reflexion_agents.nodes.graphdb` cost nothing until a name is
used, and the command line answers `--help` without importing LangGraph or a database driver.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, sources: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose name `n` is `sources[n]`'s `n`; once read,
    a name is kept in the package, and found directly from then on."""

    def __getattr__(name: str) -> Any:
        if name not in sources:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(sources[name]), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *sources})

    return __getattr__, __dir__
