"""The op view's picture: columns left to right, wrapped into bands.

    x [leaf] ─┬─▶ ExpBackward0 = a ─╮
              │                     ▼
              ╰─▶ SinBackward0 = b ─┴─▶ AddBackward0 = d

The ``▼`` says ``a``'s line flows into the one going to AddBackward0: lines
only ever run left to right, so the picture reads one way.

Columns and their order come from ``layering``; this module places boxes
vertically (each at the mean row of its neighbours, pushed down to keep a
blank row between boxes), routes each channel (``channels``), and draws.
Folded parameters are listed under their op's label.

When the picture is wider than the terminal it is cut between columns into
bands drawn one under the other; a line leaving a band ends in a letter,
``──▶ (a)``, and the next band starts from ``(a) ──▶``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

from gradtutor.render.canvas import Canvas, Span
from gradtutor.render.cells import char_offset, text_width
from gradtutor.render.channels import Group, channel_width, make_groups, route_channel, track_column
from gradtutor.render.charset import HORIZONTAL, E, N, S, W
from gradtutor.render.drawing import BY_LINE, BY_NAME, FOLDED, Picture
from gradtutor.render.layering import Layering, build_layering
from gradtutor.render.node_text import NodeText
from gradtutor.render.scene import Scene

LAYERED = "layered"
BAND_STYLE = "band"
PARAM_INDENT = 2
MAX_PUSHES = 200  # rows pushed down while routing one channel, before giving up


@dataclass(eq=False)
class _Box:
    id: str
    kind: str  # "node", "dummy", "entry" or "exit"
    net: str
    rows: list[NodeText | str]  # the label, then folded parameters (or a band letter)
    width: int
    label_width: int
    y: int = 0

    @property
    def height(self) -> int:
        return len(self.rows)


@dataclass
class _Band:
    lines: list[str]
    spans: list[list[Span]]
    anchors: dict[str, tuple[int, int, int]]
    width: int
    markers: set[str] = field(default_factory=set)


def layout_layered(scene: Scene) -> Picture | None:
    """The layered picture of ``scene`` (already folded), or None when even a
    single column with its neighbours' band letters is wider than the width."""
    layering = build_layering(scene.index)
    view = _LayeredView(scene, layering)
    bands = view.partition()
    if bands is None:
        return None
    picture = Picture(LAYERED)
    for band in bands:
        picture.stack(band.lines, band.spans, band.anchors, band.markers)
    for s, d in scene.index.edges:
        picture.edges[(s, d)] = BY_LINE
    for s, d in scene.index.back_edges:
        picture.edges[(s, d)] = BY_NAME
    for s, d in scene.folded_edges:
        picture.edges[(s, d)] = FOLDED
    if len(bands) > 1:
        picture.keys.append(("(a)", BAND_STYLE, scene.say("band")))
    return picture


class _LayeredView:
    def __init__(self, scene: Scene, layering: Layering) -> None:
        self.scene = scene
        self.layering = layering
        self.label_width = max(12, min(60, scene.width - 8))
        self.letters: dict[str, str] = {}

    # -- bands -----------------------------------------------------------
    def partition(self) -> list[_Band] | None:
        """Bands of as many columns as fit, measured by laying them out; then
        laid out again with their final letters, and drawn."""
        count = len(self.layering.layers)
        whole = self.band(0, count - 1)
        if whole is not None and self._fits(whole):
            return [_paint_band(self.scene, whole)]
        cuts: list[tuple[int, int]] = []
        start = 0
        while start < count:
            if not self._fits(self.band(start, start)):
                return None
            end = start
            while end + 1 < count and self._fits(self.band(start, end + 1)):
                end += 1
            cuts.append((start, end))
            start = end + 1
        self._name_letters(cuts)
        layouts = [self.band(a, b) for a, b in cuts]
        if not all(self._fits(b) for b in layouts):
            return None
        return [_paint_band(self.scene, b) for b in layouts if b is not None]

    def _fits(self, band: _BandLayout | None) -> bool:
        return band is not None and band.width <= self.scene.width

    def _leaving(self, layer: int) -> list[str]:
        """Boxes of ``layer`` with lines into the next column."""
        nxt = set(self.layering.layers[layer + 1]) if layer + 1 < len(self.layering.layers) else set()
        return [b for b in self.layering.layers[layer] if any(s in nxt for s in self.layering.succs[b])]

    def _name_letters(self, cuts: list[tuple[int, int]]) -> None:
        n = 0
        for _, end in cuts[:-1]:
            for box in self._leaving(end):
                self.letters[box] = _letter(n)
                n += 1

    # -- boxes -----------------------------------------------------------
    def _box(self, box_id: str) -> _Box:
        owner = self.layering.owner[box_id]
        if box_id != owner:
            return _Box(box_id, "dummy", owner, [""], 1, 1)
        text = self.scene.text(box_id, self.label_width)
        rows: list[NodeText | str] = [text]
        for param in self.scene.params.get(box_id, []):
            rows.append(self.scene.param_text(param, self.label_width - PARAM_INDENT))
        width = max([text.width] + [r.width + PARAM_INDENT for r in rows[1:] if isinstance(r, NodeText)])
        return _Box(box_id, "node", box_id, rows, width, text.width)

    def _pseudo(self, kind: str, source: str) -> _Box:
        """A band letter: where ``source``'s line leaves a band ("exit") or comes back ("entry")."""
        letter = f"({self.letters.get(source, 'a')})"  # "a" until the cuts are final: same width
        width = text_width(letter)
        return _Box(f"{kind}:{source}", kind, self.layering.owner[source], [letter], width, width)

    # -- one band --------------------------------------------------------
    def band(self, start: int, end: int) -> _BandLayout | None:
        """Lay out columns ``start`` to ``end``, with letter columns at the cuts."""
        columns: list[list[_Box]] = []
        links: dict[str, list[str]] = {}
        if start > 0:
            entries = [self._pseudo("entry", b) for b in self._leaving(start - 1)]
            for e in entries:
                links[e.id] = list(self.layering.succs[e.id.split(":", 1)[1]])
            columns.append(entries)
        for layer in range(start, end + 1):
            columns.append([self._box(b) for b in self.layering.layers[layer]])
            for b in self.layering.layers[layer]:
                if layer < end:
                    links[b] = list(self.layering.succs[b])
        if end + 1 < len(self.layering.layers):
            exits = [self._pseudo("exit", b) for b in self._leaving(end)]
            for e in exits:
                links[e.id.split(":", 1)[1]] = [e.id]
            columns.append(exits)
        return _layout_band(columns, links)


