"""The command line: help, version, and clear messages for bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from gradtutor import __version__
from gradtutor.cli import main


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradtutor", *args], capture_output=True, text=True, input=stdin, timeout=120
    )


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_do_not_import_torch(flag):
    code = (
        "import sys\nfrom gradtutor.cli import main\n"
        f"try:\n    main([{flag!r}])\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"gradtutor {__version__}"


def test_help_lists_explain(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "explain" in capsys.readouterr().out


def test_missing_file(capsys, tmp_path):
    assert main(["explain", str(tmp_path / "nope.py")]) == 2
    err = capsys.readouterr().err
    assert err == f"gradtutor: can't open file '{tmp_path / 'nope.py'}': no such file\n"


def test_directory(capsys, tmp_path):
    assert main(["explain", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"gradtutor: '{tmp_path}' is a directory, not a Python file\n"


def test_undecodable_bytes(capsys, tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = '\xff\xfe'\n")
    assert main(["explain", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gradtutor: '{path}' is not readable as Python source:")
    assert "Traceback" not in err and err.count("\n") == 1


def test_syntax_error_is_shown_as_python_shows_it(capsys, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("x = 1\ny = (x +\nprint(y\n")
    assert main(["explain", str(path)]) == 1
    err = capsys.readouterr().err
    python = subprocess.run([sys.executable, str(path)], capture_output=True, text=True).stderr
    assert err == f"gradtutor: '{path}' has a syntax error:\n" + python
    assert f'File "{path}", line 3' in err and "^" in err


def test_bad_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["explain", "--format", "xml", "x.py"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_exit_status_follows_the_program(tmp_path):
    path = tmp_path / "p.py"
    path.write_text("import sys\nprint('out')\nsys.exit(3)\n")
    done = run_cli("explain", "--format", "json", str(path))
    assert done.returncode == 3
    path.write_text("raise KeyError('k')\n")
    done = run_cli("explain", "--plain", str(path))
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert done.stderr.rstrip().endswith("KeyError: 'k'")


def test_text_mode_puts_output_and_called_steps_under_the_heading_of_their_statement(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text(
        "import torch\n"
        "def double(t):\n"
        "    print('inside')\n"
        "    return t * 2\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = double(x)\n"
        "print('y done', end='')\n"
        "for i in range(5):\n"
        "    print(i)\n"
    )
    done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    at = lines.index
    assert at("── line 6 y = double(x)") < at("── line 3 in double() print('inside')") < at("inside")
    assert at("inside") < at("── line 4 in double() return t * 2") < at("── line 6 (continued) y = double(x)")
    assert at("── line 7 print('y done', end='')") + 1 == at("y done")  # its own line, under its heading
    # Past the first iterations, a printing loop step is still headed before its output.
    for i in range(5):
        assert lines[at(str(i)) - 1].startswith("── line 9")


def test_a_plain_python_error_is_left_to_its_traceback(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text("import torch\nloss = torch.ones(2, requires_grad=True).sum()\nprint(los)\n")
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.stderr == plain.stderr  # python's traceback, "Did you mean" included
    assert "NameError" not in done.stdout  # not repeated as an explanation


@pytest.mark.parametrize("before, after", [
    (["--lang", "zh"], []), ([], ["--lang", "zh"]), (["--width", "60"], []), ([], ["--width", "60"]),
    (["--lang", "zh", "--width", "60"], []), (["--lang", "zh"], ["--width", "60"]),
])
def test_options_work_before_and_after_the_command(capsys, monkeypatch, tmp_path, before, after):
    """--help lists the display options on gradtutor itself, so they work
    before the command as well as after it, and one given before is not
    reset by the command's default."""
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # no progress of the person running the tests
    assert main([*before, "lessons", "--plain", *after]) == 0
    out = capsys.readouterr().out
    given = before + after
    assert ("课程" in out) == ("zh" in given)
    widest = max(len(line) for line in out.splitlines())
    assert (widest <= 60) == ("60" in given)


