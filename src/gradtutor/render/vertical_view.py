"""The vertical view: one line per node, the longest chain down the left edge.

Used for op graphs too big for the layered view and whenever a statement
picture would not fit. Reading top to bottom follows the program:

    x
    ├─ w [grad]           side inputs hang off the chain, indented one step
    ├─ b [grad]
    ▼
    x @ w + b = z
    ▼
    BCE(z, y) = loss  ◀ y    an input drawn elsewhere is named, not drawn again

Only side inputs indent (3 cells a level), so a 10,000-node chain stays as
narrow as its widest label. Past ``max_level`` a side input is drawn as its
own block further down and named where it is used.
"""

from __future__ import annotations

import re
import textwrap
from collections import deque
from dataclasses import dataclass, field

from gradtutor.render.canvas import EDGE_STYLE
from gradtutor.render.cells import text_width
from gradtutor.render.drawing import BY_LINE, BY_NAME, FOLDED, Picture
from gradtutor.render.graph_index import heights
from gradtutor.render.landing import first_input
from gradtutor.render.scene import LineBuilder, Param, Scene

REF_STYLE = "ref"
PIECE = 3  # cells of each prefix piece: "│  ", "├─ ", "┌─ ", "   "
VERTICAL = "vertical"


@dataclass(slots=True)
class _Item:
    kind: str  # "node", "down" or "param"
    node_id: str | None = None
    refs: list[str] = field(default_factory=list)
    param: Param | None = None
    continues: bool = False  # its chain goes on below it
    prefix: list[str] = field(default_factory=list)  # innermost piece first


