"""The one module that touches ``grad_fn`` objects.

Autograd nodes cannot be weak-referenced, and holding one keeps its saved
tensors alive, so the tutor never keeps a node between steps. Instead each
node gets a small :class:`NodeTag` the first time the tutor sees it. Tags
mirror the graph (a tag holds the tags of the node's inputs) and carry what
the tutor learned about the node (the line that created it, whether a
backward freed its buffers).

A node's tag is kept in a side table, out of the program's sight (its
``grad_fn.metadata`` stays as the program left it). The table is keyed by
the node's ``metadata`` dict, which the node owns for its whole life: while
the table holds that dict it cannot be reused by another node, and once the
table is its only holder the node is gone and the entry is swept. Leaf
tensors get a :class:`LeafTag`, keyed by ``id`` and dropped by a weakref
callback when the tensor dies.

Everything after this module walks tags, never nodes.
"""

from __future__ import annotations

import itertools
import re
import sys
import weakref
from typing import Any, Callable, Iterable, Iterator

import torch

from gradtutor.model import SAVED_FREED, SAVED_MODIFIED, SAVED_NONE, SAVED_PRESENT
from gradtutor.tracebacks import is_tutor_file

# Substrings of torch's error texts, stable across versions (see the guide:
# match causes, not whole messages).
FREED_MESSAGE = "backward through the graph a second time"
FREED_MESSAGE_ALT = "after they have already been freed"
INPLACE_MESSAGE = "modified by an inplace operation"


class Origin:
    """One execution of one statement: the nodes it creates point here.

    Tags hold their origin, so a statement's source and label live exactly
    as long as some node it created.
    """

    __slots__ = (
        "exec_id", "line", "source", "_label", "function", "filename", "const_reads", "step_id", "parts", "value",
        "targets", "const_inputs", "const_into",
    )

    def __init__(
        self,
        exec_id: int,
        line: int | None,
        source: str = "",
        label: Any = "",
        function: str = "",
        filename: str = "",
    ) -> None:
        self.exec_id = exec_id
        self.line = line
        self.filename = filename
        self.source = source
        # What the statement's nodes are labelled with: a string, or a
        # statement (``source_index.StatementInfo``) that makes it when asked.
        self._label = label
        # The names the statement assigns, in its order (``h_t, c_t = ...``).
        self.targets: tuple[str, ...] = getattr(label, "targets", ())
        self.function = function
        self.const_reads: tuple[LeafTag, ...] = ()
        # While it runs: id() of each tensor without requires_grad that an
        # op it made a node with took as an input -> the first such node's
        # id (the observer notes them). Once it ended: the node id of each
        # const it read (``const_reads``) -> that node's, where one was
        # noted: the part of the statement the const went into.
        self.const_inputs: dict[int, str] | None = None
        self.const_into: dict[str, str] = {}
        # The step (line execution) it belongs to: itself, or for one of the
        # statements of a line like ``u = x ** 2; v = u * 3``, the line's.
        self.step_id = exec_id
        self.parts: tuple[Origin, ...] = ()
        # Once it ended: the nodes of the tensors it bound its names to (or
        # returned), its value; a tensor it made on the way there (what it
        # handed to a function) is not. None while it runs, or if it bound
        # no tensor with a graph (``loss.backward()``, ``hs = [...]``).
        self.value: tuple[str, ...] | None = None


    @property
    def label(self) -> str:
        label = self._label
        if not isinstance(label, str):
            label = self._label = label.label
        return label


UNKNOWN_ORIGIN = Origin(0, None)


class LeafTag:
    """A tensor that is not the output of an autograd node (held weakly)."""

    __slots__ = ("serial", "ref", "requires_grad", "shape", "dtype", "node_id", "children", "view", "read_as")
    is_leaf = True

    def __init__(
        self, serial: int, ref: weakref.ref[torch.Tensor], requires_grad: bool, shape: tuple[int, ...], dtype: str
    ) -> None:
        self.serial = serial
        self.ref = ref
        self.requires_grad = requires_grad
        self.shape = shape
        self.dtype = dtype
        self.node_id = f"t{serial}"
        self.children: tuple[Any, ...] = ()
        self.view: Any = None  # the snapshot's cached drawing data for this tag
        # (name, function): the name a statement of a function last read it
        # by (see Engine._record_const_reads), drawn once no name holds it.
        self.read_as: tuple[str, str] | None = None

    def tensor(self) -> torch.Tensor | None:
        return self.ref()


