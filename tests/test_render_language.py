"""The legend speaks the learner's language and names places the way the front end does."""

from __future__ import annotations

import pytest

from rich.cells import cell_len

from gradtutor.model import LEAF, SAVED_FREED, STATEMENT, Edge, Graph, Node
from gradtutor.render import render_graph


def freed_graph(file: str = "prog.py", by: int = 3) -> Graph:
    x = Node(id="t1", kind=LEAF, label="x", names=("x",), has_grad=True)
    y = Node(id="s2", kind=STATEMENT, label="x ** 2", names=("y",), step=2, line=2,
             saved=SAVED_FREED, freed_by_line=by, freed_by_file=file)
    return Graph((x, y), (Edge("t1", "s2"),))


def test_chinese_legend_wraps_by_display_width():
    drawing = render_graph(freed_graph(), width=40, language="zh")
    legend = "\n".join(drawing.legend)
    assert "它的 .grad 已有值" in legend and "已被第 3 行的" in legend
    assert all(cell_len(line) <= 40 for line in drawing.lines)


def test_places_in_the_legend_come_from_the_front_end():
    drawing = render_graph(freed_graph("<In [3]>"), width=80, locate=lambda file, line: file.strip("<>"))
    assert any("freed by the backward at In [3]" in line for line in drawing.legend)


def test_english_is_the_default():
    drawing = render_graph(freed_graph(), width=80)
    assert any("freed by the backward at line 3" in line for line in drawing.legend)
    assert render_graph(Graph(), language="zh").lines == ("（还没有自动求导计算图）",)


def test_a_legend_can_leave_out_what_the_reader_was_told_already():
    # Keys are a marker with its meaning: told once, each is left out after.
    full = render_graph(freed_graph(), width=80)
    assert [key.split("\t")[0] for key in full.keys] == ["[grad]", "[✗ freed]"]
    assert full.keys[0] == "[grad]\tits .grad is set"
    shorter = render_graph(freed_graph(), width=80, omit_keys=frozenset(full.keys))
    assert shorter.keys == () and shorter.legend == ()
    assert shorter.picture == full.picture


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_marker_that_names_places_is_explained_again_when_they_change_in_every_language(language):
    first = render_graph(freed_graph(), width=80, language=language)
    same = render_graph(freed_graph(), width=80, language=language, omit_keys=frozenset(first.keys))
    assert same.legend == ()  # freed by the same backward: told already
    other = render_graph(freed_graph(by=7), width=80, language=language, omit_keys=frozenset(first.keys))
    freed = [line for line in other.legend if "[✗" in line]
    assert freed and "7" in freed[0] and "3" not in freed[0]  # another backward: said again, with its line
    assert len(other.legend) < len(first.legend)  # [grad] is left out


def test_a_note_on_how_the_picture_draws_a_module_is_said_once():
    from gradtutor.model import Edge, Graph, Node
    from gradtutor.render import render_graph

    def graph(values: int) -> Graph:
        return Graph((Node("m", "module", "model", names=("model",), detail=f"6 parameters, {values} values"),
                      Node("x", "const", "x", names=("x",), requires_grad=False),
                      Node("y", "statement", "model(x)", names=("y",), step=1)),
                     (Edge("m", "y"), Edge("x", "y")))

    note = "model: 6 parameters, 193 values, drawn as one node"
    first = render_graph(graph(193), width=80)
    assert note in first.legend[-1]
    again = render_graph(graph(193), width=80, omit_keys=frozenset(first.keys))
    assert not any("drawn as one node" in line for line in again.legend)
    other = render_graph(graph(200), width=80, omit_keys=frozenset(first.keys))
    assert any("200 values, drawn as one node" in line for line in other.legend)  # other words: said


def test_a_modules_size_is_said_in_the_drawings_language():
    from gradtutor.model import Edge, Graph, Node
    from gradtutor.render import render_graph

    graph = Graph((Node("m", "module", "model", names=("model",), detail="6 parameters, 193 values"),
                   Node("x", "const", "x", names=("x",), requires_grad=False),
                   Node("y", "statement", "model(x)", names=("y",), step=1)),
                  (Edge("m", "y"), Edge("x", "y")))
    assert "model: 6 parameters, 193 values, drawn as one node" in str(render_graph(graph, width=80))
    assert "model：6 个参数，193 个值，画作一个节点" in str(render_graph(graph, width=80, language="zh"))
    one = Graph((Node("m", "module", "lin", names=("lin",), detail="1 parameter, 1 value"),), ())
    assert "lin: 1 parameter, 1 value, drawn as one node" in str(render_graph(one, width=80))


def test_the_note_on_what_is_not_drawn_counts_in_each_language():
    from gradtutor.explanations import book_for
    from gradtutor.narrate import NarrationOptions, Narrator
    from gradtutor.render.focus import Focus

    def note(language: str, omitted: int, names: tuple[str, ...]) -> str:
        return Narrator(book_for(language), NarrationOptions(language=language)).focus_note(Focus(omitted, names))

    assert note("en", 4, ("x", "y", "z")) == "not drawn, unchanged since the last picture: x, y, z and 1 more node " \
                                             "(--graph full shows the whole graph)"
    assert note("en", 5, ("x", "y", "z")).endswith("x, y, z and 2 more nodes (--graph full shows the whole graph)")
    assert note("en", 1, ()).startswith("not drawn, unchanged since the last picture: 1 node (")
    assert note("zh", 5, ("x", "y", "z")) == "未画出、自上一张图以来没有改变的：x、y、z 和另外 2 个节点（--graph full 显示整个计算图）"


def test_a_narration_in_chinese_says_again_which_backward_freed_a_node(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text(
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = (x * 2).exp().sum()\n"
        "y.backward()\n"
        "z = (x * 3).exp().sum()\n"
        "z.backward()\n",
        encoding="utf-8",
    )
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", "--lang", "zh", str(path)],
                          capture_output=True, text=True, timeout=120).stdout
    assert "已被第 4 行的反向传播释放" in text and "已被第 4 行、第 6 行的反向传播释放" in text
