"""What differs between the supported Pythons (3.10 to 3.13): how a script's
``__main__`` is set up, where tracing reports generators pausing, how
comprehensions run, where warnings land. Each test holds on every version;
``make test-pythons`` runs the suite on each."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import checked_document, events, explain_json


def _python_and_tutor(path, *tutor_args):
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    tutor = subprocess.run(
        [sys.executable, "-m", "gradtutor", "explain", "--format", "json", *tutor_args, str(path)],
        capture_output=True, text=True, timeout=120,
    )
    doc = checked_document(json.loads(tutor.stdout)) if tutor.stdout.strip() else {}
    return plain, tutor, doc


def test_a_script_sees_the_main_module_python_gives_it(program):
    # Python 3.12's warnings machinery reads __main__'s __loader__ and
    # __spec__: with both None, re-issuing torch's warning at the user's
    # line raised ValueError inside the program.
    path = program("""
        import os, sys, warnings
        import torch
        print(sorted(k for k in globals() if k.startswith("__")))
        print(type(__loader__).__name__, __spec__, __package__, __cached__, __doc__)
        print(__file__ == os.path.abspath(__file__), sys.modules["__main__"].__dict__ is globals())
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        print(y.grad)
        warnings.warn("from the script")
        print("still running")
    """)
    plain, tutor, doc = _python_and_tutor(path)
    assert plain.returncode == 0, plain.stderr
    assert "SourceFileLoader None None None None" in plain.stdout
    assert "".join(step["output"] for step in doc["steps"]) == plain.stdout
    assert tutor.stderr == plain.stderr
    assert plain.stderr.count("Warning:") == 2
    assert (tutor.returncode, doc["exception"]) == (0, None)
    [warning] = events(doc, "warning")
    assert (warning["line"], warning["name"]) == (8, "y")


def test_a_multiline_comprehension_is_one_step(program):
    # From 3.12 comprehensions run inside the statement's frame (PEP 709):
    # their jumps back must not read as the statement running again.
    path = program("""
        import torch
        w = torch.ones(3, requires_grad=True)
        parts = [
            w * i
            for i in range(3)
        ]
        table = {i: w[i] * 2
                 for i in range(3) if i}
        total = sum(p.sum() for p in parts) + sum(
            table.values())
        print(len(parts), len(table))
    """)
    doc = explain_json(path)
    assert [(s["line"], s["iteration"]) for s in doc["steps"]] == [
        (1, 1), (2, 1), (3, 1), (7, 1), (9, 1), (11, 1),
    ]
    assert doc["hidden_steps"] == 0
    # The three products are one statement node of line 3, not one per round.
    last = doc["steps"][-1]["graph"]["nodes"]
    assert [n["label"] for n in last if n["line"] == 3] == ["[w * i for i in range(3)]"]


def test_a_comprehension_in_a_one_line_loop_body_still_counts_each_round(program):
    path = program("""
        import torch
        w = torch.ones(2, requires_grad=True)
        for k in range(3): row = [w * j for j in range(k + 1)]
        print(len(row))
    """)
    doc = explain_json(path)
    assert [s["iteration"] for s in doc["steps"] if s["line"] == 3] == [1, 2, 3]


def test_generators_keep_their_names_across_yield_and_yield_from(program):
    # Where f_lasti points when a generator pauses differs: at YIELD_VALUE
    # (3.11, 3.12), at the RESUME after it (3.13), before YIELD_FROM (3.10).
    path = program("""
        import torch

        def squares(t):
            for i in range(2):
                y = t * i
                yield y

        def chain(t):
            yield from squares(t)
            z = t + 1
            yield z

        x = torch.ones(2, requires_grad=True)
        outs = [v.sum() for v in chain(x)]
        print(len(outs))
    """)
    doc = explain_json(path)
    bound = [(e["name"], s["function"]) for s in doc["steps"] for e in s["events"] if e["kind"] == "name-bound"]
    # (t, an argument, is bound before the first line, not anew on resuming)
    assert bound.count(("t", "squares")) == 0
    assert bound.count(("t", "chain")) == 0
    assert bound.count(("y", "squares")) == 1
    runs = [(s["function"], s["line"], s["iteration"]) for s in doc["steps"] if s["function"] == "squares"]
    assert runs[:3] == [("squares", 4, 1), ("squares", 5, 1), ("squares", 6, 1)]
    assert ("squares", 5, 2) in runs


def test_coroutines_keep_their_names_across_await(program):
    path = program("""
        import asyncio
        import torch

        async def inner(t):
            await asyncio.sleep(0)
            u = t * 3
            return u

        async def outer(t):
            a = await inner(t)
            await asyncio.sleep(0)
            b = a.sum()
            return b

        x = torch.ones(2, requires_grad=True)
        loss = asyncio.run(outer(x))
        loss.backward()
        print(x.grad)
    """)
    plain, tutor, doc = _python_and_tutor(path)
    assert "".join(step["output"] for step in doc["steps"]) == plain.stdout == "tensor([3., 3.])\n"
    bound = [(e["name"], s["function"]) for s in doc["steps"] for e in s["events"] if e["kind"] == "name-bound"]
    assert sorted(bound) == sorted([
        ("x", "<module>"), ("u", "inner"), ("a", "outer"),
        ("b", "outer"), ("loss", "<module>"),  # (t: an argument, bound before the first line)
    ])


def test_tracebacks_are_pythons_own_on_this_version(program):
    # Carets (3.11+) and their columns, and where a multi-line call is
    # reported, differ by version: the tutor's text must be this python's.
    path = program("""
        import torch
        def f(a):
            return a.sum() + undefined_name
        x = torch.ones(2, requires_grad=True)
        y = torch.ones(3)[0] + (x[0] +
           f(torch.ones(2)))
    """)
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    tutor = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == tutor.returncode == 1
    assert tutor.stderr == plain.stderr
    assert "NameError: name 'undefined_name' is not defined" in plain.stderr


def test_loops_and_jumps_step_the_same_on_every_version(program):
    # Line events after a backward jump are reported at the jump (3.13) or
    # at its target (earlier): either way a one-line loop body runs again.
    path = program("""
        import torch
        x = torch.ones(2, requires_grad=True)
        for i in range(3): y = x * i
        n = 0
        while True:
            n += 1
            if n == 2:
                break
        for i in range(2):
            try:
                if i:
                    raise ValueError(i)
            except ValueError:
                n -= 1
            finally:
                n *= 1
        def early(v):
            for i in range(5):
                if i == 1:
                    return v * i
            return v
        e = early(x)
    """)
    doc = explain_json(path, "--max-iterations", "100")
    assert [(s["function"], s["line"], s["iteration"]) for s in doc["steps"]] == [
        ("<module>", 1, 1), ("<module>", 2, 1),
        ("<module>", 3, 1), ("<module>", 3, 2), ("<module>", 3, 3),
        ("<module>", 4, 1),
        ("<module>", 5, 1), ("<module>", 6, 1), ("<module>", 7, 1),
        ("<module>", 5, 2), ("<module>", 6, 2), ("<module>", 7, 2), ("<module>", 8, 1),
        ("<module>", 9, 1), ("<module>", 10, 1), ("<module>", 11, 1), ("<module>", 16, 1),
        ("<module>", 9, 2), ("<module>", 10, 2), ("<module>", 11, 2), ("<module>", 12, 1),
        ("<module>", 13, 1), ("<module>", 14, 1), ("<module>", 16, 2),
        ("<module>", 9, 3),
        ("<module>", 17, 1),
        ("early", 18, 1), ("early", 19, 1), ("early", 18, 2), ("early", 19, 2), ("early", 20, 1),
        ("<module>", 22, 1),
    ]


def test_did_you_mean_is_kept_on_every_version(program):
    # Before 3.12 the suggestion comes from the interpreter's printer, not
    # from the traceback module the tutor formats with.
    path = program("""
        import torch
        def step(weights):
            loss = weights.sum()
            return loss.bakward()
        def other():
            total = 1
            return totl
        try:
            other()
        except NameError as exc:
            print(type(exc).__name__)
        step(torch.ones(2, requires_grad=True))
    """)
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    tutor = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                           capture_output=True, text=True, timeout=120)
    assert "Did you mean: 'backward'?" in plain.stderr
    assert tutor.stderr == plain.stderr
    assert (plain.returncode, tutor.returncode) == (1, 1)


def test_the_shell_keeps_did_you_mean(tmp_path):
    session = "loss = 1.5\nprint(los)\nimport torch\ntorch.ones(1).bakward()\n"
    done = subprocess.run([sys.executable, "-m", "gradtutor", "--plain"], input=session,
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "XDG_DATA_HOME": str(tmp_path)})
    text = done.stdout + done.stderr
    assert "NameError: name 'los' is not defined. Did you mean: 'loss'?" in text
    assert "AttributeError: 'Tensor' object has no attribute 'bakward'. Did you mean: 'backward'?" in text
