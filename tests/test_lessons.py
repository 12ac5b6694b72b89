"""Lessons: the course passes --check, a script plays a lesson, a person takes one, progress is kept."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradtutor.cli import main
from gradtutor.environment import Environment
from gradtutor.environment import make_console
from gradtutor.lesson_catalog import Catalog
from gradtutor.lesson_checks import event_matches, run_check
from gradtutor.lesson_format import Check
from gradtutor.model import Event
from gradtutor.progress import ProgressStore
from gradtutor.shell import InteractiveShell
from gradtutor.shell_session import ShellSession, ShellSettings

ENTER, CTRL_D = "\r", "\x04"

TEACHER_LESSON = textwrap.dedent("""\
    id: teacher-retain
    title: {en: Keep the graph, zh: 保留计算图}
    summary: {en: A teacher's own lesson., zh: 老师自己写的一课。}
    level: beginner
    concepts: [retain-graph]
    steps:
      - text: {en: "Welcome.", zh: "欢迎。"}
      - run:
          code: |
            x = torch.tensor([2.0], requires_grad=True)
            y = x ** 2
          expect_events: [{kind: name-bound, name: y}]
      - quiz:
          question: {en: "Does backward keep the graph by default?", zh: "backward 默认保留计算图吗？"}
          choices:
            - text: {en: "Yes", zh: "是"}
              explain: {en: "No: it frees the saved tensors.", zh: "不：它会释放保存的张量。"}
            - text: {en: "No", zh: "否"}
              correct: true
              explain: {en: "Right: saved tensors are freed.", zh: "对：保存的张量被释放了。"}
      - task:
          prompt: {en: "Run backward twice so that x.grad is 8.", zh: "反向传播两次，让 x.grad 等于 8。"}
          hints:
            - {en: "The first backward needs retain_graph=True.", zh: "第一次 backward 需要 retain_graph=True。"}
          solution: |
            y.backward(retain_graph=True)
            y.backward()
          check:
            - event: {kind: backward, retain_graph: true}
            - expect: "x.grad.item() == 8"
            - tensor: {name: x, leaf: true, grad: [8.0]}
            - no_error: true
      - text: {en: "Done.", zh: "完成。"}
""")


@pytest.fixture
def teacher_dir(tmp_path):
    folder = tmp_path / "teacher"
    folder.mkdir()
    (folder / "01-teacher-retain.yaml").write_text(TEACHER_LESSON, encoding="utf-8")
    return folder


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_the_course_has_at_least_12_lessons_covering_the_issue_topics():
    ids = [e.lesson.id for e in Catalog().entries]
    assert len(ids) >= 12
    for topic in ("backward-frees", "recompute-graph", "retain-graph", "names-vs-tensors", "detach", "inplace",
                  "graph-growth", "rnn-hidden-state", "second-derivatives", "non-scalar-backward", "retain-grad"):
        assert any(topic in i for i in ids), topic


def test_every_bundled_lesson_passes_check_in_both_languages():
    code, out = cli("lesson", "--check")
    lines = out.strip().splitlines()
    assert code == 0, out
    assert all(line.startswith("ok ") and line.endswith("en, zh)") for line in lines[:-1])
    assert lines[-1] == f"{len(lines) - 1} passed, 0 failed"


def test_check_reports_a_run_step_whose_events_do_not_happen(tmp_path):
    broken = TEACHER_LESSON.replace("[{kind: name-bound, name: y}]", "[{kind: name-bound, name: nope}]")
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    code, out = cli("lesson", "--check", str(path))
    assert code == 1
    assert f"FAIL [en] {path}:8: expected event {{'kind': 'name-bound', 'name': 'nope'}} did not happen" in out


def test_check_reports_a_solution_that_does_not_pass(tmp_path):
    broken = TEACHER_LESSON.replace("y.backward(retain_graph=True)\n        y.backward()\n", "y.backward(retain_graph=True)\n")
    assert broken != TEACHER_LESSON
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    code, out = cli("lesson", "--check", str(path))
    assert code == 1 and "the task's solution does not pass" in out and "x.grad.item() == 8" in out


def test_check_names_file_and_line_of_a_malformed_lesson(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(TEACHER_LESSON.replace("  - text: {en: \"Done.\", zh: \"完成。\"}", "  - video: {en: a, zh: b}"))
    code, out = cli("lesson", "--check", str(path))
    assert code == 1 and f"FAIL {path}:33: unknown step kind 'video'" in out


def test_scripted_lesson_prints_the_whole_lesson(capsys, teacher_dir):
    code, out = cli("lesson", "teacher-retain", "--script", "--plain", "--lessons-dir", str(teacher_dir))
    assert code == 0
    assert "Lesson 14: Keep the graph" in out or "Keep the graph" in out
    assert f"This lesson comes from {teacher_dir / '01-teacher-retain.yaml'}" in " ".join(out.split())
    assert "> 2\nRight." in out
    assert "Hint 1/1: The first backward needs retain_graph=True." in out
    assert "✓ Task complete." in out and out.rstrip().endswith("Lesson complete: Keep the graph. :lesson lists the others.")


def test_scripted_lesson_in_chinese(teacher_dir):
    code, out = cli("lesson", "teacher-retain", "--script", "--plain", "--lang", "zh", "--lessons-dir", str(teacher_dir))
    assert code == 0 and "保留计算图" in out and "答对了。" in out and "✓ 任务完成。" in out


def test_lessons_lists_the_course_with_progress(tmp_path, monkeypatch, teacher_dir):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    store = ProgressStore(str(tmp_path / "xdg" / "gradtutor"))
    store.set_position("backward-frees", 3)
    store.set_position("grad-fn-graph", 7, completed=True)
    store.close()
    code, out = cli("lessons", "--plain", "--lessons-dir", str(teacher_dir))
    assert code == 0
    assert "grad-fn-graph" in out and "done" in out.split("grad-fn-graph")[1].split("\n")[0]
    assert "at step 4/7" in out.split("backward-frees")[1].split("\n")[0]
    assert "teacher-retain" in out and "not started" in out.split("teacher-retain")[1].split("\n")[0]


def test_unknown_lesson_is_a_usage_error(capsys):
    assert main(["lesson", "no-such-lesson"]) == 2
    assert "no lesson named 'no-such-lesson'" in capsys.readouterr().err


# ---- a person in the shell (in-process) ---------------------------------------------
def drive(keys: str, tmp_path: Path, teacher_dir: Path, language: str = "en"):
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), width=90,
                      data_dir=str(tmp_path / "data"))
    settings = ShellSettings(language=language, width=90, data_dir=env.data_dir, lessons_dirs=(str(teacher_dir),))
    session = ShellSession(settings)
    with create_pipe_input() as inp:
        with create_app_session(input=inp, output=DummyOutput()):
            shell = InteractiveShell(session, make_console(env, width=90, plain=True), env, ":lesson teacher-retain")
            inp.send_text(keys)
            inp.close()
            code = shell.run()
    return code, env.stdout.getvalue(), session


def test_a_task_wrong_then_hint_then_right_then_the_lesson_ends(tmp_path, teacher_dir):
    keys = ENTER.join(["", "", "1", "2", "", "y.backward()", ":hint", "x.grad = None",
                       "y = x ** 2", "y.backward(retain_graph=True)", "y.backward()", ""]) + ENTER + CTRL_D
    code, out, session = drive(keys, tmp_path, teacher_dir)
    assert "Not quite." in out and "Try again" in out and "Right: saved tensors are freed." in out
    # Which check is not met, after inputs that did something: not after every line.
    assert "Not yet: no backward (retain_graph=True) yet. :hint helps." in out
    assert "Not yet: x.grad.item() == 8 is not true yet. :hint helps." in out
    assert "Hint 1/1: The first backward needs retain_graph=True." in out
    assert "✓ Task complete." in out and "Lesson complete: Keep the graph." in out
    store = ProgressStore(str(tmp_path / "data"))
    assert store.lesson("teacher-retain").completed
    task = store.step("teacher-retain", 3)
    assert task.done and task.hints == 1 and task.attempts >= 4


def test_quit_then_resume_at_the_same_step_with_names_rebuilt(tmp_path, teacher_dir):
    code, out, _ = drive(ENTER.join(["", "", "2", "", ":quit"]) + ENTER + CTRL_D, tmp_path, teacher_dir)
    assert "You left the lesson at step 4. :lesson teacher-retain resumes there." in out
    code, out, session = drive(":next" + ENTER + CTRL_D, tmp_path, teacher_dir)
    assert "Resuming at step 4" in out and "Run backward twice so that x.grad is 8." in out
    assert "Finish the task first, or :skip." in out
    assert "y" in session.namespace  # the run step's code ran again


def test_restart_starts_over_with_a_fresh_namespace(tmp_path, teacher_dir):
    _, out, session = drive(ENTER.join(["", "", "2", "", ":restart"]) + ENTER + CTRL_D, tmp_path, teacher_dir)
    assert "Lesson restarted" in out and "Step 1/5" in out.split("Lesson restarted")[1]
    assert ProgressStore(str(tmp_path / "data")).lesson("teacher-retain").step == 0


def test_solution_command_runs_the_solution(tmp_path, teacher_dir):
    _, out, session = drive(ENTER.join(["", "", "2", "", ":solution"]) + ENTER + CTRL_D, tmp_path, teacher_dir)
    assert "One solution:" in out and "✓ Task complete." in out
    assert session.namespace["x"].grad.item() == 8.0


# ---- the progress database --------------------------------------------------------------
def test_progress_database_is_private(tmp_path):
    store = ProgressStore(str(tmp_path / "data"))
    store.set_position("a", 1)
    assert oct(os.stat(tmp_path / "data").st_mode & 0o777) == "0o700"
    assert oct(os.stat(store.path).st_mode & 0o777) == "0o600"


_WRITER = r"""
import sys
from gradtutor.progress import ProgressStore
store = ProgressStore(sys.argv[1])
for i in range(int(sys.argv[3])):
    store.add_attempt(sys.argv[2], 0)
    store.set_position(sys.argv[2], i)
print("done")
"""


def test_two_shells_writing_at_once_lose_nothing(tmp_path):
    folder = str(tmp_path / "data")
    ProgressStore(folder).close()
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, folder, name, "150"], stdout=subprocess.PIPE, text=True)
        for name in ("first", "second")
    ]
    assert [w.communicate(timeout=120)[0].strip() for w in writers] == ["done", "done"]
    store = ProgressStore(folder)
    assert store.step("first", 0).attempts == 150 and store.step("second", 0).attempts == 150
    assert store.lesson("first").step == 149 and store.lesson("second").step == 149


_KILLED = r"""
import sys, os, signal
from gradtutor.progress import ProgressStore
store = ProgressStore(sys.argv[1])
store.set_position("backward-frees", 4)
store.add_hint("backward-frees", 4)
print("recorded", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_process_keeps_what_it_recorded(tmp_path):
    folder = str(tmp_path / "data")
    done = subprocess.run([sys.executable, "-c", _KILLED, folder], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL and done.stdout.strip() == "recorded"
    store = ProgressStore(folder)
    assert store.notice is None
    assert store.lesson("backward-frees").step == 4 and store.step("backward-frees", 4).hints == 1


def test_a_corrupt_database_is_set_aside_and_a_fresh_one_started(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "progress.sqlite3").write_bytes(b"this is not sqlite" * 64)
    store = ProgressStore(str(folder))
    assert store.notice and "could not be read" in store.notice and "moved to" in store.notice
    assert store.lesson("x").step == 0
    store.set_position("x", 2)
    assert store.lesson("x").step == 2
    assert any(name.startswith("progress.sqlite3.damaged-") for name in os.listdir(folder))


def test_the_shell_says_when_progress_was_set_aside(tmp_path, teacher_dir):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "progress.sqlite3").write_bytes(b"garbage" * 100)
    _, out, _ = drive(CTRL_D, tmp_path, teacher_dir)
    out = " ".join(out.split())
    assert "could not be read" in out and "a new one was started" in out


# ---- checks -------------------------------------------------------------------------------
def test_event_matching_is_a_subset_match():
    event = Event.make("backward", 3, root="y", retain_graph=True, freed=0)
    assert event_matches({"kind": "backward", "retain_graph": True}, event)
    assert not event_matches({"kind": "backward", "retain_graph": False}, event)
    assert not event_matches({"kind": "error"}, event)
    assert not event_matches({"kind": "backward", "freed": False}, event)  # 0 is not False


def test_checks_on_tensors_and_expressions():
    import torch

    x = torch.tensor([2.0], requires_grad=True)
    (x ** 2).sum().backward()
    ns = {"x": x, "y": x * 2}
    assert run_check(Check("tensor", {"name": "x", "leaf": True, "grad": [4.0]}), ns, [], []).passed
    assert run_check(Check("tensor", {"name": "x", "grad": 4.0}), ns, [], []).passed
    failed = run_check(Check("tensor", {"name": "y", "leaf": True}), ns, [], [])
    assert not failed.passed and failed.reason == "y: leaf is False, expected True"
    assert run_check(Check("tensor", {"name": "y", "grad": None}), ns, [], []).passed
    assert not run_check(Check("tensor", {"name": "nope"}), ns, [], []).passed
    assert run_check(Check("expect", "x.grad.item() == 4"), ns, [], []).passed
    broken = run_check(Check("expect", "x.nothing"), ns, [], [])
    assert not broken.passed and "AttributeError" in broken.reason
    error = Event.make("error", 1, cause="other")
    assert not run_check(Check("no_error", True), ns, [error], [error]).passed
    assert run_check(Check("no_error", True), ns, [error], []).passed


PREDICT_LESSON = textwrap.dedent("""\
    id: teacher-predict
    title: {en: Predict, zh: 预测}
    summary: {en: A prediction., zh: 一次预测。}
    level: beginner
    concepts: [retain-graph]
    steps:
      - predict:
          question: {en: "What does x.grad hold after this?", zh: "之后 x.grad 是多少？"}
          code: |
            x = torch.tensor([2.0], requires_grad=True)
            (x ** 2).sum().backward()
          choices:
            - text: {en: "None", zh: "None"}
              explain: {en: "backward fills the .grad of leaves.", zh: "backward 会填写叶子的 .grad。"}
            - text: {en: "2", zh: "2"}
              explain: {en: "That is x itself, not the derivative.", zh: "那是 x 本身，不是导数。"}
            - text: {en: "4", zh: "4"}
              correct: true
              explain: {en: "d(x²)/dx = 2x = 4.", zh: "d(x²)/dx = 2x = 4。"}
      - text: {en: "Done.", zh: "完成。"}
""")


@pytest.mark.parametrize("kind", ["quiz", "predict"])
def test_a_wrong_answer_gets_its_reason_and_a_retry_then_the_answer(tmp_path, teacher_dir, kind):
    """As swirl does, for quiz and predict alike: a wrong answer says why and
    asks again; after the second wrong answer the right one is named and
    explained, and the lesson goes on."""
    if kind == "quiz":
        keys = ["", "", "1", "1", ""]
        lesson = ":lesson teacher-retain"
        reasons = ["No: it frees the saved tensors."]
        answer, explained = "The answer: No", "Right: saved tensors are freed."
    else:
        (teacher_dir / "02-teacher-predict.yaml").write_text(PREDICT_LESSON, encoding="utf-8")
        keys = ["1", "2", ""]
        lesson = ":lesson teacher-predict"
        reasons = ["backward fills the .grad of leaves.", "That is x itself, not the derivative."]
        answer, explained = "The answer: 4", "d(x²)/dx = 2x = 4."
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(), width=90,
                      data_dir=str(tmp_path / "data"))
    settings = ShellSettings(width=90, data_dir=env.data_dir, lessons_dirs=(str(teacher_dir),))
    session = ShellSession(settings)
    with create_pipe_input() as inp:
        with create_app_session(input=inp, output=DummyOutput()):
            shell = InteractiveShell(session, make_console(env, width=90, plain=True), env, lesson)
            inp.send_text(ENTER.join(keys) + ENTER + CTRL_D)
            inp.close()
            shell.run()
    out = env.stdout.getvalue()
    assert out.count("Not quite.") == 2 and out.count("Try again") == 1
    for reason in reasons:
        assert reason in out
    assert answer in out and explained in out
    assert out.index("Try again") < out.index(answer)
    if kind == "predict":
        assert out.index(answer) < out.index("(x ** 2).sum().backward()", out.index(answer))  # then the code runs
        assert "Done." in out
    else:
        assert "Run backward twice so that x.grad is 8." in out  # the lesson went on to the task


def _text_of(renderables, width=100) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None)
    for renderable in renderables:
        console.print(renderable)
    return buf.getvalue()


