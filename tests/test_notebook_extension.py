"""The IPython extension, driven through IPython's own InteractiveShell in-process."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("IPython", reason="IPython is the notebook extra: pip install gradtutor[notebook]")

from IPython.core.displaypub import CapturingDisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from test_shell_e2e import SO_SETUP  # noqa: E402

# The Stack Overflow answer's program, one statement a cell: its second backward fails.
SO_CELLS = ["import torch", *SO_SETUP, SO_SETUP[-2], SO_SETUP[-1]]


class Run:
    """One cell's run: IPython's result, what it printed, and what it displayed."""

    def __init__(self, result: Any, stdout: str, stderr: str, displays: list[dict[str, str]]) -> None:
        self.result = result
        self.stdout = stdout
        self.stderr = stderr
        self.displays = displays

    @property
    def number(self) -> int:
        return int(self.result.execution_count)

    @property
    def plain(self) -> str:
        return "\n".join(d.get("text/plain", "") for d in self.displays)


@pytest.fixture
def ipython():
    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_cell("%reset -f", store_history=False)
    yield shell
    shell.run_cell("%unload_ext gradtutor", store_history=False)
    shell.run_cell("%reset -f", store_history=False)


def run(shell: Any, cell: str) -> Run:
    before = len(shell.display_pub.outputs)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        result = shell.run_cell(cell, store_history=True)
    displays = [o["data"] for o in shell.display_pub.outputs[before:]]
    return Run(result, out.getvalue(), err.getvalue(), displays)


def test_stack_overflow_cells_explain_the_freed_buffers_naming_the_cells(ipython):
    run(ipython, "%load_ext gradtutor")
    runs = [run(ipython, cell) for cell in SO_CELLS]
    z_cell, first_backward, second_backward = runs[5].number, runs[7].number, runs[9].number
    assert isinstance(runs[9].result.error_in_exec, RuntimeError)  # IPython showed the error itself
    text = " ".join(runs[9].plain.split())
    assert (
        f"In [{second_backward}] ran backward into the node created at In [{z_cell}] "
        f"(`z = torch.matmul(x, w)+b`), whose saved tensors were already freed by the backward "
        f"at In [{first_backward}] (`loss.backward()`)"
    ) in text
    assert "x @ w + b = z [✗ freed]" in runs[7].plain
    # Every narration is one display bundle with the HTML and the shell's text.
    for r in runs[1:]:
        for data in r.displays:
            assert set(data) == {"text/plain", "text/html"}
    html = runs[9].displays[0]["text/html"]
    assert '<pre class="gt-picture"' in html and "✗ freed</span>" in html
    assert f"In [{second_backward}] ran backward" in html


def test_text_is_the_shells_text(ipython, tmp_path):
    """The plain text of a cell's narration is what the gradtutor shell prints for the same input."""
    from gradtutor.environment import Environment, make_console
    from gradtutor.shell import print_reply
    from gradtutor.shell_session import ShellSession, ShellSettings

    run(ipython, "%load_ext gradtutor")
    session = ShellSession(ShellSettings(width=80))
    inputs = ["import torch", "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2\nz = y * 3", "z.backward()"]
    for cell in inputs:
        notebook = run(ipython, cell)
        env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        session.counter = notebook.number - 1  # the same In [N], so lines wrap alike
        print_reply(make_console(env, width=80, plain=True), session.execute(cell))
        assert notebook.plain.rstrip("\n") == env.stdout.getvalue().rstrip("\n"), cell


def test_off_on_and_one_cell(ipython):
    run(ipython, "%load_ext gradtutor")
    run(ipython, "import torch\nx = torch.tensor(2.0, requires_grad=True)")
    off = run(ipython, "%gradtutor off")
    assert "narration is off" in off.stdout and not off.displays
    quiet = run(ipython, "y = x * 3")
    assert not quiet.displays
    one = run(ipython, "%%gradtutor --lang zh\nz = y * 2\nz.backward()")
    assert "从 z 反向传播" in one.plain
    # y was computed while narration was off: its node is not this cell's, and its name is not new here.
    assert "y 指向" not in one.plain and "MulBackward0 = y [✗ 已释放]" in one.plain
    assert f"In [{one.number}] 第 3 行" in one.plain  # line 3 of the cell as the user sees it
    assert not run(ipython, "w = x * 4").displays
    on = run(ipython, "%gradtutor on --level ops")
    assert "narration is on (level ops" in on.stdout
    assert "v names a tensor" in run(ipython, "v = x * 5").plain