class _Blocks:
    """Builds the list as blocks of items: one block per output, plus the
    side inputs deferred for being nested too deep."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.index = scene.index
        self.height = heights(scene.index)
        self.drawn: set[str] = set()
        self.edges: dict[tuple[str, str], str] = {}
        self.deferred: deque[str] = deque()
        self.max_level = max(1, (scene.width - 16) // PIECE)  # keep 16 cells for the words
        self.tee = scene.charset.tee
        self.spine = scene.charset.spine

    def chain_to(self, end: str) -> list[str]:
        """The longest undrawn path ending at ``end`` (ties: ``first_input``)."""
        chain = [end]
        self.drawn.add(end)
        current = end
        while True:
            free = [p for p in self.index.preds[current] if p not in self.drawn]
            if not free:
                break
            current = first_input(self.index, current, free, self.height)
            chain.append(current)
            self.drawn.add(current)
        chain.reverse()
        return chain

    def block(self, end: str, level: int) -> list[_Item]:
        """The chain ending at ``end``, each node preceded by its undrawn inputs
        (indented blocks of their own) and its folded parameters."""
        chain = self.chain_to(end)
        items: list[_Item] = []
        previous: str | None = None
        for i, node_id in enumerate(chain):
            side: list[_Item] = []
            refs: list[str] = []
            for p in self.index.preds[node_id]:
                if p == previous:
                    continue
                if p in self.drawn or level + 1 > self.max_level:
                    if p not in self.drawn:
                        self.deferred.append(p)
                    refs.append(p)
                    self.edges[(p, node_id)] = BY_NAME
                else:
                    sub = self.block(p, level + 1)
                    for item in sub[:-1]:
                        item.prefix.append(self.spine)
                    sub[-1].prefix.append(self.tee)
                    side += sub
                    self.edges[(p, node_id)] = BY_LINE
            for param in self.scene.params.get(node_id, []):
                side.append(_Item("param", param=param, prefix=[self.tee]))
            if previous is None:
                self._open_top(side)
            items += side
            if previous is not None:
                self.edges[(previous, node_id)] = BY_LINE
            if previous is not None or side:
                items.append(_Item("down"))
            items.append(_Item("node", node_id, refs, continues=i < len(chain) - 1))
            previous = node_id
        return items

    def _open_top(self, side: list[_Item]) -> None:
        """Inputs of a chain's first node: nothing is above them, so the spine
        starts at the first of them (``┌─``), not higher."""
        for item in side:
            if item.prefix[-1] == self.tee:
                item.prefix[-1] = self.scene.charset.first_tee
                return
            item.prefix[-1] = " " * len(self.spine)

    def all_blocks(self) -> list[list[_Item]]:
        sinks = sorted((n for n in self.index.order if not self.index.succs[n]), key=self.index.seniority.__getitem__)
        blocks = [self.block(n, 0) for n in sinks if n not in self.drawn]
        while self.deferred:
            n = self.deferred.popleft()
            if n not in self.drawn:
                blocks.append(self.block(n, 0))
        for n in self.index.order:  # unreachable for a DAG; never lose a node anyway
            if n not in self.drawn:
                blocks.append(self.block(n, 0))
        return blocks


def layout_vertical(scene: Scene) -> Picture:
    """Draw ``scene`` as the vertical list described in the module docstring."""
    builder = _Blocks(scene)
    blocks = builder.all_blocks()
    referenced = [r for block in blocks for item in block for r in item.refs]
    scene.set_suffixes(list(dict.fromkeys(referenced)))
    picture = Picture(VERTICAL)
    for b, block in enumerate(blocks):
        if b:
            _emit(picture, LineBuilder())
        for item in block:
            _emit_item(picture, scene, item)
    picture.edges.update(builder.edges)
    for s, d in scene.index.back_edges:
        picture.edges[(s, d)] = BY_NAME
    for s, d in scene.folded_edges:
        picture.edges[(s, d)] = FOLDED
    if referenced:
        name = scene.ref(referenced[0])
        picture.keys.append(
            (f"{scene.charset.ref} {name}", REF_STYLE, scene.say("ref", name=name))
        )
    return picture


def _emit_item(picture: Picture, scene: Scene, item: _Item) -> None:
    prefix = "".join(reversed(item.prefix))
    room = scene.width - PIECE * len(item.prefix)
    line = LineBuilder().add(prefix, EDGE_STYLE)
    if item.kind == "down":
        _emit(picture, line.add(scene.charset.down, EDGE_STYLE))
        return
    if item.kind == "param":
        assert item.param is not None
        text = scene.param_text(item.param, room)
        line.add_node(text)
        picture.markers |= text.markers
        _emit(picture, line)
        return
    assert item.node_id is not None
    text = scene.text(item.node_id, room)
    start = line.add_node(text)
    picture.anchors[item.node_id] = (len(picture.lines), start, start + len(text.text))
    picture.markers |= text.markers
    if not item.refs:
        _emit(picture, line)
        return
    names = ", ".join(scene.ref(r) for r in _in_label_order(scene, item.node_id, item.refs))
    lead = f"  {scene.charset.ref} "
    if PIECE * len(item.prefix) + text.width + text_width(lead) + text_width(names) <= scene.width:
        _emit(picture, line.add(lead + names, REF_STYLE))
        return
    _emit(picture, line)
    outer = list(item.prefix)
    if outer and outer[0] == scene.charset.tee:
        outer[0] = scene.charset.spine
    cont = "".join(reversed(outer)) + (scene.charset.spine if item.continues else "   ")
    lead = lead.lstrip()
    for part in textwrap.wrap(names, max(8, scene.width - text_width(cont) - text_width(lead))):
        _emit(picture, LineBuilder().add(cont, EDGE_STYLE).add(lead + part, REF_STYLE))


def _in_label_order(scene: Scene, node_id: str, refs: list[str]) -> list[str]:
    """References in the order the label names them: ``BCE(z, y)  ◀ z, y``."""
    label = scene.all_nodes[node_id].label
    names = {r: scene.ref(r).split(" ")[0] for r in refs}

    def where(r: str) -> int:
        m = re.search(r"(?<![\w.])" + re.escape(names[r]) + r"(?![\w])", label)
        return m.start() if m else len(label)

    return sorted(refs, key=where)


def _emit(picture: Picture, line: LineBuilder) -> None:
    text, spans = line.build()
    picture.lines.append(text)
    picture.spans.append(spans)
