"""Functions of the program's own that never touch torch, or whose calls
repeat what their first calls showed, are run without stepping after their
first calls (gradtutor.plain_calls): the narration says so, says nothing
else differently, and what such a function does after all (torch work, an
exception) is still seen, from the line that called it."""

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
    monkeypatch.setattr(plain_calls.PlainCalls, "ended", lambda self, code, plain, running, settled=False: False)


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
        {"function": "add", "file": str(path), "line": 3, "stepped_calls": 5, "unstepped_calls": 35,
         "touched_tensors": False}
    ]
    monkeypatch.setattr(plain_calls.PlainCalls, "ended", lambda self, code, plain, running, settled=False: False)
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


DOUBLE = """
import torch

def double(t):
    return t * 2

x = torch.ones(2, requires_grad=True)
for i in range(20):
    y = double(x)
y.sum().backward()
print(x.grad)
"""


def test_a_function_whose_calls_repeat_themselves_is_run_unstepped_after_them(program):
    doc = explain_json(program(DOUBLE), options=("--level", "ops"))
    # Its first 3 calls are shown, the next 5 repeat them: then it is left.
    assert doc["quiet_functions"] == [{
        "function": "double", "file": doc["quiet_functions"][0]["file"], "line": 3,
        "stepped_calls": 8, "unstepped_calls": 12, "touched_tensors": True,
    }]
    # Said at the step of the line whose call was its last one stepped.
    said = [(s["line"], s["iteration"], e) for s in doc["steps"] for e in s["events"] if e["kind"] == "function-unfollowed"]
    assert said == [(8, 8, {"kind": "function-unfollowed", "line": 8, "function": "double", "calls": 8, "repeated": 5})]
    # What its later calls make is that line's, as a library function's would be.
    last = doc["steps"][-1]
    mul = [n for n in last["graph"]["nodes"] if n["label"] == "MulBackward0"]
    assert [n["line"] for n in mul] == [8]
    assert last["output"] == "tensor([2., 2.])\n"


def test_a_function_none_of_whose_calls_showed_a_step_is_never_left(program):
    # --max-iterations 0: double's line says nothing new from its first call
    # on, so no call of it was shown; "which was shown above" would not be true.
    doc = explain_json(program(DOUBLE), options=("--max-iterations", "0"))
    assert "quiet_functions" not in doc
    assert [s["function"] for s in doc["steps"] if s["function"] == "double"] == []


def test_a_function_whose_calls_raise_now_and_then_is_stepped_on_every_call(program):
    # Every third call raises, and catches, an exception: never five calls
    # in a row that only repeat what was shown.
    doc = explain_json(program("""
        import torch

        def grow(t, k):
            out = t * 2
            if k % 3 == 0:
                try:
                    raise ValueError(k)
                except ValueError:
                    pass
            return out

        x = torch.ones(2, requires_grad=True)
        for k in range(30):
            y = grow(x, k)
    """))
    assert "quiet_functions" not in doc
    assert events(doc, "function-unfollowed") == []


def test_a_function_that_rebinds_a_global_is_stepped_on_every_call(program):
    doc = explain_json(program("""
        import torch

        def move(t):
            global last
            last = t * 2

        w = torch.ones(2, requires_grad=True)
        for i in range(20):
            move(w)
    """))
    assert "quiet_functions" not in doc


def test_a_training_step_left_unstepped_has_its_backward_and_update_told_at_the_line_that_calls_it(program):
    doc = explain_json(program("""
        import torch

        def train_step(w, lr):
            loss = (w * 3).sum()
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
            w.grad = None
            return loss

        w = torch.ones(2, requires_grad=True)
        for i in range(20):
            loss = train_step(w, 0.1)
        print(w)
    """))
    assert [(f["function"], f["stepped_calls"], f["touched_tensors"]) for f in doc["quiet_functions"]] == [
        ("train_step", 8, True)
    ]
    # While it was stepped, its backward, update and clearing were told at
    # its own lines (5, 7, 8), then counted as repeats there. Its 12 later
    # calls did the same, told at line 13, which calls it: said before
    # (under the same titles), they are counted too, in the note before
    # the next step shown.
    repeated = doc["steps"][-1]["hidden_before"]["repeated"]
    assert {(e["line"], e["kind"], e["count"]) for e in repeated} == {
        (13, "backward", 12), (13, "inplace", 12), (13, "grad-reset", 12)
    }
    assert {(e["line"], e["count"]) for e in doc["hidden_repeated"]} == {(5, 17), (7, 17), (8, 17)}
    assert doc["steps"][-1]["output"] == "tensor([-5.0000, -5.0000], requires_grad=True)\n"


