"""Turns the tensors bound to names into a frozen :class:`Snapshot`.

:meth:`Snapshotter.take` reads a namespace (the frame's locals over the
module's globals), tags any graph it has not seen yet, walks the tags
reachable from the named tensors and builds the op view and the statement
view. It never holds a tensor or an autograd node after it returns.

Cost: one walk over the reachable tags per step. The frozen ``Node`` of a
tag is cached on the tag and rebuilt only when what it shows changes (its
names, its saved state, its gradient), so a step on an unchanged graph
allocates almost nothing; and the statement view is regrouped only when the
op view changed.
"""

from __future__ import annotations

import math
import sys
import weakref
from dataclasses import replace
from typing import Any, Collection, Iterator, Mapping, NamedTuple

import torch

from gradtutor import autograd_graph as ag
from gradtutor.gcpause import no_cycle_collection
from gradtutor.grouping import group_statements, module_detail, statement_group, statement_of
from gradtutor.messages import message
from gradtutor.model import CONST, LEAF, OP, SAVED_FREED, STATEMENT, Binding, Edge, Graph, Node, Snapshot

GRAD_LIST_LIMIT = 100  # a .grad with more elements is summarised, not listed


def is_tracked_name(name: str) -> bool:
    """Names the tutor draws and reports: not dunders, not the shell's ``_``,
    not IPython's output history (``_9`` is ``Out[9]``)."""
    return not name.startswith("__") and name != "_" and not (name[:1] == "_" and name[1:].isdigit())


def module_parts(module: torch.nn.Module) -> tuple[list[tuple[str, torch.Tensor]], list[torch.Tensor]]:
    """A module's parameters with their paths and its buffers, its submodules'
    included, as ``named_parameters()`` and ``buffers()`` give them (each
    once, in that order), read from the module's own tables: no method a
    subclass may override is called, and no generators are run."""
    params: list[tuple[str, torch.Tensor]] = []
    buffers: list[torch.Tensor] = []
    seen_modules: set[int] = set()
    seen_params: set[int] = set()
    seen_buffers: set[int] = set()
    stack: list[tuple[str, Any]] = [("", module)]
    while stack:  # depth first, each module before its submodules, as named_modules()
        prefix, current = stack.pop()
        if id(current) in seen_modules:
            continue
        seen_modules.add(id(current))
        tables = getattr(current, "__dict__", {})
        dot = prefix + "." if prefix else ""
        for key, value in (tables.get("_parameters") or {}).items():
            if value is not None and id(value) not in seen_params:
                seen_params.add(id(value))
                params.append((dot + key, value))
        for value in (tables.get("_buffers") or {}).values():
            if value is not None and id(value) not in seen_buffers:
                seen_buffers.add(id(value))
                buffers.append(value)
        children = [(dot + key, sub) for key, sub in (tables.get("_modules") or {}).items() if sub is not None]
        stack.extend(reversed(children))
    return params, buffers


# Types of value a scan passes over at once (exact types: a subclass is
# looked at as any other value is).
_NO_GRAPH = Graph()  # a lite snapshot's (frozen: one for all)

_NEVER_TRACKED = frozenset({
    int, float, bool, str, bytes, type(None), type(len), type(lambda: 0), type(sys), type, dict, set, frozenset, range,
})


def _modules_self_holds(obj: Any) -> list[tuple[str, torch.nn.Module]]:
    """In a method of a class that is not a module (a trainer, a PINN), the
    modules ``self`` holds, as ``self.model``: the parameters an optimizer
    step or a backward changes are theirs. Read from the instance's own
    ``__dict__`` (no attribute lookup runs the program's code)."""
    if obj is None or isinstance(obj, (torch.Tensor, torch.nn.Module)) or type(obj) in _NEVER_TRACKED:
        return []
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return []
    if type(attrs) is not dict:
        return []
    return [(f"self.{key}", value) for key, value in attrs.items() if isinstance(value, torch.nn.Module)]


_TENSOR, _MODULE, _SEQUENCE = 0, 1, 2  # kinds of name in a scan's layout


class ScanLayouts:
    """The layout of each frame's last scan (see ``NameScan``), with the
    names and the types of their values it was made from (``StepNames.shape``):
    a loop's step finds the same names holding values of the same types, and
    its scan looks only at the names the tutor tracks."""

    def __init__(self) -> None:
        self._layouts: dict[Any, tuple[tuple[tuple[str, ...], tuple[int, ...]], tuple[tuple[str, int], ...]]] = {}

    def scan(self, names: StepNames, frame_key: Any) -> NameScan:
        shape = names.shape()
        known = self._layouts.get(frame_key)
        if known is not None and known[0] == shape:
            return NameScan(names.names, known[1])
        scan = NameScan(names.names)
        self._layouts[frame_key] = (shape, scan.layout)
        return scan

    def forget(self, frame_key: Any) -> None:
        self._layouts.pop(frame_key, None)


