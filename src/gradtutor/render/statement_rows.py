"""Statement picture, step 1: which row each node goes on.

The main row is the longest chain ending at the oldest of the deepest
outputs (the answer's first ``loss`` stays on top when ``loss`` is rebound).
Every other node joins a row radiating from a row already placed:

- a *feeder*: a chain ending in an input of a placed node; its bar drops onto
  that node. Its first node may also leave from a node of the parent row
  (``/-->``), like the forum's ``x ** 3`` reading ``x``.
- a *branch*: a chain starting at an output of a placed node (``\\-->``).

From the main row, feeders (and branches that come back to it) go above, and
branches that lead elsewhere go below; every other row grows away from the
main row, so rows never have to cross it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradtutor.render.graph_index import GraphIndex
from gradtutor.render.landing import first_input


@dataclass(eq=False)
class Row:
    nodes: list[str]
    side: int  # -1 above the main row, +1 below, 0 the main row
    parent: Row | None = None
    branch_from: str | None = None  # node on the parent row the head leaves from
    bar_to: str | None = None  # node on the parent row the tail's bar lands on
    children: list[Row] = field(default_factory=list)


class RowPlan:
    """The rows of one connected part of the graph."""

    def __init__(self, index: GraphIndex, part: list[str], height: dict[str, int], depth: dict[str, int]) -> None:
        self.index = index
        self.height = height
        self.depth = depth
        self.row_of: dict[str, Row] = {}
        sinks = [n for n in part if not index.succs[n]]
        end = max(sinks, key=lambda n: (height[n], -index.seniority[n]))
        self.main = Row(self._chain_back(end), 0)
        self._place(self.main)
        queue = [self.main]
        while queue:
            row = queue.pop(0)
            queue += self._feeders(row) + self._branches(row)

    def rows(self) -> list[Row]:
        out, todo = [], [self.main]
        while todo:
            row = todo.pop()
            out.append(row)
            todo += row.children
        return out

    def _place(self, row: Row) -> None:
        for n in row.nodes:
            self.row_of[n] = row
        if row.parent is not None:
            row.parent.children.append(row)

    def _chain_back(self, end: str) -> list[str]:
        """The longest chain of unplaced inputs ending at ``end`` (ties: ``first_input``)."""
        chain = [end]
        while True:
            free = [p for p in self.index.preds[chain[-1]] if p not in self.row_of and p not in chain]
            if not free:
                return chain[::-1]
            chain.append(first_input(self.index, chain[-1], free, self.height))

    def _chain_forward(self, start: str) -> list[str]:
        chain = [start]
        while True:
            free = [s for s in self.index.succs[chain[-1]] if s not in self.row_of and s not in chain]
            if not free:
                return chain
            chain.append(max(free, key=lambda s: (self.depth[s], -self.index.seniority[s])))

    def _feeders(self, row: Row) -> list[Row]:
        made = []
        for n in row.nodes:
            for p in self.index.preds[n]:
                if p in self.row_of:
                    continue
                chain = self._chain_back(p)
                on_row = [q for q in self.index.preds[chain[0]] if self.row_of.get(q) is row]
                branch = max(on_row, key=row.nodes.index) if on_row else None
                child = Row(chain, row.side or -1, row, branch, n)
                self._place(child)
                made.append(child)
        return made

    def _branches(self, row: Row) -> list[Row]:
        made = []
        for n in row.nodes:
            for s in self.index.succs[n]:
                if s in self.row_of:
                    continue
                chain = self._chain_forward(s)
                back = [c for c in self.index.succs[chain[-1]] if self.row_of.get(c) is row]
                bar = min(back, key=row.nodes.index) if back else None
                side = row.side or (-1 if bar is not None else 1)
                child = Row(chain, side, row, n, bar)
                self._place(child)
                made.append(child)
        return made