def test_what_an_unstepped_call_still_does_is_told_at_the_line_that_called_it(program):
    doc = explain_json(program("""
        import torch

        def scaled(t, k):
            out = t * 2
            if k == 15:
                with torch.no_grad():
                    t.mul_(k)
            return out

        w = torch.ones(2, requires_grad=True)
        for k in range(20):
            y = scaled(w, k)
        y.sum().backward()
        print(w.grad)
    """))
    assert doc["quiet_functions"][0]["function"] == "scaled"
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [(12, "w", "mul_")]
    assert doc["steps"][-1]["output"] == "tensor([2., 2.])\n"


def test_an_exception_in_an_unstepped_function_that_touched_tensors_is_reported_at_the_line_that_called_it(program):
    doc = explain_json(program("""
        import torch

        def check(t, k):
            if k == 15:
                raise ValueError("fifteen")
            return t * 2

        w = torch.ones(2, requires_grad=True)
        for k in range(20):
            try:
                y = check(w, k)
            except ValueError:
                print("caught")
    """))
    assert doc["quiet_functions"][0]["function"] == "check"
    assert [(e["line"], e["cause"]) for e in events(doc, "error")] == [(11, "other")]


@pytest.mark.parametrize(
    "language, title, words",
    [
        ("en", "RNN.forward is no longer followed line by line, after 8 calls",
         "Its last 5 calls did only what the calls before them did, which was shown above. From its next call on it "
         "runs as library code does: the line that calls it draws the nodes it makes as its own and tells what it "
         "does to tensors. Its own lines are no longer stepped, nor counted among the repeated steps."),
        ("zh", "8 次调用之后，不再逐行跟踪 RNN.forward",
         "它最近 5 次调用做的都只是之前的调用做过的事，上面已经展示过。从下一次调用起，它像库代码一样运行："
         "调用它的行把它生成的节点画成自己的，并说明它对张量做了什么。它自己的行不再逐步执行，也不计入重复的步骤。"),
    ],
)
def test_leaving_a_function_unstepped_is_explained_in_every_language(language, title, words):
    from gradtutor.explanations import book_for
    from gradtutor.model import Event

    event = Event.make("function-unfollowed", 9, function="RNN.forward", calls=8, repeated=5)
    explained = book_for(language).explain(event, file="prog.py")
    # (the paragraph names no function, no line: said once, where the first is left)
    assert (explained.title, explained.text) == (title, words)


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


def test_a_function_whose_steps_name_a_tensor_is_not_plain_but_settles(program):
    doc = explain_json(program("""
        import torch

        def keep(t, store):
            store.append(t)

        x = torch.ones(2, requires_grad=True)
        store = []
        for i in range(20):
            keep(x, store)
    """))
    # Not plain: it is left once its calls repeat themselves, not after its first 5.
    assert [(f["function"], f["stepped_calls"], f["touched_tensors"]) for f in doc["quiet_functions"]] == [
        ("keep", 8, True)
    ]
    # (t, an argument, is bound before the first line: no event says so)
    assert [s["line"] for s in doc["steps"] if s["function"] == "keep"] == [4, 4, 4]
    # Hidden: line 8's 21 runs (the last ends the loop) and line 9's 20 but
    # the first 3 of each and line 9's eighth, shown (it tells keep is left);
    # and the one line of keep's calls 4 to 8.
    assert doc["hidden_steps"] == 18 + 16 + 5


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


def test_the_closing_notes_tell_plain_functions_and_settled_ones_apart():
    from gradtutor.narrate import quiet_texts
    from gradtutor.plain_calls import QuietFunction

    functions = [QuietFunction("RNN.forward", "p.py", 9, 8, 900, True), QuietFunction("pick", "p.py", 3, 5, 40),
                 QuietFunction("RNN.initHidden", "p.py", 12, 8, 30, True)]
    assert quiet_texts(functions, "en") == [
        "(40 later calls of pick ran without being followed line by line: it touched no tensor in its first 5 calls)",
        "(930 later calls of RNN.forward, RNN.initHidden ran without being followed line by line, once their calls "
        "repeated themselves: what they did is told at the lines that called them, and their own lines are not "
        "counted above)",
    ]
    assert quiet_texts(functions[:1], "zh") == [
        "（RNN.forward 的调用重复了之前的内容以后，之后的 900 次调用没有逐行跟踪：它们做的事在调用它们的行中说明，"
        "它们自己的行不计入上面的次数）"
    ]


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