class NodeTag:
    """What the tutor knows about one autograd node. Lives in its registry's side table."""

    __slots__ = (
        "serial", "op", "origin", "sequence_nr", "children", "saved_attrs", "saved",
        "shape", "dtype", "freed_by", "node_id", "view", "edges", "replaces", "table_key", "hooked",
    )
    is_leaf = False

    @property
    def freed_by_line(self) -> int | None:
        return self.freed_by.line if self.freed_by is not None else None

    def __init__(
        self,
        serial: int,
        op: str,
        origin: Origin,
        sequence_nr: int,
        children: tuple[NodeTag | LeafTag, ...],
        saved_attrs: tuple[str, ...],
        shape: tuple[int, ...] | None,
        dtype: str | None,
    ) -> None:
        self.serial = serial
        self.op = op
        self.origin = origin
        self.sequence_nr = sequence_nr
        self.children = children
        self.saved_attrs = saved_attrs
        self.saved = SAVED_PRESENT if saved_attrs else SAVED_NONE
        self.shape = shape
        self.dtype = dtype
        self.freed_by: Origin | None = None  # the backward that freed its saved tensors
        self.node_id = f"n{serial}"
        self.view: Any = None  # the snapshot's cached drawing data for this tag
        self.edges: Any = None  # the snapshot's cached edges into this node
        # For an in-place op: the node the changed tensor pointed to before.
        self.replaces: NodeTag | None = None
        self.table_key = 0  # its key in its registry's side table (see TagRegistry.alive)
        # Made while saved-tensor hooks were on (saved_tensors_hooks,
        # checkpoint): reading its saved tensors would run the user's unpack
        # hook, so the tutor never does.
        self.hooked = False


_saved_attrs_by_class: dict[type, tuple[str, ...]] = {}
_custom_classes: dict[type, bool] = {}  # node class -> is it a custom Function's


def _saved_tensor_attrs(node: Any) -> tuple[str, ...]:
    """Names of the ``_saved_*`` attributes that hold tensors (cached per node class).

    A custom ``autograd.Function`` node has ``_raw_saved_tensors`` but its
    readable twin is ``saved_tensors``; both spellings are looked for.
    """
    cls = type(node)
    attrs = _saved_attrs_by_class.get(cls)
    if attrs is None:
        names = set(dir(cls))
        found = []
        for raw in sorted(a for a in names if a.startswith("_raw_saved_")):
            stem = raw[len("_raw_saved_") :]
            for readable in ("_saved_" + stem, "saved_" + stem):
                if readable in names:
                    found.append(readable)
                    break
        attrs = _saved_attrs_by_class[cls] = tuple(found)
    return attrs


def _saves_nothing(node: Any) -> bool:
    """A custom ``autograd.Function``'s node whose forward saved no tensor
    (``ctx.constant = ...`` only): a second backward through it works. Its
    raw saved tensors are counted, not read (reading would unpack them)."""
    cls = type(node)
    custom = _custom_classes.get(cls)
    if custom is None:
        custom = _custom_classes[cls] = issubclass(cls, torch.autograd.function.BackwardCFunction)
    if not custom:
        return False
    try:
        return len(node._raw_saved_tensors) == 0
    except (RuntimeError, AttributeError, TypeError):
        return False


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
        except Exception as exc:  # whatever reading says, it is an answer, not our crash
            text = str(exc)
            if FREED_MESSAGE in text or FREED_MESSAGE_ALT in text:
                return SAVED_FREED
            if INPLACE_MESSAGE in text:
                return SAVED_MODIFIED
    return SAVED_PRESENT


_saved_tensor_hooks = torch._C._autograd._top_saved_tensors_default_hooks


def saved_tensor_hook_codes() -> tuple[Any, ...]:
    """The code objects of the saved-tensor hooks in effect (pack, unpack), if any."""
    hooks = _saved_tensor_hooks(False)
    return () if hooks is None else tuple(getattr(h, "__code__", None) for h in hooks)

_dtype_names: dict[Any, str] = {}


def is_dual(tensor: torch.Tensor) -> bool:
    """Does ``tensor`` carry a forward-mode tangent at the current dual level?
    (Outside ``forward_ad.dual_level()`` nothing does, and nothing is asked.)"""
    return tangent_of(tensor) is not None