def test_each_lesson_starts_in_a_fresh_namespace_and_the_persons_names_come_back(tmp_path):
    from gradtutor.lesson_runner import run_script

    session = ShellSession(ShellSettings(width=100, data_dir=str(tmp_path)))
    session.execute("mine = torch.ones(2, requires_grad=True)")
    mine = session.namespace["mine"]
    catalog = Catalog()
    assert run_script(catalog.find("backward-frees"), session, None) == []
    assert session.namespace["mine"] is mine and "loss" not in session.namespace  # back after the lesson
    said = _text_of(session.execute(":lesson names-vs-tensors").renderables)
    assert "Your names (mine) are put aside" in said and "mine" not in session.namespace
    # What the first lesson left behind is not there: no rebinding, no old w, b, z, loss drawn.
    assert "now names a different tensor" not in said and "(old)" not in said
    assert not any(name in session.namespace for name in ("w", "b", "z", "loss"))
    left = _text_of(session.execute(":quit").renderables)
    assert "Your names are back: mine." in left and session.namespace["mine"] is mine


def test_resuming_rebuilds_the_names_and_shows_the_picture_the_step_talks_about(tmp_path):
    """Quit where the text says "Look at the graph", come back: the names are
    rebuilt, the graph is drawn, and its places are the session's In [N]."""
    from gradtutor.progress import ProgressStore

    entry = Catalog().find("backward-frees")
    index = next(i for i, s in enumerate(entry.lesson.steps) if s.kind == "text" and "Look at the graph" in s.text["en"])
    store = ProgressStore(str(tmp_path))
    store.set_position("backward-frees", index)
    session = ShellSession(ShellSettings(width=100, data_dir=str(tmp_path)))
    said = _text_of(session.execute(":lesson backward-frees").renderables)
    assert f"Resuming at step {index + 1}" in said and "Look at the graph" in said
    picture = said.split("Resuming at step")[1].split("Look at the graph")[0]
    assert "BCE(z, y) = loss" in picture and "x @ w + b = z [✗ freed]" in picture
    assert "In [1] line 8" in picture and not re.search(r"(?<!\] )\bline \d", picture)  # never a bare "line 8"
    assert "loss" in session.namespace


