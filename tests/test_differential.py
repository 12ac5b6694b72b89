"""The tutor observes and never changes: same stdout, exception and exit status as python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROGRAMS, explain_json, in_main

# Runs every program like `python FILE ARGS` (runpy with run_name="__main__",
# argv and sys.path[0] set), in one process so torch is imported once.
_RUNNER = r"""
import contextlib, io, json, os, runpy, sys
results = {}
for path, args in json.loads(sys.argv[1]):
    out = io.StringIO()
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    exc_info = None
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:
            exc_info = [type(exc).__name__, str(exc)]
            code = 1
    results[path] = {"stdout": out.getvalue(), "exception": exc_info, "exit_code": code}
print(json.dumps(results))
"""

ARGS = {"mlp_train.py": ["--lr", "0.1", "fast"]}


def _programs(tmp: Path) -> list[tuple[str, list[str]]]:
    found = []
    for path in sorted(PROGRAMS.glob("*.py")):
        args = ARGS.get(path.name, [])
        found.append((str(path), args))
        nested = tmp / f"main_{path.name}"
        nested.write_text(in_main(path.read_text()))
        found.append((str(nested), args))
    return found


@pytest.fixture(scope="module")
def plain_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nested")
    programs = _programs(tmp)
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(programs)],
        capture_output=True, text=True, check=True, timeout=600,
    )
    return programs, json.loads(done.stdout.splitlines()[-1])


def test_every_program_behaves_the_same_under_the_tutor(plain_results):
    programs, plain = plain_results
    assert len(programs) >= 20
    for path, args in programs:
        doc = explain_json(path, *args)
        expected = plain[path]
        stdout = "".join(step["output"] for step in doc["steps"])
        assert stdout == expected["stdout"], path
        assert doc["exit_code"] == expected["exit_code"], path
        got_exc = [doc["exception"]["type"], doc["exception"]["message"]] if doc["exception"] else None
        assert got_exc == expected["exception"], path


def test_the_tutor_explains_the_exception_python_raised(plain_results):
    programs, plain = plain_results
    for path, args in programs:
        if plain[path]["exception"] is None:
            continue
        doc = explain_json(path, *args)
        last_error = [e for s in doc["steps"] for e in s["events"] if e["kind"] == "error"][-1]
        assert last_error["message"] == plain[path]["exception"][1]


def warning_lines(cmd: list[str]) -> list[str]:
    """The warnings a command wrote to stderr (without torch's "Triggered internally" tail)."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return [line.split(" (Triggered")[0] for line in done.stderr.splitlines() if "Warning:" in line]


def test_warnings_are_shown_where_and_as_often_as_python_shows_them(tmp_path):
    path = tmp_path / "warns.py"
    path.write_text(
        "import torch\nimport torch.nn.functional as F\n"
        "a = torch.ones(3, 1, requires_grad=True)\nb = torch.ones(3)\n"
        "l1 = F.mse_loss(a, b)\nl2 = F.mse_loss(a, b)\n"
        "y = a * 2\ng1 = y.grad\ng2 = y.grad\n"
    )

    plain = warning_lines([sys.executable, str(path)])
    tutor = warning_lines([sys.executable, "-m", "gradtutor", "explain", "--format", "json", str(path)])
    assert len(plain) == 4 and tutor == plain


def test_a_warning_python_shows_once_in_a_loop_is_shown_once(tmp_path):
    """In a loop, python shows each warning once per place: a non-leaf .grad
    read, a warnings.warn beside torch calls, a warning of a Python-level
    torch function. The tutor catches torch's warnings to put them at the
    user's line; the catching must not make the user's modules forget which
    warnings they have shown."""
    path = tmp_path / "loop_warns.py"
    path.write_text(
        "import warnings, torch\nx = torch.ones(2, requires_grad=True)\n"
        "for i in range(4):\n"
        "    y = x * 2\n    g = y.grad\n    warnings.warn('careful')\n"
        "    z = torch.nn.functional.mse_loss(torch.ones(3), torch.ones(3, 1))\n"
    )

    plain = warning_lines([sys.executable, str(path)])
    assert len(plain) == 3
    for mode in (["--format", "json"], ["--plain"]):
        assert warning_lines([sys.executable, "-m", "gradtutor", "explain", *mode, str(path)]) == plain


def test_json_stays_valid_whatever_way_the_program_writes_to_stdout(tmp_path):
    path = tmp_path / "writes.py"
    path.write_text(
        "import os, sys\nprint('one')\nsys.stdout.buffer.write(b'two\\n')\n"
        "print('three', file=sys.__stdout__)\nos.system('echo four')\nprint('five', sys.stdout.fileno())\n"
    )
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--format", "json", str(path)],
                          capture_output=True, text=True, timeout=120)
    doc = json.loads(done.stdout)
    assert "".join(step["output"] for step in doc["steps"]) == plain.stdout == "one\ntwo\nthree\nfour\nfive 1\n"


