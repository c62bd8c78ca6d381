"""Pictures of the compiled graphs: PNG and SVG through pygraphviz (offline), or Mermaid text.

LangGraph's own PNG renderers either need Graphviz (`draw_png`) or call a web service
(`draw_mermaid_png`); only the first works offline. pygraphviz's wheels carry Graphviz inside,
so it is a dependency: every drawing works on a fresh install with no system package. Mermaid
text (which GitHub, Studio and most notebooks render) is written for `.mmd`/`.md`, and is the
notebooks' fallback should pygraphviz be missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reflexion_agents.schemas.errors import ConfigurationError

#: The files `draw_to_file` writes, by extension.
PICTURES = {".png": "png", ".svg": "svg"}
TEXTS = (".mmd", ".md")


def rendered(graph: Any, fmt: str) -> bytes | None:
    """The graph rendered by Graphviz as `fmt` ("png", "svg"), or None without pygraphviz. LangChain's
    drawer lays the graph out (nodes, edges, styles); only the output format is chosen here."""
    try:
        import pygraphviz  # type: ignore[import-untyped]
        from langchain_core.runnables.graph_png import PngDrawer
    except ImportError:
        return None
    drawing, drawer = graph.get_graph(), PngDrawer()
    viz = pygraphviz.AGraph(directed=True, nodesep=0.9, ranksep=1.0)
    drawer.add_nodes(viz, drawing)
    drawer.add_edges(viz, drawing)
    drawer.add_subgraph(viz, [node.split(":") for node in drawing.nodes])
    drawer.update_styles(viz, drawing)
    try:
        data: bytes = viz.draw(None, format=fmt, prog="dot")
        return data
    finally:
        viz.close()


def png_bytes(graph: Any) -> bytes | None:
    """The graph as PNG, or None when pygraphviz is not installed."""
    return rendered(graph, "png")


def mermaid(graph: Any) -> str:
    return str(graph.get_graph().draw_mermaid())


def draw_to_file(graph: Any, path: str | Path) -> Path:
    """Write a .png or .svg picture, or .mmd/.md Mermaid text; any other extension is refused."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in PICTURES:
        data = rendered(graph, PICTURES[suffix])
        if data is None:
            raise ConfigurationError(
                "drawing a picture needs pygraphviz (pip install pygraphviz==2.0.4, a dependency of this "
                "package); write a .mmd file for Mermaid text instead"
            )
        target.write_bytes(data)
    elif suffix in TEXTS:
        target.write_text(mermaid(graph), encoding="utf-8")
    else:
        choices = ", ".join([*PICTURES, *TEXTS])
        raise ConfigurationError(f"cannot draw to {target.name}: the file must end in {choices}")
    return target


def show(graph: Any) -> Any:
    """For a notebook: the PNG as an image, or, without pygraphviz, the Mermaid text as Markdown
    (rendered by JupyterLab 4, VS Code and GitHub)."""
    from IPython.display import Image, Markdown

    data = png_bytes(graph)
    return Image(data) if data is not None else Markdown(f"```mermaid\n{mermaid(graph)}\n```")  # type: ignore[no-untyped-call]
