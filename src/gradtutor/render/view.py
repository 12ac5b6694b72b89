"""``GraphView``: a drawing as a rich renderable, styled by a small theme.

With colour off (``NO_COLOR``, ``--plain``, output not a terminal, or
``Console(color_system=None)``) it prints exactly ``Drawing.lines``.
"""

from __future__ import annotations

from typing import Mapping

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Span, Text

from gradtutor.model import LEVEL_STATEMENTS, Graph, Snapshot
from gradtutor.render.cells import text_width
from gradtutor.render.compose import render_graph
from gradtutor.render.drawing import Drawing

# Style names used in Drawing.spans, and how a terminal shows them.
THEME: Mapping[str, str] = {
    "ghost": "dim",
    "new": "bold",
    "leaf": "green",
    "grad": "bold green",
    "freed": "red",
    "modified": "yellow",
    "saved-none": "cyan",
    "edge": "blue",
    "ref": "italic",
    "band": "bold blue",
    # The legend and notes are read, not skimmed: the terminal's own colour
    # (dim is unreadable on some dark and light themes alike).
    "legend": "none",
    "note": "italic",
}


class GraphView:
    """Renders a Drawing, or draws a Snapshot or Graph at the console's width.

    ``charset`` None picks ASCII when the console cannot encode Unicode
    (``options.ascii_only``). ``theme`` overrides style names.
    """

    def __init__(
        self,
        source: Drawing | Snapshot | Graph,
        *,
        width: int | None = None,
        charset: str | None = None,
        level: str = LEVEL_STATEMENTS,
        current_step: int | None = None,
        theme: Mapping[str, str] | None = None,
    ) -> None:
        self.source = source
        self.width = width
        self.charset = charset
        self.level = level
        self.current_step = current_step
        self.theme = {**THEME, **(theme or {})}

    def drawing(self, max_width: int, ascii_only: bool = False) -> Drawing:
        if isinstance(self.source, Drawing):
            return self.source
        step: int | None
        width = self.width or max_width
        charset = self.charset or ("ascii" if ascii_only else "unicode")
        if isinstance(self.source, Snapshot):
            graph, step = self.source.graph(self.level), self.source.step
        else:
            graph, step = self.source, self.current_step
        return render_graph(graph, width=width, charset=charset, current_step=step, level=self.level)

    def to_text(self, drawing: Drawing) -> Text:
        """All lines as one Text, spans mapped through the theme."""
        spans: list[Span] = []
        offset = 0
        for line, line_spans in zip(drawing.lines, drawing.spans, strict=True):
            spans += [Span(offset + s, offset + e, self.theme.get(style, "")) for s, e, style in line_spans]
            offset += len(line) + 1
        return Text("\n".join(drawing.lines), spans=spans, no_wrap=True, overflow="ignore", end="\n")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.to_text(self.drawing(options.max_width, options.ascii_only))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        drawing = self.drawing(options.max_width, options.ascii_only)
        widest = max((text_width(line) for line in drawing.lines), default=0)
        return Measurement(widest, widest)

