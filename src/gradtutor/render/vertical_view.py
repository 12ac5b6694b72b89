"""The vertical view: one entry per node, each naming what it was computed from.

Used for op graphs too big for the layered view and whenever a statement
picture would not fit. Inputs come before the nodes that use them, so reading
top to bottom follows the program, and every entry names all its inputs
after a ``◀``; nothing hangs off anything, so no entry can be read as the
child of the one above it::

    x
    w [grad]
    b [grad]
    x @ w + b = z  ◀ x, w, b
    y
    BCE(z, y) = loss  ◀ z, y

Entries are as narrow as their words, so a 10,000-node graph stays as narrow
as its widest label; input lists too long for a line wrap under the entry.
Parts of the graph not connected to each other are set apart by a blank line.
In the op view a parameter folded into its op is named among the op's inputs.
"""

from __future__ import annotations


from gradtutor.render.cells import cut_cells, text_width
from gradtutor.render.drawing import BY_NAME, FOLDED, Picture
from gradtutor.render.node_text import NodeText
from gradtutor.render.scene import LineBuilder, Scene, end_line

REF_STYLE = "ref"
VERTICAL = "vertical"


def entry_order(scene: Scene) -> list[list[str]]:
    """Node ids in the order the list gives them, in groups of connected
    nodes: from each output (oldest first), its inputs before it, depth first
    in the order its words name them."""
    index = scene.index
    placed: set[str] = set()
    groups: list[list[str]] = []
    sinks = sorted((n for n in index.order if not index.succs[n]), key=index.seniority.__getitem__)
    for start in sinks + list(index.order):  # every node, even in a graph with a cycle
        if start in placed:
            continue
        group: list[str] = []
        stack: list[tuple[str, bool]] = [(start, False)]
        while stack:
            node_id, inputs_done = stack.pop()
            if inputs_done:
                group.append(node_id)
                continue
            if node_id in placed:
                continue
            placed.add(node_id)
            stack.append((node_id, True))
            for pred in reversed(_in_label_order(scene, node_id)):
                if pred not in placed:
                    stack.append((pred, False))
        _join(groups, group, scene)
    return groups


def _join(groups: list[list[str]], group: list[str], scene: Scene) -> None:
    """Add ``group``; one that reads a node of an earlier group (an input
    used by two outputs) goes at the end of the last such group, below every
    input it reads; a lone node goes with lone nodes."""
    if not groups:
        groups.append(group)
        return
    index = scene.index
    linked = {s for n in group for s in index.succs[n]} | {p for n in group for p in index.preds[n]}
    for earlier in reversed(groups):
        if linked & set(earlier) or (len(group) == 1 and all(not index.succs[n] and not index.preds[n] for n in earlier + group)):
            earlier += group
            return
    groups.append(group)


def layout_vertical(scene: Scene) -> Picture:
    """Draw ``scene`` as the list described in the module docstring."""
    groups = entry_order(scene)
    index = scene.index
    referenced = [p for group in groups for n in group for p in index.preds[n]]
    scene.set_suffixes(list(dict.fromkeys(referenced)))
    picture = Picture(VERTICAL)
    leads = _Leads(scene)
    for g, group in enumerate(groups):
        if g:
            _emit(picture, LineBuilder())
        for node_id in group:
            _emit_entry(picture, scene, node_id, leads)
    for s, d in index.edges:
        picture.edges[(s, d)] = BY_NAME
    for s, d in scene.folded_edges:
        picture.edges[(s, d)] = FOLDED
    if referenced or scene.params:
        picture.keys.append((scene.charset.ref, REF_STYLE, scene.say("ref_params" if scene.params else "ref")))
    return picture


class _Leads:
    """What one list's entries share: the ``◀`` that leads an entry's inputs
    (after the entry, or on a line of its own), and each input's reference
    with its width, measured once however many entries name it."""

    __slots__ = ("after", "after_width", "below", "below_width", "refs")

    def __init__(self, scene: Scene) -> None:
        self.after = f"  {scene.charset.ref} "
        self.after_width = text_width(self.after)
        self.below = "   " + self.after.lstrip()
        self.below_width = text_width(self.below)
        self.refs: dict[str, tuple[str, int]] = {}

    def ref(self, scene: Scene, node_id: str) -> tuple[str, int]:
        found = self.refs.get(node_id)
        if found is None:
            text = scene.ref(node_id)
            found = self.refs[node_id] = (text, text_width(text))
        return found


