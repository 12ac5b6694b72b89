"""Hidden loop steps that repeat a hidden step exactly are passed over
(gradtutor.repeat_steps): the narration must be the very one that detecting
every step in full gives, and a step that says something new is still shown."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import events, explain_json
from gradtutor import observer, repeat_steps
from gradtutor.engine import Engine
from program_generator import generate

HERE = Path(__file__).parent
CORPUS = [
    "grad_accumulation.py", "ema_model_nograd.py", "d2l_linreg_scratch.py", "lpe_two_layer_autograd.py",
    "lpe_polynomial_nn.py", "makemore_bigram.py", "wgan_gp_toy.py", "lpe_dynamic_net.py",
]
PROGRAMS = ["mlp_train.py", "loop_growth.py", "rnn_hidden.py", "functions.py", "detach_nograd.py"]


@pytest.fixture
def passed_over(monkeypatch):
    """Counts the repeats the engine passes over."""
    count = [0]
    real = repeat_steps.HiddenRun.repeated_by

    def counting(self, *args):
        found = real(self, *args)
        count[0] += found
        return found

    monkeypatch.setattr(repeat_steps.HiddenRun, "repeated_by", counting)
    return count


def both_ways(path: Path, monkeypatch) -> tuple[dict, dict]:
    """The JSON document of ``path`` with repeats passed over, and with every step detected in full."""
    monkeypatch.chdir(path.parent)
    fast = explain_json(path)
    monkeypatch.setattr(Engine, "pass_over_repeats", False)
    try:
        full = explain_json(path)
    finally:
        monkeypatch.setattr(Engine, "pass_over_repeats", True)
    return fast, full


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS)
def test_a_real_program_is_narrated_as_with_every_step_detected(name, monkeypatch, passed_over):
    fast, full = both_ways(HERE / "corpus" / name, monkeypatch)
    assert fast == full
    assert passed_over[0] > 0  # the comparison is of repeats passed over, not of none


def test_test_programs_and_generated_ones_are_narrated_as_with_every_step_detected(tmp_path, monkeypatch, passed_over):
    paths = [HERE / "programs" / name for name in PROGRAMS]
    for seed in range(40):
        source = generate(seed)
        if "atexit" in source or "threading" in source:
            continue  # (these end as processes of their own: see test_generated)
        path = tmp_path / f"gen_{seed}.py"
        path.write_text(source, encoding="utf-8")
        paths.append(path)
    for path in paths:
        fast, full = both_ways(path, monkeypatch)
        assert fast == full, path.name
    assert passed_over[0] > 0  # the comparison is of repeats passed over, not of none


LATE = """\
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(3)
opt = torch.optim.SGD([w], lr=0.1)
for i in range(30):
    if i < 20:
        opt.zero_grad()
    loss = (w * x).sum()
    loss.backward()
    opt.step()
    try:
        if i == 25:
            w.add_(1)
    except RuntimeError as error:
        caught = str(error)
