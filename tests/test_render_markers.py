"""Each marker: its words next to the node, its style, and its legend line."""

from __future__ import annotations

from render_fixtures import const, graph, leaf, stmt

from gradtutor.model import SAVED_FREED, SAVED_MODIFIED, SAVED_NONE, Graph
from gradtutor.render import render_graph


def draw(g: Graph, step: int | None = None, charset: str = "ascii", width: int = 80):
    return render_graph(g, width=width, charset=charset, current_step=step)


def style_at(drawing, node_id: str) -> set[str]:
    """Styles on a node's words."""
    line, start, end = next(a[1:] for a in drawing.anchors if a[0] == node_id)
    return {style for s, e, style in drawing.spans[line] if s < end and e > start}


def legend_keys(drawing) -> list[str]:
    return [line.split()[0] for line in drawing.legend if line.startswith("  ") and not line.startswith("    ")]


def test_a_leaf_that_requires_grad_is_marked_and_explained():
    d = draw(graph([leaf("w", "w"), stmt(2, "w * 2", "y")], "w>s2"))
    assert d.picture[0].startswith("w [leaf] --> w * 2 = y")
    assert "leaf" in style_at(d, "w")
    assert any(line.startswith("  [leaf]") and "backward fills its .grad" in line for line in d.legend)


def test_a_const_has_no_marker():
    d = draw(graph([const("x", "x"), leaf("w", "w"), stmt(2, "x * w", "y")], "x>s2 w>s2"))
    assert "x -" in d.picture[-1] and "x [" not in "\n".join(d.picture)


def test_grad_replaces_leaf_once_backward_filled_it():
    d = draw(graph([leaf("w", "w", grad=True), stmt(2, "w * 2", "y")], "w>s2"))
    assert d.picture[0].startswith("w [grad] -->")
    assert "[leaf]" not in "\n".join(d.lines)
    assert "grad" in {s for _, _, s in d.spans[0]}


def test_freed_nodes_say_so_with_the_backward_line_in_the_legend():
    g = graph([leaf("w", "w", grad=True), stmt(2, "w * w", "y", saved=SAVED_FREED, freed_by=3)], "w>s2")
    ascii_drawing, unicode_drawing = draw(g, charset="ascii"), draw(g, charset="unicode")
    assert "w * w = y [freed]" in ascii_drawing.picture[0]
    assert "w * w = y [✗ freed]" in unicode_drawing.picture[0]
    assert any("freed by the backward at line 3" in line for line in ascii_drawing.legend)
    assert "freed" in style_at(ascii_drawing, "s2") | {s for _, _, s in ascii_drawing.spans[0]}


def test_saved_nothing_is_marked_only_next_to_something_freed():
    before = graph([leaf("x", "x"), stmt(2, "x + 3", "y", saved=SAVED_NONE)], "x>s2")
    assert "none saved" not in "\n".join(draw(before).lines)
    after = graph([leaf("x", "x", grad=True), stmt(2, "x + 3", "y", saved=SAVED_NONE),
                   stmt(3, "y * y", "z", saved=SAVED_FREED, freed_by=4)], "x>s2 s2>s3")
    d = draw(after)
    assert "x + 3 = y [none saved]" in "\n".join(d.picture)
    assert any(line.startswith("  [none saved]") and "run through it again" in line for line in d.legend)


def test_a_saved_tensor_changed_in_place_is_marked():
    d = draw(graph([leaf("x", "x"), stmt(2, "x.exp()", "y", saved=SAVED_MODIFIED)], "x>s2"))
    assert "x.exp() = y [modified]" in d.picture[0]
    assert any("changed in place" in line for line in d.legend)


def test_a_tensor_that_lost_its_name_is_a_dimmed_ghost():
    """The forum's 42. leaf after ``x = x ** 2``."""
    g = graph([leaf("x0", "x", former="x"), stmt(4, "x ** 2", "x")], "x0>s4")
    d = draw(g)
    assert d.picture[0].startswith("x (old) [leaf] --> x ** 2 = x")
    assert "ghost" in style_at(d, "x0")
    assert "(old)" in legend_keys(d)


def test_a_node_unreachable_since_this_step_is_drawn_once_more_as_a_ghost_without_markers():
    old = stmt(3, "x * 2", None, saved=SAVED_FREED, freed_by=4, former="y", dropped=True)
    d = draw(graph([leaf("x", "x", grad=True), stmt(5, "x * 3", "y"), old], "x>s5 x>s3"), step=5)
    text = "\n".join(d.picture)
    assert "x * 2 = y (dropped)" in text and "x * 2 = y (dropped) [" not in text
    assert "ghost" in style_at(d, "s3")
    assert "(dropped)" in legend_keys(d)


def test_nodes_the_current_step_created_are_highlighted():
    g = graph([leaf("x", "x"), stmt(2, "x * 2", "y"), stmt(3, "y + 1", "z")], "x>s2 s2>s3")
    d = draw(g, step=3)
    assert "y + 1 = z [new]" in d.picture[0] and "x * 2 = y [new]" not in d.picture[0]
    assert "new" in style_at(d, "s3")
    assert "[new]" in legend_keys(d)


def test_when_one_step_built_the_whole_graph_nothing_is_singled_out():
    g = graph([leaf("x", "x"), stmt(2, "x * 2", "y")], "x>s2")
    assert "[new]" not in "\n".join(draw(g, step=2).lines)


def test_the_legend_lists_exactly_the_markers_drawn():
    g = graph([leaf("w", "w", grad=True), stmt(2, "w * w", "y", saved=SAVED_FREED, freed_by=3)], "w>s2")
    assert legend_keys(draw(g)) == ["[grad]", "[freed]"]
    plain = graph([const("x", "x"), const("y", "y")], "")
    assert draw(plain).legend == ()


def test_markers_go_under_the_labels_when_inline_they_would_not_fit():
    from render_fixtures import whatif1_line8

    d = render_graph(whatif1_line8().graph, width=80, charset="ascii", current_step=8)
    assert d.view == "statements"
    assert d.picture[1].startswith("x (old) --> x ** 2 = x --> x ** 3 = x3 --> x + x3 = f")
    assert d.picture[2].split() == ["[grad]", "[grad,", "freed]", "[freed]", "[none", "saved]"]