# A second backward caught at module level (the exception kept in a name) and
# in a function, and a plain Python error raised by a function given the tensor.
CAUGHT_ERRORS_KEEP_NOTHING = """
import gc, weakref, torch
refs = []
def check(t):
    raise ValueError("bad")
def round_of_training(keep):
    w = torch.randn(300, 300, requires_grad=True)
    refs.append(weakref.ref(w))
    loss = (w * 2).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as e:
        keep.append(e)
    try:
        check(w)
    except ValueError:
        pass
kept = []
for i in range(8):
    round_of_training(kept)
    v = torch.randn(300, 300, requires_grad=True); refs.append(weakref.ref(v))
    out = v.sum() * 3; out.backward()
    try: out.backward()
    except RuntimeError as e: err = e
del v, out, err, kept
gc.collect()
print("alive", sum(r() is not None for r in refs))
"""


@pytest.mark.processes
def test_a_caught_error_keeps_no_tensor_alive(tmp_path):
    """What the tutor keeps of an exception or its frames must not hold the
    program's tensors once the program dropped them (text and JSON alike)."""
    path = tmp_path / "caught.py"
    path.write_text(CAUGHT_ERRORS_KEEP_NOTHING)
    for mode in (["--plain"], ["--format", "json"]):
        done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", *mode, str(path)],
                              capture_output=True, text=True, timeout=120)
        assert "alive 0" in done.stdout, (mode, done.stdout[-500:], done.stderr[-500:])


@pytest.mark.processes
def test_an_exception_whose_str_raises_ends_as_under_python(tmp_path):
    """str() of the program's exception is the program's code, and it may
    fail: the tutor words it as python does, in text and in valid JSON."""
    path = tmp_path / "badstr.py"
    path.write_text("class Bad(Exception):\n    def __str__(self):\n        raise ValueError('no str')\nraise Bad()\n")
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert plain.returncode == text.returncode == 1 and text.stderr == plain.stderr
    done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--format", "json", str(path)],
                          capture_output=True, text=True, timeout=120)
    doc = json.loads(done.stdout)
    assert done.returncode == 1 and doc["internal_errors"] == []
    assert doc["exception"]["message"] == "<exception str() failed>"
    # The program's own exception class, chained to another (python 3.10 names its module: "__main__.E: x").
    path.write_text("class E(Exception):\n    pass\ntry:\n    raise E('first')\nexcept E as e:\n    raise E('x') from e\n")
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert text.stderr == plain.stderr and "E: x" in plain.stderr


def test_a_recursion_as_deep_as_python_allows_works_under_the_tutor(tmp_path):
    """The tutor's frames under the program and its trace function on top
    of it take none of the program's recursion depth; the program reads and
    sets the limit it has under python."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sys\n"
        "def depth(n):\n"
        "    return 0 if n == 0 else 1 + depth(n - 1)\n"
        "deepest = 0\n"
        "for n in range(sys.getrecursionlimit() - 40, sys.getrecursionlimit() + 1):\n"
        "    try:\n"
        "        depth(n)\n"
        "    except RecursionError:\n"
        "        break\n"
        "    deepest = n\n"
        "print(deepest)\n"
    )
    deepest = int(subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, check=True).stdout)
    program = tmp_path / "deep.py"
    program.write_text(
        "import sys\n"
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "def depth(n):\n"
        "    return x.sum() * 0 if n == 0 else 1 + depth(n - 1)\n"
        f"print(depth({deepest - 8}))\n"  # a torch call at the bottom takes a few frames under python too
        "print(sys.getrecursionlimit())\n"
        "sys.setrecursionlimit(3000)\n"
        "print(sys.getrecursionlimit(), depth(2980).item())\n"
    )
    python = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, check=True).stdout
    before = sys.getrecursionlimit()
    try:
        doc = explain_json(program)  # also: no internal error on the way down and back
        # The program's own setting outlives its run (as in a shell session), without the tutor's room.
        assert sys.getrecursionlimit() == 3000
    finally:
        sys.setrecursionlimit(before)
    assert "".join(step["output"] for step in doc["steps"]) == python and doc["exception"] is None


OWN_TRACER = """
import sys
import torch
seen = []
def tracer(frame, event, arg):
    if event == "call":
        seen.append(frame.f_code.co_name)
    return None
