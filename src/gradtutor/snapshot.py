"""Turns the tensors bound to names into a frozen :class:`Snapshot`.

``take_snapshot`` reads a namespace (the frame's locals over the module's
globals), tags any graph it has not seen yet, walks the tags reachable from
the named tensors and builds the op view and the statement view. It never
holds a tensor or an autograd node after it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import torch

from gradtutor import autograd_graph as ag
from gradtutor.grouping import group_statements
from gradtutor.model import (
    CONST,
    LEAF,
    OP,
    Binding,
    Edge,
    Graph,
    Node,
    Snapshot,
)

GRAD_LIST_LIMIT = 100  # a .grad with more elements is summarised, not listed


@dataclass
class ExecInfo:
    """One execution of one statement: what nodes created by it are labelled with."""

    exec_id: int
    line: int | None
    source: str
    label: str
    function: str
    const_reads: list[ag.LeafTag] = field(default_factory=list)


@dataclass
class _Named:
    tensors: list[tuple[str, torch.Tensor]]
    modules: list[tuple[str, torch.nn.Module]]
    others: list[tuple[str, Any]]


def _split_namespace(namespace: Mapping[str, Any]) -> _Named:
    named = _Named([], [], [])
    for name, value in namespace.items():
        if name.startswith("__") or name.startswith("@"):
            continue
        if isinstance(value, torch.Tensor):
            named.tensors.append((name, value))
        elif isinstance(value, torch.nn.Module):
            named.modules.append((name, value))
        else:
            named.others.append((name, value))
    return named


def summarize_values(t: torch.Tensor) -> Any:
    """JSON-ready values of a tensor: ``tolist()``, or a summary past 100 elements."""
    t = t.detach()
    if t.numel() <= GRAD_LIST_LIMIT:
        return t.tolist()
    flat = t.double().flatten()
    return {
        "shape": list(t.shape),
        "mean": float(flat.mean()),
        "min": float(flat.min()),
        "max": float(flat.max()),
        "norm": float(flat.norm()),
    }


def _short_repr(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        flags = []
        if value.requires_grad:
            flags.append("requires_grad")
        if value.grad_fn is not None:
            flags.append(f"grad_fn={value.grad_fn.name()}")
        shape = "x".join(str(s) for s in value.shape) or "scalar"
        return f"tensor {shape} {str(value.dtype).replace('torch.', '')}" + (
            " " + " ".join(flags) if flags else ""
        )
    if isinstance(value, torch.nn.Module):
        n = sum(p.numel() for p in value.parameters())
        return f"{type(value).__name__} ({n} parameters)"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


class Snapshotter:
    """Builds snapshots; remembers just enough between steps to name ghosts."""

    def __init__(self, registry: ag.TagRegistry, execs: dict[int, ExecInfo]) -> None:
        self.registry = registry
        self.execs = execs
        self.live_execs: set[int] = set()
        self._former_names: dict[str, tuple[str, ...]] = {}
        self._previous: dict[Any, Snapshot] = {}

    def forget_frame(self, frame_key: Any) -> None:
        self._previous.pop(frame_key, None)

    def previous(self, frame_key: Any) -> Snapshot | None:
        return self._previous.get(frame_key)

    def take(
        self,
        namespace: Mapping[str, Any],
        *,
        exec_id: int,
        line: int | None,
        frame_key: Any = None,
    ) -> Snapshot:
        named = _split_namespace(namespace)
        param_names: dict[int, str] = {}
        param_module: dict[int, str] = {}
        for mod_name, module in named.modules:
            for p_name, param in module.named_parameters():
                param_names.setdefault(id(param), f"{mod_name}.{p_name}")
                param_module.setdefault(id(param), mod_name)

        names_of: dict[int, list[str]] = {}
        roots: list[ag.NodeTag | ag.LeafTag] = []
        tensor_of_serial: dict[int, torch.Tensor] = {}
        for name, t in named.tensors:
            if not t.requires_grad:
                known = self.registry.known_leaf(t)
                if known is not None:
                    names_of.setdefault(known.serial, []).append(name)
                continue
            tag = self.registry.tag_tensor(t, exec_id, line)
            names_of.setdefault(tag.serial, []).append(name)
            roots.append(tag)
            tensor_of_serial[tag.serial] = t

        tags = sorted(ag.walk_tags(roots), key=lambda tag: tag.serial)
        nodes: list[Node] = []
        edges: list[Edge] = []
        for tag in tags:
            names = tuple(names_of.get(tag.serial, ()))
            former = self._remember_names(tag.node_id, names)
            if isinstance(tag, ag.NodeTag):
                info = self.execs.get(tag.exec_id)
                t = tensor_of_serial.get(tag.serial)
                nodes.append(
                    Node(
                        id=tag.node_id,
                        kind=OP,
                        label=tag.op,
                        names=names,
                        former_names=former,
                        line=tag.line,
                        source=info.source if info else None,
                        step=tag.exec_id,
                        requires_grad=True,
                        shape=tag.shape,
                        dtype=tag.dtype,
                        saved=tag.saved,
                        freed_by_line=tag.freed_by_line,
                        retains_grad=bool(t is not None and t.retains_grad),
                        has_grad=bool(t is not None and t.retains_grad and t.grad is not None),
                    )
                )
                edges.extend(ag_edge(child, tag) for child in tag.children)
            else:
                leaf = tag.tensor()
                label = names[0] if names else param_names.get(id(leaf), "") if leaf is not None else ""
                nodes.append(
                    Node(
                        id=tag.node_id,
                        kind=LEAF if tag.requires_grad else CONST,
                        label=label or (former[0] if former else "tensor"),
                        names=names,
                        former_names=former,
                        requires_grad=tag.requires_grad,
                        shape=tag.shape,
                        dtype=tag.dtype,
                        has_grad=bool(leaf is not None and leaf.grad is not None),
                        detail=param_module.get(id(leaf), "") if leaf is not None else "",
                    )
                )
        ops = Graph(tuple(nodes), tuple(edges))

        live_execs = {tag.exec_id for tag in tags if isinstance(tag, ag.NodeTag)}
        statements = group_statements(
            ops,
            execs=self.execs,
            live_execs=live_execs,
            const_nodes=self._const_nodes(live_execs, names_of),
            module_sizes={name: sum(p.numel() for p in m.parameters()) for name, m in named.modules},
        )
        self._prune(ops, statements)
        self.live_execs = live_execs

        previous = self._previous.get(frame_key)
        if previous is not None:
            ops = _with_dropped(previous.ops, ops)
            statements = _with_dropped(previous.statements, statements)

        grads: list[tuple[str, Any]] = []
        for name, t in named.tensors:
            if t.is_leaf or t.retains_grad:
                g = t.grad
                if g is not None:
                    grads.append((name, summarize_values(g)))
        bindings = tuple(
            Binding(name, type(value).__name__, _binding_node(self.registry, value), _short_repr(value))
            for name, value in sorted(
                [*named.tensors, *named.modules, *named.others], key=lambda item: item[0]
            )
            if not callable(value) or isinstance(value, torch.nn.Module)
            if type(value).__name__ != "module"
        )
        snap = Snapshot(exec_id, line, ops, statements, bindings, tuple(grads))
        self._previous[frame_key] = snap
        return snap

    def _const_nodes(
        self, live_execs: set[int], names_of: dict[int, list[str]]
    ) -> dict[int, tuple[Node, ...]]:
        """The named tensors without requires_grad that each live statement read."""
        out: dict[int, tuple[Node, ...]] = {}
        for exec_id in live_execs:
            info = self.execs.get(exec_id)
            if info is None or not info.const_reads:
                continue
            consts = []
            for const in info.const_reads:
                names = tuple(names_of.get(const.serial, ()))
                former = self._remember_names(const.node_id, names)
                consts.append(
                    Node(
                        id=const.node_id,
                        kind=CONST,
                        label=names[0] if names else (former[0] if former else "tensor"),
                        names=names,
                        former_names=former,
                        requires_grad=False,
                        shape=const.shape,
                        dtype=const.dtype,
                    )
                )
            out[exec_id] = tuple(consts)
        return out

    def _remember_names(self, node_id: str, names: tuple[str, ...]) -> tuple[str, ...]:
        if names:
            self._former_names[node_id] = names
            return ()
        return self._former_names.get(node_id, ())

    def _prune(self, ops: Graph, statements: Graph) -> None:
        live_ids = {n.id for n in ops.nodes} | {n.id for n in statements.nodes}
        for node_id in [k for k in self._former_names if k not in live_ids]:
            del self._former_names[node_id]


def ag_edge(child: ag.NodeTag | ag.LeafTag, parent: ag.NodeTag) -> Edge:
    return Edge(child.node_id, parent.node_id)


def _binding_node(registry: ag.TagRegistry, value: Any) -> str | None:
    if not isinstance(value, torch.Tensor):
        return None
    fn = value.grad_fn
    if fn is not None:
        tag = fn.metadata.get(ag.TAG_KEY)
        return tag.node_id if tag is not None else None
    leaf = registry.known_leaf(value)
    return leaf.node_id if leaf is not None else None


def _with_dropped(previous: Graph, current: Graph) -> Graph:
    """Add the nodes that were in ``previous`` and are gone now, once, as ghosts."""
    current_ids = {n.id for n in current.nodes}
    dropped = [
        replace(n, dropped=True, names=(), former_names=n.names or n.former_names)
        for n in previous.nodes
        if n.id not in current_ids and not n.dropped
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
