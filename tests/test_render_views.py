"""Which view draws what, and the things each view promises."""

from __future__ import annotations

import io
import re

import pytest
from render_fixtures import (
    chain_ops,
    diamond_line6,
    graph,
    as_list,
    leaf,
    markers,
    mlp_ops,
    op,
    param,
    so_first_line9,
    so_first_line12,
    so_second_line14,
    so_second_line15,
    stmt,
    whatif1_line8,
)
from rich.cells import cell_len
from rich.console import Console

from gradtutor.model import Graph, Snapshot
from gradtutor.render import BY_LINE, BY_NAME, FOLDED, LAYERED_LIMIT, GraphView, render_graph, render_snapshot

BOX_DRAWING = re.compile(r"[\u2500-\u257f▶◀▼▲✗…]")


# -- statement view -----------------------------------------------------------------
def test_a_tensor_used_twice_branches_and_every_node_is_drawn_once():
    """The forum's diamond: x feeds two statements; the second branches up with /-->."""
    d = render_graph(diamond_line6().graph, width=80, charset="ascii", current_step=6)
    assert d.picture[0].lstrip().startswith("/--> x.sin() = b ")
    assert d.picture[1].startswith("x [leaf] --> x.exp() = a --> a + b = d")
    assert "\n".join(d.picture).count("x [leaf]") == 1


def test_a_line_that_would_cross_others_is_named_on_its_node_and_the_legend_says_so():
    d = render_graph(so_second_line14().graph, width=80, charset="ascii", current_step=14)
    how = {(s, t): h for s, t, h in d.edges}
    assert how[("w", "s14")] == BY_NAME and how[("b", "s14")] == BY_NAME
    assert how[("x", "s14")] == BY_LINE
    line, _, end = next(a[1:] for a in d.anchors if a[0] == "s14")
    assert d.lines[line][end:].strip() == "<- also from w, b"
    assert any(line.strip().startswith("<- also from") and "also reads these inputs" in line for line in d.legend)
    assert not any("not drawn" in line for line in d.lines)


def test_when_an_arrow_leaves_the_node_the_names_go_under_it():
    d = render_graph(so_second_line15().graph, width=80, charset="unicode", current_step=15)
    assert d.view == "statements"
    line, start, _ = next(a[1:] for a in d.anchors if a[0] == "s14")
    assert d.lines[line + 1][start + 1 :].startswith("▲ also from w, b")
    assert any(line.strip().startswith("▲ also from") for line in d.legend)


def test_too_wide_a_picture_falls_back_to_the_vertical_view_with_a_note():
    d = render_graph(whatif1_line8().graph, width=44, charset="ascii", current_step=8)
    assert d.view == "vertical"
    assert all(cell_len(line) <= 44 for line in d.lines)
    assert "no picture of it fits in 44 columns with every edge drawn" in " ".join(" ".join(d.legend).split())


def test_wide_characters_count_as_two_cells():
    g = graph([leaf("w", "权重"), stmt(2, "权重 * 2", "结果")], "w>s2")
    for width in (20, 40, 80):
        d = render_graph(g, width=width, charset="unicode")
        assert all(cell_len(line) <= width for line in d.lines)
        assert "权重" in d.lines[0]
    d = render_graph(g, width=80, charset="unicode")
    line, start, end = next(a[1:] for a in d.anchors if a[0] == "s2")
    assert d.lines[line][start:end] == "权重 * 2 = 结果"


# -- ascii ---------------------------------------------------------------------------
@pytest.mark.parametrize("make", [so_first_line12, whatif1_line8, diamond_line6])
@pytest.mark.parametrize("level", ["statements", "ops"])
def test_ascii_drawings_use_no_box_drawing_arrows_or_ellipsis(make, level):
    case = make()
    for width in (30, 60, 80):
        d = render_graph(case.graph, width=width, charset="ascii", current_step=case.step, level=level)
        assert not BOX_DRAWING.search("\n".join(d.lines)), d.lines
        assert all(line.isascii() for line in d.lines)


def test_ascii_shows_the_answers_own_characters():
    d = render_graph(so_first_line12().graph, width=80, charset="ascii", current_step=12)
    text = "\n".join(d.picture)
    for piece in ("-->", ">|", "\\-->", "[freed]"):
        assert piece in text


