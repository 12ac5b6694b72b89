"""The part of a graph a step touched, so a step draws what it changed.

A step's picture shows the nodes whose state the step changed (made,
freed, given a gradient, changed in place, renamed, dropped) and, so they can
be read, their direct inputs; a small connected part it touched is drawn
whole. A node drawn only as such an input whose own inputs are left out says
so (``[more before]``), and a note names what is not drawn.
A step that changed nothing draws nothing; ``:graph`` and ``--graph full``
draw everything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Collection

from gradtutor.model import CONST, LEAF, Graph, Node

# A connected part of the graph this small is drawn whole when the step
# touched it: leaving out a few of its nodes would cost a marker and save
# nothing. In a bigger part, when what is kept is most of it, the same.
_SMALL = 8
_MOSTLY = 0.75


SAME_FRAME = object()  # touched_part: the graph drawn last has the same frame's names


@dataclass(frozen=True)
class Focus:
    """What ``touched_part`` left out: how many nodes, and the first name of
    each named one (a tensor with two names, ``b2`` and ``p``, is one node)."""

    omitted: int = 0
    names: tuple[str, ...] = ()


def touched_part(
    graph: Graph, previous: Graph | None, named_previous: Graph | None | object = SAME_FRAME,
    names: Collection[str] = (), changed_ids: Collection[str] = (), old_names: Collection[str] = (),
) -> tuple[Graph, Focus]:
    """``graph`` cut down to what changed since ``previous`` (the graph drawn
    last), with context: a connected part the step touched is drawn whole when
    small, else its changed nodes and their direct inputs; a part it did not
    touch is left out. The whole graph when nothing was drawn before; an empty
    graph when nothing changed.

    Names belong to frames: ``named_previous`` is the graph drawn last from
    the same frame as ``graph`` (None: none yet; ``SAME_FRAME``, the default:
    ``previous`` is), and only against it are names compared. Entering or leaving a function renames nodes (``x``
    becomes ``global x`` or ``tensor``) without touching them. The nodes of
    ``names`` (the ones the step's events are about) count as touched: a
    step that says "output names a tensor" draws it. The nodes of
    ``changed_ids`` changed since ``previous`` was drawn but look as they did
    (an optimizer step, a moving average of weights updated under no_grad:
    autograd recorded nothing): they count as touched when something else
    is, never left out as "unchanged since the last picture". The node each
    of ``old_names`` moved on from (drawn ``x (old)``, as the step's events
    say) counts as touched too."""
    if previous is None:
        return graph, Focus()
    before = {n.id: n for n in previous.nodes}
    if named_previous is SAME_FRAME or named_previous is previous:
        # (Snapshots reuse the Node of an unchanged node: "is" answers most.)
        touched = {n.id for n in graph.nodes if before.get(n.id) is not n and before.get(n.id) != n}
    else:
        named = {n.id: n for n in named_previous.nodes} if isinstance(named_previous, Graph) else {}
        touched = {
            n.id for n in graph.nodes
            if n.id not in before or before[n.id] is not n and _unnamed(before[n.id]) != _unnamed(n)
            or (n.id in named and _names(named[n.id]) != _names(n))
        }
    if names:
        wanted = frozenset(names)
        touched |= {n.id for n in graph.nodes if n.names and not wanted.isdisjoint(n.names)}
    if old_names:
        # (the newest node each name left, in creation order the last: the
        # one it moved on from; older ones are drawn only as inputs)
        left = frozenset(old_names)
        newest = {name: n.id for n in graph.nodes if not n.names for name in left.intersection(n.former_names)}
        touched |= set(newest.values())
    if not touched:
        return Graph(), Focus()
    if changed_ids:
        touched |= {n.id for n in graph.nodes if n.id in changed_ids}
    inputs: dict[str, list[str]] = {}
    users: dict[str, list[str]] = {}
    for edge in graph.edges:
        inputs.setdefault(edge.dst, []).append(edge.src)
        users.setdefault(edge.src, []).append(edge.dst)
    # A node drawn "x (old)" is drawn because what still uses it is in the
    # graph: what uses it is drawn with it, not left out.
    moved_on = {n.id for n in graph.nodes if n.former_names and not n.names}
    keep: set[str] = set()
    for part in _connected_parts(graph):
        changed = part & touched
        if not changed:
            continue
        near = set(changed)
        for node_id in changed:
            near.update(inputs.get(node_id, ()))
            if node_id in moved_on:
                near.update(users.get(node_id, ()))
        if not any(node_id in inputs for node_id in changed):
            # Only what the graph starts from changed (a .grad set or
            # cleared, a name given): the rest of the part, drawn with it,
            # would read as changed by this step too (a backward through a
            # graph no name holds drew the last named graph, freed by an
            # earlier backward, under "backward: 4 nodes freed").
            keep |= near
            continue
        keep |= part if len(part) <= _SMALL or len(near) >= _MOSTLY * len(part) else near
    if len(keep) == len(graph.nodes):
        return graph, Focus()
    nodes = []
    for node in graph.nodes:
        if node.id not in keep:
            continue
        if any(src not in keep for src in inputs.get(node.id, ())):
            node = replace(node, inputs_hidden=True)
        nodes.append(node)
    edges = tuple(e for e in graph.edges if e.src in keep and e.dst in keep)
    left_out = [n for n in graph.nodes if n.id not in keep and not n.dropped]
    names = tuple(n.names[0] for n in left_out if n.names)  # one per node: the note counts nodes
    return Graph(tuple(nodes), edges), Focus(len(left_out), names)


def _names(node: Node) -> tuple[object, ...]:
    return (node.names, node.former_names, node.label, node.local_of)


def _unnamed(node: Node) -> Node:
    """The node without what a frame's names give it (a leaf's label is its
    name, or the name a returned function's local had: ``local_of``)."""
    label = "" if node.kind in (LEAF, CONST) else node.label
    return replace(node, names=(), former_names=(), label=label, local_of="")


def _connected_parts(graph: Graph) -> list[set[str]]:
    """The node ids of each connected part of ``graph``, edges taken both ways."""
    parent = {n.id: n.id for n in graph.nodes}

    def root(node_id: str) -> str:
        while parent[node_id] != node_id:
            parent[node_id] = parent[parent[node_id]]
            node_id = parent[node_id]
        return node_id

    for edge in graph.edges:
        if edge.src in parent and edge.dst in parent:
            parent[root(edge.src)] = root(edge.dst)
    parts: dict[str, set[str]] = {}
    for node_id in parent:
        parts.setdefault(root(node_id), set()).add(node_id)
    return list(parts.values())


__all__ = ["Focus", "touched_part"]