def _letter(n: int) -> str:
    letters = string.ascii_lowercase
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = letters[r] + out
    return out


def _backward(links: dict[str, list[str]]) -> dict[str, list[str]]:
    back: dict[str, list[str]] = {}
    for a, bs in links.items():
        for b in bs:
            back.setdefault(b, []).append(a)
    return back


def _place_rows(columns: list[list[_Box]], links: dict[str, list[str]]) -> None:
    """Each box at the mean row of its neighbours, a blank row between boxes:
    a sweep right to left by what each box feeds, then left to right by what
    feeds it (a box fed by nothing keeps its row)."""
    back = _backward(links)
    where: dict[str, _Box] = {b.id: b for col in columns for b in col}
    for col in columns:
        _pack(col, {b.id: 0.0 for b in col})
    for i in range(len(columns) - 2, -1, -1):
        _follow(columns[i], links, where)
    for i in range(1, len(columns)):
        _follow(columns[i], back, where)
    top = min((b.y for col in columns for b in col), default=0)
    for col in columns:
        for b in col:
            b.y -= top


def _follow(column: list[_Box], neighbours: dict[str, list[str]], where: dict[str, _Box]) -> None:
    """Pack ``column`` with each box wanting the mean row of its neighbours."""
    wanted = {}
    for b in column:
        rows = [where[n].y for n in neighbours.get(b.id, []) if n in where]
        wanted[b.id] = sum(rows) / len(rows) if rows else float(b.y)
    _pack(column, wanted)


def _pack(column: list[_Box], wanted: dict[str, float]) -> None:
    """Top to bottom in order: each box at its wanted row or just below the one above."""
    floor: int | None = None
    for box in column:
        y = round(wanted[box.id])
        if floor is not None:
            y = max(y, floor)
        box.y = y
        floor = y + box.height + 1


@dataclass
class _BandLayout:
    """Where everything of one band goes, before drawing."""

    columns: list[list[_Box]]
    links: dict[str, list[str]]
    where: dict[str, _Box]
    widths: list[int]
    channels: list[list[Group]]
    xs: list[int]  # first cell of each column

    @property
    def width(self) -> int:
        return self.xs[-1] + self.widths[-1] if self.xs else 0


def _layout_band(columns: list[list[_Box]], links: dict[str, list[str]]) -> _BandLayout | None:
    """Rows, channels and columns of one band; None if a channel never settles."""
    _place_rows(columns, links)
    where = {b.id: b for col in columns for b in col}
    widths = [max((b.width for b in col), default=1) for col in columns]
    back = _backward(links)
    channels: list[list[Group]] = []
    for i in range(len(columns) - 1):
        groups = _settle_channel(columns[i], columns[i + 1], links, where)
        if groups is None:
            return None
        channels.append(groups)
        if i + 2 < len(columns):
            _follow(columns[i + 2], back, where)  # column i+1 may have been pushed down
    xs = [0]
    for i in range(len(columns) - 1):
        tracks = max((g.track + 1 for g in channels[i] if g.track is not None), default=0)
        xs.append(xs[i] + widths[i] + channel_width(tracks))
    return _BandLayout(columns, links, where, widths, channels, xs)


