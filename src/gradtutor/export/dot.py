"""The graph of one step as Graphviz DOT, for people who draw with torchviz.

Nodes carry the words the picture gives them (``x @ w + b = z [✗ freed]``)
and its colours: freed in red, a set ``.grad`` in green, what was dropped or
lost its name in grey and dashed, what the step created in bold. Edges point
the way data flows, as in the picture.
"""

from __future__ import annotations

from gradtutor import __version__
from gradtutor.model import Graph
from gradtutor.render.charset import get_charset
from gradtutor.render.node_text import DROPPED, FREED, GRAD, LEAF_MARK, MODIFIED, NEW, OLD
from gradtutor.render.scene import make_scene
from gradtutor.render.words import Locate

_LABEL_WIDTH = 10_000  # never cut a label: Graphviz sizes its boxes


def render_dot(
    graph: Graph, *, title: str, current_step: int | None, charset: str = "unicode",
    language: str = "en", locate: Locate | None = None,
) -> str:
    scene = make_scene(graph, get_charset(charset), _LABEL_WIDTH, current_step, language, locate)
    out = [
        "digraph gradtutor {",
        f"  // {_comment(title)}, drawn by gradtutor {__version__}",
        f"  label={_quote(title)}; labelloc=t; fontname=\"DejaVu Sans\";",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded", fontname="DejaVu Sans Mono", fontsize=11];',
        "  edge [color=\"#3b6fb6\"];",
    ]
    for node in graph.nodes:
        text = scene.text(node.id)
        attrs = [f"label={_quote(text.text)}"]
        attrs += _marker_attrs(text.markers, node.is_ghost)
        out.append(f"  {_quote(node.id)} [{', '.join(attrs)}];")
    for edge in graph.edges:
        out.append(f"  {_quote(edge.src)} -> {_quote(edge.dst)};")
    out.append("}")
    return "\n".join(out) + "\n"


def _marker_attrs(markers: frozenset[str], ghost: bool) -> list[str]:
    if ghost or DROPPED in markers or OLD in markers:
        return ['color="#7f7f7f"', 'fontcolor="#7f7f7f"', 'style="rounded,dashed"']
    attrs: list[str] = []
    if FREED in markers:
        attrs += ['color="#cd0000"', 'fontcolor="#cd0000"']
    elif MODIFIED in markers:
        attrs += ['color="#b58900"', 'fontcolor="#b58900"']
    elif GRAD in markers or LEAF_MARK in markers:
        attrs += ['color="#008000"', 'fontcolor="#008000"']
    if NEW in markers:
        attrs.append("penwidth=2")
    return attrs


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _comment(text: str) -> str:
    return " ".join(text.split())
