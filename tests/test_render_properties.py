"""Properties of every drawing, over random small DAGs, in every view:
each node is drawn exactly once, each edge is drawn (a connector, or named
where the consumer is), and no line is wider than asked."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from gradtutor.model import SAVED_FREED, SAVED_MODIFIED, SAVED_NONE, SAVED_PRESENT, Edge, Graph, Node
from gradtutor.render import BY_LINE, BY_NAME, FOLDED, Drawing, render_graph

KINDS = ("op", "statement", "leaf", "const")


# -- reading a drawing back --------------------------------------------------
# Which nodes do the lines of a drawing connect?
#
# An independent check of the renderer, working only from the text (and the
# anchors that say where each node's words are). Unicode pictures only: every
# box-drawing character says which neighbours it joins, so a path can be
# followed cell by cell; a horizontal line passing a ``│`` hops over it (a
# crossing). Band letters ``(a)`` join the end of one band to the start of the
# next. The vertical view is read by its own rules (``vertical_edge_drawn``).
N, E, S, W = 1, 2, 4, 8
MOVE = {N: (-1, 0), E: (0, 1), S: (1, 0), W: (0, -1)}
BACK = {N: S, S: N, E: W, W: E}
ARMS = {
    "─": E | W, "│": N | S, "╭": S | E, "╮": S | W, "╯": N | W, "╰": N | E,
    "├": N | S | E, "┤": N | S | W, "┬": E | W | S, "┴": E | W | N, "┼": N | E | S | W,
    "▶": W, "◀": E, "▼": N | S, "▲": N | S,
}
ONE_WAY = {"▼": S, "▲": N}  # a merge arrowhead is passed in its own direction only


class Reader:
    def __init__(self, drawing: Drawing, directed: bool = False) -> None:
        self.directed = directed
        self.lines = list(drawing.picture)
        self.region: dict[tuple[int, int], str] = {}
        self.anchors = {a[0]: a[1:] for a in drawing.anchors}
        for node_id, (line, start, end) in self.anchors.items():
            for col in range(start, end):
                self.region[(line, col)] = node_id
        self.letters: dict[str, list[tuple[int, int, int]]] = {}
        for i, line in enumerate(self.lines):
            for m in re.finditer(r"\(([a-z]+)\)", line):
                if all((i, c) not in self.region for c in range(m.start(), m.end())):
                    self.letters.setdefault(m.group(1), []).append((i, m.start(), m.end()))
                    for col in range(m.start(), m.end()):
                        self.region[(i, col)] = "(" + m.group(1) + ")"

    def glyph(self, row: int, col: int) -> str:
        if 0 <= row < len(self.lines) and 0 <= col < len(self.lines[row]):
            return self.lines[row][col]
        return " "

    def starts(self, row: int, end: int) -> list[tuple[int, int]]:
        """Line cells leaving the port (the blank after a label at ``end``)."""
        out = []
        for move, (dr, dc) in MOVE.items():
            if move == W:
                continue
            cell = (row + dr, end + dc)
            if ARMS.get(self.glyph(*cell), 0) & BACK[move]:
                out.append(cell)
        return out

    def reached(self, node_id: str) -> set[str]:
        row, _, end = self.anchors[node_id]
        return self._walk(self.starts(row, end), set())

    def _walk(self, todo: list[tuple[int, int]], seen_letters: set[str]) -> set[str]:
        found: set[str] = set()
        seen: set[tuple[int, int]] = set(todo)
        while todo:
            r, c = todo.pop()
            ch = self.glyph(r, c)
            if ch == "▶":
                found.add(self.region.get((r, c + 2), "?"))
            if ch == "◀":
                found.add(self.region.get((r, c - 2), "?"))
            for move, (dr, dc) in MOVE.items():
                if not ARMS.get(ch, 0) & move or (self.directed and move == W):
                    continue
                nxt = (r + dr, c + dc)
                if nxt in self.region and ch not in "▶◀":
                    found.add(self.region[nxt])
                    continue
                g = self.glyph(*nxt)
                if not ARMS.get(g, 0) & BACK[move] and g == "│" and move in (E, W):
                    nxt = (nxt[0] + dr, nxt[1] + dc)  # hop a crossing
                    g = self.glyph(*nxt)
                if self.directed and ONE_WAY.get(g, move) != move:
                    continue
                if ARMS.get(g, 0) & BACK[move] and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        for letter in [f for f in found if f.startswith("(")]:
            found.discard(letter)
            name = letter[1:-1]
            if name in seen_letters:
                continue
            seen_letters.add(name)
            for row, _, end in self.letters.get(name, []):
                found |= self._walk(self.starts(row, end), seen_letters)
        return found


def line_edges(drawing: Drawing, directed: bool = False) -> dict[str, set[str]]:
    """For each node, the nodes its lines reach (canvas views, Unicode).
    ``directed``: read as a person reads the op view, never walking a line
    right to left nor against an arrowhead."""
    reader = Reader(drawing, directed)
    return {node_id: reader.reached(node_id) for node_id in reader.anchors}


def vertical_entry(drawing: Drawing, node_id: str) -> tuple[int, str]:
    """The line of a node's entry in the list, and the entry's text after its
    words: its ``◀`` inputs, with the lines they wrap onto."""
    anchors = {a[0]: a[1:] for a in drawing.anchors}
    lines = drawing.picture
    line, _, end = anchors[node_id]
    starts = {a[0] for a in anchors.values()}
    text = lines[line][end:]
    row = line + 1
    while row < len(lines) and row not in starts and lines[row].startswith(" "):
        text += " " + lines[row]
        row += 1
    return line, text


def vertical_edge_named(drawing: Drawing, graph: Graph, src: str, dst: str, ref: str = "◀") -> bool:
    """Is ``src -> dst`` in the list: ``src``'s entry above ``dst``'s, whose
    inputs after the ``◀`` name ``src``?"""
    src_line, _ = vertical_entry(drawing, src)
    dst_line, inputs = vertical_entry(drawing, dst)
    node = next(n for n in graph.nodes if n.id == src)
    name = node.names[0] if node.names else node.former_names[0] if node.former_names else node.label
    named = re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", inputs.split(ref, 1)[-1])
    return src_line < dst_line and ref in inputs and named is not None


@st.composite
def small_dags(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(1, 10))
    nodes = []
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        named = draw(st.booleans())
        former = not named and draw(st.booleans())
        label = f"model.{i}.weight" if kind == "leaf" and not named and draw(st.booleans()) else f"L{i}"
        nodes.append(Node(
            f"n{i}", kind, label,
            names=(f"v{i}",) if named else (),
            former_names=(f"old{i}",) if former else (),
            step=draw(st.sampled_from([None, 1, 2])),
            saved=draw(st.sampled_from([SAVED_PRESENT, SAVED_FREED, SAVED_NONE, SAVED_MODIFIED])),
            has_grad=draw(st.booleans()),
            dropped=draw(st.booleans()) and draw(st.booleans()),
        ))
    pairs = [(i, j) for j in range(n) for i in range(j)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=14)) if pairs else []
    return Graph(tuple(nodes), tuple(Edge(f"n{i}", f"n{j}") for i, j in chosen))


def token(node: Node) -> str:
    """The word that identifies a node in its drawn words."""
    if node.kind in ("op", "statement"):
        return node.label
    return node.names[0] if node.names else node.former_names[0] if node.former_names else node.label


def picture_without_references(drawing) -> list[str]:
    out = []
    for line, spans in zip(drawing.picture, drawing.spans[: len(drawing.picture)], strict=True):
        chars = list(line)
        for start, end, style in spans:
            if style == "ref":
                chars[start:end] = " " * (end - start)
        out.append("".join(chars))
    return out


def check(graph: Graph, width: int, level: str, charset: str, view: str | None = None) -> None:
    drawing = render_graph(graph, width=width, charset=charset, current_step=2, level=level, view=view)
    assert all(cell_len(line) <= width for line in drawing.lines), drawing.lines
    if charset == "ascii":
        assert all(line.isascii() for line in drawing.lines), drawing.lines

    anchored = [a[0] for a in drawing.anchors]
    assert len(anchored) == len(set(anchored))
    folded = {s for s, _, how in drawing.edges if how == FOLDED}
    assert set(anchored) | folded == {n.id for n in graph.nodes}
    assert not set(anchored) & folded

    text = "\n".join(picture_without_references(drawing))
    for node in graph.nodes:
        found = re.findall(r"(?<![\w.])" + re.escape(token(node)) + r"(?![\w])", text)
        words = ""
        if node.id in anchored:
            line, start, end = next(a[1:] for a in drawing.anchors if a[0] == node.id)
            words = drawing.picture[line][start:end]
        if node.id in folded or words.startswith(token(node)):
            assert len(found) == 1, (node, found, drawing.lines)
        else:  # cut to fit: what is left is the start of its words, ending in an ellipsis
            cut = words.split("…")[0].split("...")[0]
            assert cut and token(node).startswith(cut) and not found, (node, words, drawing.lines)

    how = {(s, d): h for s, d, h in drawing.edges}
    assert set(how) == {(e.src, e.dst) for e in graph.edges}
    reached = None
    if charset == "unicode" and drawing.view != "vertical":
        reached = line_edges(drawing, directed=drawing.view == "layered")
    anchored_ids = set(anchored)
    for (src, dst), kind in how.items():
        if drawing.view == "vertical" and src in anchored_ids and dst in anchored_ids:
            # The list names every input of every entry; nothing hangs off anything.
            assert kind == BY_NAME and vertical_edge_named(drawing, graph, src, dst, "◀" if charset == "unicode" else "<-"), (
                src, dst, "\n".join(drawing.lines))
        elif kind == BY_NAME:
            names = src_names(graph, src)
            assert any(n in "\n".join(drawing.lines) for n in names)
        elif kind == BY_LINE and reached is not None:
            assert dst in reached[src], (src, dst, drawing.lines)
    if drawing.view == "statements":
        # Every edge of a statement picture is a line, or named on its
        # consumer (after its label, or under it): none is left out.
        for (src, dst), kind in how.items():
            if kind == BY_NAME:
                line, _, end = next(a[1:] for a in drawing.anchors if a[0] == dst)
                near = drawing.picture[line][end:] + " " + "".join(drawing.picture[line + 1 : line + 2])
                node = next(n for n in graph.nodes if n.id == src)
                name = node.names[0] if node.names else node.former_names[0] if node.former_names else node.label
                assert "also from" in near and re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", near.split("also from", 1)[1]), (
                    src, dst, drawing.lines)
    if reached is not None:
        # Read the way lines flow, nothing is reached that is not an input.
        succs = {n.id: {e.dst for e in graph.edges if e.src == n.id} for n in graph.nodes}
        for src, found in reached.items():
            assert found <= succs[src], (src, found, drawing.lines)


def src_names(graph: Graph, node_id: str) -> list[str]:
    node = next(n for n in graph.nodes if n.id == node_id)
    return [token(node)]


# Found by hypothesis: the "▲ also from" under L3's label sat right above the
# blank after L5's label, where L5's lines leave it, and read as L5's edge
# up into L3.
_ARROWHEAD_ABOVE_A_PORT = Graph(
    (
        Node("n0", "op", "L0", former_names=("old0",), saved=SAVED_PRESENT),
        Node("n1", "op", "L1", former_names=("old1",), step=2, has_grad=True),
        Node("n2", "op", "L2", saved=SAVED_PRESENT),
        Node("n3", "op", "L3", names=("v3",), saved=SAVED_PRESENT),
        Node("n4", "leaf", "L4", names=("v4",), step=1, saved=SAVED_PRESENT),
        Node("n5", "op", "L5", former_names=("old5",), saved=SAVED_FREED, has_grad=True),
        Node("n6", "op", "L6", saved=SAVED_PRESENT),
        Node("n7", "op", "L7", saved=SAVED_PRESENT),
    ),
    tuple(Edge(s, d) for s, d in [
        ("n0", "n1"), ("n0", "n3"), ("n4", "n5"), ("n1", "n5"), ("n1", "n3"), ("n0", "n7"), ("n2", "n3"), ("n0", "n4"),
    ]),
)


@settings(max_examples=300, deadline=None)
@given(small_dags(), st.integers(40, 120))
@example(_ARROWHEAD_ABOVE_A_PORT, 87)
def test_statement_level_draws_every_node_once_and_every_edge(graph: Graph, width: int) -> None:
    for charset in ("unicode", "ascii"):
        check(graph, width, "statements", charset)


@settings(max_examples=300, deadline=None)
@given(small_dags(), st.integers(40, 120))
def test_op_level_draws_every_node_once_and_every_edge(graph: Graph, width: int) -> None:
    for charset in ("unicode", "ascii"):
        check(graph, width, "ops", charset)


@settings(max_examples=100, deadline=None)
@given(small_dags(), st.integers(40, 120))
def test_vertical_view_draws_every_node_once_and_every_edge(graph: Graph, width: int) -> None:
    for level in ("statements", "ops"):
        for charset in ("unicode", "ascii"):
            check(graph, width, level, charset, view="vertical")


@given(st.text(alphabet=st.characters(max_codepoint=0x3100) | st.sampled_from("日本語◀▲…─│✗✓\u0301\t"), max_size=40))
@settings(max_examples=400, deadline=None)
def test_text_width_is_the_terminal_width_of_each_character(text: str) -> None:
    """The fast width (only characters that may not take one cell are looked
    up) equals rich's width counted character by character; ASCII is its length."""
    from gradtutor.render.cells import text_width

    expected = len(text) if text.isascii() else sum(cell_len(ch) for ch in text)
    assert text_width(text) == expected


