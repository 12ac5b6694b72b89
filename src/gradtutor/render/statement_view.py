"""The statement picture, in the style of the Stack Overflow answer:

    y ---------------------------->|
    b ----------->|                |
    w ------->|   |                |
    x --> x @ w + b = z --> BCE(z, y) = loss
                       \\--> BCE(z, y) = loss

How it is built, for each connected part of the graph:

1. Rows: the main row, feeder rows and branch rows (``statement_rows``).
2. Columns, in one pass over the nodes in graph order: a node starts after
   its left neighbour's arrow, and far enough right that each bar landing on
   it clears the row it comes from. A bar lands on the input's name in the
   label when it is there (``w`` drops onto the ``w`` of ``x @ w + b``).
3. Rows stacked: a row's nearest neighbour is the one whose connector is
   furthest left, so bars do not cross (the answer's "rightmost bars on top").
4. Drawn on a strict canvas; any overlap abandons the stacking for the next
   one. Edges no rule drew (a tensor read by two rows) are routed around
   the picture (``router``); one that finds no free path is named after its
   consumer's label (``x @ w + b = z ◀ also from w, b``) when the cells there
   are free; else the list is used. No input of a node is ever left out.

Markers go inline (``w [grad]``); when that is too wide, on a line under each
label instead. ``None`` means "no clean picture": wider than the width even
so, or every stacking overlapped. The caller then uses the vertical view.
"""

from __future__ import annotations

from typing import Callable

from gradtutor.render.canvas import Canvas, LayoutConflict
from gradtutor.render.cells import char_offset, text_width
from gradtutor.render.charset import HORIZONTAL, VERTICAL, E, N, S, W
from gradtutor.render.drawing import BY_LINE, BY_NAME, Picture
from gradtutor.render.graph_index import components, depths, heights
from gradtutor.render.landing import landing_columns, plain_name
from gradtutor.render.node_text import NodeText, Segment
from gradtutor.render.router import Bounds, Target, draw_path, route
from gradtutor.render.scene import Scene
from gradtutor.render.statement_rows import Row, RowPlan

STATEMENTS = "statements"
REF_STYLE = "ref"
Owned = dict[str, list[tuple[int, int]]]  # node -> line cells its routed edges may branch off
ARROW = 5  # " --> " between neighbours; "\--> " for a branch
BAR_GAP = 4  # " -->|": a bar stands at least this far past the end of its row


def layout_statements(scene: Scene) -> Picture | None:
    """The statement picture of ``scene``, or None when there is no clean one."""
    index = scene.index
    height, depth = heights(index), depths(index)
    picture = Picture(STATEMENTS)
    for part in components(index):
        # Markers inline first; when that is too wide, under the labels.
        drawn = _PartLayout(scene, part, height, depth, badges=False).draw()
        if drawn is None:
            drawn = _PartLayout(scene, part, height, depth, badges=True).draw()
        if drawn is None:
            return None
        picture.stack(drawn.lines, drawn.spans, drawn.anchors, drawn.markers)
        picture.edges.update(drawn.edges)
        picture.notes += drawn.notes
        picture.keys += [k for k in drawn.keys if k not in picture.keys]
    for s, d in index.back_edges:
        picture.edges[(s, d)] = BY_NAME
    return picture