def f(x):
    return x * 2
x = torch.ones(2, requires_grad=True)
print("before:", sys.gettrace())
sys.settrace(tracer)
y = f(x)
z = f(y)
sys.settrace(None)
print(sorted(set(seen)), sys.gettrace())
print("done", z.sum().item())
"""


@pytest.mark.processes
def test_a_program_that_sets_its_own_tracer_gets_the_trace_python_gives_it(tmp_path):
    """The tutor steps aside with one line: the program's tracer sees only
    the program's frames (not the tutor's torch function mode), and
    ``sys.gettrace`` answers as under python."""
    path = tmp_path / "own_tracer.py"
    path.write_text(OWN_TRACER)
    python = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, check=True).stdout
    assert python == "before: None\n['f'] None\ndone 8.0\n"
    tutor = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--format", "json", str(path)],
                           capture_output=True, text=True, timeout=300)
    doc = json.loads(tutor.stdout)
    assert "".join(step["output"] for step in doc["steps"]) == python and doc["exit_code"] == 0
    assert doc["internal_errors"] == [{"file": str(path), "line": 13, "stopped": True,
                                       "message": "the program set its own trace function (sys.settrace)"}]
    assert tutor.stderr == ("gradtutor: narration stopped at line 13 of own_tracer.py: the program set its own "
                            "trace function (sys.settrace); the rest of the program ran unchanged, without narration\n")
    assert [step["line"] for step in doc["steps"]][-1] == 13  # nothing narrated after it


FAULTS_PROGRAM = """
import torch
x = torch.ones(2, requires_grad=True)
y = (x * 3).sum()
y.backward()
print(x.grad)
try:
    y.backward()
except RuntimeError as error:
    print("caught", type(error).__name__)
z = x.detach()
x.data.mul_(2)
h = x * 2
h.retain_grad()
print("ok", z, h.requires_grad)
"""


@pytest.mark.parametrize("where", ["_new_tag", "leaf_tag", "tag_graph", "mark_freed", "mark_freed_before_failure", "first_failing_node"])
def test_a_failure_of_the_tutors_own_never_reaches_the_program(where, tmp_path, monkeypatch, capsys):
    """Made to fail at one place in the tutor, the tutor reports it on one
    line per step, and the program runs as it does without the tutor:
    same output, no exception, exit status 0."""
    from gradtutor import autograd_graph as ag
    from gradtutor.cli import main

    path = tmp_path / "prog.py"
    path.write_text(FAULTS_PROGRAM)
    assert main(["explain", "--format", "json", str(path)]) == 0
    clean = json.loads(capsys.readouterr().out)

    def fail(*args, **kwargs):
        raise RuntimeError(f"failure planted in {where}")

    monkeypatch.setattr(ag.TagRegistry, where, fail)
    assert main(["explain", "--format", "json", str(path)]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    output = "".join(step["output"] for step in doc["steps"])
    assert output == "".join(step["output"] for step in clean["steps"])
    assert output.startswith("tensor([3., 3.])\ncaught RuntimeError\nok tensor([2., 2.]) True")
    assert doc["exception"] is None and doc["internal_errors"]
    assert all(e["message"] == f"RuntimeError: failure planted in {where}" for e in doc["internal_errors"])
    assert captured.err.count("gradtutor: could not follow line") == len({e["line"] for e in doc["internal_errors"]})


ANOMALY_AND_STACKLEVEL = """
import warnings
import torch
def helper():
    warnings.warn("points at the caller", UserWarning, stacklevel=2)
def outer():
    helper()
