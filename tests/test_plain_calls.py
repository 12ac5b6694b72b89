"""Functions of the program's own that never touch torch are run without
stepping after their first calls (gradtutor.plain_calls): the narration
says so, says nothing else differently, and what such a function does after
all (torch work, an exception) is still seen, from the line that called it."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys

import pytest

from conftest import events, explain_json
from gradtutor import plain_calls
from gradtutor.cli import main
from gradtutor.engine import Engine

PURE_HELPER = """
import torch

def add(a, b):
    c = a + b
    return c

total = 0
for i in range(40):
    total = add(total, i)
x = torch.ones(2, requires_grad=True)
y = (x * total).sum()
y.backward()
print(x.grad)
"""


@pytest.fixture
def never_quiet(monkeypatch):
    """Every call stepped, as without plain_calls."""
    monkeypatch.setattr(plain_calls.PlainCalls, "ended", lambda self, code, plain, running: False)


def without_counts(doc: dict) -> dict:
    """The document without what counts steps not taken or not shown, and
    with statement node ids (``s<step number>``) numbered by first use."""
    steps = [{k: v for k, v in step.items() if k != "hidden_before"} for step in doc["steps"]]
    text = json.dumps({**{k: v for k, v in doc.items() if k not in ("quiet_functions", "hidden_steps")}, "steps": steps})
    ids: dict[str, str] = {}
    return json.loads(re.sub(r'"s\d+"', lambda m: ids.setdefault(m.group(0), f'"s#{len(ids)}"'), text))


def test_a_function_that_never_touches_torch_is_run_unstepped_after_its_first_calls(program, monkeypatch):
    path = program(PURE_HELPER)
    quick = explain_json(path)
    assert quick["quiet_functions"] == [
        {"function": "add", "file": str(path), "line": 3, "stepped_calls": 5, "unstepped_calls": 35}
    ]
    monkeypatch.setattr(plain_calls.PlainCalls, "ended", lambda self, code, plain, running: False)
    stepped = explain_json(path)
    assert "quiet_functions" not in stepped
    # Its 35 later calls, two lines each, are the only steps not taken; every step shown is the same.
    assert stepped["hidden_steps"] - quick["hidden_steps"] == 35 * 2
    before = [(s["line"], s.get("hidden_before", {}).get("steps", 0)) for s in quick["steps"]]
    # The loop's 81 runs of lines 8 and 9 but the first 3 of each, told once it is
    # over, with add's calls 4 and 5, two lines each, hidden in calls that returned.
    assert [(line, n) for line, n in before if n] == [(10, 79)]
    assert quick["hidden_steps"] == 75 + 4
    assert without_counts(quick) == without_counts(stepped)
    assert quick["steps"][-1]["output"] == "tensor([780., 780.])\n"


def test_a_function_that_touches_torch_is_stepped_on_every_call(program):
    doc = explain_json(program("""
        import torch

        def double(t):
            return t * 2

        x = torch.ones(2, requires_grad=True)
        for i in range(20):
            y = double(x)
    """))
    assert "quiet_functions" not in doc


def test_a_function_once_not_plain_is_never_made_quiet(program):
    doc = explain_json(program("""
        import torch

        def pick(v):
            return v

        x = torch.ones(2, requires_grad=True)
        kept = pick(x)
        for i in range(20):
            n = pick(i)
    """))
    assert "quiet_functions" not in doc


def test_a_function_whose_steps_name_a_tensor_is_stepped_on_every_call(program):
    doc = explain_json(program("""
        import torch

        def keep(t, store):
            store.append(t)

        x = torch.ones(2, requires_grad=True)
        store = []
        for i in range(20):
            keep(x, store)
    """))
    assert "quiet_functions" not in doc
    # (t, an argument, is bound before the first line: no event says so)
    assert [s["line"] for s in doc["steps"] if s["function"] == "keep"] == [4, 4, 4]
    assert doc["hidden_steps"] == 17 * 3 + 1  # every later call stepped (for, call, keep's line; the loop's end)


def test_torch_work_in_a_quiet_function_is_seen_from_the_line_that_called_it(program):
    doc = explain_json(program("""
        import torch

        def scale(v, k):
            return v * k

        for i in range(10):
            s = scale(2.0, i)
        x = torch.ones(2, requires_grad=True)
        y = scale(x, 3.0)
        y.sum().backward()
        print(x.grad)
    """), options=("--level", "ops"))
    assert doc["quiet_functions"][0]["function"] == "scale"
    assert doc["quiet_functions"][0]["unstepped_calls"] == 6
    mul = [n for n in doc["steps"][-1]["graph"]["nodes"] if n["label"] == "MulBackward0"]
    assert [n["line"] for n in mul] == [9]
    assert [e["line"] for e in events(doc, "backward")] == [10]
    assert doc["steps"][-1]["output"] == "tensor([3., 3.])\n"


RAISES = """
def check(v):
    if v < 0:
        raise ValueError("negative")
    return v