def test_a_task_says_which_check_is_not_met_and_only_after_an_input_that_did_something(tmp_path, teacher_dir):
    keys = ["", "", "2", "", "y.backward(retain_graph=True)", "print('thinking')", "1 + 1", "y.backward()"]
    _, out, _ = drive(ENTER.join(keys) + ENTER + CTRL_D, tmp_path, teacher_dir)
    assert out.count("Not yet:") == 1  # print and 1 + 1 changed nothing: nothing said
    assert "Not yet: x.grad.item() == 8 is not true yet." in out and "✓ Task complete." in out
    _, zh, _ = drive(ENTER.join(["", "", "2", "", "y.backward(retain_graph=True)"]) + ENTER + CTRL_D,
                     tmp_path / "zh", teacher_dir, language="zh")
    assert "还没有完成：x.grad.item() == 8 还不成立。" in zh


def test_a_tensor_check_says_what_the_gradient_should_be_and_is():
    from gradtutor.lesson_checks import run_check
    from gradtutor.messages import message

    import torch

    x = torch.tensor([2.0], requires_grad=True)
    (x * 2).sum().backward()
    result = run_check(Check("tensor", {"name": "x", "grad": [8.0]}), {"x": x}, [], [])
    assert not result.passed
    assert message("en", result.say[0], **result.say[1]) == "x.grad should be 8; it is 2"
    assert message("zh", result.say[0], **result.say[1]) == "x.grad 应为 8，现在是 2"


