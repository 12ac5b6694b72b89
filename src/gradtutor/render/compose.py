"""``render_graph``: pick the view that fits, then add the legend.

Which view draws a graph:

- ``level="statements"``: the statement picture (the Stack Overflow answer's
  style); if even with its markers moved under the labels it is wider than
  ``width``, or no stacking of its rows avoids an overlap, the vertical view,
  with a note saying so.
- ``level="ops"``: parameters folded into their ops, then up to
  ``LAYERED_LIMIT`` nodes the layered picture (in bands if needed), else or if
  even one band would not fit, the vertical view, with a note.
- ``view="vertical"``: the vertical view at either level.
- an empty graph: one line saying so.

The legend follows the picture after a blank line: one line per marker
drawn, then notes (what was folded, named instead of drawn, or why the list).
"""

from __future__ import annotations

import re
from typing import Any

from gradtutor.gcpause import no_cycle_collection
from gradtutor.model import LEVEL_OPS, LEVEL_STATEMENTS, SAVED_FREED, Graph, Snapshot
from gradtutor.render.cells import text_width
from gradtutor.render.charset import Charset, get_charset
from gradtutor.render.drawing import Drawing, Picture, fit_line
from gradtutor.render.folding import fold_parameters
from gradtutor.render.layered_view import layout_layered
from gradtutor.render.legend import legend_lines, marker_keys
from gradtutor.render.scene import Scene, make_scene
from gradtutor.render.statement_view import layout_statements
from gradtutor.render.vertical_view import VERTICAL, layout_vertical
from gradtutor.render.words import Locate, default_locate, say

LAYERED_LIMIT = 100  # nodes, after folding


def render_graph(
    graph: Graph,
    *,
    width: int = 80,
    charset: str = "unicode",
    current_step: int | None = None,
    level: str = LEVEL_STATEMENTS,
    view: str | None = None,
    language: str = "en",
    locate: Locate | None = None,
    omit_keys: frozenset[str] = frozenset(),
    notes: tuple[str, ...] = (),
) -> Drawing:
    """Draw ``graph`` in at most ``width`` display cells per line. Pure: same
    graph and options, same Drawing. ``current_step`` marks the nodes that
    step created as new. ``charset`` is "unicode" or "ascii". ``view`` None
    picks the view as the module docstring says; "vertical" asks for the list.
    ``language`` is the legend's; ``locate(file, line)`` words the places it
    names ("line 10"; the shell says "In [7]"). ``omit_keys``: legend rows the
    reader has been told already (``Drawing.keys`` of drawings before: a
    marker with its meaning); the legend leaves them out."""
    cs = get_charset(charset)
    if level not in (LEVEL_STATEMENTS, LEVEL_OPS):
        raise ValueError(f"level must be {LEVEL_STATEMENTS!r} or {LEVEL_OPS!r}, not {level!r}")
    if not graph.nodes:
        return Drawing((say(language, "empty"),), ((),), view="empty", width=width)
    if view not in (None, VERTICAL):
        raise ValueError(f"view must be None or {VERTICAL!r}, not {view!r}")
    with no_cycle_collection():
        return _render(graph, cs, width, current_step, level, view, language, locate, omit_keys, notes)


def _render(
    graph: Graph,
    cs: Charset,
    width: int,
    current_step: int | None,
    level: str,
    view: str | None,
    language: str,
    locate: Locate | None,
    omit_keys: frozenset[str],
    notes: tuple[str, ...],
) -> Drawing:
    scene = make_scene(graph, cs, width, current_step, language, locate or default_locate(language))
    scene.notes.extend(notes)
    if view == VERTICAL:
        if level == LEVEL_OPS:
            fold_parameters(scene)
        picture = layout_vertical(scene)
    elif level == LEVEL_OPS:
        picture = _ops_picture(scene)
    else:
        picture = _statements_picture(scene)
    return _finish(picture, scene, omit_keys)


def render_snapshot(
    snapshot: Snapshot,
    *,
    width: int = 80,
    charset: str = "unicode",
    level: str = LEVEL_STATEMENTS,
    language: str = "en",
    locate: Locate | None = None,
    omit_keys: frozenset[str] = frozenset(),
) -> Drawing:
    """``render_graph`` of the snapshot's graph at ``level``, new = this step's nodes."""
    return render_graph(
        snapshot.graph(level),
        width=width,
        charset=charset,
        current_step=snapshot.step,
        level=level,
        language=language,
        locate=locate,
        omit_keys=omit_keys,
    )