def test_an_ellipsis_from_a_cut_label_becomes_three_dots_in_ascii():
    """The engine cuts long labels with "…" (labels.shorten_expression)."""
    g = graph([leaf("x", "x"), stmt(2, "some_function(x, x, x…", "y")], "x>s2")
    assert "some_function(x, x, x... = y" in render_graph(g, charset="ascii").lines[0]
    assert "some_function(x, x, x… = y" in render_graph(g, charset="unicode").lines[0]


# -- op view ------------------------------------------------------------------------
def test_parameters_and_their_transposes_fold_into_the_op_using_them():
    d = render_graph(mlp_ops(2).graph, width=120, charset="ascii", level="ops")
    text = "\n".join(d.picture)
    assert "model.0.weight.T [leaf]" in text and "model.0.bias [leaf]" in text
    assert "TBackward0" not in text
    folded = {(s, t) for s, t, h in d.edges if h == FOLDED}
    anchored = {a[0] for a in d.anchors}
    assert all(s not in anchored for s, _ in folded)
    assert any("folded: 4 parameters and 2 TBackward0 transposes" in line for line in d.legend)


def test_a_parameter_used_by_two_ops_stays_a_box():
    nodes = [param("p", "model.0.weight"), op("a", "MulBackward0", step=2), op("b", "AddBackward0", step=2)]
    g = graph(nodes, "p>a p>b a>b")
    d = render_graph(g, width=80, charset="ascii", level="ops")
    assert {a[0] for a in d.anchors} == {"p", "a", "b"}
    assert not any("folded" in line for line in d.legend)


def test_a_users_own_leaf_is_not_folded():
    g = graph([leaf("w", "w"), op("a", "MulBackward0", step=2)], "w>a")
    d = render_graph(g, width=80, charset="ascii", level="ops")
    assert d.picture[0].startswith("w [leaf] --> MulBackward0")


def test_accumulate_grad_never_appears():
    d = render_graph(mlp_ops(3).graph, width=80, level="ops")
    assert "AccumulateGrad" not in "\n".join(d.lines)


def test_a_wide_op_graph_wraps_into_bands_joined_by_letters():
    d = render_graph(mlp_ops(12).graph, width=80, charset="ascii", level="ops")
    assert d.view == "layered"
    assert all(cell_len(line) <= 80 for line in d.lines)
    letters = re.findall(r"\(([a-z]+)\)", "\n".join(d.picture))
    # Each letter ends one band and starts the next: it appears exactly twice.
    assert letters and all(letters.count(x) == 2 for x in letters)
    assert any(line.startswith("  (a)") for line in d.legend)


def test_narrower_terminals_get_more_bands():
    wide = render_graph(mlp_ops(12).graph, width=120, level="ops")
    narrow = render_graph(mlp_ops(12).graph, width=60, level="ops")
    def letters(d) -> int:
        return len(re.findall(r"\([a-z]+\)", "\n".join(d.picture)))

    assert letters(narrow) > letters(wide)
    assert all(cell_len(line) <= 60 for line in narrow.lines)


def test_more_than_the_layered_limit_goes_vertical_and_stays_narrow():
    g = chain_ops(1000)
    d = render_graph(g, width=80, level="ops")
    assert d.view == "vertical"
    # An entry and the names of its inputs: as wide as a few labels, not the depth.
    assert max(cell_len(line) for line in d.picture) <= 70
    assert any(f"({LAYERED_LIMIT})" in line for line in d.legend)
    anchored = {a[0] for a in d.anchors}
    folded = {s for s, _, h in d.edges if h == FOLDED}
    assert anchored | folded == {n.id for n in g.nodes}


def test_the_layered_view_draws_up_to_the_limit():
    d = render_graph(chain_ops(LAYERED_LIMIT), width=80, level="ops")
    assert d.view == "layered"


# -- api ------------------------------------------------------------------------------
def test_an_empty_graph_says_so():
    d = render_graph(Graph(), width=80)
    assert d.lines == ("(no autograd graph yet)",) and d.view == "empty"


def test_bad_options_are_value_errors():
    with pytest.raises(ValueError):
        render_graph(Graph(), charset="latin-1")
    with pytest.raises(ValueError):
        render_graph(Graph(), level="bytes")
    with pytest.raises(ValueError):
        render_graph(so_first_line9().graph, view="spiral")