def test_check_reports_a_text_that_quotes_a_drawing_the_picture_does_not_show(tmp_path):
    """lesson --check: a drawing a text quotes ("y (old)") must be in the
    picture at that step; a lesson that says so falsely fails, at its line."""
    broken = TEACHER_LESSON.replace('- text: {en: "Done.", zh: "完成。"}',
                                    '- text: {en: "The picture shows `y (old)`.", zh: "图中有 `y (old)`。"}')
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    code, out = cli("lesson", "--check", str(path))
    assert code == 1
    assert f"{path}:33: the text quotes the drawing 'y (old)', which the picture at this step does not show" in out
    fine = TEACHER_LESSON.replace('- text: {en: "Done.", zh: "完成。"}',
                                  '- text: {en: "The picture shows `x [grad]`.", zh: "图中有 `x [有梯度]`。"}')
    path.write_text(fine)
    code, out = cli("lesson", "--check", str(path))
    assert code == 0, out


QUIZ_CODE_LESSON = textwrap.dedent("""\
    id: teacher-format
    title: {en: Format, zh: 格式}
    summary: {en: The format's additions., zh: 格式的新增内容。}
    level: beginner
    concepts: [retain-graph]
    steps:
      - quiz:
          question: {en: "What does this print?", zh: "这会打印什么？"}
          code: |
            w = torch.ones(2, requires_grad=True)
            print(w.is_leaf)
          choices:
            - text: {en: "True", zh: "True"}
              correct: true
              explain: {en: "Made by the user: a leaf.", zh: "由用户创建：叶子张量。"}
            - text: {en: "False", zh: "False"}
              explain: {en: "It has no grad_fn.", zh: "它没有 grad_fn。"}
      - task:
          prompt: {en: "Compute y = w * 2 without any backward.", zh: "计算 y = w * 2，不做反向传播。"}
          solution: |
            w = torch.ones(2, requires_grad=True)
            y = w * 2
          check:
            - tensor: {name: y, grad_fn: true}
            - no_event: {kind: backward}
""")


