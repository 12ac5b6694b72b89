"""The result of rendering: plain lines plus style spans, and how it was built.

``Drawing.lines`` is the whole text a front end prints: the picture, then (when
any marker or note needs one) a blank line and the legend. ``legend`` repeats
those last lines so a front end can place them elsewhere. Spans are
``(start, end, style)`` in *character* offsets of their line, ready for
``rich.text.Text``; style names are listed in ``view.THEME``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gradtutor.render.canvas import Span
from gradtutor.render.cells import char_offset, text_width

# How an edge of the graph appears in a drawing.
BY_LINE = "line"  # a connector joins the two nodes
BY_NAME = "name"  # the consumer names its input (a label or a "◀ x" reference)
FOLDED = "folded"  # the input is listed inside its consumer (op view parameters)


@dataclass(frozen=True)
class Drawing:
    """A rendered graph. ``view`` is the layout used: "statements", "layered",
    "vertical" or "empty". ``anchors`` gives ``(node id, line, start, end)``:
    where each node's words are, in character offsets of that line (each
    node is drawn exactly once; with markers under a label, the label only);
    ``edges`` gives ``(src, dst, how)`` for every edge, ``how`` one of
    "line", "name", "folded". ``keys``: the markers the legend explains, as
    drawn (``[grad]``), so a front end can leave them out of later legends."""

    lines: tuple[str, ...]
    spans: tuple[tuple[Span, ...], ...]
    legend: tuple[str, ...] = ()
    view: str = "empty"
    width: int = 80
    anchors: tuple[tuple[str, int, int, int], ...] = ()
    edges: tuple[tuple[str, str, str], ...] = ()
    keys: tuple[str, ...] = ()

    @property
    def picture(self) -> tuple[str, ...]:
        """The lines without the legend and the blank line before it."""
        cut = len(self.legend) + (1 if self.legend else 0)
        return self.lines[: len(self.lines) - cut]

    def rows_to_cut(self, rows: int) -> int:
        """How many first lines of the picture to leave out to keep at most
        ``rows``, cut where a node's entry starts: a kept part never begins
        with the wrapped end of an entry (``◀ x, w`` without its node)."""
        gone = max(0, len(self.picture) - rows)
        starts = [row for _, row, _, _ in self.anchors if row >= gone]
        return min(starts) if starts and gone else gone

    def last(self, rows: int) -> Drawing:
        """The last ``rows`` lines of the picture, and the whole legend."""
        picture = len(self.picture)
        if picture <= rows:
            return self
        gone = picture - rows
        keep = list(range(gone, len(self.lines)))
        return replace(
            self,
            lines=tuple(self.lines[i] for i in keep),
            spans=tuple(self.spans[i] for i in keep),
            anchors=tuple((a[0], a[1] - gone, a[2], a[3]) for a in self.anchors if a[1] >= gone),
        )

    def __str__(self) -> str:
        return "\n".join(self.lines)


@dataclass
class Picture:
    """What a view hands back before the legend is added."""

    view: str
    lines: list[str] = field(default_factory=list)
    spans: list[list[Span]] = field(default_factory=list)
    anchors: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # id -> (line, start, end)
    edges: dict[tuple[str, str], str] = field(default_factory=dict)
    markers: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    keys: list[tuple[str, str, str]] = field(default_factory=list)  # view-specific legend rows

    def stack(
        self,
        lines: list[str],
        spans: list[list[Span]],
        anchors: dict[str, tuple[int, int, int]],
        markers: set[str],
    ) -> None:
        """Add a block of lines below what is drawn, a blank line between."""
        if self.lines:
            self.lines.append("")
            self.spans.append([])
        offset = len(self.lines)
        self.lines += lines
        self.spans += spans
        self.anchors.update({n: (r + offset, a, b) for n, (r, a, b) in anchors.items()})
        self.markers |= markers


def fit_line(line: str, spans: list[Span], width: int) -> tuple[str, list[Span]]:
    """A last guard of the width promise: layouts already fit, this never cuts
    a correct drawing."""
    if text_width(line) <= width:
        return line, spans
    end = char_offset(line, width)
    while text_width(line[:end]) > width:
        end -= 1
    return line[:end], [(s, min(e, end), st) for s, e, st in spans if s < end]
