"""Golden drawings, width 80 unless the case says otherwise, ASCII and Unicode.

The files in tests/golden/ are the reviewed pictures. After an intended
change, regenerate them and read the diff before committing:

    GRADTUTOR_REGEN=1 .venv/bin/python -m pytest tests/test_render_golden.py
    git diff tests/golden/

"Plain" is what a console without colour prints: exactly ``Drawing.lines``,
checked here through rich for every case.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from render_fixtures import GOLDEN_CASES, Case, so_first_line12
from rich.console import Console

from gradtutor.render import GraphView, render_graph

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("GRADTUTOR_REGEN") == "1"
CASES = [make() for make in GOLDEN_CASES]


def draw(case: Case, charset: str):
    return render_graph(
        case.graph, width=case.width, charset=charset, current_step=case.step, level=case.level, view=case.view
    )


@pytest.mark.parametrize("charset", ["ascii", "unicode"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_drawing_matches_golden_file(case: Case, charset: str) -> None:
    text = "\n".join(draw(case, charset).lines) + "\n"
    path = GOLDEN / f"{case.name}.{charset}.txt"
    if REGENERATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with GRADTUTOR_REGEN=1 and review it"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_colourless_console_prints_exactly_the_lines(case: Case) -> None:
    for charset in ("ascii", "unicode"):
        drawing = draw(case, charset)
        out = io.StringIO()
        Console(file=out, width=case.width, color_system=None).print(GraphView(drawing))
        assert out.getvalue() == "".join(line + "\n" for line in drawing.lines)


def test_first_scenario_draws_the_same_whatever_order_dropped_nodes_come_in() -> None:
    """The engine lists nodes dropped this step last; the picture goes by age."""
    engine_order = draw(so_first_line12(dropped_last=True), "ascii")
    creation_order = draw(so_first_line12(dropped_last=False), "ascii")
    assert engine_order.lines == creation_order.lines


def test_first_scenario_matches_the_answers_picture() -> None:
    """The answer's second drawing, with markers: the first loss on the main
    row, the second branching below it, and y's edge to the second one drawn."""
    lines = draw(so_first_line12(), "ascii").picture
    assert lines[0].startswith("y ---") and lines[0].endswith(">|")
    assert lines[1].startswith("b [grad] ---") and lines[2].startswith("w [grad] --")
    assert lines[3].startswith("x ---") and "> x @ w + b = z [freed] --> BCE(z, y) = loss (dropped)" in lines[3]
    assert "\\--> BCE(z, y) = loss [new] <" in lines[4]
    # Each bar drops onto its name in the label it feeds.
    for name, line in (("w", lines[2]), ("b", lines[1]), ("y", lines[0])):
        bar = line.index(">|") + 1
        label_line = lines[3]
        assert label_line[bar] == name
