"""Everything the tutor says in Chinese is Chinese, set as Chinese is set.

Every message, legend entry, marker and explanation template is checked, and
then what a learner reads: the whole course played with ``--script``, and
``explain`` on the test programs. An English word left in the Chinese output
fails, unless it is code, a name from the program, or quoted from PyTorch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
from pathlib import Path

import pytest

from gradtutor.cli import main
from gradtutor.explanations import book_for
from gradtutor.lesson_catalog import Catalog
from gradtutor.messages import MESSAGES
from gradtutor.model import SAVED_FREED, SAVED_MODIFIED, SAVED_NONE
from gradtutor.render import render_graph
from gradtutor.render.words import MARKS, WORDS
from gradtutor.typeset import tidy

from language_check import english_left, identifiers, typography_left
from render_fixtures import graph, leaf, stmt

PROGRAMS = Path(__file__).parent / "programs"
_FIELD = re.compile(r"\{[^{}]*\}")


def _templates() -> list[tuple[str, str]]:
    """(where, Chinese template) for every table entry, fields blanked."""
    found = [(f"messages[{k}]", v) for k, v in MESSAGES["zh"].items()]
    found += [(f"words[{k}]", v) for k, v in WORDS["zh"].items()]
    found += [(f"marks[{k}]", v) for k, v in MARKS["zh"].items()]
    for key, entry in book_for("zh").entries.items():
        found += [(f"explanations[{key}].{part}", text) for part, text in entry.items()]
    return [(where, _FIELD.sub(" ", text)) for where, text in found]


def test_every_chinese_message_marker_and_explanation_is_chinese():
    assert len(_templates()) > 150
    left = [f"{where}: {problem}" for where, text in _templates() for problem in english_left(text)]
    assert left == []


def test_the_checker_finds_english_and_lets_code_names_and_quotes_pass():
    found = english_left("它保存的张量已被释放 (freed by a backward)")
    assert [problem.split(":")[0] for problem in found] == ["freed", "by", "backward"]
    assert english_left("对 x.grad 调用 backward()，或用 `y.detach()`，retain_graph=True") == []
    assert english_left('PyTorch 报错 "Trying to backward through the graph a second time"') == []
    assert english_left("loss 的值", allowed={"loss"}) == []
    assert english_left("随时间反向传播（truncated BPTT）") == []


def test_chinese_text_is_spaced_as_chinese_typography_sets_it():
    assert tidy("它保存的张量已被 第 3 行 的反向传播释放", "zh") == "它保存的张量已被第 3 行的反向传播释放"
    assert tidy("已被 In [1] 第 8 行 的反向传播释放", "zh") == "已被 In [1] 第 8 行的反向传播释放"
    assert tidy("进入了In [1] 第 6 行（ `z = a  *  b` ）创建", "zh") == "进入了 In [1] 第 6 行（`z = a  *  b`）创建"
    assert tidy("看`x.grad`的值", "zh") == "看 `x.grad` 的值"
    assert tidy("keep  two spaces: In [1] line 8", "en") == "keep  two spaces: In [1] line 8"
    assert typography_left("已被 第 3 行 的反向传播") and typography_left("进入了In [1]")
    assert typography_left("已被第 3 行的反向传播，In [2] 的 `x` 不变") == []


def _every_marker_graph():
    nodes = [
        leaf("p", "p"),
        leaf("q", "q", grad=True),
        leaf("old", "h", former="h"),
        stmt(5, "p * q", "r", saved=SAVED_FREED, freed_by=6),
        stmt(7, "r + h", "s", saved=SAVED_NONE),
        stmt(8, "s.exp_()", "t", saved=SAVED_MODIFIED),
        stmt(9, "t * 2", "u"),
        stmt(4, "p.sin()", None, former="v", dropped=True),
    ]
    g = graph(nodes, "p>s5 q>s5 s5>s7 old>s7 s7>s8 s8>s9 p>s4")
    changed = [dataclasses.replace(n, changed_at=(("prog.py", 8), ("prog.py", 8)), dual=True, inputs_hidden=True)
               if n.id == "s7" else n for n in g.nodes]
    return dataclasses.replace(g, nodes=tuple(changed))


@pytest.mark.parametrize("view", [None, "vertical"])
def test_every_marker_and_legend_line_is_said_in_chinese(view):
    g = _every_marker_graph()
    english = render_graph(g, width=100, current_step=9, view=view)
    chinese = render_graph(g, width=100, current_step=9, language="zh", view=view)
    markers = [key for key in chinese.keys if key.split("\t")[0] not in ("◀", "▶")]
    assert len(markers) == 11  # every marker is drawn
    names = {"p", "q", "h", "r", "s", "t", "u", "v", "sin", "exp_"}
    for mark in ("[grad]", "[leaf]", "[new]", "freed", "(old)", "(dropped)", "none saved", "modified",
                 "changed in place", "dual", "more before"):
        assert mark in str(english)
    assert english_left(str(chinese), names) == []
    assert "h (旧)" in str(chinese) and "[有梯度]" in str(chinese) and "[✗ 已释放]" in str(chinese)
    assert "第 8 行（2 次）" in str(chinese)


def _play(lesson_id: str, language: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["lesson", lesson_id, "--script", "--plain", "--width", "90", "--lang", language])
    return code, out.getvalue()


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("entry", Catalog().entries, ids=lambda e: e.lesson.id)
def test_the_whole_course_plays_as_a_script_in_both_languages(entry, language):
    """Each lesson played through as a script, the text–picture agreement
    check included (a problem makes the exit status 1); in Chinese, read as a
    learner of Chinese reads it."""
    code, text = _play(entry.lesson.id, language)
    assert code == 0, text[-2000:]
    done = {"en": "Lesson complete: ", "zh": "课程完成："}[language]
    assert done in " ".join(text.rstrip().splitlines()[-3:])
    if language == "en":
        return
    allowed = identifiers(*(step.code or "" for step in entry.lesson.steps))
    assert english_left(text, allowed, whole_output=True) == []
    assert typography_left(text) == []


@pytest.mark.parametrize("program", sorted(p.name for p in PROGRAMS.glob("*.py")))
def test_explain_in_chinese_says_everything_in_chinese(program):
    path = PROGRAMS / program
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["explain", "--plain", "--width", "90", "--lang", "zh", str(path)])
    text = out.getvalue()
    assert english_left(text, identifiers(path.read_text()), whole_output=True) == []
    assert typography_left(text) == []


HIDDEN_GLOBAL = """\
import torch
w = torch.ones(2, requires_grad=True)
y = w * 2
opt = torch.optim.SGD([w], lr=0.1)
def train():
    w = torch.zeros(2, requires_grad=True)
    loss = (w * y).sum()
    loss.backward()
    opt.zero_grad()
    return loss