"""


def test_what_a_repeat_would_hide_late_in_a_loop_is_still_shown(tmp_path, monkeypatch, passed_over):
    path = tmp_path / "late.py"
    path.write_text(LATE, encoding="utf-8")
    fast, full = both_ways(path, monkeypatch)
    assert fast == full
    # zero_grad stops at i == 20: the backward of i == 20 accumulates, and says so
    accumulated = events(fast, "grad-accumulated")
    assert accumulated and {e["line"] for e in accumulated} == {10}
    shown_backwards = [s for s in fast["steps"] if s["line"] == 10]
    assert any(s["iteration"] == 21 for s in shown_backwards)
    # the in-place change of a leaf at i == 25 is an error, shown at its line
    errors = [s for s in fast["steps"] if s["line"] == 14]
    assert [s["iteration"] for s in errors] == [1]
    assert [e["cause"] for e in events(fast, "error")] == ["leaf-inplace"]
    assert passed_over[0] > 20


def run_engine(source: str) -> list[tuple[int, int, tuple]]:
    engine = Engine(capture_output=True)
    engine.add_source("<test>", source)
    result = engine.run_code(compile(source, "<test>", "exec"))
    assert result.exception is None and not result.internal_errors
    return [(s.line, s.iteration, s.events, s.extra) for s in result.steps]


def test_a_name_bound_anew_is_never_a_repeat(monkeypatch, passed_over):
    source = textwrap.dedent("""\
        import torch
        a = torch.ones(2, requires_grad=True)
        opt = torch.optim.SGD([a], lr=0.1)
        for i in range(14):
            opt.zero_grad()
            t = a + 1.0 if i < 8 else t + 1.0
            t.sum().backward()
        """)
    fast = run_engine(source)
    monkeypatch.setattr(Engine, "pass_over_repeats", False)
    assert fast == run_engine(source)
    # from i == 8 on, t's old graph stays in the new one: shown once, then growth
    shown = [(iteration, [e.kind for e in events]) for line, iteration, events, _ in fast if line == 6]
    assert shown[3][0] == 9 and "name-rebound" in shown[3][1]
    assert passed_over[0] > 0  # zero_grad and backward repeat


def each_parameter(tmp_path: Path, body: str) -> Path:
    """A program whose loop of 30 runs ``body`` (lines 6 on) on w and b, in ``params``."""
    path = tmp_path / "each.py"
    head = """\
        import torch
        w = torch.randn(3, requires_grad=True)
        b = torch.randn(3, requires_grad=True)
        params = [w, b]
        for i in range(30):
            loss = (w * 2 + b).sum()
    """
    path.write_text(textwrap.dedent(head) + textwrap.indent(textwrap.dedent(body), "    "), encoding="utf-8")
    return path


def test_a_call_on_each_parameter_in_turn_repeats_its_call_a_loop_earlier(tmp_path, monkeypatch, passed_over):
    path = each_parameter(tmp_path, """\
        for p in params:
            p.grad = None
        loss.backward()
    """)
    fast, full = both_ways(path, monkeypatch)
    assert fast == full
    # Line 8 clears w's gradient, then b's: each run repeats the one of a loop
    # earlier, not the one just before it (54 of its 57 hidden runs here;
    # only the backward's 27 repeats are found when each run is compared
    # with the one just before it).
    assert passed_over[0] >= 27 + 2 * 26
    assert [e["name"] for e in events(fast, "grad-reset")][:2] == ["w", "b"]


def test_a_change_through_data_repeats_the_one_a_loop_earlier(tmp_path, monkeypatch, passed_over):
    # ``p.data`` is a new tensor at every call: the change is told by the
    # tensor whose data it is, and so is its repeat.
    path = each_parameter(tmp_path, """\
        loss.backward()
        for p in params:
            p.data += -0.1 * p.grad
            p.data.clamp_(-1, 1)
        w.grad = None
        b.grad.data.zero_()
    """)
    fast, full = both_ways(path, monkeypatch)
    assert fast == full
    # Lines 9 and 10 for w, then b, repeat from the 4th loop on: 2 × 2 × 26.
    assert passed_over[0] >= 2 * 2 * 26
    assert {(e["name"], e["op"]) for e in events(fast, "inplace")} == {
        ("w", "add_"), ("b", "add_"), ("w", "clamp_"), ("b", "clamp_")}
    assert {(e["name"], e["how"]) for e in events(fast, "grad-reset")} == {("w", "none"), ("b", "zeroed")}


@pytest.fixture
def rebinding_repeats(monkeypatch):
    """Counts the steps passed over as repeats of a rebinding run."""
    count = [0]
    real = Engine._rebinding_repeat

    def counting(self, *args):
        found = real(self, *args)
        count[0] += found is True
        return found

    monkeypatch.setattr(Engine, "_rebinding_repeat", counting)
    return count


REBINDING = """\
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(3)
y = w * 1.0
h = torch.zeros(3)
for i in range(40):
    y = y * 1.001
    loss = (w * x).sum()
    if i == 25:
        keep = loss
    h = torch.tanh(h + x) if i < 30 else torch.tanh(w * h)
    if i % 10 == 9:
        loss.backward()
