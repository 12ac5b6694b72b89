"""Adjacency and path lengths of a Graph, computed once per drawing."""

from __future__ import annotations

import heapq
from typing import Any, Callable, Mapping, Sequence, TypeVar
from dataclasses import dataclass

from gradtutor.model import Graph, Node


@dataclass
class GraphIndex:
    """The graph as lookups. ``order`` is topological, in creation order where
    that leaves a choice. Edges to unknown ids, self-loops and duplicates are
    ignored; an edge closing a cycle (autograd graphs have none) is kept aside
    in ``back_edges`` so a view can still name it."""

    nodes: dict[str, Node]
    order: list[str]
    position: dict[str, int]
    preds: dict[str, list[str]]
    succs: dict[str, list[str]]
    edges: list[tuple[str, str]]
    back_edges: list[tuple[str, str]]
    seniority: dict[str, int]  # 0 = oldest: by creation step, then list order


def index_graph(graph: Graph) -> GraphIndex:
    nodes: dict[str, Node] = {}
    for node in graph.nodes:
        if node.id not in nodes:
            nodes[node.id] = node
    created = {node_id: i for i, node_id in enumerate(nodes)}
    # (pairs in order, each once: a dict keeps the first of duplicates)
    pairs = dict.fromkeys([(e.src, e.dst) for e in graph.edges])
    edges = [pair for pair in pairs if pair[0] in created and pair[1] in created and pair[0] != pair[1]]
    order = _topological(list(nodes), created, edges)
    position = created if order is None else {node_id: i for i, node_id in enumerate(order)}
    if order is None:
        order = list(nodes)
        forward, back = edges, []
    else:
        forward = [(s, d) for s, d in edges if position[s] < position[d]]
        back = [(s, d) for s, d in edges if position[s] > position[d]]
    preds: dict[str, list[str]] = {n: [] for n in order}
    succs: dict[str, list[str]] = {n: [] for n in order}
    for s, d in forward:
        preds[d].append(s)
        succs[s].append(d)
    # The engine lists nodes dropped this step last; their step says how old
    # they are. (By step, then as created: a stable sort of the created order.)
    by_age = sorted(nodes, key=lambda n: _step(nodes[n]))
    seniority = {n: i for i, n in enumerate(by_age)}
    older = seniority.__getitem__
    for n in order:
        # Inputs oldest first: the first argument a user wrote usually came first.
        if len(preds[n]) > 1:
            preds[n].sort(key=older)
        if len(succs[n]) > 1:
            succs[n].sort(key=older)
    return GraphIndex(nodes, order, position, preds, succs, forward, back, seniority)


T = TypeVar("T")


def _step(node: Node) -> int:
    return node.step if node.step is not None else -1


def _topological(ids: list[str], created: dict[str, int], edges: list[tuple[str, str]]) -> list[str] | None:
    """The nodes in an order with inputs first; None when ``ids`` already is one."""
    if all([created[s] < created[d] for s, d in edges]):
        return None  # the usual case: listed inputs first
    out: dict[str, list[str]] = {n: [] for n in ids}
    for s, d in edges:
        out[s].append(d)
    order = topological_order(ids, out, created.__getitem__)
    if len(order) < len(ids):
        placed = set(order)
        order.extend(n for n in ids if n not in placed)
    return order


def topological_order(items: Sequence[T], after: Mapping[T, Sequence[T]], priority: Callable[[T], Any]) -> list[T]:
    """Kahn's order of ``items`` (each before the ones ``after`` it), taking the
    lowest ``priority`` first among those ready. Items on a cycle are left out,
    so a result shorter than ``items`` means there is one."""
    indegree = {item: 0 for item in items}
    for item in items:
        for later in after.get(item, ()):
            indegree[later] += 1
    ready = [(priority(item), i, item) for i, item in enumerate(items) if indegree[item] == 0]
    heapq.heapify(ready)
    position = {item: i for i, item in enumerate(items)}
    order: list[T] = []
    while ready:
        _, _, item = heapq.heappop(ready)
        order.append(item)
        for later in after.get(item, ()):
            indegree[later] -= 1
            if indegree[later] == 0:
                heapq.heappush(ready, (priority(later), position[later], later))
    return order


def heights(index: GraphIndex) -> dict[str, int]:
    """Longest path, in edges, from any source to each node."""
    out: dict[str, int] = {}
    for n in index.order:
        out[n] = max((out[p] + 1 for p in index.preds[n]), default=0)
    return out


def depths(index: GraphIndex) -> dict[str, int]:
    """Longest path, in edges, from each node to any sink."""
    out: dict[str, int] = {}
    for n in reversed(index.order):
        out[n] = max((out[s] + 1 for s in index.succs[n]), default=0)
    return out


def components(index: GraphIndex) -> list[list[str]]:
    """Weakly connected parts, each in topological order, the oldest part first."""
    part: dict[str, int] = {}
    count = 0
    for start in index.order:
        if start in part:
            continue
        stack = [start]
        part[start] = count
        while stack:
            n = stack.pop()
            for m in index.preds[n] + index.succs[n]:
                if m not in part:
                    part[m] = count
                    stack.append(m)
        count += 1
    groups: list[list[str]] = [[] for _ in range(count)]
    for n in index.order:
        groups[part[n]].append(n)
    return groups