def test_a_display_option_before_explain_reaches_the_narration(capsys, tmp_path):
    path = tmp_path / "p.py"
    path.write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n")
    assert main(["--lang", "zh", "--plain", "--width", "60", "explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out and max(len(line) for line in out.splitlines()) <= 60
    assert "x 指向一个张量" in out  # the narration in Chinese


def test_a_width_too_small_is_refused_for_every_command(capsys):
    for argv in (["--width", "10", "lessons"], ["lessons", "--width", "10"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 2
        assert "--width must be at least 20" in capsys.readouterr().err


def test_chinese_narration_says_where_a_step_ran_and_what_was_not_shown_in_chinese(capsys, tmp_path):
    """Step headings ("第 3 行，f() 中，第 2 次"), the notes on loop steps
    not shown and the closing note are Chinese with --lang zh; in English
    they read as before."""
    path = tmp_path / "loop.py"
    path.write_text(
        "import torch\nw = torch.ones(2, requires_grad=True)\n"
        "def f(v):\n    return (v * 2).sum()\n"
        "for i in range(6):\n    loss = f(w)\n    loss.backward()\n"
        "for j in range(6):\n    k = j\n"
        "print(k)\n"
    )
    assert main(["--lang", "zh", "--plain", "--width", "100", "explain", str(path)]) == 0
    zh = capsys.readouterr().out
    assert "── 第 6 行，第 2 次 loss = f(w)" in zh
    assert "── 第 4 行，f() 中，第 2 次 return (v * 2).sum()" in zh
    assert "个重复运行的步骤没有新内容，未显示" in zh and "个重复运行的步骤未显示" in zh and "全程共 " in zh
    assert "--max-iterationsN可显示更多）" in "".join(zh.split())
    assert not re.search(r"\bline \d|\brun \d|(loop|repeated) steps?\b|shows more", zh)
    assert main(["--plain", "--width", "100", "explain", str(path)]) == 0
    en = capsys.readouterr().out
    assert "── line 6, run 2 loss = f(w)" in en and "── line 4 in f(), run 2 return (v * 2).sum()" in en
    flat = " ".join(en.split())  # the closing note wraps at the width
    assert "repeated steps not shown" in flat and "; --max-iterations N shows more)" in flat
    # The closing note counts the steps of the notes before it again: it says so.
    assert "(in all, " in flat


def test_explain_dash_reads_the_program_from_standard_input_as_python_does():
    source = ("import sys, torch\nx = torch.ones(2, requires_grad=True)\n"
              "print(sys.argv, repr(sys.path[0]), __file__)\n(x * 2).sum().backward()\nprint(x.grad)\n1/0\n")
    plain = subprocess.run([sys.executable, "-", "a1"], input=source, capture_output=True, text=True, timeout=120)
    tutor = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", "-", "a1"], input=source,
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == tutor.returncode == 1
    assert "['-', 'a1'] '' <stdin>" in plain.stdout and "['-', 'a1'] '' <stdin>" in tutor.stdout
    assert "── line 2 x = torch.ones(2, requires_grad=True)" in tutor.stdout and "x names a tensor" in tutor.stdout
    assert tutor.stderr == plain.stderr  # the traceback, as python shows it (no source lines for <stdin>)


def test_when_the_tracer_is_turned_off_nothing_printed_is_lost_and_the_stop_is_said(tmp_path):
    """A RecursionError at the recursion limit can make Python turn the tracer
    off: the program goes on unchanged, what it prints afterwards is still
    shown, and the tutor says narration stopped there (text and JSON)."""
    path = tmp_path / "deep.py"
    path.write_text(
        "def down(n):\n    return 0 if n == 0 else 1 + down(n - 1)\n"
        "deepest = 0\nfor n in range(900, 1100, 10):\n    try:\n        down(n)\n        deepest = n\n"
        "    except RecursionError:\n        break\nprint('deepest', deepest > 0)\n"
    )
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert plain.stdout == "deepest True\n" and "deepest True" in text.stdout
    if "narration stopped" in text.stderr:  # the tracer was turned off on this Python
        assert "the rest of the program ran unchanged, without narration" in text.stderr
        done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--format", "json", str(path)],
                              capture_output=True, text=True, timeout=300)
        doc = json.loads(done.stdout)
        assert any(e.get("stopped") for e in doc["internal_errors"])


def test_source_too_deeply_nested_to_compile_ends_as_under_python(tmp_path):
    """Compiling it raises RecursionError: python's own words and exit 1,
    not an internal error of the tutor's."""
    path = tmp_path / "flat.py"
    path.write_text("x = " + "+".join(["1"] * 200_000) + "\n")
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 1 and "RecursionError: maximum recursion depth exceeded during compilation" in plain.stderr
    for mode in (["--plain"], ["--format", "json"]):
        done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", *mode, str(path)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        assert "RecursionError: maximum recursion depth exceeded during compilation" in done.stderr
        assert "internal error" not in done.stderr


def narrated(tmp_path, capsys, source: str, *options: str) -> tuple[str, str]:
    """The plain narration of ``source`` (dedented) and the program's path."""
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(source).lstrip())
    assert main(["--plain", *options, "explain", str(path)]) == 0
    return capsys.readouterr().out, str(path)


def test_the_hidden_last_steps_of_a_call_are_told_under_the_line_that_made_it(capsys, tmp_path):
    # update()'s loop ends hidden and the function returns: no later step of
    # its own can carry the note, so the caller's line does, before the next
    # line, in text and in JSON.
    text, path = narrated(tmp_path, capsys, """
        import torch
        def update(ps):
            for p in ps:
                p.mul_(0.5)
        update([torch.ones(2) for _ in range(6)])
        print('done')
    """, "--width", "100")
    between = text.split("── line 4 in update(), run 3")[1].split("── line 6 ")[0]
    assert "(7 more repeated steps not shown; what they did was shown above and happened again: p was changed in " \
           "place (mul_) ×3)" in " ".join(between.split())
    assert main(["explain", "--format", "json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    [line5] = [step for step in doc["steps"] if step["line"] == 5]
    assert line5["hidden_before"]["steps"] == 7 and [e["count"] for e in line5["hidden_before"]["repeated"]] == [3]


def test_a_note_on_hidden_steps_comes_before_the_next_step_shown_in_any_function(capsys, tmp_path):
    # The loop's backward at i == 3 was hidden, then f()'s line 6 shown at
    # i == 4: its note told only f()'s hidden steps ("5 more ... nothing
    # new"), and the backward came in the note after it, under line 10 run 5,
    # as if done between the two.
    text, _ = narrated(tmp_path, capsys, """
        import torch
        w = torch.ones(2, requires_grad=True)
        def f(i):
            y = (w * 2).sum()
            if i == 4:
                y = y * 3
            return y
        for i in range(6):
            loss = f(i)
            loss.backward()
            if i == 4:
                z = f(i)
    """, "--width", "300")

    def between(start: str, end: str) -> str:
        return " ".join(text.split(start)[1].split(end)[0].split())

    assert "(10 more repeated steps not shown; what they did was shown above and happened again: backward through " \
           "loss: 1 node freed its saved tensors; w.grad was added to, not replaced) ── line 6 in f() " \
           in between("── line 11, run 3", "── line 10, run 5")
    assert "(2 more repeated steps not shown: nothing new) ── line 10, run 5" in between("── line 6 in f() ", "z = f(i)")
    # A heading's note told some of them: the next note, in the call, tells the rest.
    assert between("── line 12 ", "y = y * 3") == "z = f(i) (2 more repeated steps not shown: nothing new) ── line 6 in f(), run 2"


def test_a_step_that_says_nothing_else_does_not_print_a_note_of_its_own(capsys, tmp_path):
    # Line 8's call hid fc_layer's line 4, then the loop's line 9 was hidden:
    # each note told one step, printed one under the other with nothing
    # between them, as if two runs of hidden steps had been told twice.
    text, _ = narrated(tmp_path, capsys, """
        import torch.nn as nn

        def fc_layer(n):
            return nn.Linear(n, n)

        class Net:
            def __init__(self, num_layers=3):
                layers = [fc_layer(2)]
                for i in range(num_layers - 1):
                    layers.append(fc_layer(2))
                self.layers = layers

        a = Net()
        b = Net()
    """)
    lines = [line.strip() for line in text.splitlines()]
    notes = [i for i, line in enumerate(lines) if line.startswith("(") and "not shown" in line]
    assert notes and not any(b == a + 1 for a, b in zip(notes, notes[1:])), text
    tail = text.split("── line 14 b = Net()")[1]
    assert "(2 more repeated steps not shown: nothing new)\n── line 10 in __init__(), run 3" in tail.replace("   (", "(")
    assert "(5 more repeated steps not shown: nothing new)\n── line 11 in __init__(), run 2" in tail.replace("   (", "(")
    # Every hidden step is still counted once: 2 + 5 = the run's total.
    assert "(in all, 7 repeated steps not shown" in text


def test_a_picture_after_a_call_has_its_own_heading_and_no_graph_dropped_by_hidden_steps(capsys, tmp_path):
    # The picture of line 13, drawn when peek() returned, came under "line 7
    # in peek() return 0" (a picture alone got no "(continued)" heading), and
    # it drew the out of iteration 3 "(dropped)": nothing used it since line 9
    # of iteration 4, a hidden step, not since line 13.
    text, _ = narrated(tmp_path, capsys, """
        import torch, weakref
        w = torch.ones(3, requires_grad=True)
        refs = []
        def peek(o):
            print('alive on entry:', sum(r() is not None for r in refs))
            top = o.topk(1)
            return 0
        for i in range(1, 9):
            out = (w * i).exp()
            refs.append(weakref.ref(out))
            out.sum().backward()
            if i % 4 == 0:
                peek(out)
    """, "--width", "200")
    after_return = text.split("── line 7 in peek() return 0")[1].split("── ")[0]
    assert "w [grad]" not in after_return, text
    assert "(dropped)" not in text.split("── line 13 peek(out)")[1], text
    # Dropped by a step shown, it is still drawn so, once.
    assert "(w * i).exp() = out (dropped)" in text.split("── line 9, run 2 ")[1].split("── ")[0]


def test_a_statement_node_names_its_tensors_in_the_order_the_line_assigns_them(capsys, tmp_path):
    # "self.lstm1(input_t, (h_t, c_t)) = c_t, h_t": the order torch made the
    # nodes in (c before h = o * tanh(c)), not the line's.
    text, _ = narrated(tmp_path, capsys, """
        import torch
        cell = torch.nn.LSTMCell(1, 2)
        x = torch.randn(3, 1)
        h_t, c_t = cell(x)
        y = h_t * 2
        h_t, c_t = cell(x, (h_t, c_t))
    """, "--width", "200")
    assert "cell(x) = h_t, c_t" in text and "= c_t, h_t" not in text
    assert "h_t (old), c_t (old)" in text


def test_a_growing_graph_is_counted_in_operations_as_a_walk_of_its_nodes_finds_them(capsys, tmp_path):
    # "30 autograd nodes now hang off h_t": a walk of next_functions finds 34,
    # the leaves' AccumulateGrad nodes included, which the count leaves out.
    text, _ = narrated(tmp_path, capsys, """
        import torch
        w = torch.ones(2, requires_grad=True)
        h = torch.zeros(2)
        for i in range(3):
            h = torch.tanh(h * w)
        seen, todo = set(), [h.grad_fn]
        while todo:
            node = todo.pop()
            if node is not None and node not in seen:
                seen.add(node)
                todo.extend(n for n, _ in node.next_functions)
        print(len(seen), sum(1 for n in seen if type(n).__name__ == "AccumulateGrad"))
    """, "--width", "200")
    walked, accumulate = map(int, text.split("print(len(seen)")[1].split("\n")[1].split())
    assert f"h's graph keeps growing ({walked - accumulate} operations)" in text
    assert f"{walked - accumulate} operations (autograd nodes besides the leaves' AccumulateGrad) now hang off h" in text


def test_a_graph_made_anew_that_looks_as_the_last_picture_is_not_drawn_again(capsys, tmp_path):
    # Each print of a loss shown after hidden steps drew the same picture
    # again (examples_time_sequence_prediction: 40 lines, 9 times).
    text, _ = narrated(tmp_path, capsys, """
        import torch
        w = torch.ones(2, requires_grad=True)
        for i in range(6):
            loss = (w * 2).sum()
            print("loss", loss.item())
            loss.backward()
    """)
    run = {n: text.split(f"── line 5, run {n} ")[1].split("── ")[0] for n in (4, 5, 6)}
    assert "w [grad] ──▶ (w * 2).sum() = loss" in run[4]
    for n in (5, 6):
        assert "──▶" not in run[n] and "(the graph looks as in the last picture: not drawn again)" in run[n]


def test_hidden_steps_count_an_optimizer_step_and_a_buffer_update_apart(capsys, tmp_path):
    # Both are "model was changed in place": counted as one, the note said
    # "model's buffers were updated ... ×6" and nothing of the optimizer.
    text, _ = narrated(tmp_path, capsys, """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(8, 3)
        for i in range(6):
            model(x).sum().backward()
            opt.step()
    """, "--width", "300")
    note = " ".join(text.split("repeated steps not shown")[-1].split())
    assert "model's buffers were updated in place (add_, batch_norm, 3 buffers) ×3" in note
    assert "model's parameters were updated in place by an optimizer step (add_, 4 parameters) ×3" in note


def test_what_the_program_prints_is_never_cut_at_the_drawing_width(capsys, tmp_path):
    # (lpe_dynamic_net's result line came out cut at 100 columns, no mark.)
    text, _ = narrated(tmp_path, capsys, "import torch\nprint('a' * 150)\nprint('b' * 130, end='')\n", "--width", "100")
    lines = text.splitlines()
    assert "a" * 150 in lines and "b" * 130 in lines


def test_a_note_on_hidden_steps_tells_each_backward_by_its_root_and_says_only_what_was_shown(capsys, tmp_path):
    # Two backwards a loop: counted as one ("backward through a ... ×6")
    # they hid b's. A function's step under no_grad, hidden as a repeat of
    # its training runs, said "shown above" of an event never shown.
    text, _ = narrated(tmp_path, capsys, """
        import torch
        w = torch.ones(2, requires_grad=True)
        def forward(x):
            out = torch.mv(x, w)
            return out
        for i in range(6):
            a = forward(torch.ones(3, 2))
            a.sum().backward()
            b = (w * w * 3).sum()
            b.backward()
        with torch.no_grad():
            a = forward(torch.ones(3, 2))
    """, "--width", "300")
    note = " ".join(text.split("repeated steps not shown")[-1].split())
    assert "backward: 1 node freed its saved tensors ×3" in note
    assert "backward through b: 2 nodes freed their saved tensors ×3" in note
    assert "• out was computed without recording a graph" in text  # (line 4, run 7: shown)


def test_explain_keeps_what_importing_made_out_of_the_cycle_collectors_walks_not_the_programs_objects(tmp_path):
    # What the command imported before the program starts (torch's objects,
    # the tutor's) is frozen once (gcpause.settle_startup); the program's
    # own objects are collected as under python: a cycle it drops is freed.
    program = tmp_path / "cycles.py"
    program.write_text(textwrap.dedent("""\
        import gc, weakref
        import torch
        class Node:
            pass
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        print("frozen", gc.get_freeze_count() > 10000, "collected", gone() is None)
    """))
    done = run_cli("explain", "--plain", str(program))
    assert done.returncode == 0, done.stderr
    assert "frozen True collected True" in done.stdout
    plain = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert "frozen False collected True" in plain.stdout


def test_the_shell_freezes_what_importing_made_once_torch_is_in_and_collects_the_learners_cycles():
    # The shell imports torch in the background; its first statement waits
    # for that import, which ends by freezing what it made (TorchLoader's
    # settle): the learner's objects all come after, and a dropped cycle is freed.
    lines = (
        "import gc, weakref\nclass N: pass\na, b = N(), N()\na.o, b.o = b, a\nr = weakref.ref(a)\ndel a, b\n"
        "gc.collect()\nprint('frozen', gc.get_freeze_count() > 10000, 'collected', r() is None)\n"
    )
    done = run_cli(stdin=lines)
    assert done.returncode == 0, done.stderr
    assert "frozen True collected True" in done.stdout


def test_a_reader_closing_the_pipe_ends_the_narration_quietly(tmp_path: Path) -> None:
    # `gradtutor explain train.py | head`: once head has its lines, the run
    # ends with no message from the tutor (the tracer it stopped is no failure).
    path = tmp_path / "prog.py"
    path.write_text(
        "import sys\nimport torch\nx = torch.ones(2, requires_grad=True)\n"
        "sys.stdin.readline()\n"  # (the test closes its end of the pipe meanwhile)
        "for i in range(50):\n    y = (x * i).sum()\n    y.backward()\nprint('done')\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None and child.stdin is not None and child.stderr is not None
    assert "line 1" in child.stdout.readline()
    child.stdout.close()
    child.stdin.write("\n")
    child.stdin.close()
    assert child.wait(timeout=120) == 1  # (as rich ends a console's run on a closed pipe)
    assert child.stderr.read() == ""
