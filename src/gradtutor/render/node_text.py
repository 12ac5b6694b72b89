"""What a node says in a drawing: its label, its name, and its markers.

``x @ w + b = z [✗ freed]``, ``w [grad]``, ``x (old)``, ``BCE(z, y) = loss
(dropped)``. Every view draws nodes with the same words, and the legend
explains exactly the markers that were used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, NamedTuple

from gradtutor.model import (
    LEAF,
    MODULE,
    OP,
    SAVED_FREED,
    SAVED_MODIFIED,
    SAVED_NONE,
    STATEMENT,
    Node,
)
from gradtutor.render.cells import cut_cells, text_width
from gradtutor.render.charset import Charset
from gradtutor.render.words import marks

# Marker keys, also the legend's keys.
NEW, LEAF_MARK, GRAD, FREED, NONE_SAVED, MODIFIED, CHANGED, DUAL, ELIDED, OLD, OLD_MODULE, DROPPED = (
    "new", "leaf", "grad", "freed", "none-saved", "modified", "changed", "dual", "elided", "old", "old-module", "dropped",
)

# Style names a front end maps to colours (see view.THEME).
GHOST_STYLE = "ghost"
NEW_STYLE = "new"
LEAF_STYLE = "leaf"


class Segment(NamedTuple):
    text: str
    style: str | None = None


class NodeText:
    """The words of one node, in styled segments. (A plain class: a big
    graph makes one per node, and a dataclass's frozen guard costs more
    than the words.)"""

    __slots__ = ("node_id", "segments", "ref_name", "expr_cells", "markers", "width", "text")

    def __init__(
        self,
        node_id: str,
        segments: tuple[Segment, ...],
        ref_name: str,  # how another line names it: "z", "x (old)", "MulBackward0"
        expr_cells: int,  # cells of the expression part, where input bars may land
        markers: frozenset[str],
        width: int | None = None,  # when the caller measured it already
        text: str | None = None,  # the segments' text, when the caller has it
    ) -> None:
        self.node_id = node_id
        self.segments = segments
        self.ref_name = ref_name
        self.expr_cells = expr_cells
        self.markers = markers
        self.text = "".join([s.text for s in segments]) if text is None else text
        self.width = text_width(self.text) if width is None else width  # display cells

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeText):
            return NotImplemented
        return (self.node_id, self.segments, self.ref_name, self.expr_cells, self.markers) == (
            other.node_id, other.segments, other.ref_name, other.expr_cells, other.markers
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NodeText({self.node_id!r}, {self.text!r})"


@dataclass(frozen=True)
class TextOptions:
    charset: Charset
    current_step: int | None
    show_none_saved: bool  # only after a backward freed something: the contrast is the lesson
    max_width: int
    marks: Mapping[str, str] = field(default_factory=lambda: marks("en"))  # the language's markers


def describe_node(node: Node, options: TextOptions, suffix: str = "", ref: str | None = None) -> NodeText:
    """The node's words. Cases:

    - an op or statement: ``label = name`` (``label`` alone when unnamed);
    - a leaf, const or module: its name, else its label;
    - lost its name: ``... = x (old)``, or ``(dropped)`` when unreachable now;
    - then the markers in brackets, none for a dropped node (it is leaving).

    ``suffix`` (``" #3"``) tells apart nodes whose words are the same;
    ``ref``: its ``ref_name`` with the suffix, when the caller has it.
    """
    cs = options.charset
    expr, name_part = _label_parts(node, cs, options.marks)
    base_style = _base_style(node, options)
    extra = DROPPED if node.dropped else (OLD_MODULE if node.kind == MODULE else OLD) if node.former_names else ""
    tags = () if node.dropped else _tags(node, options)
    brackets, tag_text, tag_width, markers = _brackets(tags, options.marks["sep"], extra)
    rest = text_width(name_part) + (text_width(suffix) if suffix else 0) + tag_width
    expr_width = text_width(expr)
    if expr_width > options.max_width - rest:
        expr = cut_cells(expr, max(options.max_width - rest, 4), cs.ellipsis)
        expr_width = text_width(expr)
    head = expr + name_part + suffix
    text = NodeText(
        node.id,
        (Segment(head, base_style), *brackets) if brackets else (Segment(head, base_style),),
        ref_name(node, cs, options.marks) + suffix if ref is None else ref,
        expr_width,
        markers,
        expr_width + rest,
        head + tag_text,
    )
    if text.width > options.max_width:
        # Only a name longer than the whole width gets here: cut everything.
        cut = cut_cells(text.text, options.max_width, cs.ellipsis)
        expr_cells = min(text.expr_cells, text_width(cut))
        text = NodeText(node.id, (Segment(cut, base_style),), text.ref_name, expr_cells, text.markers)
    return text


@lru_cache(maxsize=256)
def _brackets(
    tags: tuple[tuple[str, str, str], ...], sep: str, extra: str
) -> tuple[tuple[Segment, ...], str, int, frozenset[str]]:
    """The bracketed markers ``[new, grad]`` as segments, their text and
    width, and the markers drawn (``extra``: dropped or old, which have no
    bracket). A graph has few distinct combinations; each is built once."""
    markers = frozenset({marker for _, _, marker in tags} | ({extra} if extra else set()))
    if not tags:
        return (), "", 0, markers
    segments = [Segment(" [")]
    for i, (word, style, _) in enumerate(tags):
        if i:
            segments.append(Segment(sep))
        segments.append(Segment(word, style))
    segments.append(Segment("]"))
    text = "".join(seg.text for seg in segments)
    return tuple(segments), text, text_width(text), markers


def _label_parts(node: Node, cs: Charset, words: Mapping[str, str]) -> tuple[str, str]:
    """(expression, " = name" or the name itself) of a node."""
    lost = words["dropped"] if node.dropped else words["old"]
    if node.kind in (OP, STATEMENT):
        label = cs.clean(node.label)
        if node.running or node.inside:
            label = words["inside"].format(label=label)
        # Names of one tensor read as equal (a = b = x * 2); names of
        # different tensors of one statement are listed (h, c = lstm(...)).
        join = ", " if node.several_tensors else " = "
        parts = list(node.names) + [n + lost for n in node.former_names]
        if parts:
            return label, " = " + join.join(parts)
        return label, words["dropped"] if node.dropped else ""
    if node.names:
        return " = ".join(node.names), ""
    if node.former_names:
        return node.former_names[0], lost
    return cs.clean(node.label), words["dropped"] if node.dropped else ""


def ref_name(node: Node, cs: Charset, words: Mapping[str, str] | None = None) -> str:
    """The short name a reference uses: the name, ``(h, c)`` for a statement
    that made several named tensors, ``(h, c (old))`` when some lost their
    names (which of them was read is not known at this level: not one
    picked by its spelling), ``x (old)``, else the
    label (``inside`` it for what a line made on the way to its value)."""
    several = several_names(node, words)
    if several is not None:
        # (h, c (old)): one of them, picked, could be the one not read.
        return "(" + ", ".join(several) + ")"
    if node.names:
        # (A tensor's several names are one thing: its first name is enough.)
        return node.names[0]
    if node.former_names:
        words = words or marks("en")
        return node.former_names[0] + (words["dropped"] if node.dropped else words["old"])
    if node.running or node.inside:
        return (words or marks("en"))["inside"].format(label=cs.clean(node.label))
    return cs.clean(node.label)


def several_names(node: Node, words: Mapping[str, str] | None = None) -> list[str] | None:
    """The names of a statement that made several named tensors, each as a
    reference says it (``h``, ``c (old)``); None for any other node."""
    if node.kind != STATEMENT or len(node.names) + len(node.former_names) < 2:
        return None
    words = words or marks("en")
    lost = words["dropped"] if node.dropped else words["old"]
    return [*node.names, *(name + lost for name in node.former_names)]


def _base_style(node: Node, options: TextOptions) -> str | None:
    if node.is_ghost:
        return GHOST_STYLE
    if is_new(node, options.current_step):
        return NEW_STYLE
    if node.kind == LEAF:
        return LEAF_STYLE
    return None


def is_new(node: Node, current_step: int | None) -> bool:
    step = node.made_in if node.made_in is not None else node.step
    return current_step is not None and step == current_step and not node.dropped


def _tags(node: Node, options: TextOptions) -> tuple[tuple[str, str, str], ...]:
    """(word, style, marker) for each bracketed marker, in reading order."""
    tags: list[tuple[str, str, str]] = []
    words = options.marks
    if is_new(node, options.current_step):
        tags.append((words[NEW], "new", NEW))
    if node.has_grad:
        tags.append((words[GRAD], "grad", GRAD))
    elif node.kind == LEAF and node.requires_grad:
        tags.append((words[LEAF_MARK], "leaf", LEAF_MARK))
    if node.changed_at:
        tags.append((words[CHANGED], "modified", CHANGED))
    if node.dual:
        tags.append((words[DUAL], "leaf", DUAL))
    if node.inputs_hidden:
        tags.append((words[ELIDED], "legend", ELIDED))
    if node.kind in (OP, STATEMENT):
        if node.saved == SAVED_FREED:
            tags.append((options.charset.cross + words[FREED], "freed", FREED))
        elif node.saved == SAVED_MODIFIED:
            tags.append((words[MODIFIED], "modified", MODIFIED))
        elif node.saved == SAVED_NONE and options.show_none_saved:
            tags.append((words[NONE_SAVED], "saved-none", NONE_SAVED))
    return tuple(tags)