def test_the_notebook_behaves_as_without_the_extension(ipython):
    """Results, prints, display(), errors, magics and shell lines: the same with and without it."""
    cells = [
        "import torch\nx = torch.tensor(3.0, requires_grad=True)",
        "y = x ** 2\ny",
        "print('printed', y.item())",
        "from IPython.display import display\ndisplay({'a': 1})\n7 * 6",
        "!echo from-the-shell",
        "%time q = (x * 2).sum()",
        "y.backward()\nx.grad",
        "y.backward()",
        "undefined_name",
        "def f(t):\n    return t * 2\nf(x)",
        "_ + 1",
    ]

    def observe(shell: Any) -> list[tuple[Any, ...]]:
        seen = []
        for cell in cells:
            r = run(shell, cell)
            error = r.result.error_in_exec
            seen.append((
                repr(r.result.result), type(error).__name__ if error else None, str(error) if error else None,
                [d for d in r.displays if "text/html" not in d],  # the user's own displays
                re.sub(r"[\d.]+ ?(ns|us|µs|μs|ms|s)\b", "T", r.stdout.replace(f"[{r.number}]", "[N]")),  # %time
            ))
        return seen

    run(ipython, "%load_ext gradtutor")
    with_it = observe(ipython)
    run(ipython, "%unload_ext gradtutor")
    run(ipython, "%reset -f")
    without = observe(ipython)
    assert with_it == without


def test_an_internal_failure_turns_narration_off_for_that_cell_only(ipython, monkeypatch):
    from gradtutor.notebook.extension import CellNarration

    run(ipython, "%load_ext gradtutor")
    run(ipython, "import torch")

    def broken(self: Any, *args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(CellNarration, "_show", broken)
    r = run(ipython, "x = torch.tensor(1.0, requires_grad=True)\nx * 2")
    assert r.result.result.item() == 2.0 and r.result.error_in_exec is None
    assert r.stderr == "gradtutor: narration is off for this cell (internal error: RuntimeError: boom)\n"
    monkeypatch.undo()
    assert "y names a tensor" in run(ipython, "y = x * 3").plain


def test_bad_magic_input_says_what_is_wrong(ipython, tmp_path):
    run(ipython, "%load_ext gradtutor")
    bad = run(ipython, "%gradtutor --level deep")
    assert isinstance(bad.result.error_in_exec, Exception)
    assert "%gradtutor: argument --level: invalid choice: 'deep'" in str(bad.result.error_in_exec)
    wrong_ending = run(ipython, f"%gradtutor export {tmp_path / 'x.txt'}")
    assert "cannot tell the export format" in str(wrong_ending.result.error_in_exec)
    nowhere = run(ipython, "%gradtutor export /nonexistent-folder/x.md")
    assert "cannot write '/nonexistent-folder/x.md'" in str(nowhere.result.error_in_exec)


def test_export_from_the_notebook(ipython, tmp_path):
    run(ipython, "%load_ext gradtutor")
    for cell in SO_CELLS[:8]:
        run(ipython, cell)
    done = run(ipython, f"%gradtutor export {tmp_path / 'so.md'}")
    assert "wrote" in done.stdout
    text = (tmp_path / "so.md").read_text(encoding="utf-8")
    assert "x @ w + b = z [✗ freed]" in text and "```python\nloss.backward()\n```" in text


def test_the_core_and_the_shell_do_not_import_ipython():
    code = (
        "import sys\nimport gradtutor, gradtutor.cli, gradtutor.shell, gradtutor.explain, gradtutor.export\n"
        "import gradtutor.engine, gradtutor.transcript\n"
        "print('IPython' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
