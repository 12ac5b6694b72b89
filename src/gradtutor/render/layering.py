"""Op view, first half: which column each box goes in, and in what order.

- Columns (layers) by longest path from the output: the output is the last
  column and every node sits as far right as its uses allow, so a parameter
  stands just before the op that reads it.
- An edge spanning several columns becomes a *bus*: one dummy box per column
  crossed, shared by all the long edges of one source, so a tensor read by
  three later ops is one line with three taps, not three parallel lines.
- Order inside each column by the barycenter heuristic (a box moves to the
  mean position of its neighbours), sweeping both ways and keeping the order
  with the fewest crossings.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from gradtutor.render.graph_index import GraphIndex, depths

SWEEPS = 4


@dataclass
class Layering:
    layers: list[list[str]]  # box ids per column, top to bottom
    layer_of: dict[str, int]
    owner: dict[str, str]  # box id -> the node whose value its lines carry
    preds: dict[str, list[str]] = field(default_factory=dict)  # between adjacent columns
    succs: dict[str, list[str]] = field(default_factory=dict)


def build_layering(index: GraphIndex) -> Layering:
    depth = depths(index)
    last = max(depth.values(), default=0)
    layer_of = {n: last - depth[n] for n in index.order}
    layers: list[list[str]] = [[] for _ in range(last + 1)]
    for n in index.order:
        layers[layer_of[n]].append(n)
    owner = {n: n for n in index.order}
    preds: dict[str, list[str]] = {n: [] for n in index.order}
    succs: dict[str, list[str]] = {n: [] for n in index.order}

    def link(a: str, b: str) -> None:
        succs[a].append(b)
        preds[b].append(a)

    for u in index.order:
        targets = index.succs[u]
        if not targets:
            continue
        far = max(layer_of[v] for v in targets)
        # The bus: one dummy per column between u and its furthest use.
        stop = {layer_of[u]: u}
        for layer in range(layer_of[u] + 1, far):
            dummy = f"~{u}~{layer}"
            owner[dummy] = u
            layer_of[dummy] = layer
            layers[layer].append(dummy)
            preds[dummy], succs[dummy] = [], []
            link(stop[layer - 1], dummy)
            stop[layer] = dummy
        for v in targets:
            link(stop[layer_of[v] - 1], v)
    layering = Layering(layers, layer_of, owner, preds, succs)
    _order_columns(layering)
    return layering


def _order_columns(layering: Layering) -> None:
    layers = layering.layers
    best = [list(col) for col in layers]
    best_crossings = count_crossings(layering)
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        span = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        links = layering.preds if downward else layering.succs
        for layer in span:
            near = layers[layer - 1] if downward else layers[layer + 1]
            layers[layer] = _by_barycenter(layers[layer], near, links)
        crossings = count_crossings(layering)
        if crossings < best_crossings:
            best_crossings, best = crossings, [list(col) for col in layers]
    layering.layers[:] = best


def _by_barycenter(column: list[str], near: list[str], links: dict[str, list[str]]) -> list[str]:
    """``column`` sorted by the mean position of each box's neighbours in
    ``near``; a box with none there keeps its place."""
    where = {b: i for i, b in enumerate(near)}
    keys = {}
    for i, box in enumerate(column):
        ns = [where[n] for n in links[box] if n in where]
        keys[box] = (sum(ns) / len(ns) if ns else float(i), i)
    return sorted(column, key=keys.__getitem__)


def count_crossings(layering: Layering) -> int:
    total = 0
    layers = layering.layers
    for layer in range(len(layers) - 1):
        right = {b: i for i, b in enumerate(layers[layer + 1])}
        pairs = sorted((i, right[s]) for i, b in enumerate(layers[layer]) for s in layering.succs[b] if s in right)
        # Two edges cross when one starts above and ends below the other.
        seen: list[int] = []
        for _, j in pairs:
            total += len(seen) - bisect.bisect_right(seen, j)
            bisect.insort(seen, j)
    return total