class _PartLayout:
    """One connected part: rows, columns, stacking and drawing."""

    def __init__(
        self, scene: Scene, part: list[str], height: dict[str, int], depth: dict[str, int], badges: bool
    ) -> None:
        self.scene = scene
        self.index = scene.index
        self.part = part
        self.text: dict[str, NodeText] = {n: scene.text(n) for n in part}
        plan = RowPlan(scene.index, part, height, depth)
        self.main, self.row_of, self.rows = plan.main, plan.row_of, plan.rows()
        # With badges, the markers of a node in a chain go on the line under
        # its label. A node alone on its row (a leaf feeding a bar) keeps them
        # inline: on a line of their own they would read as a node.
        self.badge: dict[str, list[Segment]] = {
            n: _badge(self.text[n]) if badges and len(self.row_of[n].nodes) > 1 else [] for n in part
        }
        self.badge_width = {n: sum(text_width(seg.text) for seg in self.badge[n]) for n in part}
        self.width = {
            n: text_width(self.text[n].segments[0].text) if self.badge[n] else self.text[n].width for n in part
        }
        self.bars_into: dict[str, list[str]] = {}
        for row in self.rows:
            if row.bar_to is not None:
                self.bars_into.setdefault(row.bar_to, []).append(row.nodes[-1])
        self.landing = self._landings()
        self.leaves_down = {r.branch_from for r in self.rows if r.branch_from is not None and r.side > 0}
        self.x = self._columns()
        self.name_glyphs: list[str] = []  # how inputs named instead of drawn were pointed at

    # -- columns ---------------------------------------------------------
    def _landings(self) -> dict[tuple[str, str], int]:
        """Where each bar lands, in cells from the start of its consumer's label."""
        out: dict[tuple[str, str], int] = {}
        for consumer, tails in self.bars_into.items():
            cols = landing_columns(self.text[consumer], [plain_name(self.index.nodes[t]) for t in tails])
            out.update({(t, consumer): c for t, c in zip(tails, cols, strict=True)})
        return out

    def _columns(self) -> dict[str, int]:
        x: dict[str, int] = {}
        for n in self.part:
            row = self.row_of[n]
            i = row.nodes.index(n)
            lo = 0
            if i:
                left = row.nodes[i - 1]
                # Two blanks between badges; a branch going down leaves past the
                # badge, so then room for it under a dash of this arrow.
                room = 5 if left in self.leaves_down else 2
                lo = x[left] + max(self.width[left] + ARROW, self.badge_width[left] + room)
            elif row.branch_from is not None:
                lo = x[row.branch_from] + self._leave(row.branch_from, row.side > 0) + ARROW
            for tail in self.bars_into.get(n, []):
                clear = max(self.width[tail] + BAR_GAP, self.badge_width[tail] + 1)
                lo = max(lo, x[tail] + clear - self.landing[(tail, n)])
            x[n] = lo
        return x

    def _leave(self, src: str, down: bool) -> int:
        """Cells from a node's start to the column its branches leave from: its
        port, or past its badge when the branch goes down through it."""
        return max(self.width[src], self.badge_width[src] + 1) if down and self.badge[src] else self.width[src]

    # -- stacking --------------------------------------------------------
    def _stack(self, key: Callable[[Row], tuple[int, ...]]) -> list[Row]:
        def block(row: Row) -> list[Row]:
            above = sorted((c for c in row.children if c.side < 0), key=key)
            below = sorted((c for c in row.children if c.side > 0), key=key)
            out: list[Row] = []
            for c in reversed(above):
                out += block(c)
            out.append(row)
            for c in below:
                out += block(c)
            return out

        return block(self.main)

    def _bar_col(self, row: Row) -> int | None:
        if row.bar_to is None:
            return None
        return self.x[row.bar_to] + self.landing[(row.nodes[-1], row.bar_to)]

    def _branch_col(self, row: Row) -> int | None:
        if row.branch_from is None:
            return None
        return self.x[row.branch_from] + self._leave(row.branch_from, row.side > 0)

    def _stackings(self) -> list[Callable[[Row], tuple[int, ...]]]:
        """Orders of a row's neighbours, nearest first, tried in turn."""

        def branches_first(r: Row) -> tuple[int, ...]:
            bar, branch = self._bar_col(r), self._branch_col(r)
            return (1, bar) if bar is not None else (0, -(branch or 0))

        def bars_first(r: Row) -> tuple[int, ...]:
            bar, branch = self._bar_col(r), self._branch_col(r)
            return (0, bar) if bar is not None else (1, -(branch or 0))

        def by_column(r: Row) -> tuple[int, ...]:
            bar = self._bar_col(r)
            return (bar if bar is not None else self._branch_col(r) or 0,)

        return [branches_first, bars_first, by_column]

    # -- drawing ---------------------------------------------------------
    def draw(self) -> Picture | None:
        if max(self.x[n] + self.width[n] for n in self.part) > self.scene.width:
            return None
        if any(col >= self.width[d] for (_, d), col in self.landing.items()):
            return None  # more bars than characters to land on
        for key in self._stackings():
            order = self._stack(key)
            y: dict[int, int] = {}
            line = 0
            for row in order:
                y[id(row)] = line
                line += 2 if any(self.badge[n] for n in row.nodes) else 1
            try:
                canvas, drawn, owned = self._draw_rules(order, y)
            except LayoutConflict:
                continue
            picture = self._finish(canvas, drawn, owned, y)
            if picture is not None:
                return picture
        return None

    def _draw_rules(self, order: list[Row], y: dict[int, int]) -> tuple[Canvas, dict[tuple[str, str], str], Owned]:
        """Labels, arrows, branches and bars; LayoutConflict when two overlap."""
        canvas = Canvas(strict=True)
        drawn: dict[tuple[str, str], str] = {}
        owned: Owned = {}
        for row in order:
            r = y[id(row)]
            for i, n in enumerate(row.nodes):
                self._put_node(canvas, r, n)
                if i:
                    prev = row.nodes[i - 1]
                    self._arrow(canvas, prev, r, self.x[prev] + self.width[prev], self.x[n])
                    drawn[(prev, n)] = BY_LINE
        for row in order:
            r = y[id(row)]
            if row.branch_from is not None and row.parent is not None:
                self._branch(canvas, row.branch_from, y[id(row.parent)], r, row.nodes[0])
                drawn[(row.branch_from, row.nodes[0])] = BY_LINE
            if row.bar_to is not None and row.parent is not None:
                self._bar(canvas, owned, row.nodes[-1], r, row.bar_to, y[id(row.parent)])
                drawn[(row.nodes[-1], row.bar_to)] = BY_LINE
        return canvas, drawn, owned

    def _put_node(self, canvas: Canvas, r: int, n: str) -> None:
        col = self.x[n]
        segments = self.text[n].segments[:1] if self.badge[n] else self.text[n].segments
        for seg in segments:
            col = canvas.put_text(r, col, seg.text, seg.style)
        badge_col = self.x[n]
        for seg in self.badge[n]:
            badge_col = canvas.put_text(r + 1, badge_col, seg.text, seg.style)
        canvas.reserve(r, col)  # the blank after a label: its port
        if self.x[n] > 0:
            canvas.reserve(r, self.x[n] - 1)

    @staticmethod
    def _line(canvas: Canvas, owned: Owned, owner: str, r: int, c: int, arms: int, glyph: str | None = None) -> None:
        """A line cell that later routed edges of ``owner`` may branch off."""
        canvas.add_arms(r, c, arms, owner, glyph)
        owned.setdefault(owner, []).append((r, c))

    def _arrow(self, canvas: Canvas, owner: str, r: int, start: int, head_col: int) -> None:
        """`` ---> `` from the cell after ``start`` to the label at ``head_col``.
        Not offered to the router as a place to branch off: a junction inside
        an arrow would read as a different edge."""
        for c in range(start + 1, head_col - 2):
            canvas.add_arms(r, c, HORIZONTAL, owner)
        canvas.add_arms(r, head_col - 2, W, owner, self.scene.charset.east)

    def _branch(self, canvas: Canvas, src: str, rs: int, rh: int, head: str) -> None:
        """The answer's ``\\-->`` (or ``/-->``): down (up) from the source's port, then right."""
        step = 1 if rh > rs else -1
        col = self.x[src] + self._leave(src, step > 0)
        port = self.x[src] + self.width[src]
        if col > port:
            # Leaving past a badge: a junction on the label's own line first.
            for c in range(port + 1, col):
                canvas.add_arms(rs, c, HORIZONTAL, src)
            canvas.add_arms(rs, col, W | S, src)
        for r in range(rs + step, rh, step):
            canvas.add_arms(r, col, VERTICAL, src)
        canvas.add_arms(rh, col, (N if step > 0 else S) | E, src)
        self._arrow(canvas, src, rh, col, self.x[head])

    def _bar(self, canvas: Canvas, owned: Owned, tail: str, rt: int, consumer: str, rc: int) -> None:
        """The answer's ``---->|`` and the bar down (up) onto the consumer's label."""
        cs = self.scene.charset
        start = self.x[tail] + self.width[tail]
        col = self.x[consumer] + self.landing[(tail, consumer)]
        for c in range(start + 1, col - 1):
            self._line(canvas, owned, tail, rt, c, HORIZONTAL)
        if col - 1 > start:
            canvas.add_arms(rt, col - 1, HORIZONTAL, tail, cs.bar_arrow)
        step = 1 if rc > rt else -1
        self._line(canvas, owned, tail, rt, col, W | (S if step > 0 else N), cs.bar_corner)
        for r in range(rt + step, rc, step):
            self._line(canvas, owned, tail, r, col, VERTICAL)

    def _finish(
        self, canvas: Canvas, drawn: dict[tuple[str, str], str], owned: Owned, y: dict[int, int]
    ) -> Picture | None:
        """Route the edges no rule drew, then turn the canvas into a Picture;
        None when an edge finds no free path (no edge is ever left out)."""
        rows = {n: y[id(self.row_of[n])] for n in self.part}
        bounds = Bounds(min(rows.values()) - 1, max(rows.values()) + 1, self.scene.width)
        named: dict[str, list[str]] = {}
        for s, d in self.index.edges:
            if s not in self.row_of or (s, d) in drawn:
                continue
            target = Target(rows[d], self.x[d], self.width[d], self._name_cols(s, d))
            path = route(canvas, (rows[s], self.x[s] + self.width[s]), owned.get(s, []), target, bounds)
            if path is None:
                named.setdefault(d, []).append(s)
                continue
            draw_path(canvas, s, path, self.scene.charset)
            # Later paths may branch off this one, but not at its arrowhead or
            # the ASCII ">" before a drop: those would turn into junctions.
            owned.setdefault(s, []).extend(path.cells[:-2] if path.into & VERTICAL else path.cells[:-1])
            drawn[(s, d)] = BY_LINE
        for d, srcs in named.items():
            if not self._name_inputs(canvas, rows[d], d, srcs):
                return None  # an input the picture cannot show: the list names every input
            drawn.update({(s, d): BY_NAME for s in srcs})
        lines, spans = canvas.render(self.scene.charset)
        first = canvas.bounds()[0]
        picture = Picture(STATEMENTS, lines, spans)
        for glyph in dict.fromkeys(self.name_glyphs):
            key = f"{glyph} {self.scene.say('also_from')}"
            picture.keys.append((key, REF_STYLE, self.scene.say("also_from_key")))
        for n in self.part:
            line = rows[n] - first
            text = lines[line]
            start, end = char_offset(text, self.x[n]), char_offset(text, self.x[n] + self.width[n])
            picture.anchors[n] = (line, start, end)
            picture.markers |= self.text[n].markers
        picture.edges = drawn
        return picture

    def _name_inputs(self, canvas: Canvas, row: int, dst: str, srcs: list[str]) -> bool:
        """Write ``◀ also from w, b`` after ``dst``'s label, for inputs whose
        lines found no way through; False when the cells there are taken."""
        cs, names = self.scene.charset, ", ".join(self.scene.ref(s) for s in srcs)
        also = self.scene.say("also_from")
        # After the label; else, when an arrow leaves it there, under it.
        for r, start, glyph in ((row, self.x[dst] + self.width[dst] + 1, cs.ref), (row + 1, self.x[dst] + 1, cs.up)):
            text = f"{glyph} {also} {names}"
            end = start + text_width(text)
            # The cell before is the label's port (reserved) or must be blank.
            first = start if r == row else start - 1
            # Under the label, nothing may touch the arrowhead from below: a
            # line, a label, or the blank after a label ending there, which
            # would read as that label's edge up into this one.
            clear_below = r == row or all(canvas.is_free(r + 1, c) for c in (start - 1, start))
            if end <= self.scene.width and clear_below and all(canvas.is_free(r, c) for c in range(first, end + 1)):
                canvas.put_text(r, start, text, REF_STYLE)
                self.name_glyphs.append(glyph)
                return True
        return False

    def _name_cols(self, src: str, dst: str) -> frozenset[int]:
        cols = landing_columns(self.text[dst], [plain_name(self.index.nodes[src])], fallback=False)
        return frozenset(self.x[dst] + c for c in cols if c >= 0)


def _badge(text: NodeText) -> list[Segment]:
    """A node's bracketed markers, for the line under its label."""
    tags = list(text.segments[1:])
    if tags and tags[0].text == " [":
        tags[0] = Segment("[", tags[0].style)
    return tags
