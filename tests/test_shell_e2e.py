"""The shell end to end, in a pseudo-terminal, as a person types."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pexpect
import pytest

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\r")
TIMEOUT = 60


def wait_until(condition, limit: float = TIMEOUT) -> None:
    """Poll a state (not a duration): returns as soon as ``condition()`` holds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def as_from_a_terminal() -> None:
    """Start the child with Ctrl-C's signal as a terminal's shell gives it. The
    suite may run with SIGINT ignored (a shell without job control ignores it
    in its background jobs: ``bash .ci/run &``), and an ignored signal is
    inherited: the shell under test would never see the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """A gradtutor shell in a pty. ``run(line)`` types a line and returns what
    appeared before the next numbered prompt, ANSI codes removed."""

    def __init__(self, tmp_path: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
        env.update(PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color", XDG_DATA_HOME=str(tmp_path), LANG="C.UTF-8")
        self.child = pexpect.spawn(
            sys.executable, ["-m", "gradtutor"], env=env, encoding="utf-8", dimensions=(50, 110), timeout=TIMEOUT,
            preexec_fn=as_from_a_terminal,
        )
        self.n = 1
        self.child.expect(r"In \[1\]:")
        self.welcome = strip_ansi(self.child.before)

    def run(self, line: str) -> str:
        self.child.sendline(line)
        self.n += 1
        self.child.expect(rf"In \[{self.n}\]:")
        return strip_ansi(self.child.before)

    def close(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    if term.child.isalive():
        term.child.terminate(force=True)


SO_SETUP = [
    "x = torch.ones(5)  # input tensor",
    "y = torch.zeros(3)  # expected output",
    "w = torch.randn(5, 3, requires_grad=True)",
    "b = torch.randn(3, requires_grad=True)",
    "z = torch.matmul(x, w)+b",
    "loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)",
    "loss.backward()",
]


def test_first_scenario_draws_the_graph_then_explains_the_second_backward(terminal):
    assert "gradtutor" in terminal.welcome and ":help" in terminal.welcome
    outputs = [terminal.run(line) for line in SO_SETUP]
    assert "x ────▶ x @ w + b = z ──▶ BCE(z, y) = loss" in outputs[5]
    assert "2 nodes freed their saved tensors" in outputs[6]
    rebind = terminal.run("loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)")
    assert "loss now names a different tensor" in rebind
    error = " ".join(terminal.run("loss.backward()").split())
    assert "RuntimeError: Trying to backward through the graph a second time" in error
    # The node created by the matmul statement (In [5]), freed by the first backward (In [7]).
    assert "created at In [5] (`z = torch.matmul(x, w)+b`)" in error
    assert "freed by the backward at In [7]" in error
    assert "retain_graph=True" in error
    assert terminal.close() == 0


def test_second_scenario_recomputes_without_error_and_gradients_double(terminal):
    for line in SO_SETUP:
        terminal.run(line)
    terminal.run("first = w.grad.clone()")
    terminal.run("z = torch.matmul(x, w)+b")
    terminal.run("loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)")
    out = terminal.run("loss.backward()")
    assert "Traceback" not in out
    assert "w.grad was added to, not replaced" in out
    assert "Out[12]: True" in terminal.run("torch.allclose(w.grad, 2 * first)")
    terminal.close()


def test_forum_whatif_shows_x_rebound_with_the_old_leaf_in_the_graph(terminal):
    terminal.run("x = torch.tensor(42., requires_grad=True)")
    out = terminal.run("x = x ** 2  # re-use the same variable")
    assert "x moved on, but the old tensor is still in the graph" in out
    assert "x (old) [leaf] ──▶ x ** 2 = x" in out
    for line in ["x3 = x ** 3", "f = x + x3", "x.retain_grad()", "f.backward(retain_graph=False)"]:
        terminal.run(line)
    assert "Out[7]: tensor(9335089.)" in terminal.run("x.grad")
    terminal.close()


def test_ctrl_c_interrupts_an_infinite_loop_and_the_prompt_works(terminal):
    terminal.run("kept = 41")
    # One input of two statements: the print tells us the code is running (and
    # the terminal is back in its normal mode, where Ctrl-C sends SIGINT).
    terminal.child.send("print('looping')\x1b\r" + "while True:\r" + "pass\r" + "\r")
    # The program's own line, not the echo of the input ('looping' in quotes).
    terminal.child.expect_exact("looping\r\n")
    # Ctrl-C becomes SIGINT once the terminal has left prompt_toolkit's raw
    # mode, which can be a moment after the code starts: wait for that state.
    wait_until(lambda: termios.tcgetattr(terminal.child.child_fd)[3] & termios.ISIG)
    terminal.child.sendintr()
    terminal.n += 1
    terminal.child.expect(rf"In \[{terminal.n}\]:")
    assert "KeyboardInterrupt" in strip_ansi(terminal.child.before)
    assert "Out[3]: 42" in terminal.run("kept + 1")
    assert terminal.close() == 0


def _explanations(text: str) -> list[str]:
    """The event titles and explanation paragraphs, whitespace folded, in order."""
    found, current = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("• "):
            current = [stripped]
            found.append(current)
        elif current is not None and line.startswith("     ") and stripped and not stripped.startswith("["):
            current.append(stripped)
        else:
            current = None
    return [" ".join(" ".join(parts).split()) for parts in found]


def test_a_piped_session_gives_the_same_explanations_as_the_interactive_one(terminal, tmp_path):
    lines = SO_SETUP + ["loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)", "loss.backward()"]
    interactive = "".join(terminal.run(line) for line in lines)
    terminal.close()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env.update(XDG_DATA_HOME=str(tmp_path), COLUMNS="110")
    piped = subprocess.run(
        [sys.executable, "-m", "gradtutor"], input="\n".join(lines) + "\n", capture_output=True, text=True, env=env,
        timeout=TIMEOUT,
    )
    assert piped.returncode == 0
    assert "\x1b[" not in piped.stdout  # not a terminal: plain text
    want = _explanations(interactive)
    assert len(want) == 10 and want[-2].startswith("• Backward through a graph whose saved tensors were freed")
    assert want[-1].startswith("• b.grad was added to before the backward failed")  # (b's node runs before the freed one)
    assert _explanations(piped.stdout) == want


def test_no_graph_option(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env.update(XDG_DATA_HOME=str(tmp_path))
    source = "x = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n"
    with_graph = subprocess.run([sys.executable, "-m", "gradtutor"], input=source, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    without = subprocess.run([sys.executable, "-m", "gradtutor", "--no-graph"], input=source, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert "x [leaf] ──▶" in with_graph.stdout
    assert "──▶" not in without.stdout and "• y names a tensor" in without.stdout


def test_a_lesson_in_the_terminal_wrong_hint_right_quit_resume(tmp_path):
    teacher = tmp_path / "teacher"
    teacher.mkdir()
    from test_lessons import TEACHER_LESSON

    (teacher / "01-teacher-retain.yaml").write_text(TEACHER_LESSON, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    env.update(PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color", XDG_DATA_HOME=str(tmp_path / "xdg"),
               GRADTUTOR_LESSONS=str(teacher))

    def start() -> pexpect.spawn:
        child = pexpect.spawn(sys.executable, ["-m", "gradtutor", "lesson", "teacher-retain"], env=env,
                              encoding="utf-8", dimensions=(50, 110), timeout=TIMEOUT)
        return child

    child = start()
    child.expect_exact("Welcome.")
    child.expect(r"In \[\d+\]:")
    for keys, wait in [("", "Step 2/5"), ("", "Does backward keep the graph"), ("1", "Not quite."),
                       ("2", "Right: saved tensors are freed."), ("", "Run backward twice so that x.grad is 8."),
                       ("y.backward()", "Not yet"), (":hint", "Hint 1/1"), (":quit", "You left the lesson at step 4")]:
        child.sendline(keys)
        child.expect_exact(wait)
        child.expect(r"In \[\d+\]:")  # the next prompt is up before the next keys
    # (the prompt is up, so the terminal is in raw mode: Ctrl-D is a key, not the tty's EOF)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)

    child = start()
    child.expect_exact("Resuming at step 4")
    child.expect(r"In \[\d+\]:")
    for keys, wait in [("x.grad = None", "Not yet"), ("y = x ** 2", "Not yet"),
                       ("y.backward(retain_graph=True)", "Not yet"), ("y.backward()", "✓ Task complete.")]:
        child.sendline(keys)
        child.expect_exact(wait)
        child.expect(r"In \[\d+\]:")
    child.sendline("")
    child.expect_exact("Lesson complete: Keep the graph.")
    child.expect(r"In \[\d+\]:")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_in_an_input_of_several_statements_output_comes_under_the_statement_that_printed_it(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "NO_COLOR": "1"}
    source = "import torch\nx = torch.ones(2, requires_grad=True)\nfor i in range(2):\n    y = x * i\n    print('value', i)\n\n"
    done = subprocess.run([sys.executable, "-m", "gradtutor"], input=source, capture_output=True, text=True,
                          env=env, timeout=TIMEOUT)
    lines = done.stdout.splitlines()
    at = lines.index
    assert at("── line 3 print('value', i)") + 1 == at("value 0")
    assert at("── line 3, run 2 print('value', i)") + 1 == at("value 1")


def test_pictures_follow_the_terminal_when_it_is_resized(terminal):
    terminal.run("a = torch.ones(2, requires_grad=True)")
    wide = terminal.run("loss_of_a_long_name = (a * 2 + a.exp()).sum()")
    assert "a [leaf] ──▶ (a * 2 + a.exp()).sum() = loss_of_a_long_name" in wide
    terminal.child.setwinsize(50, 40)
    narrow = terminal.run("other_long_name = (a * 3 + a.exp()).sum()")
    assert "fits in 37 columns" in " ".join(narrow.split())  # the note says the real width
    lines = narrow.splitlines()
    # What the tutor printed: from its first words on (the lines before are
    # prompt_toolkit's echo of the input, redrawn at the new width).
    said = lines[next(i for i, line in enumerate(lines) if "other_long_name names a tensor" in line):]
    assert any("◀" in line for line in said) and all(len(line) <= 40 for line in said), narrow