def test_a_quiz_shows_code_it_does_not_run_and_a_task_can_forbid_an_event(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "01-teacher-format.yaml").write_text(QUIZ_CODE_LESSON, encoding="utf-8")
    code, out = cli("lesson", "--check", str(folder / "01-teacher-format.yaml"))
    assert code == 0, out
    session = ShellSession(ShellSettings(width=100, data_dir=str(tmp_path), lessons_dirs=(str(folder),)))
    said = _text_of(session.execute(":lesson teacher-format").renderables)
    assert "print(w.is_leaf)" in said and "w" not in session.namespace  # shown, not run
    session.execute("1")
    session.execute("")  # on to the task
    session.execute("w = torch.ones(2, requires_grad=True)")
    said = _text_of(session.execute("y = w * 2\ny.sum().backward()").renderables)
    assert "Not yet: there was a backward, which the task must do without." in said
    session.execute(":restart")
    assert Catalog((str(folder),)).find("teacher-format").lesson.steps[1].checks[1].kind == "no_event"


def test_check_reports_every_mistake_of_a_file_in_one_run(tmp_path):
    """Each at the line of the field that is wrong."""
    broken = (TEACHER_LESSON.replace("level: beginner", "level: expert")
              .replace('- text: {en: "Welcome.", zh: "欢迎。"}', '- text: {en: "Welcome."}')
              .replace("        - no_error: true\n", "        - output: '8'\n"))
    path = tmp_path / "broken.yaml"
    path.write_text(broken)
    code, out = cli("lesson", "--check", str(path))
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert code == 1 and len(fails) == 3, out
    assert fails[0].startswith(f"FAIL {path}:4: field 'level'")
    assert fails[1].startswith(f"FAIL {path}:7: ")
    line = broken.splitlines().index("        - output: '8'") + 1
    assert fails[2].startswith(f"FAIL {path}:{line}: unknown check 'output'")