def _paint_band(scene: Scene, layout: _BandLayout) -> _Band:
    canvas = Canvas(strict=False)
    band = _Band([], [], {}, 0)
    xs, widths = layout.xs, layout.widths
    for i, col in enumerate(layout.columns):
        for box in col:
            _draw_box(canvas, box, xs[i], widths[i], band)
    for i, groups in enumerate(layout.channels):
        for g in groups:
            box = layout.where[g.source]
            targets = [t for t in (layout.where.get(n) for n in layout.links.get(g.source, [])) if t is not None]
            _draw_group(canvas, g, box, xs[i], xs[i] + widths[i], xs[i + 1], targets, scene)
    band.lines, band.spans = canvas.render(scene.charset)
    first = canvas.bounds()[0]
    band.anchors = {
        k: (r - first, char_offset(band.lines[r - first], a), char_offset(band.lines[r - first], b))
        for k, (r, a, b) in band.anchors.items()
    }
    band.width = max((text_width(line) for line in band.lines), default=0)
    return band


def _settle_channel(
    left: list[_Box], right: list[_Box], links: dict[str, list[str]], where: dict[str, _Box]
) -> list[Group] | None:
    """Route one channel, pushing boxes of the right column down until the
    channel's rules hold; None if that does not settle."""
    right_ids = {b.id for b in right}
    for _ in range(MAX_PUSHES):
        fan_in = {b.id: 0 for b in right}
        sources = []
        for b in left:
            targets = [(t, where[t].y) for t in links.get(b.id, []) if t in right_ids]
            for t, _ in targets:
                fan_in[t] += 1
            if targets:
                sources.append((b.id, b.net, b.y, targets))
        groups = make_groups(sources, fan_in)
        result = route_channel(groups)
        if isinstance(result, int):
            return groups
        row = result[1]
        for b in right:
            if b.y >= row:
                b.y += 1
    return None


def _draw_box(canvas: Canvas, box: _Box, x: int, width: int, band: _Band) -> None:
    if box.kind == "dummy":
        for c in range(x, x + width):
            canvas.add_arms(box.y, c, HORIZONTAL, box.net)
        return
    for i, row in enumerate(box.rows):
        col = x + (PARAM_INDENT if i else 0)
        if isinstance(row, str):
            canvas.put_text(box.y + i, col, row, BAND_STYLE)
            continue
        for seg in row.segments:
            col = canvas.put_text(box.y + i, col, seg.text, seg.style)
        band.markers |= row.markers
    if box.kind == "node":
        band.anchors[box.id] = (box.y, x, x + box.label_width)


def _draw_group(
    canvas: Canvas, group: Group, box: _Box, x_col: int, x0: int, x1: int, linked: list[_Box], scene: Scene
) -> None:
    """One group's lines through the channel from ``x0`` (end of the column at
    ``x_col``) to ``x1`` (the next column): its row to the track, the track,
    and each target row to the next column (an arrowhead unless the target is
    a dummy, whose line simply goes on)."""
    # Each group owns its cells: where two groups' straight lines meet it is
    # a crossing even when both carry the same value (they go to different places).
    net = f"{group.net}@{id(group)}"
    start = x0 if box.kind == "dummy" else x_col + box.label_width + 1
    row = group.source_row
    targets = [t for t in linked if t.y in group.target_rows]
    if group.track is None:
        for c in range(start, x1 - 2):
            canvas.add_arms(row, c, HORIZONTAL, net)
        _arrive(canvas, targets[0], row, x1, net, scene)
        return
    tc = track_column(x0, group.track)
    for c in range(start, tc):
        canvas.add_arms(row, c, HORIZONTAL, net)
    lo, hi = group.span
    for r in range(lo, hi + 1):
        arms = (N if r > lo else 0) | (S if r < hi else 0)
        if r == row:
            arms |= W
        if r in group.target_rows:
            arms |= E
        glyph = None
        if r == group.arrow_row:  # flowing into a line that runs into a fan-in
            glyph = scene.charset.down if r < group.target_rows[0] else scene.charset.up
        canvas.add_arms(r, tc, arms, net, glyph)
    for t in targets:
        for c in range(tc + 1, x1 - 2):
            canvas.add_arms(t.y, c, HORIZONTAL, net)
        _arrive(canvas, t, t.y, x1, net, scene)


def _arrive(canvas: Canvas, target: _Box, row: int, x1: int, net: str, scene: Scene) -> None:
    if target.kind == "dummy":
        canvas.add_arms(row, x1 - 2, HORIZONTAL, net)
        canvas.add_arms(row, x1 - 1, HORIZONTAL, net)
    else:
        canvas.add_arms(row, x1 - 2, W, net, scene.charset.east)