class NameScan:
    """The tracked names of a namespace that the tutor looks at, by kind, in
    the namespace's order: tensors, modules, and short tuples and lists
    (which may hold tensors: an LSTM's ``hidden``)."""

    __slots__ = ("tensors", "modules", "sequences", "tensors_and_modules", "_parts", "layout")

    def __init__(self, namespace: Mapping[str, Any], layout: tuple[tuple[str, int], ...] | None = None) -> None:
        """``layout``: (name, kind) of each name whose value's type makes it
        one to look at (a tensor, a module, a tuple or list), in order; given
        when a scan of the same names holding values of the same types made
        it, so only what each value itself decides is looked at (a view's
        graph, a sequence's length). Kept as ``layout``."""
        tensors: list[tuple[str, torch.Tensor]] = []
        modules: list[tuple[str, torch.nn.Module]] = []
        sequences: list[tuple[str, Any]] = []
        both: list[tuple[str, Any]] = []
        kinds: list[tuple[str, int]] = []
        if layout is None:
            for name, value in namespace.items():
                if type(value) in _NEVER_TRACKED or name[:1] == "_" and not is_tracked_name(name):
                    continue
                if isinstance(value, torch.Tensor):
                    kinds.append((name, _TENSOR))
                elif isinstance(value, torch.nn.Module):
                    kinds.append((name, _MODULE))
                elif type(value) in (tuple, list):
                    kinds.append((name, _SEQUENCE))
            layout = tuple(kinds)
        self.layout = layout
        transform = ag.in_transform()
        for name, kind in layout:
            value = namespace[name]
            if kind is _TENSOR:
                if value._is_view() and not ag.graph_readable(value):
                    continue  # (a view torch no longer gives a node: see ag.graph_readable)
                if transform and ag.transform_tensor(value):
                    continue  # (a torch.func transform's own: see ag.transform_tensor)
                tensors.append((name, value))
                both.append((name, value))
            elif kind is _MODULE:
                modules.append((name, value))
                both.append((name, value))
            elif len(value) <= 8:
                sequences.append((name, value))
        held = _modules_self_holds(namespace.get("self"))
        modules += held
        both += held
        self.tensors = tensors
        self.modules = modules
        self.sequences = sequences
        self.tensors_and_modules = both
        self._parts: dict[int, tuple[list[tuple[str, torch.Tensor]], list[torch.Tensor]]] = {}

    def parts(self, module: torch.nn.Module) -> tuple[list[tuple[str, torch.Tensor]], list[torch.Tensor]]:
        """``module_parts(module)``, found once per scan."""
        found = self._parts.get(id(module))
        if found is None:
            found = self._parts[id(module)] = module_parts(module)
        return found


