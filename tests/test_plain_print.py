"""Printing without colour: the tutor's own renderables are printed from
their lines (``narrate.plain_lines``), exactly as rich prints them."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

import gradtutor.narrate as narrate
from gradtutor.cli import main
from gradtutor.model import Edge, Graph, Node
from gradtutor.narrate import Bulleted, Indented, OneLine, Verbatim, Wrapped, console_printer, plain_lines
from gradtutor.render import Drawing, GraphView

CORPUS = Path(__file__).parent / "corpus"
WIDTHS = (12, 30, 61, 100)


class Stream(io.StringIO):
    """A file of the encoding given (rich draws ASCII for an ASCII one)."""

    def __init__(self, encoding: str) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


def plain_console(width: int, encoding: str = "utf-8") -> tuple[Console, io.StringIO]:
    out = Stream(encoding)
    return Console(file=out, width=width, color_system=None, no_color=True, highlight=False, emoji=False,
                   markup=False, soft_wrap=False), out


def by_rich(renderable: Any, width: int, encoding: str = "utf-8") -> str:
    console, out = plain_console(width, encoding)
    console.print(renderable, crop=False)
    return out.getvalue()


def by_printer(renderable: Any, width: int, encoding: str = "utf-8") -> str:
    console, out = plain_console(width, encoding)
    console_printer(console)(renderable)
    return out.getvalue()


def narration_renderables(path: Path, monkeypatch: pytest.MonkeyPatch, *options: str) -> list[Any]:
    """What ``gradtutor explain --plain`` hands its console for ``path``."""
    shown: list[Any] = []

    def recording(console: Console) -> Any:
        def show(renderable: Any) -> None:
            shown.append(renderable)
            console.print(renderable, crop=False)
        return show

    monkeypatch.setattr(narrate, "console_printer", recording)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["explain", "--plain", "--width", "100", *options, str(path)])
    monkeypatch.undo()
    return shown


@pytest.mark.parametrize("program, options", [
    ("lpe_two_layer_autograd.py", ()),
    ("inplace_ops_learner.py", ("--ascii",)),
    ("backward_twice_retain_graph.py", ("--lang", "zh")),
    ("hooks_visualizing_gradients.py", ("--graph", "full")),
])
def test_a_narration_prints_as_rich_prints_it(program: str, options: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    renderables = narration_renderables(CORPUS / program, monkeypatch, *options)
    assert len(renderables) > 5
    made_here = 0
    for renderable in renderables:
        for width in WIDTHS:
            assert by_printer(renderable, width) == by_rich(renderable, width), (program, width)
            made_here += plain_lines(renderable, width) is not None
    # (at the width the narration was made for, all of it is made without rich)
    assert all(plain_lines(r, 100) is not None for r in renderables)
    assert made_here > len(renderables)  # (and at some narrower ones)


def small_graph(label: str) -> Graph:
    nodes = (
        Node(id="t1", kind="leaf", label="x", names=("x",), requires_grad=True),
        Node(id="n2", kind="op", label=label, names=("y",), line=2, step=2, requires_grad=True),
    )
    return Graph(nodes, (Edge("t1", "n2"),))


CASES = {
    "prose": Indented(Wrapped("A gradient accumulates in .grad: every backward adds to it. " * 3)),
    "bullet": Indented(Bulleted("•", "x.grad accumulated: the second backward added to what the first left " * 2)),
    "a long word": Indented(Wrapped("see " + "x" * 90)),
    "verbatim": Group(Verbatim("out\n  two  \n\nlast", prefix="Out[1]: "), Verbatim("a" * 120)),
    "verbatim cropped": Indented(Verbatim("b" * 120)),
    "blank lines": Indented(Verbatim("  \n\nx  ")),
    "heading": OneLine(Text.assemble(("── line 7 ", "bold blue"), ("z = x @ w + b", "bold"))),
    "long heading": OneLine(Text.assemble(("── line 7 ", "bold blue"), ("z = " + " + ".join(["x"] * 60), "bold"))),
    "ascii heading": OneLine(Text("-- line 3 " + "y" * 200), ascii=True),
    "text": Indented(Text("x.grad: [1.0, 2.0] → [2.0, 4.0]", "magenta")),
    "wide text": Indented(Text("w.grad: " + "[0.5, 1.5] " * 20, "magenta")),
    "text lines": Text("one\ntwo"),
    "centred": Text("mid", justify="center"),
    "chinese": Indented(Wrapped("梯度在 .grad 中累加：每次 backward 都会加上新的梯度，而不是替换它。" * 2)),
    "drawing": Indented(GraphView(small_graph("MulBackward0"))),
    "wide drawing": Indented(GraphView(Drawing(("x --> " + "y" * 70, "z"), ((), ())))),
    "a table": Group(Indented(Wrapped("before")), Table("name", "value")),
    "nothing": Group(),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_each_kind_prints_as_rich_prints_it(case: str, encoding: str) -> None:
    for width in WIDTHS:
        assert by_printer(CASES[case], width, encoding) == by_rich(CASES[case], width, encoding), width


def test_what_rich_would_cut_or_wrap_is_left_to_rich() -> None:
    assert plain_lines(CASES["verbatim cropped"], 100) is None  # (cropped inside an indent)
    assert plain_lines(CASES["verbatim"], 100) is not None  # (not at the top: printed whole)
    assert plain_lines(CASES["wide text"], 100) is None
    assert plain_lines(CASES["text lines"], 100) is None
    assert plain_lines(CASES["centred"], 100) is None
    assert plain_lines(CASES["a table"], 100) is None
    assert plain_lines(CASES["wide drawing"], 60) is None
    assert plain_lines(CASES["drawing"], 60) is not None
    assert plain_lines(CASES["nothing"], 60) == []


def test_a_console_with_colour_prints_through_rich() -> None:
    out = io.StringIO()
    console = Console(file=out, width=40, color_system="standard", force_terminal=True)
    console_printer(console)(Indented(Text("x.grad", "magenta")))
    assert "\x1b[" in out.getvalue()


def test_the_closing_notes_wrap_as_the_narration_does(tmp_path: Path) -> None:
    """The note of steps not shown, at the end, and the one of functions not
    followed: wrapped as the narration's notes are, no line ending in a space."""
    path = tmp_path / "loop.py"
    path.write_text(
        "import torch\n"
        "def double(v):\n    return v * 2\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "for i in range(40):\n"
        "    n = double(i)\n"
        "    loss = (w * n).sum()\n"
        "    loss.backward()\n",
        encoding="utf-8",
    )
    for width in ("40", "61"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["explain", "--plain", "--width", width, str(path)])
        text = out.getvalue()
        flat = " ".join(text.split())
        assert "(in all, " in flat and "ran without being followed" in flat
        assert [line for line in text.splitlines() if line.endswith(" ")] == []
        assert max(len(line) for line in text.splitlines()) <= int(width)


def test_a_recording_console_records_what_is_printed_without_rich() -> None:
    console, out = plain_console(100)
    console.record = True
    console_printer(console)(CASES["prose"])
    assert out.getvalue() == by_rich(CASES["prose"], 100)
    assert console.export_text() == out.getvalue()


class ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_is_handled_as_rich_handles_it() -> None:
    handled: list[bool] = []

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            handled.append(True)

    console = PipeConsole(file=ClosedPipe(), width=100, color_system=None, no_color=True, highlight=False,
                          emoji=False, markup=False, soft_wrap=False)
    console_printer(console)(CASES["prose"])
    console.print(CASES["prose"], crop=False)
    assert handled == [True, True]  # (the printer's way, then rich's own)