def test_a_hint_about_a_check_already_met_is_not_given(tmp_path):
    """A hint may name the check it helps with; once that check passes, the
    hint would tell the learner to do what they did, so it is passed over."""
    lesson = TEACHER_LESSON.replace(
        '- {en: "The first backward needs retain_graph=True.", zh: "第一次 backward 需要 retain_graph=True。"}',
        '- {en: "The first backward needs retain_graph=True.", zh: "第一次 backward 需要 retain_graph=True。", check: 1}')
    folder = tmp_path / "teacher"
    folder.mkdir()
    (folder / "01-teacher-retain.yaml").write_text(lesson, encoding="utf-8")
    assert cli("lesson", "--check", str(folder))[0] == 0
    keys = ["", "", "2", "", "y.backward(retain_graph=True)", ":hint"]
    _, out, _ = drive(ENTER.join(keys) + ENTER + CTRL_D, tmp_path, folder)
    assert "Hint 1/1" not in out
    assert "No more hints that fit what is left: x.grad.item() == 8 is not true yet." in out
    _, fresh, _ = drive(ENTER.join(["", "", "2", "", ":hint"]) + ENTER + CTRL_D, tmp_path / "other", folder)
    assert "Hint 1/1: The first backward needs retain_graph=True." in fresh  # not done yet: given
    bad = lesson.replace("check: 1}", "check: 9}")
    (folder / "01-teacher-retain.yaml").write_text(bad, encoding="utf-8")
    code, out = cli("lesson", "--check", str(folder))
    assert code == 1 and "hint: 'check' is the number of one of the task's 4 checks, from 1" in out