def tangent_of(tensor: torch.Tensor) -> torch.Tensor | None:
    """The forward-mode tangent ``tensor`` carries at the current dual level,
    if any (see ``is_dual``)."""
    # Only a program that imported forward_ad can have dual tensors; the tutor
    # does not import it (its import has side effects, warnings among them).
    forward_ad = sys.modules.get("torch.autograd.forward_ad")
    level = getattr(forward_ad, "_current_level", -1)
    if level < 0:
        return None
    try:
        tangent = torch._VF._unpack_dual(tensor, level).tangent
    except (RuntimeError, TypeError, AttributeError):
        return None
    return tangent if isinstance(tangent, torch.Tensor) else None


def graph_readable(t: torch.Tensor) -> bool:
    """Can ``t``'s place in the graph be read? Not a view made under no_grad
    whose base was then changed in place with grad on: torch refuses to give
    its node (``grad_fn`` and ``is_leaf`` raise; the program gets the error
    when it uses the view); the tutor leaves it out of pictures and events."""
    try:
        t.grad_fn
    except RuntimeError:
        return False
    return True


_functorch = getattr(torch._C, "_functorch", None)
_transform_level: Callable[[], Any] = getattr(_functorch, "maybe_current_level", lambda: None)
_transform_tensor: Callable[[torch.Tensor], bool] = getattr(_functorch, "is_functorch_wrapped_tensor", lambda t: False)


def in_transform() -> bool:
    """Is a torch.func transform (grad, vmap, jacrev...) running?"""
    return _transform_level() is not None


def transform_tensor(t: torch.Tensor) -> bool:
    """Is ``t`` a torch.func transform's own tensor, that the function it
    transforms sees in place of the program's: inside ``grad(f)(x)``, f's x
    is a leaf that requires grad, whose .grad no backward of the program's
    fills, and the program's x is not it. (The transform's graph is its own:
    the tutor draws none of it.)"""
    return _transform_tensor(t)


def grad_fn_of(t: torch.Tensor) -> Any:
    """``t.grad_fn``; None where torch refuses to give it (see ``graph_readable``)."""
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def dtype_name(dtype: Any) -> str:
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype).replace("torch.", "")
    return name


def _output_meta(node: Any, tensor: torch.Tensor | None = None) -> tuple[tuple[int, ...] | None, str | None]:
    """The shape and dtype of the node's (first) output: read from that
    tensor, when the caller has it, without building the node's metadata."""
    if tensor is not None and type(tensor) is torch.Tensor and tensor.output_nr == 0:
        return tuple(tensor.shape), dtype_name(tensor.dtype)
    try:
        meta = node._input_metadata[0]
        return tuple(meta.shape), dtype_name(meta.dtype)
    except (AttributeError, IndexError, RuntimeError, TypeError):
        return None, None