outer()
torch.autograd.set_detect_anomaly(True)
x = torch.tensor([1.0], requires_grad=True)
def f(t):
    return (t * 0).sqrt().div(t * 0)
y = f(x)
print(len(y.grad_fn.metadata["traceback_"]))
y.backward()
"""


@pytest.mark.processes
def test_warnings_and_anomaly_traces_read_as_under_python(tmp_path):
    """stacklevel= points where python points, and the forward trace anomaly
    mode prints (and keeps in the node's metadata) shows the program's frames
    only, not the tutor's under and around them."""
    path = tmp_path / "anomaly.py"
    path.write_text(ANOMALY_AND_STACKLEVEL)
    python = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert "Traceback of forward call that caused the error" in python.stderr
    assert f'File "{path}", line 13, in <module>' in python.stderr
    text, document = (
        subprocess.run([sys.executable, "-m", "gradtutor", "explain", *mode, str(path)],
                       capture_output=True, text=True, timeout=300)
        for mode in (["--plain"], ["--format", "json"])
    )
    assert text.returncode == document.returncode == python.returncode == 1
    assert text.stderr == python.stderr
    # JSON: the warnings on stderr as python prints them; the traceback is in the document.
    doc = json.loads(document.stdout)
    assert document.stderr + doc["exception"]["traceback"] == python.stderr
    assert "".join(step["output"] for step in doc["steps"]) == python.stdout


CAUGHT_ERRORS_LOOP = """
import resource
import torch
def check(t):
    raise ValueError("bad value")
def one_round():
    w = torch.randn(10_000_000, requires_grad=True)  # 40 MB
    loss = (w * 2).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError:
        pass
for i in range(12):
    w = torch.randn(10_000_000, requires_grad=True)
    loss = (w * 2).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError:
        pass
    try:
        check(w)
    except ValueError:
        pass
    one_round()
print("peak MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.processes
def test_caught_errors_in_a_loop_cost_no_more_memory_than_under_python(tmp_path):
    """Each round makes 40 MB tensors and catches errors that hold them in
    their tracebacks: python frees each round's at once, and so must the
    tutor (peak RSS within 20% of python's, text and JSON)."""
    path = tmp_path / "caught_loop.py"
    path.write_text(CAUGHT_ERRORS_LOOP)
    # Large blocks always from mmap, in both runs: then RSS follows what is
    # alive, not where glibc's moving threshold happened to place 40 MB blocks.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(1 << 20)}
    python = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, check=True, env=env)
    peak = int(python.stdout.split()[-1])
    for mode in (["--format", "json"], ["--plain"]):
        tutor = subprocess.run([sys.executable, "-m", "gradtutor", "explain", *mode, str(path)],
                               capture_output=True, text=True, timeout=300, env=env)
        printed = tutor.stdout if "json" not in mode else "".join(s["output"] for s in json.loads(tutor.stdout)["steps"])
        tutor_peak = int(printed.split("peak MB ")[-1].split()[0])
        assert tutor_peak <= 1.2 * peak, (mode, tutor_peak, peak)


def test_a_failure_of_the_tutors_own_names_the_step_it_was_following(tmp_path, monkeypatch, capsys):
    # The tutor finishes a step when the next line begins: a failure there is
    # the finished step's, not the line python is about to run.
    from gradtutor import engine
    from gradtutor.cli import main

    path = tmp_path / "prog.py"
    path.write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\ny.backward()\nprint(x.grad)\n")
    real = engine.detect_events

    def fail_at_line_3(**kwargs):
        if kwargs["line"] == 3:
            raise RuntimeError("failure planted at line 3")
        return real(**kwargs)

    monkeypatch.setattr(engine, "detect_events", fail_at_line_3)
    assert main(["explain", "--format", "json", str(path)]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert [(e["line"], e["message"]) for e in doc["internal_errors"]] == [(3, "RuntimeError: failure planted at line 3")]
    assert "gradtutor: could not follow line 3 of" in captured.err
    # ... and the steps after it are followed (they each failed again).
    steps = {step["line"]: [e["kind"] for e in step["events"]] for step in doc["steps"]}
    assert 4 in steps and "backward" in steps[4] and 5 in steps
    assert "".join(step["output"] for step in doc["steps"]) == "tensor([2., 2.])\n"