print(y.sum().item(), keep.item(), h.sum().item())
"""


def test_a_step_that_only_binds_names_anew_repeats_the_last_run_that_did(tmp_path, monkeypatch, rebinding_repeats):
    # y grows from its last value at every run; loss moves on, and what it
    # held leaves the graph (kept alive once by keep, a name: still not "in
    # the graph"); h holds no graph until i == 30, then a growing one. Each
    # change of what a rebinding finds is detected in full and told.
    path = tmp_path / "rebinding.py"
    path.write_text(REBINDING, encoding="utf-8")
    fast, full = both_ways(path, monkeypatch)
    assert fast == full
    assert rebinding_repeats[0] > 60  # y's, loss's and h's lines, most of their 37 hidden runs each
    growth = {(e["line"], e["name"]) for e in events(fast, "graph-growth")}
    assert (8, "y") in growth and (12, "h") in growth
    shown_h = [s["iteration"] for s in fast["steps"] if s["line"] == 12]
    assert 31 in shown_h or 32 in shown_h  # h's graph starting to grow is news, shown


def test_what_only_a_full_detection_sees_is_never_passed_over_as_a_rebinding(tmp_path, monkeypatch, rebinding_repeats):
    # A step that also records a call (a backward, an in-place change) or
    # binds a new name is detected in full: the same narration either way.
    path = tmp_path / "mixed.py"
    path.write_text(textwrap.dedent("""\
        import torch
        w = torch.ones(2, requires_grad=True)
        for i in range(12):
            z = (w * i).sum()
            z.backward()
            u = w.detach()
            if i == 8:
                fresh = z * 2
            z = z + 1
        """), encoding="utf-8")
    fast, full = both_ways(path, monkeypatch)
    assert fast == full
    assert rebinding_repeats[0] > 0


IN_FUNCTIONS = """\
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 3)
w = torch.randn(3, requires_grad=True)
h = torch.zeros(3)
total = None


def cell(x, h):
    h = torch.tanh(model(x) + h)  # (a local h hides the global h; model's parameters are a global's)
    out = h * w
    out = out.sum()
    return out, h


def add_up(loss):
    global total
    total = loss if total is None else total + loss  # (binds a global: detected in full)


for i in range(30):
    x = torch.randn(3)
    loss, h = cell(x, h if i < 20 else h.detach())
    add_up(loss)
    if i % 10 == 9:
        total.backward()
        total = None
print(h.sum().item())
"""


def passed_as_rebinding(path: Path, monkeypatch) -> tuple[dict, dict, list[int]]:
    """``both_ways(path)``, and the line of each step passed over as a repeat of a rebinding run."""
    passed: list[int] = []
    real = Engine._rebinding_repeat

    def where_passed(self, state, where, *args):  # type: ignore[no-untyped-def]
        found = real(self, state, where, *args)
        if found is True:
            passed.append(where[1])
        return found

    monkeypatch.setattr(Engine, "_rebinding_repeat", where_passed)
    fast, full = both_ways(path, monkeypatch)
    return fast, full, passed


def passed_as_repeat(monkeypatch) -> list[tuple[tuple[Any, ...], bool]]:
    """Where each step ``Engine._repeat`` passes over as a repeat is kept
    (code, line, and a mark for the end of a with block), and whether it ends one."""
    passed: list[tuple[tuple[Any, ...], bool]] = []
    real = Engine._repeat

    def noting(self, state, where, *args):  # type: ignore[no-untyped-def]
        found = real(self, state, where, *args)
        if found is True:
            passed.append((where, state.leaving))
        return found

    monkeypatch.setattr(Engine, "_repeat", noting)
    return passed


def narrated_both_ways_noting_repeats(path: Path, source: str, monkeypatch) -> list[tuple[tuple[Any, ...], bool]]:
    """``source`` written to ``path``, narrated the same with repeats passed
    over and with every step detected in full; ``passed_as_repeat``'s list."""
    path.write_text(source, encoding="utf-8")
    passed = passed_as_repeat(monkeypatch)
    fast, full = both_ways(path, monkeypatch)
    assert fast == full
    return passed


def test_a_function_called_in_a_loop_repeats_its_steps_from_call_to_call(
    tmp_path, monkeypatch, rebinding_repeats, every_call_stepped
):
    # cell's line 10 reads its argument x (a tensor without a graph, tagged
    # then as the line's input) and binds h anew, line 11 binds out for the
    # first time in the call, line 12 binds it anew: all passed over as
    # repeats of its earlier calls' hidden runs (they see the globals model,
    # w and h). add_up, which binds a global, is detected in full.
    # h's graph grows through the calls until i == 20 (detached then): the
    # same narration either way.
    path = tmp_path / "functions.py"
    path.write_text(IN_FUNCTIONS, encoding="utf-8")
    fast, full, passed = passed_as_rebinding(path, monkeypatch)
    assert fast == full
    assert all(passed.count(line) >= 10 for line in (10, 11, 12))  # (in most calls after the first ones)
    assert 18 not in passed


