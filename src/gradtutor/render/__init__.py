"""Text drawings of autograd graphs, pure functions of the data model.

    render_graph(graph, *, width=80, charset="unicode", current_step=None,
                 level="statements", view=None) -> Drawing
    render_snapshot(snapshot, *, width=80, charset="unicode",
                    level="statements") -> Drawing
    GraphView(drawing_or_snapshot_or_graph, ...)   # a rich renderable

No torch here: everything drawn comes from ``gradtutor.model``.
"""

from __future__ import annotations

from gradtutor.render.compose import LAYERED_LIMIT, render_graph, render_snapshot
from gradtutor.render.drawing import BY_LINE, BY_NAME, FOLDED, Drawing
from gradtutor.render.view import THEME, GraphView

__all__ = [
    "BY_LINE",
    "BY_NAME",
    "FOLDED",
    "LAYERED_LIMIT",
    "THEME",
    "Drawing",
    "GraphView",
    "render_graph",
    "render_snapshot",
]
