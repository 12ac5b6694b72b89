"""The tutor observes and never changes: same stdout, exception and exit status as python."""

from __future__ import annotations

import json
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


def test_a_caught_error_keeps_no_tensor_alive(tmp_path):
    """What the tutor keeps of an exception or its frames must not hold the
    program's tensors once the program dropped them (text and JSON alike)."""
    path = tmp_path / "caught.py"
    path.write_text(CAUGHT_ERRORS_KEEP_NOTHING)
    for mode in (["--plain"], ["--format", "json"]):
        done = subprocess.run([sys.executable, "-m", "gradtutor", "explain", *mode, str(path)],
                              capture_output=True, text=True, timeout=120)
        assert "alive 0" in done.stdout, (mode, done.stdout[-500:], done.stderr[-500:])


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