for i in range(10):
    check(i)
try:
    check(-1)
except ValueError:
    print("caught")
"""


def test_an_exception_in_a_quiet_function_is_reported_at_the_line_that_called_it(program):
    doc = explain_json(program(RAISES))
    assert doc["quiet_functions"][0]["function"] == "check"
    assert [(e["line"], e["cause"]) for e in events(doc, "error")] == [(9, "other")]


def test_stepped_the_same_exception_is_reported_at_the_raise(program, never_quiet):
    stepped = explain_json(program(RAISES))
    assert [(e["line"], e["cause"]) for e in events(stepped, "error")] == [(3, "other")]


@pytest.mark.parametrize(
    "language, words",
    [
        ("en", "(35 later calls of add ran without being followed line by line: it touched no tensor in its first 5 calls)"),
        ("zh", "（add 在最初 5 次调用中没有碰过张量，之后的 35 次调用没有逐行跟踪）"),
    ],
)
def test_the_narration_ends_saying_which_functions_ran_unstepped(program, language, words):
    path = program(PURE_HELPER)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain", "--plain", "--width", "200", "--lang", language, str(path)]) == 0
    assert out.getvalue().rstrip("\n").endswith(words)


def test_recursion_makes_a_function_quiet_only_once_no_call_of_it_is_being_stepped(program):
    doc = explain_json(program("""
        def depth(n):
            if n == 0:
                return 0
            return 1 + depth(n - 1)

        for i in range(4):
            d = depth(8)
    """))
    # The first run's nine calls end innermost first; it is quiet once the outermost ended.
    quiet = doc["quiet_functions"][0]
    assert quiet["stepped_calls"] == 9 and quiet["unstepped_calls"] == 27


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12's")
def test_a_quiet_function_costs_no_line_events_under_sys_monitoring(tmp_path):
    source = "def add(a, b):\n    return a + b\n\nt = 0\nfor i in range(30):\n    t = add(t, i)\n"
    path = str(tmp_path / "prog.py")
    engine = Engine({"__name__": "__main__"}, unstep_plain_functions=True)
    engine.add_source(path, source)
    code = compile(source, path, "exec")
    add_code = next(c for c in code.co_consts if getattr(c, "co_name", "") == "add")
    result = engine.run_code(code)
    assert engine.namespace["t"] == sum(range(30))
    assert [(f.name, f.unstepped) for f in result.quiet_functions] == [("add", 25)]
    assert add_code not in engine.tracer._codes  # its line events are off


def test_the_note_names_the_four_most_called_functions_then_counts_the_rest():
    from gradtutor.narrate import quiet_text as quiet_epilogue
    from gradtutor.plain_calls import QuietFunction

    functions = [QuietFunction(f"f{i}", "p.py", i, 5, 100 - i) for i in range(6)]
    assert quiet_epilogue(functions, "en") == (
        "(585 later calls of f0, f1, f2, f3 and 2 more ran without being followed line by line: "
        "these functions touched no tensor in their first 5 calls)"
    )
    assert quiet_epilogue(functions, "zh") == (
        "（f0、f1、f2、f3 等另外 2 个函数在最初 5 次调用中没有碰过张量，之后的 585 次调用没有逐行跟踪）"
    )


def test_a_nested_function_is_named_by_where_it_is_defined(program):
    doc = explain_json(program("""
        def outer(n):
            def inner(k):
                return k + 1
            return inner(n)

        for i in range(12):
            v = outer(i)
    """))
    assert sorted(f["function"] for f in doc["quiet_functions"]) == ["outer", "outer.inner"]