def _emit_entry(picture: Picture, scene: Scene, node_id: str, leads: _Leads) -> None:
    text = scene.text(node_id, scene.width)
    picture.anchors[node_id] = (len(picture.lines), 0, len(text.text))
    if text.markers:
        picture.markers |= text.markers
    refs = [leads.ref(scene, p) for p in _in_label_order(scene, node_id)]
    params = scene.params.get(node_id)
    width_limit = scene.width
    if not params:
        if not refs:
            _emit_plain(picture, text, "")
            return
        if text.width + leads.after_width + sum([w for _, w in refs]) + 2 * len(refs) - 2 <= width_limit:
            # Most entries: their inputs' names after the ◀, in one style, on its line.
            _emit_plain(picture, text, leads.after + ", ".join([r for r, _ in refs]))
            return
    line = LineBuilder()
    line.add_node(text)
    pieces: list[tuple[str, str | None]] = [(r, REF_STYLE) for r, _ in refs]
    widths = [w for _, w in refs]
    for param in params or ():
        param_text = scene.param_text(param, width_limit)
        picture.markers |= param_text.markers
        first, *rest = param_text.segments
        piece = first.text + "".join(seg.text for seg in rest)
        pieces.append((piece, first.style))
        widths.append(text_width(piece))
    lead, lead_width = leads.after, leads.after_width
    used = text.width + lead_width
    if used + sum(widths) + 2 * len(pieces) - 2 > width_limit:  # the inputs go on lines of their own under the entry
        _emit(picture, line)
        lead, lead_width = leads.below, leads.below_width
        line = LineBuilder()
        used = lead_width
    line.add(lead, REF_STYLE)
    last = len(pieces) - 1
    for i, (piece, style) in enumerate(pieces):
        sep = ", " if i < last else ""
        width = widths[i]
        if width + len(sep) > width_limit - used:  # (cheap test first: most pieces fit)
            limit = max(4, width_limit - lead_width - len(sep))
            if width > limit:
                piece = cut_cells(piece, limit, scene.charset.ellipsis)
                width = text_width(piece)
            if i and used + width + len(sep) > width_limit:
                _emit(picture, line)
                line = LineBuilder().add(" " * lead_width, REF_STYLE)
                used = lead_width
        line.add(piece, style)
        line.add(sep, REF_STYLE)
        used += width + len(sep)
    _emit(picture, line)


def _emit_plain(picture: Picture, text: NodeText, refs: str) -> None:
    """A line of the node's words and ``refs`` (in the reference style), as
    ``LineBuilder`` builds it, without one: most lines of a big list."""
    spans: list[tuple[int, int, str]] = []
    at = 0
    for seg in text.segments:
        end = at + len(seg.text)
        if seg.style is not None and end > at:
            spans.append((at, end, seg.style))
        at = end
    if refs:
        spans.append((at, at + len(refs), REF_STYLE))
    line, spans = end_line(text.text + refs, spans)
    picture.lines.append(line)
    picture.spans.append(spans)


def _in_label_order(scene: Scene, node_id: str) -> list[str]:
    """Inputs in the order the label names them: ``BCE(z, y)  ◀ z, y``."""
    found = scene.input_orders.get(node_id)
    if found is None:
        found = scene.input_orders[node_id] = _label_order(scene, node_id, scene.index.preds[node_id])
    return found


def _label_order(scene: Scene, node_id: str, refs: list[str]) -> list[str]:
    """(``refs`` itself when there is nothing to order: lists only read.)"""
    if len(refs) < 2:
        return refs
    label = scene.all_nodes[node_id].label
    # (by where each is named, then as listed: what a stable sort would give)
    placed = sorted([(word_at(label, scene.ref(r).split(" ")[0]), i) for i, r in enumerate(refs)])
    return [refs[i] for _, i in placed]


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what \w matches in a str pattern


def word_at(text: str, word: str) -> int:
    """Where ``word`` first stands alone in ``text`` (not inside a longer
    name, nor an attribute: ``w`` in ``x @ w`` but not in ``w2`` or
    ``self.w``); ``len(text)`` when it does not. (A search per name without
    a regular expression: a big graph has thousands of distinct names.)"""
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        before = text[start - 1] if start else ""
        if not (before and (_word_char(before) or before == ".")) and not (end < len(text) and _word_char(text[end])):
            return start
        start = text.find(word, start + 1)
    return len(text)


def _emit(picture: Picture, line: LineBuilder) -> None:
    text, spans = line.build()
    picture.lines.append(text)
    picture.spans.append(spans)