class TagRegistry:
    """Hands out serials and tags; the only owner of leaf tags (by tensor id).

    Each registry tags nodes under its own ``key``, so two engines (a shell
    after ``:reset``, a benchmark) never read each other's tags.
    """

    _instances = itertools.count(1)

    def __init__(self) -> None:
        self.key = ("gradtutor", next(self._instances))
        self._next_serial = 1
        # Counts the changes made in place (bumped by the observer): when it
        # moved, saved tensors may have been changed (see recheck_saved).
        self.inplace_epoch = 0
        self._leaves: dict[int, LeafTag] = {}
        # id(node.metadata) -> (that dict, the node's tag). See the module's docstring.
        self.node_tags: dict[int, tuple[dict[Any, Any], NodeTag]] = {}
        # node id -> its tag, of the tags in ``node_tags`` (see ``out_of_reach``).
        self._by_node_id: dict[str, NodeTag] = {}
        self._sweep_at = _FIRST_SWEEP
        # Which files are the program's (the engine's answer): set, the
        # forward traces anomaly mode keeps show the program's frames only.
        self.is_user_file: Callable[[str], bool] | None = None

    def _put(self, node: Any, tag: NodeTag) -> NodeTag:
        meta = node.metadata
        table = self.node_tags
        table[id(meta)] = (meta, tag)
        tag.table_key = id(meta)
        self._by_node_id[tag.node_id] = tag
        if len(table) >= self._sweep_at:
            self.sweep()
        return tag

    def alive(self, tag: NodeTag | LeafTag) -> bool:
        """Is what ``tag`` stands for still alive: its tensor, or its autograd
        node (whose metadata dict someone besides this registry holds)?"""
        if isinstance(tag, LeafTag):
            return tag.ref() is not None
        entry = self.node_tags.get(tag.table_key)
        return entry is not None and entry[1] is tag and _held(entry) > _ALONE

    def out_of_reach(self, node_id: str, freed_too: bool = False) -> bool:
        """Is the node of ``node_id`` known to be where no walk from a live
        graph meets it: it died (a live node keeps its inputs alive), or,
        ``freed_too``, a backward freed its saved tensors (a walk that stops
        at freed nodes never looks at it)? False when not known: a leaf's
        id, a tag swept or of another registry."""
        tag = self._by_node_id.get(node_id)
        return tag is not None and (freed_too and tag.saved == SAVED_FREED or not self.alive(tag))

    def sweep(self) -> int:
        """Drop the tags of nodes that died; return how many are left."""
        table = self.node_tags
        by_node_id = self._by_node_id
        for key in _dead_keys(table):
            by_node_id.pop(table.pop(key)[1].node_id, None)
        self._sweep_at = max(_FIRST_SWEEP, 2 * len(table))
        return len(table)

    def live_serials(self) -> set[int]:
        """The serials of the tags whose tensor or node is still alive."""
        self.sweep()
        live = {tag.serial for _, tag in self.node_tags.values()}
        live.update(tag.serial for tag in self._leaves.values() if tag.ref() is not None)
        return live

    def _serial(self) -> int:
        s = self._next_serial
        self._next_serial += 1
        return s

    # ---- leaves -------------------------------------------------------------
    def leaf_tag(self, tensor: torch.Tensor) -> LeafTag:
        key = id(tensor)
        tag = self._leaves.get(key)
        if tag is not None and tag.ref() is tensor:
            tag.requires_grad = tensor.requires_grad  # requires_grad_() may have changed it
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
            dtype=dtype_name(tensor.dtype),
        )
        self._leaves[key] = tag
        return tag

    def known_leaf(self, tensor: torch.Tensor) -> LeafTag | None:
        tag = self._leaves.get(id(tensor))
        return tag if tag is not None and tag.ref() is tensor else None

    # ---- autograd nodes -----------------------------------------------------
    def tag_of(self, grad_fn: Any) -> NodeTag | None:
        """The tag this registry gave ``grad_fn``, if any."""
        entry = self.node_tags.get(id(grad_fn.metadata))
        return entry[1] if entry is not None else None

    def known_tag(self, tensor: torch.Tensor) -> NodeTag | LeafTag | None:
        """The tag of a tensor's place in the graph, if this registry gave it
        one: its grad_fn's, or its own as a leaf (nothing is tagged here)."""
        fn = tensor.grad_fn
        return self.tag_of(fn) if fn is not None else self.known_leaf(tensor)

    def known_tags(
        self, named: Iterable[tuple[str, torch.Tensor]],
    ) -> list[tuple[str, torch.Tensor, NodeTag | LeafTag | None]]:
        """(name, tensor, ``known_tag(tensor)``) of each named tensor (a step
        asks it of every tensor name it sees)."""
        known_tag = self.known_tag
        return [(name, t, known_tag(t)) for name, t in named]

    def tag_graph(self, grad_fn: Any, origin: Origin, output: torch.Tensor | None = None) -> NodeTag | None:
        """Tag ``grad_fn`` and every untagged node below it; return its tag.
        (``output``: a tensor whose ``grad_fn`` it is, when the caller has one.)

        Nodes already tagged keep their tag (and so the line that created
        them). The usual case, an op whose inputs are tagged already, takes
        the short path; a graph seen for the first time is tagged by an
        iterative walk, so deep graphs do not hit the recursion limit.
        """
        if grad_fn is None:
            return None
        table = self.node_tags
        entry = table.get(id(grad_fn.metadata))
        if entry is not None:
            return entry[1]
        children: list[NodeTag | LeafTag] = []
        for child, _ in grad_fn.next_functions:
            if child is None:
                continue
            child_entry = table.get(id(child.metadata))
            if child_entry is not None:
                child_tag: NodeTag | LeafTag = child_entry[1]
            elif type(child) is _ACCUMULATE:
                child_tag = self.leaf_tag(child.variable)
            else:
                child_tag = self._tag_deep(child, origin)
            children.append(child_tag)
        return self._put(grad_fn, self._new_tag(grad_fn, origin, tuple(children), output))

    def _new_tag(
        self, node: Any, origin: Origin, children: tuple[NodeTag | LeafTag, ...], output: torch.Tensor | None = None,
    ) -> NodeTag:
        if self.is_user_file is not None and torch.is_anomaly_enabled():
            _forward_trace_as_python_keeps_it(node, self.is_user_file)
        shape, dtype = _output_meta(node, output)
        tag = NodeTag(
            self._serial(),
            node.name().removeprefix("torch::autograd::"),  # CopySlices, AccumulateGrad...
            origin,
            node._sequence_nr(),
            children,
            _saved_tensor_attrs(node) if not _saves_nothing(node) else (),
            shape,
            dtype,
        )
        if tag.saved_attrs and _saved_tensor_hooks(False) is not None:
            tag.hooked = True
        return tag

    def recheck_saved(self, grad_fns: Iterable[Any]) -> None:
        """After tensors were changed in place: ask torch again whether the
        saved tensors of the nodes reachable from ``grad_fns`` can be read (a
        node that saved a tensor changed since cannot: ``modified``). Not
        those made under saved-tensor hooks (reading would run them). A node
        found freed is left as it was: a backward running now freed it (the
        step is one of the program's code it runs: a checkpointed segment
        computed again), and that backward marks it when it ends, with its
        line (see ``mark_freed``)."""
        for node in iter_nodes(grad_fns):
            tag = self.tag_of(node)
            if tag is not None and tag.saved == SAVED_PRESENT and not tag.hooked:
                state = read_saved_state(node, tag.saved_attrs)
                if state != SAVED_FREED:
                    tag.saved = state

    def _tag_deep(self, grad_fn: Any, origin: Origin) -> NodeTag:
        """Post-order over untagged nodes: children are tagged before parents."""
        table = self.node_tags
        stack: list[tuple[Any, bool]] = [(grad_fn, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node.metadata) in table:
                continue
            nexts = node.next_functions
            if not expanded:
                untagged = [
                    child
                    for child, _ in nexts
                    if child is not None and type(child) is not _ACCUMULATE and id(child.metadata) not in table
                ]
                if untagged:
                    stack.append((node, True))
                    stack.extend((child, False) for child in untagged)
                    continue
            children: list[NodeTag | LeafTag] = []
            for child, _ in nexts:
                if child is None:
                    continue
                entry = table.get(id(child.metadata))
                # Only AccumulateGrad is left untagged.
                children.append(entry[1] if entry is not None else self.leaf_tag(child.variable))
            self._put(node, self._new_tag(node, origin, tuple(children)))
        return table[id(grad_fn.metadata)][1]

    def tag_tensor(self, tensor: torch.Tensor, origin: Origin) -> NodeTag | LeafTag:
        """The tag of a tensor's place in the graph: its grad_fn's, or its own as a leaf."""
        fn = tensor.grad_fn
        if fn is not None:
            tag = self.tag_graph(fn, origin, tensor)
            assert tag is not None
            return tag
        return self.leaf_tag(tensor)

    def tag_unobserved(self, tensor: torch.Tensor, exec_id: int) -> None:
        """Tag the graph of a tensor computed while nothing observed (notebook
        cells run before the extension was loaded, or with narration off).
        Its untagged nodes get one origin with no line, labelled with the op
        that made the tensor; their saved state is asked of torch, since no
        backward that ran meanwhile was seen."""
        fn: Any = tensor.grad_fn
        if fn is None or self.tag_of(fn) is not None:
            return
        origin = Origin(exec_id, None, label=fn.name().removeprefix("torch::autograd::"))
        self.tag_graph(fn, origin)
        for node in iter_nodes([fn]):
            tag = self.tag_of(node)
            if tag is not None and tag.origin is origin and tag.saved_attrs:
                tag.saved = read_saved_state(node, tag.saved_attrs)

    def assign_parts(self, line: Origin, outputs: list[tuple[Origin, list[torch.Tensor]]]) -> None:
        """Give each statement of a line its nodes: a statement's outputs, and
        what the line made to compute them that no earlier statement claimed
        (a line's statements run in order, so each builds on the ones before)."""
        for part, tensors in outputs:
            stack: list[Any] = [self.tag_of(t.grad_fn) for t in tensors if t.grad_fn is not None]
            while stack:
                tag = stack.pop()
                if not isinstance(tag, NodeTag) or tag.origin is not line:
                    continue
                tag.origin = part
                tag.view = None
                stack.extend(tag.children)

    def mark_freed(
        self,
        grad_fns: Iterable[Any],
        by: Origin,
        *,
        inputs: Iterable[Any] = (),
    ) -> int:
        """After a backward without retain_graph: mark the nodes it ran as freed;
        return how many it freed.

        Which nodes ran is worked out, not read back: reading a saved tensor
        would unpack it, which can run the user's saved-tensor hooks or a
        checkpoint's forward again. Autograd runs every node reachable from
        the roots, or with ``inputs`` only those on a path to one of them.
        Tests check this against torch. (A backward that failed part-way:
        see ``mark_freed_before_failure``.)
        """
        freed = 0
        targets = list(inputs)
        if not targets:
            # Every node reachable ran: walked on the tags, which mirror the
            # graph's edges (tag_graph tags every node below the roots).
            for tag in walk_tags(self._root_tags(grad_fns)):
                if not tag.is_leaf and tag.saved == SAVED_PRESENT:  # type: ignore[union-attr]
                    tag.saved = SAVED_FREED  # type: ignore[union-attr]
                    tag.freed_by = by  # type: ignore[union-attr]
                    freed += 1
            return freed
        nodes, ran = _nodes_run(grad_fns, targets)
        for node in nodes:
            found = self.tag_of(node) or self.tag_graph(node, UNKNOWN_ORIGIN)
            if found is None or found.saved != SAVED_PRESENT or id(node) not in ran:
                continue
            found.saved = SAVED_FREED
            found.freed_by = by
            freed += 1
        return freed

    def _root_tags(self, grad_fns: Iterable[Any]) -> list[NodeTag | LeafTag]:
        return [tag for fn in grad_fns if fn is not None and (tag := self.tag_graph(fn, UNKNOWN_ORIGIN)) is not None]

    def reachable_leaves(self, grad_fns: Iterable[Any]) -> list[torch.Tensor]:
        """Leaf tensors reachable from ``grad_fns`` (the ones a backward may
        write ``.grad`` to), found on the tags (every node below them is tagged)."""
        # (In the order a walk of the nodes meets them: depth first, each
        # node's inputs in order. A tag's children are its node's inputs.)
        leaves: dict[int, torch.Tensor] = {}
        seen: set[int] = set()
        stack = self._root_tags(grad_fns)
        while stack:
            tag = stack.pop()
            if tag.serial in seen:
                continue
            seen.add(tag.serial)
            for child in tag.children:
                if child.is_leaf:
                    t = child.ref()  # type: ignore[union-attr]
                    if t is not None:
                        leaves.setdefault(id(t), t)
                elif child.serial not in seen:
                    stack.append(child)
        return list(leaves.values())

    def mark_freed_before_failure(
        self,
        grad_fns: Iterable[Any],
        by: Origin,
        stopped_at: NodeTag | None,
        *,
        inputs: Iterable[Any] = (),
    ) -> int:
        """After a backward without retain_graph failed part-way (at
        ``stopped_at``, when known): mark the nodes it ran before failing as
        freed; return how many it freed.

        Torch is asked: a node whose saved tensors it now calls freed, that
        no earlier backward freed, was freed by this one. Nodes made under
        saved-tensor hooks are not read (reading would run the unpack hook):
        of them, those on a path the backward takes (see ``mark_freed``) with
        a higher sequence number than ``stopped_at`` (the engine runs the
        ready node of highest sequence number first, so it ran all those
        before it); none when ``stopped_at`` is not known.
        """
        nodes, ran = _nodes_run(grad_fns, inputs)
        freed = 0
        for node in nodes:
            tag = self.tag_of(node) or self.tag_graph(node, UNKNOWN_ORIGIN)
            if tag is None or not tag.saved_attrs or tag.saved == SAVED_FREED:
                continue
            if tag.hooked:
                if (
                    stopped_at is None
                    or tag.saved != SAVED_PRESENT
                    or id(node) not in ran
                    or tag.sequence_nr <= stopped_at.sequence_nr
                ):
                    continue
            elif read_saved_state(node, tag.saved_attrs) != SAVED_FREED:
                continue
            tag.saved = SAVED_FREED
            tag.freed_by = by
            freed += 1
        return freed

    def first_failing_node(
        self, grad_fns: Iterable[Any], state: str, *, known: bool = False
    ) -> NodeTag | None:
        """The node a failing backward stopped at: the first one torch runs whose
        saved tensors are in ``state`` (``freed`` or ``modified``).

        The engine runs nodes in decreasing sequence number (a node is always
        created after its inputs), so that is the reachable node in that state
        with the highest sequence number. ``known=True`` trusts the state the
        tags recorded before the call (the failed call itself frees the nodes
        it ran before it stopped); otherwise torch is asked, but not of nodes
        made under saved-tensor hooks (reading would run the unpack hook).
        """
        best: NodeTag | None = None
        for node in iter_nodes(grad_fns):
            tag = self.tag_of(node)
            if tag is None or not tag.saved_attrs:
                continue
            current = tag.saved if known or tag.hooked else read_saved_state(node, tag.saved_attrs)
            if current != state:
                continue
            if best is None or tag.sequence_nr > best.sequence_nr:
                best = tag
        return best


_ACCUMULATE = getattr(torch._C._functions, "AccumulateGrad")
_ANOMALY_TRACE_KEY = "traceback_"  # where anomaly mode keeps a node's forward trace
_FRAME_FILE = re.compile(r'\s*File "([^"]*)"')


def _forward_trace_as_python_keeps_it(node: Any, is_user_file: Callable[[str], bool]) -> None:
    """With ``torch.autograd.set_detect_anomaly(True)`` each node keeps the
    stack it was made on (torch prints it when its backward fails). Made
    under the tutor, that stack starts with the tutor's frames and ends in
    its observer: keep it as python would have, from the program's first
    frame, without the tutor's."""
    try:
        trace = node.metadata.get(_ANOMALY_TRACE_KEY)
    except (AttributeError, RuntimeError):
        return
    if not isinstance(trace, list) or not trace:
        return
    files = [_FRAME_FILE.match(entry) for entry in trace]
    first = next((i for i, m in enumerate(files) if m is not None and is_user_file(m.group(1))), None)
    if first is None:
        return
    kept = [entry for entry, m in zip(trace[first:], files[first:]) if m is None or not is_tutor_file(m.group(1))]
    node.metadata[_ANOMALY_TRACE_KEY] = kept
_FIRST_SWEEP = 4096  # side-table entries before the first sweep; then twice the live ones


def _dead_keys(table: dict[int, tuple[dict[Any, Any], NodeTag]]) -> list[int]:
    """Keys whose metadata dict nobody but the table holds: the node died."""
    return [key for key, entry in table.items() if _held(entry) <= _ALONE]


def _held(entry: tuple[dict[Any, Any], Any]) -> int:
    """The references to a side-table entry's metadata dict, counted in one
    place for every caller and for ``_ALONE``: what a count includes (the
    call's own references) depends on the code that counts, not only on
    who holds the dict."""
    return sys.getrefcount(entry[0])


# The count of a dict that only its entry holds: an entry's node is alive
# while its metadata dict is held by more.
_ALONE = _held(({}, None))


class hidden_from_user_modes:
    """The tutor's own reads of tensors (``.grad``, ``tolist()``), hidden from
    the user's torch function modes, tensor subclasses and dispatch modes.
    (A context manager run on every step: a class, not a generator.)"""

    __slots__ = ("_torch_function", "_dispatch")

    def __enter__(self) -> None:
        self._torch_function = torch._C.DisableTorchFunction()
        self._torch_function.__enter__()
        self._dispatch = None
        if torch._C._len_torch_dispatch_stack() > 0:
            from torch.utils._python_dispatch import _disable_current_modes

            self._dispatch = _disable_current_modes()
            self._dispatch.__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._dispatch is not None:
                self._dispatch.__exit__(*exc)
        finally:
            self._torch_function.__exit__(*exc)


def is_accumulate(node: Any) -> bool:
    return type(node) is _ACCUMULATE


def iter_nodes(grad_fns: Iterable[Any]) -> Iterator[Any]:
    """Every autograd node reachable from ``grad_fns`` (not AccumulateGrad), once.

    The walk holds every node it has met until it ends: torch before 2.6 or
    so makes a new Python object for a node each time it is reached, and a
    dropped one's ``id()`` may be reused by the next, which would then be
    taken as already seen."""
    seen: dict[int, Any] = {}
    stack = [fn for fn in grad_fns if fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        yield node
        for child, _ in node.next_functions:
            if child is not None and not is_accumulate(child) and id(child) not in seen:
                stack.append(child)


def _nodes_leading_to(nodes: list[Any], targets: set[int]) -> set[int]:
    """ids of the nodes with a path to a target (a grad_fn or an AccumulateGrad,
    given by id) through their inputs. A target itself does not count: the
    gradient of a non-leaf input is caught before its grad_fn would run."""
    leads: dict[int, bool] = {}

    def visit(start: Any) -> bool:
        # Iterative post-order: a node leads to a target if a child is one or leads to one.
        stack: list[tuple[Any, bool]] = [(start, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if key in leads and not done:
                continue
            children = [c for c, _ in node.next_functions if c is not None]
            if not done:
                stack.append((node, True))
                stack.extend((c, False) for c in children if id(c) not in leads)
                continue
            leads[key] = any(id(c) in targets or leads.get(id(c), False) for c in children)
        return leads[id(start)]

    return {id(n) for n in nodes if visit(n)}


def _nodes_run(grad_fns: Iterable[Any], inputs: Iterable[Any]) -> tuple[list[Any], set[int]]:
    """The nodes reachable from ``grad_fns``, and the ids of those a backward
    from them runs: all, or with ``inputs`` only those on a path to one."""
    nodes = list(iter_nodes(grad_fns))
    targets = {id(t) for t in inputs}
    return nodes, _nodes_leading_to(nodes, targets) if targets else {id(n) for n in nodes}


class Reach:
    """Questions about the graph of a step's named tensors, answered by
    walking from them only until the answer is known (a lite snapshot's)."""

    def __init__(self, roots: dict[str, NodeTag | LeafTag], registry: TagRegistry | None = None) -> None:
        self.roots = roots  # node id -> tag, of each named tensor that requires grad
        # The registry of the tags: a node it knows to be out of reach is
        # not looked for (``TagRegistry.out_of_reach``).
        self.registry = registry

    def below(self, node_id: str, starts: Iterable[NodeTag | LeafTag]) -> bool:
        """Is ``node_id`` an input, direct or not, of a tag of ``starts``?"""
        seen: set[int] = set()
        stack = [child for tag in starts for child in tag.children]
        while stack:
            tag = stack.pop()
            if tag.serial in seen:
                continue
            if tag.node_id == node_id:
                return True
            seen.add(tag.serial)
            stack.extend(tag.children)
        return False

    def in_graph(self, node_id: str) -> bool:
        """``node_id`` is an input of a named tensor's graph that a backward
        can still run through (see ``_live``). (A training loop's ``loss =
        ...`` asks it of the last loss, dead or freed by its backward: not
        looked for through the new loss's whole graph.)"""
        if self.registry is not None and self.registry.out_of_reach(node_id, freed_too=True):
            return False
        return self._live(node_id=node_id)

    def reaches_tensor(self, ids: set[int], live: bool = True) -> bool:
        """Is a leaf tensor whose id is in ``ids`` an input of a named tensor's
        graph that a backward can still run through (see ``_live``), or,
        ``live=False``, of one at all?"""

        def wanted(tag: NodeTag | LeafTag) -> bool:
            if not isinstance(tag, LeafTag):
                return False
            t = tag.ref()
            return t is not None and id(t) in ids

        return self._live(wanted, live)

    def _live(
        self, wanted: Callable[[NodeTag | LeafTag], bool] | None = None, cut: bool = True, node_id: str | None = None,
    ) -> bool:
        """Is an input, direct or not, of the named tensors ``wanted`` (or,
        without ``wanted``, the one of ``node_id``)? Only as far as a
        backward from them could go: not into a node whose saved tensors a
        backward freed, nor below it. (Of a training loop's last graph, run
        backward through and freed, nothing is still "in the graph" for a
        name that moved on: nothing can use it again.) ``cut=False``: all of
        them. Walked until the answer is known (a loop, not generators, and
        one node compared in it, not by a call per tag: asked at every
        hidden step of a loop that binds a name anew)."""
        seen: set[int] = set()
        stack = [child for tag in self.roots.values() if not (cut and _freed(tag)) for child in tag.children]
        while stack:
            tag = stack.pop()
            serial = tag.serial
            if serial in seen:
                continue
            seen.add(serial)
            if cut and not tag.is_leaf and tag.saved == SAVED_FREED:  # type: ignore[union-attr]
                continue
            if tag.node_id == node_id if wanted is None else wanted(tag):
                return True
            stack.extend(tag.children)
        return False

    def grew_from(self, node_id: str, before: str) -> bool:
        """The graph of ``node_id`` (a named tensor's) contains ``before``."""
        root = self.roots.get(node_id)
        if root is None or self.registry is not None and self.registry.out_of_reach(before):
            return False
        return self.below(before, (root,))


def _freed(tag: NodeTag | LeafTag) -> bool:
    return not tag.is_leaf and tag.saved == SAVED_FREED  # type: ignore[union-attr]


def walk_tags(roots: Iterable[NodeTag | LeafTag]) -> list[NodeTag | LeafTag]:
    """Every tag reachable from ``roots``, each once, in no particular order."""
    seen: set[int] = set()
    out: list[NodeTag | LeafTag] = []
    stack = list(roots)
    while stack:
        tag = stack.pop()
        serial = tag.serial
        if serial in seen:
            continue
        seen.add(serial)
        out.append(tag)
        stack.extend(tag.children)  # (those seen already are passed over when taken)
    return out
