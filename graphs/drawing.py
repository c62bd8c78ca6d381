"""Pictures of the compiled graphs: PNG through pygraphviz (offline), else Mermaid text.

LangGraph's own PNG renderers either need Graphviz (`draw_png`) or call a web
service (`draw_mermaid_png`); only the first works offline, so it is the one
used, and Mermaid text (which GitHub, Studio and most notebooks render) is the
fallback when Graphviz is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemas.errors import ConfigurationError


def png_bytes(graph: Any) -> bytes | None:
    """The graph as PNG, or None when pygraphviz (and Graphviz) are not installed."""
    try:
        return graph.get_graph().draw_png()
    except ImportError:
        return None


def mermaid(graph: Any) -> str:
    return graph.get_graph().draw_mermaid()


def draw_to_file(graph: Any, path: str | Path) -> Path:
    """Write a .png (needs pygraphviz) or a .mmd/.md file (Mermaid text)."""
    target = Path(path)
    if target.suffix.lower() == ".png":
        data = png_bytes(graph)
        if data is None:
            raise ConfigurationError(
                "PNG drawing needs pygraphviz and Graphviz (apt install graphviz libgraphviz-dev; "
                "pip install pygraphviz); write a .mmd file for Mermaid text instead"
            )
        target.write_bytes(data)
    else:
        target.write_text(mermaid(graph), encoding="utf-8")
    return target


def show(graph: Any) -> Any:
    """For a notebook: the PNG as an image if pygraphviz is there, else the Mermaid text as
    Markdown (rendered by JupyterLab 4, VS Code and GitHub)."""
    from IPython.display import Image, Markdown

    data = png_bytes(graph)
    return Image(data) if data is not None else Markdown(f"```mermaid\n{mermaid(graph)}\n```")
