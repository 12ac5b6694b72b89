"""The one module that touches ``grad_fn`` objects.

Autograd nodes cannot be weak-referenced, and holding one keeps its saved
tensors alive, so the tutor never keeps a node between steps. Instead each
node gets a small :class:`NodeTag` in its ``metadata`` dict the first time the
tutor sees it. Tags mirror the graph (a tag holds the tags of the node's
inputs), carry what the tutor learned about the node (the line that created
it, whether a backward freed its buffers) and die with the node, because the
node's metadata is their only owner. Leaf tensors get a :class:`LeafTag`
from :class:`TagRegistry`, keyed by ``id`` and dropped by a weakref callback
when the tensor dies.

Everything after this module walks tags, never nodes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import torch

from gradtutor.model import SAVED_FREED, SAVED_MODIFIED, SAVED_NONE, SAVED_PRESENT

TAG_KEY = "gradtutor"

# Substrings of torch's error texts, stable across versions (see the guide:
# match causes, not whole messages).
FREED_MESSAGE = "backward through the graph a second time"
FREED_MESSAGE_ALT = "after they have already been freed"
INPLACE_MESSAGE = "modified by an inplace operation"


@dataclass(eq=False)
class LeafTag:
    """A tensor that is not the output of an autograd node."""

    serial: int
    ref: weakref.ref[torch.Tensor]
    requires_grad: bool
    shape: tuple[int, ...]
    dtype: str
    children: tuple[Any, ...] = ()
    __weakref__: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def node_id(self) -> str:
        return f"t{self.serial}"

    @property
    def is_leaf(self) -> bool:
        return True

    def tensor(self) -> torch.Tensor | None:
        return self.ref()


@dataclass(eq=False)
class NodeTag:
    """What the tutor knows about one autograd node. Lives in ``node.metadata``."""

    serial: int
    op: str
    exec_id: int
    line: int | None
    sequence_nr: int
    children: tuple[NodeTag | LeafTag, ...]
    saved_attrs: tuple[str, ...]
    saved: str
    shape: tuple[int, ...] | None
    dtype: str | None
    freed_by_line: int | None = None
    __weakref__: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def node_id(self) -> str:
        return f"n{self.serial}"

    @property
    def is_leaf(self) -> bool:
        return False


Tag = "NodeTag | LeafTag"

_saved_attrs_by_class: dict[type, tuple[str, ...]] = {}


def _saved_tensor_attrs(node: Any) -> tuple[str, ...]:
    """Names of the ``_saved_*`` attributes that hold tensors (cached per node class)."""
    cls = type(node)
    attrs = _saved_attrs_by_class.get(cls)
    if attrs is None:
        attrs = tuple(
            "_saved_" + a[len("_raw_saved_") :] for a in dir(cls) if a.startswith("_raw_saved_")
        )
        _saved_attrs_by_class[cls] = attrs
    return attrs


def read_saved_state(node: Any, attrs: tuple[str, ...]) -> str:
    """Ask torch whether ``node``'s saved tensors can still be read.

    Cases: no saved tensors (``none``); reading one raises the "second time"
    error (``freed``); reading one raises the in-place version error
    (``modified``); otherwise ``present``.
    """
    if not attrs:
        return SAVED_NONE
    for attr in attrs:
        try:
            getattr(node, attr)
        except RuntimeError as exc:
            text = str(exc)
            if FREED_MESSAGE in text or FREED_MESSAGE_ALT in text:
                return SAVED_FREED
            if INPLACE_MESSAGE in text:
                return SAVED_MODIFIED
            raise
    return SAVED_PRESENT


def _output_meta(node: Any) -> tuple[tuple[int, ...] | None, str | None]:
    try:
        meta = node._input_metadata[0]
        return tuple(meta.shape), str(meta.dtype).replace("torch.", "")
    except (AttributeError, IndexError, RuntimeError, TypeError):
        return None, None


class TagRegistry:
    """Hands out serials and tags; the only owner of leaf tags (by tensor id)."""

    def __init__(self) -> None:
        self._next_serial = 1
        self._leaves: dict[int, LeafTag] = {}
        # Only for lookups by serial; never keeps a tag alive.
        self._by_serial: weakref.WeakValueDictionary[int, NodeTag | LeafTag] = (
            weakref.WeakValueDictionary()
        )

    def _serial(self) -> int:
        s = self._next_serial
        self._next_serial += 1
        return s

    # ---- leaves -------------------------------------------------------------
    def leaf_tag(self, tensor: torch.Tensor) -> LeafTag:
        key = id(tensor)
        tag = self._leaves.get(key)
        if tag is not None and tag.ref() is tensor:
            return tag
        leaves = self._leaves

        def forget(_ref: object, key: int = key) -> None:
            current = leaves.get(key)
            if current is not None and current.ref() is None:
                del leaves[key]

        tag = LeafTag(
            serial=self._serial(),
            ref=weakref.ref(tensor, forget),
            requires_grad=tensor.requires_grad,
            shape=tuple(tensor.shape),
            dtype=str(tensor.dtype).replace("torch.", ""),
        )
        self._leaves[key] = tag
        self._by_serial[tag.serial] = tag
        return tag

    def known_leaf(self, tensor: torch.Tensor) -> LeafTag | None:
        tag = self._leaves.get(id(tensor))
        return tag if tag is not None and tag.ref() is tensor else None

    def by_serial(self, serial: int) -> NodeTag | LeafTag | None:
        return self._by_serial.get(serial)

    # ---- autograd nodes -----------------------------------------------------
    def tag_graph(self, grad_fn: Any, exec_id: int, line: int | None) -> NodeTag | None:
        """Tag ``grad_fn`` and every untagged node below it; return its tag.

        Nodes already tagged keep their tag (and so the line that created
        them). Iterative, so deep graphs (long RNN chains) do not hit the
        recursion limit.
        """
        if grad_fn is None:
            return None
        meta = grad_fn.metadata
        existing = meta.get(TAG_KEY)
        if existing is not None:
            return existing  # type: ignore[no-any-return]
        # Post-order over untagged nodes: children are tagged before parents.
        stack: list[tuple[Any, bool]] = [(grad_fn, False)]
        while stack:
            node, expanded = stack.pop()
            if TAG_KEY in node.metadata:
                continue
            nexts = node.next_functions
            if not expanded:
                stack.append((node, True))
                for child, _ in nexts:
                    if child is not None and not _is_accumulate(child):
                        if TAG_KEY not in child.metadata:
                            stack.append((child, False))
                continue
            children: list[NodeTag | LeafTag] = []
            for child, _ in nexts:
                if child is None:
                    continue
                if _is_accumulate(child):
                    children.append(self.leaf_tag(child.variable))
                else:
                    children.append(child.metadata[TAG_KEY])
            attrs = _saved_tensor_attrs(node)
            shape, dtype = _output_meta(node)
            tag = NodeTag(
                serial=self._serial(),
                op=node.name(),
                exec_id=exec_id,
                line=line,
                sequence_nr=node._sequence_nr(),
                children=tuple(children),
                saved_attrs=attrs,
                saved=read_saved_state(node, attrs),
                shape=shape,
                dtype=dtype,
            )
            node.metadata[TAG_KEY] = tag
            self._by_serial[tag.serial] = tag
        return grad_fn.metadata[TAG_KEY]  # type: ignore[no-any-return]

    def tag_tensor(self, tensor: torch.Tensor, exec_id: int, line: int | None) -> NodeTag | LeafTag:
        """The tag of a tensor's place in the graph: its grad_fn's, or its own as a leaf."""
        fn = tensor.grad_fn
        if fn is not None:
            tag = self.tag_graph(fn, exec_id, line)
            assert tag is not None
            return tag
        return self.leaf_tag(tensor)


def _is_accumulate(node: Any) -> bool:
    return hasattr(node, "variable")


def iter_nodes(grad_fns: Iterable[Any]) -> Iterator[Any]:
    """Every autograd node reachable from ``grad_fns`` (not AccumulateGrad), once."""
    seen: set[int] = set()
    stack = [fn for fn in grad_fns if fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        for child, _ in node.next_functions:
            if child is not None and not _is_accumulate(child) and id(child) not in seen:
                stack.append(child)


def reachable_leaves(grad_fns: Iterable[Any]) -> list[torch.Tensor]:
    """Leaf tensors reachable from ``grad_fns`` (the ones a backward may write ``.grad`` to)."""
    leaves: dict[int, torch.Tensor] = {}
    for node in iter_nodes(grad_fns):
        for child, _ in node.next_functions:
            if child is not None and _is_accumulate(child):
                leaves[id(child.variable)] = child.variable
    return list(leaves.values())


def mark_freed(grad_fns: Iterable[Any], line: int | None, registry: TagRegistry) -> int:
    """After a backward: re-read saved state of reachable nodes; return how many it freed.

    A node counts as freed by this call when its tag said its buffers were
    present and torch now refuses to hand them out.
    """
    freed = 0
    for node in iter_nodes(grad_fns):
        tag = node.metadata.get(TAG_KEY)
        if tag is None:
            tag = registry.tag_graph(node, 0, None)
        if tag.saved != SAVED_PRESENT:
            continue
        state = read_saved_state(node, tag.saved_attrs)
        if state == SAVED_FREED:
            tag.saved = SAVED_FREED
            tag.freed_by_line = line
            freed += 1
    return freed


def first_failing_node(
    grad_fns: Iterable[Any], state: str, *, known: bool = False
) -> NodeTag | None:
    """The node a failing backward stopped at: the first one torch runs whose saved
    tensors are in ``state`` (``freed`` or ``modified``).

    The engine runs nodes in decreasing sequence number (a node is always
    created after its inputs), so that is the reachable node in that state
    with the highest sequence number. ``known=True`` trusts the state the
    tags recorded before the call (the failed call itself frees the nodes
    it ran before it stopped); otherwise torch is asked.
    """
    best: NodeTag | None = None
    for node in iter_nodes(grad_fns):
        tag = node.metadata.get(TAG_KEY)
        if tag is None or not tag.saved_attrs:
            continue
        current = tag.saved if known else read_saved_state(node, tag.saved_attrs)
        if current != state:
            continue
        if best is None or tag.sequence_nr > best.sequence_nr:
            best = tag
    return best


def grad_fn_of(tensor: torch.Tensor) -> Any:
    return tensor.grad_fn


def walk_tags(roots: Iterable[NodeTag | LeafTag]) -> list[NodeTag | LeafTag]:
    """Every tag reachable from ``roots``, each once, in no particular order."""
    seen: set[int] = set()
    out: list[NodeTag | LeafTag] = []
    stack = list(roots)
    while stack:
        tag = stack.pop()
        if tag.serial in seen:
            continue
        seen.add(tag.serial)
        out.append(tag)
        stack.extend(c for c in tag.children if c.serial not in seen)
    return out


def collect_graph_tags(
    tensors: Iterable[torch.Tensor], registry: TagRegistry, exec_id: int, line: int | None
) -> dict[int, NodeTag | LeafTag]:
    """Tag each tensor's graph; map ``id(tensor)`` to its tag."""
    return {id(t): registry.tag_tensor(t, exec_id, line) for t in tensors}


Visitor = Callable[[Any], None]