def _statements_picture(scene: Scene) -> Picture:
    picture = layout_statements(scene)
    if picture is not None:
        return picture
    picture = layout_vertical(scene)
    picture.notes.insert(0, scene.say("list_wide", width=scene.width))
    scene.standing.add(picture.notes[0])
    return picture


def _ops_picture(scene: Scene) -> Picture:
    fold_parameters(scene)
    count = len(scene.index.order)
    if count <= LAYERED_LIMIT:
        picture = layout_layered(scene)
        if picture is not None:
            return picture
        note = scene.say("list_wide", width=scene.width)
    else:
        note = scene.say("list_many", count=count, limit=LAYERED_LIMIT)
    picture = layout_vertical(scene)
    picture.notes.insert(0, note)
    scene.standing.add(note)
    return picture


def _finish(picture: Picture, scene: Scene, omit_keys: frozenset[str] = frozenset()) -> Drawing:
    freed = sorted(
        {
            (n.freed_by_file or "", n.freed_by_line)
            for n in scene.all_nodes.values()
            if n.saved == SAVED_FREED and n.freed_by_line is not None
        },
        key=lambda place: (_natural(place[0]), place[1]),
    )
    locate = scene.locate or default_locate(scene.language)
    places = [locate(file, line) for file, line in freed]
    changed = _changed_places(scene, locate)
    keys = marker_keys(picture.markers, scene.charset, places, scene.language, changed) + picture.keys
    # A key is known by its marker and its meaning: "(old)" of a tensor and
    # of a module are two, and "[✗ freed]" is said again when the backwards
    # it names are others. A standing note is known by its words.
    keys = [key for key in keys if _key_id(key) not in omit_keys]
    notes = [
        note for note in dict.fromkeys(scene.notes + picture.notes)  # each said once
        if note not in scene.standing or _note_id(note) not in omit_keys
    ]
    legend, legend_spans = legend_lines(keys, notes, scene.width)
    lines = list(picture.lines)
    spans = list(picture.spans)
    if legend:
        lines += [""] + legend
        spans += [[]] + legend_spans
    width = scene.width
    for i, line in enumerate(lines):
        if text_width(line) > width:
            lines[i], spans[i] = fit_line(line, spans[i], width)
    anchors = tuple((node_id, row, start, end) for node_id, (row, start, end) in picture.anchors.items())
    edges = tuple((s, d, how) for (s, d), how in picture.edges.items())
    return Drawing(
        lines=tuple(lines),
        spans=tuple([tuple(sp) for sp in spans]),
        legend=tuple(lines[len(lines) - len(legend):]) if legend else (),
        view=picture.view,
        width=scene.width,
        anchors=anchors,
        edges=edges,
        keys=tuple(_key_id(key) for key in keys) + tuple(_note_id(n) for n in notes if n in scene.standing),
    )


def _key_id(key: tuple[str, str, str]) -> str:
    return f"{key[0]}\t{key[2]}"


def _note_id(note: str) -> str:
    return f"note\t{note}"


def _natural(text: str) -> tuple[Any, ...]:
    """``text`` as a sort key with its numbers as numbers: "<In [9]>" before "<In [11]>"."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _changed_places(scene: Scene, locate: Locate) -> list[str]:
    """Where each drawn tensor was changed in place, tensor by tensor: "h at
    line 5, line 6"; a place a loop changed many times once, with a count."""
    out: list[str] = []
    times = "×" if scene.charset.ellipsis == "…" else "x"
    sep = scene.say("list_sep")
    for node in scene.all_nodes.values():
        if not node.changed_at:
            continue
        counts: dict[tuple[str, int], int] = {}
        for place in node.changed_at:
            counts[place] = counts.get(place, 0) + 1
        places = sep.join(
            locate(file, line) + (scene.say("repeats", times=times, count=count) if count > 1 else "")
            for (file, line), count in counts.items()
        )
        name = scene.charset.clean((node.names or node.former_names or (node.label,))[0])
        out.append(scene.say("changed_place", name=name, places=places))
    return out


__all__ = ["render_graph", "render_snapshot", "LAYERED_LIMIT"]