SHAPES = """\
import torch
torch.manual_seed(0)


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.key = torch.nn.Linear(4, 4)

    def forward(self, x):
        B, T = x.shape
        k = self.key(x)
        return k * T


head = Head()
x = torch.randn(2, 4)
for i in range(12):
    n = x.shape[0] + x.size(1)
    out = head(x)
    out.sum().backward()
"""


def test_a_step_that_only_reads_a_tensor_s_shape_is_let_pass_as_one_that_did_nothing(tmp_path, monkeypatch):
    # A torch call that only reads (x.shape, x.size(1)) changes no graph, and
    # a forward's first step finds its module argument as its detection would
    # record it: both steps are let pass, as the loop's own `n = ...` is.
    path = tmp_path / "shapes.py"
    path.write_text(SHAPES, encoding="utf-8")
    let_pass: list[int] = []
    real = Engine._nothing_happened

    def noting(self, own, scope, state):
        found = real(self, own, scope, state)
        if found:
            let_pass.append(state.stmt.start)
        return found

    monkeypatch.setattr(Engine, "_nothing_happened", noting)
    monkeypatch.chdir(tmp_path)
    fast = explain_json(path)
    assert {11, 19} <= set(let_pass)
    # Told as when every call counts as one that may have changed something.
    monkeypatch.setattr(observer, "_READ_ONLY_RESULTS", frozenset())
    let_pass.clear()
    assert explain_json(path) == fast
    assert not {11, 19} & set(let_pass)


EVALUATING = """\
import torch
torch.manual_seed(0)
model = torch.nn.Linear(4, 4)


def evaluate(x):
    h = model(x)
    y = h * 2
    return y.sum()


with torch.no_grad():
    for i in range(20):
        total = evaluate(torch.randn(2, 4))
"""


def test_the_steps_of_a_function_run_under_no_grad_are_repeats(tmp_path, monkeypatch, every_call_stepped):
    # Under no_grad, line 8 reads h, which has no graph: the read tags it as
    # the line's input, a node h did not hold before. That is no change in
    # place: the step, which binds y for the first time in the call, is
    # passed over as a repeat of the earlier calls' hidden runs. So is the
    # return (line 9), which only reads y, and line 7, which binds h to a
    # result made without a graph from model's parameters (recorded: its
    # calls repeat those of the run it repeats).
    path = tmp_path / "evaluating.py"
    path.write_text(EVALUATING, encoding="utf-8")
    fast, full, passed = passed_as_rebinding(path, monkeypatch)
    assert fast == full
    assert all(passed.count(line) >= 10 for line in (7, 8, 9))
    assert [e["name"] for e in events(fast, "detached")][:1] == ["h"]


HEADS = SHAPES[:SHAPES.index("head = Head()")] + """\
heads = [Head(), Head(), Head()]
with torch.no_grad():
    for i in range(15):
        outs = [h(torch.randn(2, 4)) for h in heads]
"""


def test_a_statement_of_a_method_called_on_several_modules_in_turn_repeats_each_one_s_runs(
    tmp_path, monkeypatch, every_call_stepped
):
    # Line 12, under no_grad, records a result made without a graph by its
    # own module, self.key: a different module in each of the three calls
    # of a loop. Each module's call repeats that module's hidden runs (the
    # runs kept are one per module, not the last one only).
    path = tmp_path / "heads.py"
    path.write_text(HEADS, encoding="utf-8")
    fast, full, passed = passed_as_rebinding(path, monkeypatch)
    assert fast == full
    assert passed.count(12) >= 30


PAIRS = """\
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)


def step(x, h):
    out = torch.tanh(x * w + h)
    return out.sum(), out


h = torch.zeros(3)
for i in range(20):
    loss, h = step(torch.randn(3), h.detach())
    a, b = loss * 2, h * 3
"""


