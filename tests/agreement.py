"""Does the picture show what the words say? Checks for one narrated step.

Used on every step of every test program and of the real-program corpus
(``test_corpus.py``): each drawing an explanation quotes ("drawn as "x
(old)"") is in the step's picture, and each marker the picture shows is the
state the narration described (a tensor drawn freed was freed by a backward
the narration reported).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from gradtutor.explanations import book_for
from gradtutor.model import Event, Step
from gradtutor.narrate import (
    NarrationOptions, Narrator, changed_names, event_names, graph_drawing, old_names, step_frame_key, tells_a_change,
)
from gradtutor.render import Drawing

_QUOTED = re.compile(r'"([^"]+)"')
_FREED_BY = re.compile(r"freed by the backwards? at ([^:]+):")
_LINE = re.compile(r"line (\d+)")
_FAILED_BACKWARD = ("second-backward", "inplace-modified")
_UNCHANGED = re.compile(r"not drawn, unchanged since the last picture: (.+?)(?: and \d+ more nodes?)? \(")

OPTIONS = NarrationOptions(width=100)


def quoted_drawings(event: Event) -> list[str]:
    """The drawing fragments an event's explanation quotes: "x (old)"."""
    explanation = book_for("en").explain(event)
    found = _QUOTED.findall(explanation.text) + _QUOTED.findall(explanation.title)
    return [q for q in found if q.endswith(("(old)", "(dropped)")) or q.startswith("[")]


def disagreements(step: Step, backward_lines: set[int], drawing: Drawing | None = None) -> list[str]:
    """What the step's picture and words disagree on; empty when they agree.
    ``backward_lines``: the lines of the backwards narrated so far (this one
    included). ``drawing``: the picture the learner sees with the words (by
    default the whole graph)."""
    drawing = drawing or graph_drawing(step.snapshot, OPTIONS)
    picture = "\n".join(drawing.picture)
    legend = " ".join(" ".join(drawing.legend).split())
    problems: list[str] = []
    for event in step.events:
        for fragment in quoted_drawings(event):
            if fragment not in picture:
                problems.append(f"line {step.line}: the {event.kind} explanation says {fragment!r}, the picture has not")
        if event.kind == "name-rebound" and event.get("old_in_graph") and f"{event['name']} (old)" not in picture:
            problems.append(f"line {step.line}: {event['name']} moved on with its old tensor in the graph, "
                            f"but no '{event['name']} (old)' is drawn")
    for match in _FREED_BY.finditer(legend):
        for line in _LINE.findall(match.group(1)):
            if int(line) not in backward_lines:
                problems.append(f"line {step.line}: the picture says a backward at line {line} freed a node, "
                                "but no backward was narrated there")
    return problems


def check_run(steps: Iterable[Step]) -> list[str]:
    """Every disagreement of a run, step by step, between the words and the
    picture narrated with them: what the step drew (the part it touched,
    loops folded, bounded), or when it drew nothing, the picture last drawn;
    and between the words and the whole graph. A name the words told changed
    in place since the last picture is not one that picture calls unchanged."""
    problems: list[str] = []
    backward_lines: set[int] = set()
    narrator = Narrator(book_for("en"), OPTIONS)
    shown: Drawing | None = None
    # Names told changed in place since the last picture, by the frame whose
    # names they are (None: a module's, named alike from every frame).
    told: dict[Any, set[str]] = {}
    for step in steps:
        for event in step.events:
            # A backward that fails part-way has freed the nodes it ran first.
            if event.kind == "backward" or (event.kind == "error" and event.get("cause") in _FAILED_BACKWARD):
                backward_lines.add(event.line)
        frame = step_frame_key(step)
        for event in (*step.events, *(e for e, _ in step.extra.get("repeated", ()))):
            if tells_a_change(event):
                told.setdefault(None if event.get("parameters") else frame, set()).add(event["name"])
                if event.get("through"):  # (c changed through d: d is the program's name, changed too)
                    told.setdefault(frame, set()).add(event["through"])
        drawn = narrator.drawing_if_changed(
            step.snapshot, frame, event_names([step]), changed_names([step]), old_names([step])
        )
        if drawn is not None:
            problems.extend(_told_changed_but_unchanged(step, drawn, told.get(frame, set()) | told.get(None, set())))
            told = {}
        shown = drawn or shown
        problems.extend(disagreements(step, backward_lines))
        if shown is not None:
            problems.extend(f"{p} (in the picture shown)" for p in disagreements(step, backward_lines, shown))
    return problems


def _told_changed_but_unchanged(step: Step, drawing: Drawing, told: set[str]) -> list[str]:
    """The names ``drawing``'s note leaves out as "unchanged since the last
    picture" that the words told changed in place since then."""
    legend = " ".join(" ".join(drawing.legend).split())
    found = _UNCHANGED.search(legend)
    said = found.group(1).split(", ") if found else []
    return [f"line {step.line}: {name} was told changed in place since the last picture, "
            "which this one says it is not" for name in said if name in told]