loss = train()
"""


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_global_hidden_by_a_local_of_the_same_name_is_called_global_in_chinese(fmt, tmp_path):
    # In train() the global w is drawn and named "global w" (its own w hides
    # it): the Chinese said "global w" in the picture, the note on what is
    # not drawn, the gradient lines and the events.
    path = tmp_path / "prog.py"
    path.write_text(HIDDEN_GLOBAL)

    def said(language: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            options = ["--plain"] if fmt == "text" else ["--format", fmt]
            assert main(["explain", *options, "--width", "100", "--lang", language, str(path)]) == 0
        return out.getvalue()

    zh, en = said("zh"), said("en")
    assert "global" not in zh
    for line in ("全局 w [叶子]", "没有改变的：全局 w、y", "全局 w.grad: None", "全局 w.grad 被设为 None"):
        assert line in zh
    assert "全局" not in en
    for line in ("global w [leaf]", "unchanged since the last picture: global w, y", "global w.grad: None",
                 "global w.grad was set to None"):
        assert line in en
    if fmt == "markdown":
        zh = re.sub(r"```python\n.*?```", "", zh, flags=re.S).replace("\\_", "_").replace("\\*", "*")
    assert english_left(zh, identifiers(HIDDEN_GLOBAL) | {"text", "gradtutor"}, whole_output=True) == []


SHELL_INPUTS = [
    ":help",
    "x = torch.tensor([1.0, 2.0], requires_grad=True)",
    "y = (x * x).sum()",
    "y.backward()",
    "y.backward()",
    "x = x * 2",
    "opt = torch.optim.SGD([torch.zeros(3, requires_grad=True)], lr=0.1)",
    ":names",
    ":explain",
    ":history",
    ":graph",
    ":ops",
    "%timeit y",
    ":lesson",
    ":lang",
    ":nonsense",
    ":reset",
    ":graph",
]


def test_the_shell_in_chinese_says_everything_in_chinese(tmp_path, monkeypatch):
    """A session through every command, read as a learner of Chinese reads it."""
    from gradtutor.shell_session import ShellSession, ShellSettings

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    session = ShellSession(ShellSettings(width=90, ascii=True, language="zh"))
    from rich.console import Console

    console = Console(file=io.StringIO(), width=90, color_system=None, highlight=False)
    for text in SHELL_INPUTS:
        console.print(*session.execute(text).renderables)
    said = console.file.getvalue()
    assert "第 1/" not in said and "x.grad" in said  # the inputs ran
    # A lesson's title may name a parameter its code uses (gradient=).
    lesson_code = [step.code or "" for entry in Catalog().entries for step in entry.lesson.steps]
    allowed = identifiers(*SHELL_INPUTS, *lesson_code) | {"SGD"}
    assert english_left(said, allowed, whole_output=True) == []
    assert typography_left(said) == []


def test_a_usage_error_is_said_in_the_users_language(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert main(["--lang", "zh", "lesson", "nosuch"]) == 2
    assert capsys.readouterr().err == "gradtutor: 没有名为 'nosuch' 的课程：`gradtutor lessons` 会列出所有课程\n"
    assert main(["explain", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"gradtutor: '{tmp_path}' is a directory, not a Python file\n"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert main(["explain", str(tmp_path / "missing.py")]) == 2
    assert capsys.readouterr().err == f"gradtutor: 无法打开文件 '{tmp_path / 'missing.py'}'：文件不存在\n"


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_the_exports_in_chinese_say_everything_in_chinese(fmt, tmp_path):
    """The Markdown and the step-through page: the page's own buttons and
    headings, and the notes on loop steps not shown."""
    import html as html_module

    path = PROGRAMS / "mlp_train.py"
    target = tmp_path / ("run.md" if fmt == "markdown" else "run.html")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["explain", "--lang", "zh", "--format", fmt, "-o", str(target), str(path)]) == 0
    text = target.read_text(encoding="utf-8")
    if fmt == "markdown":
        text = re.sub(r"```python\n.*?```", "", text, flags=re.S).replace("\\_", "_").replace("\\*", "*")
    else:
        text = re.sub(r"<(script|style)[^>]*>.*?</\1>", "", text, flags=re.S)
        text = html_module.unescape(re.sub(r"<[^>]+>", "\n", text))
        assert "上一步" in text and "第 1/" in text
    assert "另外 5 个重复运行的步骤" in text
    allowed = identifiers(path.read_text()) | {"text", "python", "gradtutor"}
    assert english_left(text, allowed, whole_output=fmt == "markdown") == []


def test_a_bad_option_is_said_in_the_language_asked_for(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["--lang", "zh", "--width", "abc"])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and err.startswith("用法：gradtutor [-h]")
    assert err.splitlines()[1].startswith(" " * 16 + "[")  # under "gradtutor", as python aligns it
    assert err.endswith("gradtutor: 错误：参数 --width：无效的 int 值：'abc'\n")
    with pytest.raises(SystemExit):
        main(["--lang=zh", "lessons", "--level", "nodes"])
    assert "错误：参数 --level：无效的选择：'nodes'（可选：" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "explain", "--max-iterations", "-1", "prog.py"])
    assert capsys.readouterr().err.endswith("gradtutor: 错误：--max-iterations 不能小于 0\n")
    with pytest.raises(SystemExit):
        main(["--lang", "en", "explain", "--max-iterations", "-1", "prog.py"])
    assert capsys.readouterr().err.endswith("gradtutor: error: --max-iterations must be 0 or more\n")
