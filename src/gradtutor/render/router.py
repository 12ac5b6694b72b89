"""Finds a path on a strict canvas for an edge the statement layout could not
place by rule (the answer's second ``BCE`` reading ``y``, drawn above it).

Shortest path over free cells with a price on every bend (Dijkstra over
(cell, heading) states). The path may start at the source's port, or branch
off a line the source already owns (a junction); it ends next to the target:
dropping onto a character of its label from above or below, or with an
arrowhead at either end of it. It never touches anything else: when no such
path exists the caller names the input instead of drawing it.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

from gradtutor.render.canvas import Canvas
from gradtutor.render.charset import HORIZONTAL, VERTICAL, Charset, E, N, S, W

STEP = {N: (-1, 0), E: (0, 1), S: (1, 0), W: (0, -1)}
BACK = {N: S, S: N, E: W, W: E}
BEND_COST = 4
OFF_NAME_COST = 3  # landing on a character other than the input's name
MAX_STEPS = 20_000  # cells looked at before giving up: a path that long would not help anyway


@dataclass(frozen=True)
class Target:
    row: int
    col: int  # first cell of the label
    width: int
    name_cols: frozenset[int]  # label cells showing the source's name


@dataclass(frozen=True)
class Bounds:
    top: int
    bottom: int
    width: int

    def inside(self, row: int, col: int) -> bool:
        return self.top <= row <= self.bottom and 0 <= col < self.width


@dataclass(frozen=True)
class Path:
    cells: tuple[tuple[int, int], ...]
    back: int  # arm of the first cell towards where it leaves from
    into: int  # arm of the last cell towards the target

    def arms(self, i: int) -> int:
        r, c = self.cells[i]
        out = self.back if i == 0 else _direction(self.cells[i - 1], (r, c), reverse=True)
        out |= self.into if i == len(self.cells) - 1 else _direction((r, c), self.cells[i + 1])
        return out


def _direction(a: tuple[int, int], b: tuple[int, int], reverse: bool = False) -> int:
    move = {(-1, 0): N, (1, 0): S, (0, -1): W, (0, 1): E}[(b[0] - a[0], b[1] - a[1])]
    return BACK[move] if reverse else move


State = tuple[int, int, int]  # row, col, heading


def route(
    canvas: Canvas, port: tuple[int, int], own_cells: list[tuple[int, int]], target: Target, bounds: Bounds
) -> Path | None:
    """The cheapest path, or None (also when none turned up within
    ``MAX_STEPS``). ``port`` is the blank cell right after the source's label;
    ``own_cells`` the lines the source already has."""
    goals = _arrivals(canvas, target, bounds)
    if not goals:
        return None
    counter = itertools.count()
    heap: list[tuple[int, int, State, int]] = []
    came: dict[State, State | None] = {}
    origin: dict[State, int] = {}
    best: dict[State, int] = {}
    for cell, heading in _starts(canvas, port, own_cells, bounds):
        state = (cell[0], cell[1], heading)
        if state not in best:
            best[state], came[state], origin[state] = 1, None, BACK[heading]
            heapq.heappush(heap, (1, next(counter), state, 0))
    steps = 0
    while heap and steps < MAX_STEPS:
        steps += 1
        cost, _, state, into = heapq.heappop(heap)
        if into:  # a finished path, and the cheapest thing left
            return _unwind(came, origin, state, into)
        if cost > best[state]:
            continue
        r, c, heading = state
        goal = goals.get((r, c))
        if goal is not None and (goal[0] == heading or goal[0] & VERTICAL):
            # An arrowhead must be met head on; a drop onto a label may turn there.
            direction, extra = goal
            final = cost + extra + (BEND_COST if direction != heading else 0)
            heapq.heappush(heap, (final, next(counter), state, direction))
        for move, (dr, dc) in STEP.items():
            nr, nc = r + dr, c + dc
            if move == BACK[heading] or not bounds.inside(nr, nc) or not canvas.is_free(nr, nc):
                continue
            ncost = cost + 1 + (BEND_COST if move != heading else 0)
            nstate = (nr, nc, move)
            if ncost < best.get(nstate, 1 << 30):
                best[nstate], came[nstate] = ncost, state
                heapq.heappush(heap, (ncost, next(counter), nstate, 0))
    return None


def _starts(
    canvas: Canvas, port: tuple[int, int], own_cells: list[tuple[int, int]], bounds: Bounds
) -> list[tuple[tuple[int, int], int]]:
    """(first cell, heading) for each way out: off the port (right, or up/down
    like the answer's ``/-->``), or off a line the source already owns."""
    exits = [(port, move) for move in (E, N, S)]
    for r, c in own_cells:
        arms = 0
        for a in canvas.line_owners(r, c).values():
            arms |= a
        exits += [((r, c), move) for move in (N, E, S, W) if not arms & move]
    out = []
    for (r, c), move in exits:
        cell = (r + STEP[move][0], c + STEP[move][1])
        if bounds.inside(*cell) and canvas.is_free(*cell):
            out.append((cell, move))
    return out


def _arrivals(canvas: Canvas, target: Target, bounds: Bounds) -> dict[tuple[int, int], tuple[int, int]]:
    """Free cells next to the target: cell -> (direction into the target, extra cost)."""
    goals: dict[tuple[int, int], tuple[int, int]] = {}
    for col in range(target.col, target.col + target.width):
        extra = 0 if col in target.name_cols else OFF_NAME_COST
        for row, direction in ((target.row - 1, S), (target.row + 1, N)):
            if bounds.inside(row, col) and canvas.is_free(row, col):
                goals[(row, col)] = (direction, extra)
    west = (target.row, target.col - 2)
    if west[1] >= 0 and canvas.is_free(*west) and canvas.is_free(target.row, target.col - 1):
        goals[west] = (E, OFF_NAME_COST)
    east = (target.row, target.col + target.width + 1)
    if bounds.inside(*east) and canvas.is_free(*east):
        goals[east] = (W, OFF_NAME_COST)
    return goals


def _unwind(came: dict[State, State | None], origin: dict[State, int], last: State, into: int) -> Path:
    cells = []
    state: State | None = last
    first = last
    while state is not None:
        cells.append((state[0], state[1]))
        first = state
        state = came[state]
    cells.reverse()
    return Path(tuple(cells), origin[first], into)


def draw_path(canvas: Canvas, owner: str, path: Path, charset: Charset) -> None:
    """Draw a routed path. When it leaves from one of the source's lines, that
    cell becomes a junction; the end gets the answer's ``-->|`` in ASCII, or an
    arrowhead when it enters a label from the side."""
    r0, c0 = path.cells[0]
    br, bc = r0 + STEP[path.back][0], c0 + STEP[path.back][1]
    if canvas.is_line(br, bc):
        canvas.add_arms(br, bc, BACK[path.back], owner)
    last = len(path.cells) - 1
    for i, (r, c) in enumerate(path.cells):
        canvas.add_arms(r, c, path.arms(i), owner, _end_glyph(path, charset) if i == last else None)
    if charset.bar_arrow is not None and last >= 1 and path.into & VERTICAL and path.arms(last) & W:
        if path.arms(last - 1) == HORIZONTAL:
            r, c = path.cells[last - 1]
            canvas.add_arms(r, c, 0, owner, charset.bar_arrow)


def _end_glyph(path: Path, charset: Charset) -> str | None:
    if path.into == E:
        return charset.east
    if path.into == W:
        return charset.west
    if charset.bar_corner is not None and path.arms(len(path.cells) - 1) & W:
        return charset.bar_corner
    return None
