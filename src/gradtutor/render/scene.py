"""Everything a view needs about one graph, prepared once: adjacency, the
options, and the words of every node (cached per width limit)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, TypeVar

from gradtutor.model import HIDDEN_GLOBAL, MODULE, OP, SAVED_FREED, STATEMENT, Graph, Node
from gradtutor.render.words import Locate, marks, plural, say, shown_name
from gradtutor.render.canvas import Span
from gradtutor.render.charset import Charset
from gradtutor.render.graph_index import GraphIndex, index_graph
from gradtutor.render.node_text import NodeText, TextOptions, describe_node, is_new, ref_name, several_names


# The words of nodes drawn lately, by the Node object (held here, so its id
# is not reused while its entry lives) and all the options they depend on: a
# node's words are a function of these, made once however often it is drawn.
DESCRIBED_LIMIT = 65_536
_DESCRIBED: dict[tuple[object, ...], tuple[Node, NodeText]] = {}
_NAMED: dict[tuple[object, ...], tuple[Node, str]] = {}  # the same for ref_name

T = TypeVar("T")


def _made_once(
    cache: dict[tuple[object, ...], tuple[Node, T]], key: tuple[object, ...], node: Node, make: Callable[[], T],
) -> T:
    """What ``make`` makes of ``node``, kept in ``cache`` under ``key`` (whose
    first part is the node's id) while the node is the one kept there."""
    found = cache.get(key)
    if found is not None and found[0] is node:
        return found[1]
    made = make()
    if len(cache) >= DESCRIBED_LIMIT:
        cache.clear()
    cache[key] = (node, made)
    return made


@dataclass(frozen=True)
class Param:
    """A parameter leaf drawn inside the op that uses it (op view)."""

    leaf_id: str
    transpose_id: str | None  # its TBackward0, folded along with it


@dataclass
class Scene:
    """A graph being drawn: its index (after folding, in the op view), every
    node including folded ones, and the drawing options."""

    graph: Graph
    index: GraphIndex
    charset: Charset
    width: int
    current_step: int | None
    params: dict[str, list[Param]] = field(default_factory=dict)  # op id -> folded params
    folded_edges: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Notes on how the picture draws things (a module as one node, folded
    # parameters, a list for a graph): said the first time, as a marker's key is.
    standing: set[str] = field(default_factory=set)
    suffixes: dict[str, str] = field(default_factory=dict)  # id -> " #2" for look-alike nodes
    all_nodes: dict[str, Node] = field(default_factory=dict)  # drawn and folded ones
    show_none_saved: bool = False
    language: str = "en"
    locate: Locate | None = None
    _texts: dict[tuple[str, int], NodeText] = field(default_factory=dict)
    _param_texts: dict[tuple[str, int], NodeText] = field(default_factory=dict)
    input_orders: dict[str, list[str]] = field(default_factory=dict)  # the vertical list's, per node
    _options: dict[int, TextOptions] = field(default_factory=dict)  # per width limit
    _refs: dict[str, str] = field(default_factory=dict)  # node id -> ref() (suffixes included)
    _base_refs: dict[str, str] = field(default_factory=dict)  # node id -> ref_name()

    def say(self, key: str, **fields: object) -> str:
        """The legend's or a note's words in the drawing's language."""
        return say(self.language, key, **fields)

    def standing_note(self, note: str) -> None:
        """A note on how the picture draws something (see ``standing``)."""
        self.notes.append(note)
        self.standing.add(note)

    def text(self, node_id: str, max_width: int | None = None) -> NodeText:
        """The node's words, cut to ``max_width`` cells (default: the drawing width)."""
        limit = self.width if max_width is None else max(4, max_width)
        key = (node_id, limit)
        found = self._texts.get(key)
        if found is None:
            node = self.all_nodes[node_id]
            suffix = self.suffixes.get(node_id, "")
            # (A graph drawn again, as every step of a run draws it, is mostly
            # the same Node objects: their words are made once, see _DESCRIBED.)
            found = self._texts[key] = _made_once(
                _DESCRIBED,
                (id(node), limit, suffix, is_new(node, self.current_step), self.show_none_saved, self.charset.name,
                 self.language),
                node,
                lambda: describe_node(node, self._options_for(limit), suffix, self.ref(node_id)),
            )
        return found

    def _options_for(self, limit: int) -> TextOptions:
        options = self._options.get(limit)
        if options is None:
            options = self._options[limit] = TextOptions(
                self.charset, self.current_step, self.show_none_saved, limit, marks(self.language)
            )
        return options

    def param_text(self, param: Param, max_width: int | None = None) -> NodeText:
        """A folded parameter's words: ``model.0.weight.T [grad]``."""
        limit = self.width if max_width is None else max(4, max_width)
        key = (param.leaf_id, limit)
        found = self._param_texts.get(key)
        if found is None:
            found = describe_node(self.all_nodes[param.leaf_id], self._options_for(limit), ".T" if param.transpose_id else "")
            self._param_texts[key] = found
        return found

    def ref(self, node_id: str) -> str:
        """How a reference names the node (its ``ref_name`` without building its words)."""
        found = self._refs.get(node_id)
        if found is None:
            found = self._refs[node_id] = self._base_ref(node_id) + self.suffixes.get(node_id, "")
        return found

    def _base_ref(self, node_id: str) -> str:
        base = self._base_refs.get(node_id)
        if base is None:
            node = self.all_nodes[node_id]
            base = self._base_refs[node_id] = _made_once(
                _NAMED, (id(node), self.charset.name, self.language), node,
                lambda: ref_name(node, self.charset, marks(self.language)),
            )
        return base

    def set_suffixes(self, ids: list[str]) -> None:
        """Give `` #k`` to the nodes in ``ids`` whose reference says a name
        another node's says too: two ``h (old)``, or ``h_t (old)`` (the
        zeros a loop started from) and ``(h_t (old), c_t (old))`` (what its
        first run made). Each name's look-alikes are numbered apart."""
        if not ids:
            return
        words = marks(self.language)
        parts: dict[str, list[str]] = {}
        for node_id, node in self.all_nodes.items():
            # (a statement's several names are each a name; any other node's
            # is its reference, made once per node)
            parts[node_id] = several_names(node, words) or [self._base_ref(node_id)]
        count: Counter[str] = Counter()
        for names in parts.values():
            count.update(set(names))
        following: dict[str, int] = {}  # name -> the number after its look-alikes' so far
        changed = set()
        for node_id in ids:
            shared = [name for name in parts[node_id] if count[name] > 1]
            if not shared or node_id in self.suffixes:
                continue
            # (one number past every one its names' look-alikes have)
            number = max(following.get(name, 1) for name in shared)
            for name in shared:
                following[name] = number + 1
            self.suffixes[node_id] = f" #{number}"
            changed.add(node_id)
        if changed:
            self._texts = {k: v for k, v in self._texts.items() if k[0] not in changed}
            self._refs = {k: v for k, v in self._refs.items() if k not in changed}


def _module_size(scene: Scene, detail: str, dropped: bool = False) -> str:
    """"6 parameters, 193 values" (how the graph stores a module's size,
    ``grouping.module_detail``) in the drawing's language: "6 个参数，193 个值"."""
    match = _MODULE_DETAIL.fullmatch(detail)
    if match is None:
        return detail
    count, values = int(match[1]), int(match[4])
    # (one leaving the picture is no longer in the graph: its size as it was)
    key = "module_size_old" if match[2] and not dropped else "module_size_trainable" if match[3] else "module_size"
    return scene.say(key, count=count, s=plural(count), values=values, values_s=plural(values), trainable=match[3])


_MODULE_DETAIL = re.compile(r"(\d+) parameters?( in the graph)?(?: \((\d+) requiring grad\))?, (\d+) values?")


def make_scene(
    graph: Graph,
    charset: Charset,
    width: int,
    current_step: int | None,
    language: str = "en",
    locate: Locate | None = None,
) -> Scene:
    """Index ``graph`` and settle what is marked: nodes of ``current_step`` as
    new (unless that step built every op or statement in the graph: marking
    everything marks nothing), and "none saved" only when something is freed.
    Names are drawn as ``language`` says them (``global x``: ``全局 x``)."""
    graph = _names_said(graph, language)
    if current_step is not None and _all_new(graph, current_step):
        current_step = None  # the step built the whole graph: marking everything marks nothing
    scene = Scene(graph, index_graph(graph), charset, width, current_step, language=language, locate=locate)
    scene.all_nodes = dict(scene.index.nodes)
    # "Saved nothing" only means something next to nodes whose saves were freed.
    scene.show_none_saved = any(n.saved == SAVED_FREED and not n.dropped for n in graph.nodes)
    modules = [n for n in graph.nodes if n.kind == MODULE and n.detail]
    words = marks(language)
    for m in modules:
        label = m.label + (words["dropped"] if m.dropped else words["old"] if m.former_names else "")
        scene.standing_note(scene.say("module", label=label, detail=_module_size(scene, m.detail, m.dropped)))
    return scene


def _names_said(graph: Graph, language: str) -> Graph:
    """``graph`` with its names as ``language`` says them (``shown_name``;
    a function's local, ``Node.local_of``: "combined (in forward)");
    ``graph`` itself when that changes none."""
    if not any([_hides_global(n) or n.local_of for n in graph.nodes]):
        return graph
    nodes = tuple(_node_said(n, language) for n in graph.nodes)
    if all(said is n for said, n in zip(nodes, graph.nodes)):
        return graph
    return replace(graph, nodes=nodes)


def _hides_global(node: Node) -> bool:
    # (a leaf's or a module's label is its name, or a parameter's path: global model.fc.weight)
    return (
        node.label.startswith(HIDDEN_GLOBAL)
        or bool(node.names) and any(name.startswith(HIDDEN_GLOBAL) for name in node.names)
        or bool(node.former_names) and any(name.startswith(HIDDEN_GLOBAL) for name in node.former_names)
    )


def _node_said(node: Node, language: str) -> Node:
    if node.local_of:
        return replace(node, label=marks(language)["local_of"].format(name=node.label, function=node.local_of))
    if not _hides_global(node):
        return node
    said = replace(
        node, label=shown_name(node.label, language), names=tuple(shown_name(n, language) for n in node.names),
        former_names=tuple(shown_name(n, language) for n in node.former_names),
    )
    return node if said == node else said


def _all_new(graph: Graph, step: int) -> bool:
    """Did ``step`` create every op and statement node still in the graph?"""
    computed = [n for n in graph.nodes if n.kind in (OP, STATEMENT) and not n.dropped]
    return bool(computed) and all((n.made_in if n.made_in is not None else n.step) == step for n in computed)


class LineBuilder:
    """One output line built from styled pieces."""

    __slots__ = ("parts", "spans", "length")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[Span] = []
        self.length = 0

    def add(self, text: str, style: str | None = None) -> LineBuilder:
        if text:
            end = self.length + len(text)
            if style is not None:
                self.spans.append((self.length, end, style))
            self.parts.append(text)
            self.length = end
        return self

    def add_node(self, text: NodeText) -> int:
        """Append a node's segments; return the character offset where it starts."""
        start = self.length
        for seg in text.segments:
            self.add(seg.text, seg.style)
        return start

    def build(self) -> tuple[str, list[Span]]:
        return end_line("".join(self.parts), self.spans)


def end_line(text: str, spans: list[Span]) -> tuple[str, list[Span]]:
    """A built line without its trailing spaces, its spans cut to match."""
    stripped = text.rstrip(" ")
    end = len(stripped)
    if end == len(text):
        return stripped, spans
    return stripped, [(s, min(e, end), st) for s, e, st in spans if s < end]