def test_render_snapshot_draws_the_level_asked_and_marks_that_steps_nodes():
    case = so_first_line9()
    ops = graph([leaf("w", "w"), op("n1", "MulBackward0", step=9, names=("z",))], "w>n1")
    snap = Snapshot(step=9, line=9, ops=ops, statements=case.graph)
    statements = render_snapshot(snap, width=80, charset="ascii")
    assert statements == render_graph(case.graph, width=80, charset="ascii", current_step=9)
    assert "BCE(z, y) = loss [new]" in "\n".join(statements.picture)
    op_view = render_snapshot(snap, width=80, charset="ascii", level="ops")
    assert op_view.picture == ("w [leaf] --> MulBackward0 = z",)


def test_rendering_is_pure():
    case = so_first_line12()
    assert render_graph(case.graph, current_step=12) == render_graph(case.graph, current_step=12)


def test_a_graph_drawn_again_under_other_options_is_drawn_as_if_for_the_first_time():
    # Node words are kept by Node object between drawings (scene._DESCRIBED):
    # every option they depend on must be part of what they are kept by.
    from gradtutor.render import scene

    cases = [so_first_line12(), mlp_ops(grads=True), as_list(so_second_line15()), markers()]

    def drawings(case, forget):  # type: ignore[no-untyped-def]
        for step in (case.step, None, 1):
            for charset in ("unicode", "ascii"):
                for language in ("en", "zh"):
                    for width in (80, 24):
                        if forget:
                            scene._DESCRIBED.clear()
                            scene._NAMED.clear()
                        yield render_graph(
                            case.graph, current_step=step, charset=charset, language=language, width=width,
                            level=case.level, view=case.view,
                        )

    warm = [drawing for case in cases for drawing in drawings(case, forget=False)]
    fresh = [drawing for case in cases for drawing in drawings(case, forget=True)]
    assert len(warm) == 96
    assert warm == fresh


def test_legend_is_the_tail_of_lines_after_a_blank_line():
    d = render_graph(so_first_line12().graph, width=80, current_step=12)
    assert d.lines[len(d.picture)] == ""
    assert d.lines[len(d.picture) + 1:] == d.legend
    assert len(d.spans) == len(d.lines)


# -- rich -------------------------------------------------------------------------------
def test_graph_view_prints_the_lines_without_colour_and_styles_with_it():
    d = render_graph(so_first_line12().graph, width=80, current_step=12)
    plain = io.StringIO()
    Console(file=plain, width=80, color_system=None).print(GraphView(d))
    assert plain.getvalue() == "".join(line + "\n" for line in d.lines)
    coloured = io.StringIO()
    Console(file=coloured, width=80, force_terminal=True, color_system="standard").print(GraphView(d))
    assert "\x1b[" in coloured.getvalue()
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.getvalue()) == plain.getvalue()


def test_graph_view_of_a_snapshot_draws_at_the_console_width():
    case = whatif1_line8()
    snap = Snapshot(step=8, line=8, ops=Graph(), statements=case.graph)
    for width, view in ((80, "statements"), (44, "vertical")):
        out = io.StringIO()
        Console(file=out, width=width, color_system=None).print(GraphView(snap))
        lines = out.getvalue().splitlines()
        assert max(cell_len(line) for line in lines) <= width
        drawing = render_snapshot(snap, width=width)
        assert lines == list(drawing.lines) and drawing.view == view


class AsciiFile(io.StringIO):
    encoding = "ascii"  # what rich looks at to decide ascii_only


def test_graph_view_picks_ascii_for_a_console_that_cannot_encode_unicode():
    case = so_first_line12()
    snap = Snapshot(step=12, line=12, ops=Graph(), statements=case.graph)
    out = AsciiFile()
    Console(file=out, width=80, color_system=None).print(GraphView(snap))
    assert out.getvalue().isascii() and "\\-->" in out.getvalue()


def test_graph_view_theme_maps_style_names():
    d = render_graph(so_first_line9().graph, width=80, current_step=9)
    text = GraphView(d, theme={"new": "underline"}).to_text(d)
    assert any(str(span.style) == "underline" for span in text.spans)