def test_a_statement_of_several_values_repeats_its_hidden_runs(tmp_path, monkeypatch, every_call_stepped):
    # `return out.sum(), out` (line 8) and `a, b = loss * 2, h * 3` (line
    # 14) label each value by its own expression; that done, each repeats
    # the hidden runs before it, and the narration is the same as when every
    # step is detected in full.
    passed = narrated_both_ways_noting_repeats(tmp_path / "pairs.py", PAIRS, monkeypatch)
    lines = [where[1] for where, _ in passed]
    assert lines.count(8) >= 10 and lines.count(14) >= 10


MANUAL_SGD = """\
import torch
torch.manual_seed(0)
x = torch.randn(8)
w = torch.randn(8, requires_grad=True)
for t in range(20):
    loss = (w * x).sum() ** 2
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad = None
"""


def test_the_end_of_a_with_block_repeats_its_hidden_runs_apart_from_the_with_statement(tmp_path, monkeypatch):
    # Line 8 runs twice an iteration: entering no_grad, and its end, after
    # line 10 (a step of its own). With its switches of grad mode counted
    # as calls that may change something, the ends repeat the ends' hidden
    # runs, kept apart from the statement's; the narration is the same as
    # when every step is detected in full.
    monkeypatch.setattr(observer, "_SET_GRAD_ENABLED", None)
    passed = narrated_both_ways_noting_repeats(tmp_path / "manual_sgd.py", MANUAL_SGD, monkeypatch)
    ends = [where for where, leaving in passed if leaving]
    assert len(ends) >= 10 and all(where[1] == 8 and len(where) == 3 for where in ends)


def test_entering_and_leaving_no_grad_is_let_pass_as_a_step_that_did_nothing(tmp_path, monkeypatch):
    # Turning grad mode off and on changes no graph, gradient or record:
    # past the first iterations both ends of line 8 are let pass without a
    # detection, and the narration is the one told when they count as calls
    # that may have changed something.
    path = tmp_path / "manual_sgd.py"
    path.write_text(MANUAL_SGD, encoding="utf-8")
    let_pass: list[tuple[int, bool]] = []
    real = Engine._nothing_happened

    def noting(self, own, scope, state):
        found = real(self, own, scope, state)
        if found:
            let_pass.append((state.stmt.start, state.leaving))
        return found

    monkeypatch.setattr(Engine, "_nothing_happened", noting)
    monkeypatch.chdir(tmp_path)
    fast = explain_json(path)
    assert let_pass.count((8, False)) >= 10 and let_pass.count((8, True)) >= 10
    monkeypatch.setattr(observer, "_SET_GRAD_ENABLED", None)
    let_pass.clear()
    assert explain_json(path) == fast
    assert not [where for where in let_pass if where[0] == 8]


ONE_HOT = """\
import torch


def one_hot(word):
    tensor = torch.zeros(len(word), 1, 26)
    for i, letter in enumerate(word):
        tensor[i][0][ord(letter) - 97] = 1
    return tensor


for word in ["apple", "kiwi", "banana", "plum", "cherry", "fig", "mango"] * 3:
    x = one_hot(word)
"""


def test_a_step_that_is_no_rebinding_is_looked_at_as_a_repeat_after_runs_that_met_new_names(
    tmp_path, monkeypatch, every_call_stepped
):
    # Line 7 changes a view of a new tensor in place. Its first run in each
    # call meets names the call's first steps bound (`i`, `letter`), so after
    # a few calls the statement counts as one that binds names anew; it
    # binds none, and its later runs still repeat the hidden ones before.
    passed = narrated_both_ways_noting_repeats(tmp_path / "one_hot.py", ONE_HOT, monkeypatch)
    assert [where[1] for where, _ in passed].count(7) >= 50


DETACHED = """\
import torch
w = torch.randn(3, requires_grad=True)


def frozen(x):
    return (x * w).detach()


total = torch.zeros(3)
for i in range(20):
    f = frozen(torch.randn(3))
    total = total + f
"""


def test_a_return_whose_calls_were_recorded_repeats_and_still_hands_them_to_its_caller(
    tmp_path, monkeypatch, every_call_stepped
):
    # Line 6 returns what detach() made: the record goes to the caller's
    # step, which names it (f). The return repeats its hidden runs and hands
    # the record over as its detection would: the same narration.
    passed = narrated_both_ways_noting_repeats(tmp_path / "detached.py", DETACHED, monkeypatch)
    assert [where[1] for where, _ in passed].count(6) >= 10