def test_every_character_taken_as_one_cell_is_one_cell() -> None:
    """The characters the fast width never looks up (drawing signs among
    them) are each one cell wide for rich, every one of them."""
    from gradtutor.render.cells import ONE_CELL_RANGES

    one_cell = re.compile(f"[{ONE_CELL_RANGES}]")
    taken = [chr(cp) for cp in range(0x110000) if one_cell.match(chr(cp))]
    assert len(taken) > 700 and "◀" in taken and "─" in taken and "日" not in taken
    assert [ch for ch in taken if cell_len(ch) != 1] == []


@given(st.text(alphabet="ab_.1 é(),@+", max_size=14), st.text(alphabet="ab_.1é", max_size=3))
@settings(max_examples=500, deadline=None)
def test_a_name_is_found_alone_in_a_label_as_the_regular_expression_finds_it(label: str, name: str) -> None:
    """The vertical list orders inputs by where the label names them; the
    search (no regular expression per name) finds what ``(?<![\\w.])name(?!\\w)`` finds."""
    from gradtutor.render.vertical_view import word_at

    found = re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", label)
    assert word_at(label, name) == (found.start() if found else len(label))


def test_drawing_leaves_the_cycle_collector_as_it_found_it() -> None:
    """Drawing holds the cycle collector off while it runs; a program that
    turned it off finds it off afterwards, one that did not finds it on."""
    import gc

    graph = Graph((Node("x", "leaf", "x", names=("x",)), Node("y", "op", "MulBackward0", names=("y",), step=1)),
                  (Edge("x", "y"),))
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            gc.enable() if enabled else gc.disable()
            render_graph(graph, width=60)
            assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
