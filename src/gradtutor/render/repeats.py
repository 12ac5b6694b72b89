"""Loops drawn folded: the middle rounds of a repeated structure become one node.

A loop that runs the same lines many times (an unrolled RNN, ``y = y * 1.0001``
sixty times) leaves many nodes that look alike: made by the same line, with
the same words. Their first and last ``keep`` rounds stay; the rounds between
are one node, ``… 16 × self.lstm1(…), self.lstm2(…) …``, which every edge into
or out of them joins. Nodes are in creation order, so the nodes between two
positions of that order can be drawn as one without making a cycle: nothing
made later feeds something made earlier. Named nodes (and former names) are
never folded: the words of a step may be about them. Old tensors of a name
(``h (old)``) are, but for the last rounds, where the latest of them is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gradtutor.model import OP, SAVED_PRESENT, STATEMENT, Edge, Graph, Node

# Look-alike nodes fold when at least this many are left between the first
# and last rounds kept: one round alone is drawn as itself.
_MIN_ROUNDS = 2
# Shortest stretch of nodes worth one folded node.
_MIN_RUN = 3
_CALL = re.compile(r"^([\w.]+)\(.*\)$", re.S)
_LABEL_CELLS = 24


@dataclass(frozen=True)
class Folded:
    """What ``fold_repeats`` did: folded nodes, in how many stretches."""

    nodes: int = 0
    stretches: int = 0


def fold_repeats(graph: Graph, keep: int = 2, ascii: bool = False) -> tuple[Graph, Folded]:
    """``graph`` with each stretch of repeated nodes past the first and before
    the last ``keep`` rounds of their lines drawn as one node."""
    foldable = _foldable(graph, keep)
    if not foldable:
        return graph, Folded()
    stretches: list[list[Node]] = []
    run: list[Node] = []
    for node in graph.nodes:
        if node.id in foldable:
            run.append(node)
            continue
        if len(run) >= _MIN_RUN:
            stretches.append(run)
        run = []
    if len(run) >= _MIN_RUN:
        stretches.append(run)
    if not stretches:
        return graph, Folded()
    into: dict[str, str] = {}
    folds: dict[str, Node] = {}
    for stretch in stretches:
        fold = _fold_node(stretch, ascii)
        folds[stretch[0].id] = fold
        for node in stretch:
            into[node.id] = fold.id
    nodes = []
    for node in graph.nodes:
        if node.id in folds:
            nodes.append(folds[node.id])
        elif node.id not in into:
            nodes.append(node)
    edges: dict[tuple[str, str], None] = {}
    for edge in graph.edges:
        src, dst = into.get(edge.src, edge.src), into.get(edge.dst, edge.dst)
        if src != dst:
            edges[(src, dst)] = None
    folded = sum(len(s) for s in stretches)
    return Graph(tuple(nodes), tuple(Edge(s, d) for s, d in edges)), Folded(folded, len(stretches))


def _key(node: Node) -> tuple[int | None, str, str]:
    return (node.line, node.kind, node.label)


def _foldable(graph: Graph, keep: int) -> set[str]:
    """Ids of the look-alike nodes of a line, but for the first and last
    ``keep`` of them (none when fewer than ``_MIN_ROUNDS`` would be left); only nodes no name holds now (a
    name's old tensor, drawn ``h (old)``, can fold: the last rounds stay). Nodes of no line
    (the tensors ``x.chunk(60)`` returns) are alike by their words."""
    by_key: dict[tuple[int | None, str, str], list[Node]] = {}
    for node in graph.nodes:
        if node.names:
            continue
        by_key.setdefault(_key(node), []).append(node)
    out: set[str] = set()
    for same in by_key.values():
        if len(same) - 2 * keep >= _MIN_ROUNDS:
            out.update(n.id for n in same[keep : len(same) - keep])
    return out


def _fold_node(stretch: list[Node], ascii: bool) -> Node:
    counts: dict[tuple[int | None, str, str], int] = {}
    for node in stretch:
        counts[_key(node)] = counts.get(_key(node), 0) + 1
    dots = "..." if ascii else "…"
    labels = [_short(label, dots) for _, _, label in counts]
    words = ", ".join(labels[:3]) + (f" +{len(labels) - 3}" if len(labels) > 3 else "")
    times = "x" if ascii else "×"
    kinds = {n.kind for n in stretch}
    saved = {n.saved for n in stretch}
    steps = {n.step for n in stretch}
    return Node(
        id=f"fold:{stretch[0].id}",
        kind=OP if kinds == {OP} else STATEMENT,
        label=f"{dots} {max(counts.values())} {times} {words} {dots}",
        saved=saved.pop() if len(saved) == 1 else SAVED_PRESENT,
        step=steps.pop() if len(steps) == 1 else None,
    )


def _short(label: str, dots: str) -> str:
    call = _CALL.match(label)
    if call:
        return f"{call.group(1)}({dots})"
    return label if len(label) <= _LABEL_CELLS else label[: _LABEL_CELLS - len(dots)] + dots


__all__ = ["fold_repeats", "Folded"]
