"""Op view: routing the edges between two neighbouring columns.

A *group* is a line from one box of the left column to a vertical *track*,
then from the track to each of its target rows. A box's edges into targets
that nothing else enters share one group; each edge into a target that
several boxes enter (a fan-in, like ``AddBackward0``'s two inputs) gets a
group of its own, whose track ends on the target's row. A group whose only
target is on its own row goes straight and needs no track.

Rules that keep the picture readable one way only (lines flow left to right):

- groups whose vertical spans overlap get different tracks;
- when a box leaves from row r and another group arrives on row r, the
  leaving box's tracks must be further left, or its line would run into the
  arriving one. These orders can form a cycle;
- where a track joins a line already running into a fan-in target, an
  arrowhead on the track just before the join says the flow goes in, not
  out. That needs one free cell of track.

When a rule cannot be met, ``route_channel`` returns the row to push down by
one (with what is below it), and the caller tries again.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradtutor.render.graph_index import topological_order


@dataclass(eq=False)
class Group:
    source: str  # box id in the left column
    net: str  # the node whose value the lines carry
    source_row: int
    target_rows: list[int]
    merging: bool = False  # its one target is entered by other groups too
    track: int | None = None  # None: a straight line
    arrow_row: int | None = None  # where its merge arrowhead goes

    @property
    def span(self) -> tuple[int, int]:
        rows = [self.source_row, *self.target_rows]
        return min(rows), max(rows)


def make_groups(sources: list[tuple[str, str, int, list[tuple[str, int]]]], fan_in: dict[str, int]) -> list[Group]:
    """``sources``: (box, net, row, [(target box, target row)]) per left box."""
    groups: list[Group] = []
    for box, net, row, targets in sources:
        shared = sorted({r for t, r in targets if fan_in[t] == 1})
        if shared:
            groups.append(Group(box, net, row, shared))
        for t, r in targets:
            if fan_in[t] > 1:
                groups.append(Group(box, net, row, [r], merging=True))
    return groups


def route_channel(groups: list[Group]) -> int | tuple[str, int]:
    """Assign tracks and merge arrowheads. Return the number of tracks, or
    ``("push", row)``: the row to push down before trying again."""
    order = _track_order(groups)
    if order is None:
        return ("push", _cycle_row(groups))
    tracks = _assign(order)
    for g in groups:
        if g.merging and g.track is not None and _joins_a_line(g, groups):
            target = g.target_rows[0]
            g.arrow_row = target + (-1 if g.source_row < target else 1)
            if g.arrow_row == g.source_row or _crossed(g, g.arrow_row, groups):
                return ("push", target)
    return tracks


def _track_order(groups: list[Group]) -> list[tuple[Group, list[Group]]] | None:
    """Bending groups in an order that respects "leaves left of arrives", each
    with the groups that must be right of it; None when the orders cycle."""
    bending = [g for g in groups if g.target_rows != [g.source_row]]
    after: dict[int, list[int]] = {i: [] for i in range(len(bending))}
    for a, ga in enumerate(bending):
        if ga.source_row in ga.target_rows:
            continue  # its line crosses the whole channel: arrivals on that row join it
        for b, gb in enumerate(bending):
            if gb.source != ga.source and ga.source_row in gb.target_rows:
                after[a].append(b)
    order = topological_order(list(range(len(bending))), after, lambda i: bending[i].span[0])
    if len(order) < len(bending):
        return None
    for g in groups:
        g.track = None
    return [(bending[i], [bending[j] for j in after[i]]) for i in order]


def _assign(order: list[tuple[Group, list[Group]]]) -> int:
    """Leftmost free track for each group, right of the groups it must follow."""
    lowest: dict[int, int] = {}
    tracks: list[list[tuple[int, int]]] = []
    for g, later in order:
        lo, hi = g.span
        t = lowest.get(id(g), 0)
        while t < len(tracks) and any(lo <= top_end and top <= hi for top, top_end in tracks[t]):
            t += 1
        if t == len(tracks):
            tracks.append([])
        tracks[t].append((lo, hi))
        g.track = t
        for o in later:
            lowest[id(o)] = max(lowest.get(id(o), 0), t + 1)
    return len(tracks)


def _joins_a_line(g: Group, groups: list[Group]) -> bool:
    """Does another line already run along ``g``'s target row where g's track meets it?"""
    row = g.target_rows[0]
    for o in groups:
        if o is g or row not in o.target_rows:
            continue
        if o.track is None or o.track < g.track:  # type: ignore[operator]
            return True
    return False


def _crossed(g: Group, row: int, groups: list[Group]) -> bool:
    """Does a horizontal line of another group pass g's track on ``row``?"""
    for o in groups:
        if o is g:
            continue
        reach_left = o.track is None or o.track > g.track  # type: ignore[operator]
        reach_right = o.track is None or o.track < g.track  # type: ignore[operator]
        if o.source_row == row and reach_left:
            return True
        if row in o.target_rows and reach_right:
            return True
    return False


def _cycle_row(groups: list[Group]) -> int:
    """A row where a box leaves and another group arrives: pushing the arrival
    down one row breaks the cycle of orders."""
    arrivals = {r for g in groups for r in g.target_rows if r != g.source_row}
    rows = sorted(g.source_row for g in groups if g.source_row in arrivals and g.source_row not in g.target_rows)
    return rows[0]


def channel_width(tracks: int) -> int:
    """Cells between two columns: `` ──▶ `` with no track, then two per track."""
    return max(5, 2 * tracks + 4)


def track_column(start: int, track: int) -> int:
    """Column of ``track`` in a channel starting at ``start`` (the blank after a label)."""
    return start + 2 + 2 * track