class StepNames(Mapping[str, Any]):
    """The names one step sees, read-only, with their scan made once: every
    question a step asks of its names (events, snapshot) shares one pass
    over a namespace that may hold hundreds of names."""

    __slots__ = ("names", "_scan", "get", "_layouts", "_frame_key", "_shape")

    def __init__(self, names: Mapping[str, Any], layouts: ScanLayouts | None = None, frame_key: Any = None) -> None:
        self.names = names  # (what it reads: for loops that look up many names)
        self._scan: NameScan | None = None
        self.get = names.get  # type: ignore[method-assign]  # (the mapping's own: no Python call in between)
        self._layouts = layouts  # (the frame's last scan's layout, kept there)
        self._frame_key = frame_key
        self._shape: tuple[tuple[str, ...], tuple[int, ...]] | None = None

    def shape(self) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The names, and the id of the type of each one's value: made once
        per step. (Ids of types, so the tutor keeps no class of the user's alive.)"""
        if self._shape is None:
            self._shape = (tuple(self.names), tuple(map(id, map(type, self.names.values()))))
        return self._shape

    def __getitem__(self, name: str) -> Any:
        return self.names[name]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def items(self) -> Any:
        return self.names.items()

    def scan(self) -> NameScan:
        if self._scan is None:
            layouts = self._layouts
            self._scan = NameScan(self.names) if layouts is None else layouts.scan(self, self._frame_key)
        return self._scan


def scan_names(namespace: Mapping[str, Any]) -> NameScan:
    """The scan of ``namespace``: made once per step for a :class:`StepNames`."""
    return namespace.scan() if isinstance(namespace, StepNames) else NameScan(namespace)


def split_namespace(
    namespace: Mapping[str, Any],
) -> tuple[list[tuple[str, torch.Tensor]], list[tuple[str, torch.nn.Module]]]:
    """The tensors and the modules bound to names (dunder names excluded)."""
    scan = scan_names(namespace)
    return scan.tensors, scan.modules


def summarize_values(t: torch.Tensor) -> Any:
    """JSON-ready values of a tensor: ``tolist()``, or a summary past 100 elements."""
    t = t.detach()
    if t.device.type == "meta":
        return {"shape": list(t.shape), "device": "meta"}
    if t.is_complex():
        t = torch.view_as_real(t)  # [..., 2]: real and imaginary parts, no warning
    if t.numel() <= GRAD_LIST_LIMIT:
        return t.tolist()
    # Summed in double precision a slice at a time: a double copy of a large
    # gradient at once would raise the program's peak memory by twice its size.
    flat = t.flatten()
    total = squares = 0.0
    for start in range(0, flat.numel(), _SUMMARY_SLICE):
        part = flat[start:start + _SUMMARY_SLICE].double()
        total += float(part.sum())
        squares += float(torch.dot(part, part))
    return {
        "shape": list(t.shape),
        "mean": total / flat.numel(),
        "min": float(flat.min()),
        "max": float(flat.max()),
        "norm": math.sqrt(squares),
    }


_SUMMARY_SLICE = 1 << 20  # elements summed at once: 8 MB in double precision


# A tensor's description by what it is made from: a graph's names share a few.
_tensor_words: dict[tuple[Any, ...], str] = {}


def describe_value(value: Any, language: str = "en") -> str:
    """A one-line description of what a name refers to (for ``:names``), in ``language``.

    Made from the value's type and, for tensors and modules, their shape,
    dtype and size: never from the object's own ``repr()``, which is the
    user's code (and, for a tensor, formats every element)."""
    kind = type(value)
    if isinstance(value, torch.Tensor):
        fn = value.grad_fn if ag.graph_readable(value) else None
        key = (tuple(value.shape), value.dtype, value.requires_grad, fn.name() if fn is not None else None, language)
        found = _tensor_words.get(key)
        if found is None:
            flags = []
            if value.requires_grad:
                flags.append("requires_grad")
            if fn is not None:
                flags.append(f"grad_fn={key[3]}")
            shape = "x".join(str(s) for s in value.shape) or message(language, "value_scalar")
            if len(_tensor_words) >= 4096:
                _tensor_words.clear()
            found = _tensor_words[key] = message(
                language, "value_tensor", shape=shape, dtype=ag.dtype_name(value.dtype),
                flags="".join(" " + flag for flag in flags),
            )
        return found
    if isinstance(value, torch.nn.Module):
        parts = module_parts(value)[0]
        values = sum(p.numel() for _, p in parts)
        return message(language, "value_module", type=kind.__name__, count=len(parts), values=values)
    if isinstance(value, torch.optim.Optimizer):
        return _describe_optimizer(value, language)
    if kind in (int, float, bool, complex) or value is None:
        return repr(value)  # builtins: their repr is short and runs no user code
    if kind is str:
        return repr(value) if len(value) <= 58 else repr(value[:57]) + "…"
    if kind in (list, tuple, set, frozenset, dict):
        kinds = _element_kinds(value.values() if kind is dict else value, language)
        return message(language, "value_container", type=kind.__name__, count=len(value), kinds=kinds)
    return kind.__name__


def _describe_optimizer(optimizer: torch.optim.Optimizer, language: str) -> str:
    """"SGD over 2 tensors (8 values), lr 0.1": read from its parameter
    groups as stored (none of its methods is called)."""
    groups = vars(optimizer).get("param_groups") or []
    tensors = [p for group in groups if isinstance(group, dict) for p in group.get("params", ())]
    values = sum(p.numel() for p in tensors if isinstance(p, torch.Tensor))
    rates = list(dict.fromkeys(group.get("lr") for group in groups if isinstance(group, dict) and "lr" in group))
    rate = "/".join(format(float(r), "g") if isinstance(r, (int, float)) else "tensor" for r in rates)
    return message(language, "value_optimizer" if rates else "value_optimizer_no_lr", type=type(optimizer).__name__,
                   count=len(tensors), values=values, lr=rate)


def _element_kinds(items: Any, language: str) -> str:
    """": 3 tensors", ": 2 ints, 1 str": what a container holds, by type (a few items looked at)."""
    counts: dict[str, int] = {}
    for i, item in enumerate(items):
        if i == 8:
            break
        name = "tensor" if isinstance(item, torch.Tensor) else type(item).__name__
        counts[name] = counts.get(name, 0) + 1
    if not counts:
        return ""
    parts = [message(language, "value_kind_tensor" if name == "tensor" else "value_kind", name=name, count=n,
                     s="s" if n > 1 else "")
             for name, n in counts.items()]
    return message(language, "value_kinds", kinds=message(language, "list_sep").join(parts), more="…" if i >= 8 else "")


class _ParamOf(NamedTuple):
    """A parameter of a named module, as a snapshot found it (weakly)."""

    param: weakref.ref[torch.Tensor]
    path: str
    name: str
    module: weakref.ref[torch.nn.Module]


# Ghost names a frame keeps before those of dead tags are looked for.
_FORMER_LIMIT = 256


class Snapshotter:
    """Builds snapshots; remembers the previous one of each frame to find ghosts."""

    def __init__(self, registry: ag.TagRegistry, describe: bool = True) -> None:
        self.registry = registry
        self.describe = describe  # bindings say what each name holds (describe_value), or leave it ""
        self._previous: dict[Any, Snapshot] = {}
        # Nodes some picture has drawn "(dropped)", or let leave quietly
        # (still alive, out of view): that is said once, in whichever frame
        # (a generator resumed later still has its picture from before, and
        # would say it again).
        self._dropped_shown: set[str] = set()
        # Per frame: what each tracked name was bound to at the last step
        # (the object, weakly where it can be, and its tag's serial), and the
        # names each tag lost because this frame rebound them ("x (old)").
        self._bound: dict[Any, dict[str, tuple[weakref.ref[Any], int]]] = {}
        self._former: dict[Any, dict[int, tuple[str, ...]]] = {}
        self._former_limit = _FORMER_LIMIT
        self._checked_epoch = 0  # the registry's inplace_epoch when saved tensors were last asked about
        # Per frame: id(param) -> (the parameter, its path, its module's
        # name, the module; weakly), of the modules its names held (see
        # _old_module_params).
        self._module_params: dict[Any, dict[int, _ParamOf]] = {}
        self._grouped: tuple[Any, Graph] | None = None
        self._statement_cache: dict[str, tuple[tuple[tuple[Node, ...], Any], Node]] = {}
        # Per frame: the tags of the last snapshot's op graph, by node id.
        self._tags: dict[Any, dict[str, ag.NodeTag | ag.LeafTag]] = {}
        # Frames that ran steps not shown since their last snapshot: what left
        # the graph meanwhile left it in one of those, not in the next step
        # shown, which does not draw it "(dropped)" (see ``hidden_step``).
        self._unseen: set[Any] = set()

    def follow_names(self, namespace: Mapping[str, Any], names_of: Mapping[int, tuple[str, ...]], frame_key: Any) -> None:
        """What a lite snapshot of ``namespace`` keeps, given each tag's names
        (``names_of``: serial -> names): see ``_former_names``."""
        self._former_names(namespace, names_of, frame_key, True)

    def hidden_step(self, frame_key: Any) -> None:
        """A step of the frame ran and was not shown."""
        self._unseen.add(frame_key)

    def bind_arguments(self, frame_key: Any, arguments: list[tuple[str, torch.Tensor, int]]) -> None:
        """A new frame's tensor arguments (name, tensor, tag serial), bound
        before its first step: one that step rebinds leaves a ghost."""
        self._bound[frame_key] = {name: (weakref.ref(t), serial) for name, t, serial in arguments}

    def forget_frame(self, frame_key: Any) -> None:
        self._previous.pop(frame_key, None)
        self._unseen.discard(frame_key)
        self._tags.pop(frame_key, None)
        self._bound.pop(frame_key, None)
        self._former.pop(frame_key, None)
        self._module_params.pop(frame_key, None)

    def take(
        self,
        namespace: Mapping[str, Any],
        *,
        origin: ag.Origin,
        frame_key: Any = None,
        remember: bool = True,
        lite: bool = False,
        names_current: bool = False,
        running: Collection[int] = (),
        tags_as: ag.Origin | None = None,
    ) -> Snapshot:
        """The snapshot of ``namespace`` after the step ``origin``.

        ``remember=False`` looks without counting as a step: the next step
        still compares itself with the previous real one. ``lite=True`` is
        for a step that will most likely not be shown (a loop past its first
        iterations): only what events are detected from (the op graph and
        which node each name is bound to), nothing remembered; the statement
        view, gradients and descriptions are left empty. ``running``: the
        steps of lines still running, in the calls of which this step is
        (their statement nodes are drawn "inside ..."). ``tags_as``: the
        origin a node the names meet untagged gets (else ``origin``).
        """
        if lite:
            return self._take(namespace, origin, frame_key, remember, lite, names_current, running, tags_as)
        with no_cycle_collection():
            return self._take(namespace, origin, frame_key, remember, lite, names_current, running, tags_as)

    def _take(
        self,
        namespace: Mapping[str, Any],
        origin: ag.Origin,
        frame_key: Any,
        remember: bool,
        lite: bool,
        names_current: bool,
        running: Collection[int] = (),
        tags_as: ag.Origin | None = None,
    ) -> Snapshot:
        # Which names this frame rebound is followed on every step, lite ones
        # included (a lite step's full snapshot, taken when it turns out to be
        # shown, says ``names_current``: that step's rebindings are known).
        follow_names = remember or lite
        if lite:
            remember = False
        tensors, modules = split_namespace(namespace)
        param_names: dict[int, tuple[str, str]] = {}
        # The modules drawn, one node each: (parameters, values, whether one
        # has a .grad, how many require grad).
        module_sizes: dict[str, tuple[int, int, bool, int]] = {}
        sizes: dict[str, tuple[int, int, int]] = {}  # every name of a module (for :names)
        params: dict[int, tuple[torch.Tensor, torch.nn.Module]] = {}
        for mod_name, module in () if lite else modules:
            count = values = trainable = 0
            claimed = has_grad = False
            for p_name, param in scan_names(namespace).parts(module)[0]:
                if id(param) not in param_names:
                    param_names[id(param)] = (f"{mod_name}.{p_name}", mod_name)
                    params[id(param)] = (param, module)
                    claimed = True
                count += 1
                values += param.numel()
                trainable += param.requires_grad
                has_grad = has_grad or (param.is_leaf and param.grad is not None)
            sizes[mod_name] = (count, values, trainable)
            # A module another name already drew (``self`` and ``model`` in
            # ``forward``), a part of one, or one without parameters yet
            # (``super().__init__()``) is not a node of its own: it would
            # stand alone, apart from the graph that uses its parameters.
            if claimed:
                module_sizes[mod_name] = (count, values, has_grad, trainable)

        old_params = {} if lite else self._old_module_params(namespace, frame_key, param_names, params, remember)
        names_of: dict[int, tuple[str, ...]] = {}
        roots: list[ag.NodeTag | ag.LeafTag] = []
        tensor_of: dict[int, torch.Tensor] = {}
        named_nodes: dict[str, str | None] = {}
        for name, t in tensors:
            if t.requires_grad:
                tag: ag.NodeTag | ag.LeafTag | None = self.registry.tag_tensor(t, tags_as or origin)
                roots.append(tag)  # type: ignore[arg-type]
            else:
                tag = self.registry.known_leaf(t)
            if tag is not None:
                names_of[tag.serial] = names_of.get(tag.serial, ()) + (name,)
                tensor_of[tag.serial] = t
                named_nodes[name] = tag.node_id
            else:
                named_nodes[name] = None

        if names_current:
            former = self._former.get(frame_key, {})
        else:
            former = self._former_names(namespace, names_of, frame_key, follow_names)
        # What events ask of the graph, ``Reach`` answers without building it.
        reach = ag.Reach({tag.node_id: tag for tag in roots}, self.registry)
        if lite:  # what events ask: each name's node, and the graph's reach
            return Snapshot(origin.exec_id, origin.line, _NO_GRAPH, _NO_GRAPH, reach=reach, named_nodes=named_nodes)
        if self.registry.inplace_epoch != self._checked_epoch:
            # Tensors were changed in place since the last look: a node that
            # saved one is drawn "[modified]" before a backward fails there.
            self._checked_epoch = self.registry.inplace_epoch
            self.registry.recheck_saved(t.grad_fn for _, t in tensors if t.grad_fn is not None)
        tags = sorted(ag.walk_tags(roots), key=lambda tag: tag.serial)
        here = (origin.function, named_nodes)  # (for a tensor a call of this function named: see _leaf_view)
        nodes: list[Node] = []
        edges: list[Edge] = []
        origins: dict[int, ag.Origin] = {}
        for tag in tags:
            names = names_of.get(tag.serial, ())
            lost = () if names else former.get(tag.serial, ())
            if isinstance(tag, ag.NodeTag):
                origins[tag.origin.exec_id] = tag.origin
                nodes.append(self._op_view(tag, names, lost, tensor_of.get(tag.serial)))
                if tag.edges is None:
                    tag.edges = tuple(Edge(child.node_id, tag.node_id) for child in tag.children)
                edges.extend(tag.edges)
            else:
                nodes.append(self._leaf_view(tag, names, lost, param_names, old_params, here))
        ops = Graph(tuple(nodes), tuple(edges))

        # A tensor without requires_grad that a statement read is in the graph
        # only while a node of it keeps it saved: not once a backward freed
        # them. Still drawn while a name holds it (what it was computed from).
        freed = {tag.origin.exec_id for tag in tags if isinstance(tag, ag.NodeTag) and tag.saved == SAVED_FREED}
        consts = {
            exec_id: tuple(
                self._leaf_view(
                    c, names_of.get(c.serial, ()), () if c.serial in names_of else former.get(c.serial, ()), {}, {}, here,
                )
                for c in o.const_reads
                if c.serial in names_of or (exec_id not in freed and c.ref() is not None)
            )
            for exec_id, o in origins.items()
            if o.const_reads
        }
        statements = self._group(ops, origins, consts, module_sizes)
        if running and any(n.step in running for n in statements.nodes if n.kind == STATEMENT):
            statements = Graph(
                tuple(replace(n, running=True) if n.kind == STATEMENT and n.step in running else n for n in statements.nodes),
                statements.edges,
            )

        previous = self._previous.get(frame_key) if remember else None
        if remember and frame_key in self._unseen:
            self._unseen.discard(frame_key)
            previous = None  # (what left during hidden steps is not this step's to show)
        if previous is not None:
            drawn_ops = {n.id for n in ops.nodes}
            alive = self._out_of_view(previous, drawn_ops, frame_key)
            shown = self._dropped_shown
            ops = with_dropped(previous.ops, ops, alive, shown)
            # (a module a name still holds that has no parameter left to draw,
            # after delattr: not drawn, but not gone either)
            alive.update(f"m:{name}" for name in sizes if name not in module_sizes)
            statements = with_dropped(previous.statements, statements, alive, shown, drawn_ops)
            if len(shown) > 100_000:
                shown.clear()  # (ids are never reused: forgetting old ones only risks a repeat)
            shown.update(n.id for graph in (ops, statements) for n in graph.nodes if n.dropped)
            shown.update(alive)  # (they left the picture quietly: not to be dropped later)
        if remember:
            kept = self._tags[frame_key] = {tag.node_id: tag for tag in tags}
            for o in origins.values():
                for c in o.const_reads:
                    kept.setdefault(c.node_id, c)

        grads: list[tuple[str, Any]] = []
        for name, t in tensors:
            if t.is_leaf or t.retains_grad:
                g = t.grad
                if g is not None:
                    grads.append((name, summarize_values(g)))
        snap = Snapshot(
            origin.exec_id, origin.line, ops, statements, self._bindings(namespace, sizes), tuple(grads), reach=reach
        )
        if remember:
            self._previous[frame_key] = snap
        return snap

    def _out_of_view(self, previous: Snapshot, current: Collection[str], frame_key: Any) -> set[str]:
        """The nodes of ``previous`` gone from the op nodes drawn now
        (``current``, their ids) whose tensor or autograd node is still alive:
        something the names do not lead to holds it (a dict, a module
        attribute that is not a parameter, the shell's history). They leave
        the picture without being called dropped. A statement node is alive
        with its ops."""
        tags = self._tags.get(frame_key)
        if not tags:
            return set()
        alive: set[str] = set()
        # (Const inputs are only in the statement view: a named one that no
        # statement drawn reads now is not gone.)
        for node in (*previous.ops.nodes, *(n for n in previous.statements.nodes if n.kind == CONST)):
            if node.id in current or node.dropped:
                continue
            tag = tags.get(node.id)
            if tag is not None and self.registry.alive(tag):
                alive.add(node.id)
                if node.kind == OP:
                    alive.add(statement_group(node.step))
        return alive

    def names_unchanged(
        self, namespace: Mapping[str, Any], frame_key: Any,
        tagged: list[tuple[str, torch.Tensor, Any]] | None = None,
    ) -> bool:
        """Would a lite snapshot of ``namespace`` find every tensor name bound
        as at the frame's last step, none added or gone? Then it would change
        nothing this snapshotter keeps for the frame. ``tagged``: its tensor
        names with their tags (``TagRegistry.known_tags``), when the caller
        has them."""
        before = self._bound.get(frame_key)
        if before is None:
            return False
        if tagged is None:
            tagged = self.registry.known_tags(scan_names(namespace).tensors)
        count = 0
        for name, t, tag in tagged:
            if tag is None:
                if t.requires_grad:
                    return False  # (a snapshot would tag it now)
                continue
            entry = before.get(name)
            if entry is None or entry[0]() is not t or entry[1] != tag.serial:
                return False
            count += 1
        return count == len(before)

    def _old_module_params(
        self, namespace: Mapping[str, Any], frame_key: Any, param_names: Mapping[int, tuple[str, str]],
        params: Mapping[int, tuple[torch.Tensor, torch.nn.Module]], remember: bool,
    ) -> dict[int, tuple[str, str]]:
        """id(param) -> (path, module name) of the parameters of modules that
        this frame's names held when last looked at, the name being bound to
        another module since (``model = Net()`` again): while a graph keeps
        them, they are drawn as ``model (old)``. Not those of a module whose
        name was deleted or holds no module now, nor a parameter taken out of
        a module its name still holds (``delattr``). What the frames further
        out remember counts too, for the names a function sees of theirs (its
        globals): the picture does not change when a call is entered or left."""
        known = self._module_params.get(frame_key, {})
        old: dict[int, tuple[str, str]] = {}
        outer = [history for key, history in self._module_params.items() if key != frame_key]
        for history in (known, *outer):
            for key, entry in history.items():
                if key in param_names or key in old or entry.param() is None:
                    continue
                holder = namespace.get(entry.name)
                if isinstance(holder, torch.nn.Module) and holder is not entry.module():
                    old[key] = (entry.path, entry.name)
        if remember:
            # Kept while the parameter lives: one taken out of its module may
            # be drawn old once the module's name moves on.
            now = {key: entry for key, entry in known.items() if key not in param_names and entry.param() is not None}
            for key, (path, name) in param_names.items():
                found = known.get(key)
                param, module = params[key]
                now[key] = found if (
                    found is not None and found.param() is param and found.path == path and found.module() is module
                ) else _ParamOf(weakref.ref(param), path, name, weakref.ref(module))
            self._module_params[frame_key] = now
        return old

    def _former_names(
        self, namespace: Mapping[str, Any], names_of: Mapping[int, tuple[str, ...]], frame_key: Any, remember: bool
    ) -> dict[int, tuple[str, ...]]:
        """serial -> the names this frame took from that tag by binding them to
        another object (drawn ``x (old)``). Not a name deleted, one that went
        out of scope with its function, one of another frame, nor one whose
        tensor was changed in place (same object, new autograd node)."""
        if isinstance(namespace, StepNames):
            namespace = namespace.names  # (its own lookups, not a Python method's per name)
        before = self._bound.get(frame_key, {})
        # Changed where it is kept when remembered (no copy of a table that a
        # long loop makes long), else on a copy.
        former = self._former.setdefault(frame_key, {}) if remember else dict(self._former.get(frame_key, {}))
        for name, (ref, serial) in before.items():
            if name not in namespace:
                continue
            old = ref()
            if old is not None and namespace[name] is old:
                continue  # the same object (maybe changed in place)
            former[serial] = tuple(dict.fromkeys((*former.get(serial, ()), name)))
        for serial in names_of:
            former.pop(serial, None)  # named again: no ghost
        if remember and len(former) > self._former_limit:
            # A loop rebinding a name leaves a ghost per iteration: those of
            # tags that died go (a ghost is drawn only with its node).
            live = self.registry.live_serials()
            for serial in [s for s in former if s not in live]:
                del former[serial]
            self._former_limit = max(_FORMER_LIMIT, 2 * len(former))
        if remember:
            now: dict[str, tuple[weakref.ref[Any], int]] = {}
            for serial, names in names_of.items():
                for name in names:
                    value = namespace[name]
                    kept = before.get(name)  # (most names hold what they held: their entry is kept)
                    now[name] = kept if kept is not None and kept[1] == serial and kept[0]() is value else (
                        weakref.ref(value), serial
                    )
            self._bound[frame_key] = now
        return former

    # ---- node views (cached on the tags) --------------------------------------
    def _op_view(self, tag: ag.NodeTag, names: tuple[str, ...], former: tuple[str, ...], t: torch.Tensor | None) -> Node:
        retains = t is not None and t.retains_grad
        has_grad = retains and t.grad is not None  # type: ignore[union-attr]
        dual = t is not None and ag.is_dual(t)
        freed_by = tag.freed_by
        key = (names, former, tag.saved, freed_by, retains, has_grad, dual)
        if tag.view is None or tag.view[0] != key:
            origin = tag.origin
            tag.view = (
                key,
                Node(
                    id=tag.node_id,
                    kind=OP,
                    label=tag.op,
                    names=names,
                    former_names=former,
                    line=origin.line,
                    source=origin.source or None,
                    step=origin.exec_id,
                    requires_grad=True,
                    shape=tag.shape,
                    dtype=tag.dtype,
                    saved=tag.saved,
                    freed_by_line=freed_by.line if freed_by is not None else None,
                    freed_by_file=freed_by.filename if freed_by is not None else None,
                    retains_grad=retains,
                    has_grad=has_grad,
                    inplace_of=tag.replaces.node_id if tag.replaces is not None else None,
                    made_in=origin.step_id if origin.step_id != origin.exec_id else None,
                    dual=dual,
                ),
            )
        return tag.view[1]

    def _leaf_view(
        self, tag: ag.LeafTag, names: tuple[str, ...], former: tuple[str, ...], param_names: Mapping[int, tuple[str, str]],
        old_params: Mapping[int, tuple[str, str]] = {}, here: tuple[str, Mapping[str, Any]] | None = None,
    ) -> Node:
        """The node of a leaf or const. ``here``: the function whose names
        the snapshot has, and those names; a tensor no name holds that a call
        of that same function read by a name it now gives another tensor (an
        earlier call's ``x``, in this call's), or the program's top level
        read, is drawn ``x (old)``; one read by another function's name,
        ``x (in f)`` (see Node.local_of)."""
        leaf = tag.tensor()
        has_grad = leaf is not None and leaf.grad is not None
        dual = leaf is not None and bool(names) and ag.is_dual(leaf)
        path, module = param_names.get(id(leaf), ("", "")) if leaf is not None else ("", "")
        if path:
            former = ()  # a module's parameter is drawn by its path, not as a loop variable's "p (old)"
        elif leaf is not None and not names and id(leaf) in old_params:
            # A parameter of a module the name no longer holds: "model (old)".
            path, module = old_params[id(leaf)]
            former = (path,)
        local_of = ""
        if names or path or former:
            label = names[0] if names else path or former[0]
        elif tag.read_as is not None:
            label, local_of = tag.read_as  # (a function's local, gone with its call)
            if (here is not None and label in here[1]) and (here[0] == local_of or local_of == "<module>"):
                former, local_of = (label,), ""  # (the name holds another tensor now: "h (old)")
            elif local_of == "<module>":
                label, local_of = "tensor", ""  # (the program's top level deleted the name: no function's)
        else:
            label = "tensor"
        key = (names, former, has_grad, label, module, tag.requires_grad, dual, local_of)
        if tag.view is None or tag.view[0] != key:
            tag.view = (
                key,
                Node(
                    id=tag.node_id,
                    kind=LEAF if tag.requires_grad else CONST,
                    label=label,
                    names=names,
                    former_names=former,
                    requires_grad=tag.requires_grad,
                    shape=tag.shape,
                    dtype=tag.dtype,
                    has_grad=has_grad,
                    detail=module,
                    dual=dual,
                    local_of=local_of,
                ),
            )
        return tag.view[1]

    def _group(
        self,
        ops: Graph,
        origins: Mapping[int, ag.Origin],
        consts: Mapping[int, tuple[Node, ...]],
        module_sizes: Mapping[str, tuple[int, int, bool, int]],
    ) -> Graph:
        # (A statement's value, known once it ended, decides which of its
        # nodes' names are its own.)
        values = tuple(o.value for o in origins.values())
        key = (ops, tuple(sorted(consts.items())), tuple(sorted(module_sizes.items())), values)
        if self._grouped is not None and self._grouped[0] == key:
            return self._grouped[1]
        cache = self._statement_cache
        graph = group_statements(ops, origins=origins, const_nodes=consts, module_sizes=module_sizes, cache=cache)
        if len(cache) > 2 * len(graph.nodes) + 64:  # forget groups whose nodes died
            live = {n.id for n in graph.nodes}
            for group in [g for g in cache if g not in live]:
                del cache[group]
        self._grouped = (key, graph)
        return graph

    def _bindings(self, namespace: Mapping[str, Any], module_sizes: Mapping[str, tuple[int, int, int]] | None = None) -> tuple[Binding, ...]:
        """Every tracked name and what it refers to."""
        out = []
        for name in sorted(namespace):
            value = namespace[name]
            if not is_tracked_name(name) or type(value).__name__ in ("module", "function", "builtin_function_or_method", "type"):
                continue
            node = self._node_of(value) if isinstance(value, torch.Tensor) else None
            if not self.describe:
                out.append(Binding(name, type(value).__name__, node))
            elif module_sizes is not None and name in module_sizes and isinstance(value, torch.nn.Module):
                out.append(Binding(name, type(value).__name__, node, f"{type(value).__name__} ({module_detail(*module_sizes[name])})"))
            else:
                out.append(Binding(name, type(value).__name__, node, describe_value(value)))
        return tuple(out)

    def _node_of(self, t: torch.Tensor) -> str | None:
        """The op-view node id of a tensor, when it has been tagged."""
        if t._is_view() and not ag.graph_readable(t):
            return None
        tag = self.registry.known_tag(t)
        return tag.node_id if tag is not None else None


def with_dropped(
    previous: Graph, current: Graph, alive: Collection[str] = (), shown: Collection[str] = (),
    drawn_ops: Collection[str] = (),
) -> Graph:
    """Add the nodes that were in ``previous`` and are gone now, once, as ghosts.

    A node something in ``current`` was computed from (by ``previous``'s
    edges) is not gone, whatever ``current`` calls it now: statements group
    their nodes anew at each step. Nor is one in ``alive`` (its tensor or
    node lives on, held by something the names do not lead to), nor a part
    of a statement named by an op node still drawn (``drawn_ops``: the part
    ``s15~n7`` of ``n7``, drawn in its statement again once the value it
    was split from is gone). These are left out, not drawn as dropped; so
    is one a picture drew dropped already (in ``shown``)."""
    current_ids = {n.id for n in current.nodes}
    missing = {n.id for n in previous.nodes if n.id not in current_ids}
    if not missing:
        return current
    inputs: dict[str, list[str]] = {}
    for e in previous.edges:
        inputs.setdefault(e.dst, []).append(e.src)
    used = set()
    stack = [src for node_id in current_ids for src in inputs.get(node_id, ()) if src in missing]
    while stack:
        node_id = stack.pop()
        if node_id not in used:
            used.add(node_id)
            stack.extend(src for src in inputs.get(node_id, ()) if src in missing)
    dropped = [
        replace(n, dropped=True, names=(), former_names=n.names or n.former_names)
        for n in previous.nodes
        # (A parameter of a named module that lost its name is not gone: it
        # is drawn as part of its module again.)
        if not n.dropped and n.id in missing and n.id not in used and statement_of(n.id) not in alive
        and n.id not in shown and n.id.partition("~")[2] not in drawn_ops
        and not (n.kind == LEAF and n.detail)
    ]
    if not dropped:
        return current
    dropped_ids = {n.id for n in dropped}
    known = current_ids | dropped_ids
    extra_edges = [
        e
        for e in previous.edges
        if (e.src in dropped_ids or e.dst in dropped_ids) and e.src in known and e.dst in known
    ]
    return Graph(current.nodes + tuple(dropped), current.edges + tuple(extra_edges))
