"""One test per event kind and per error cause, each on a small program."""

from __future__ import annotations

import pytest

from conftest import events, explain_json, step_at


def run(program, source):
    return explain_json(program(source))


def test_name_bound(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
    """)
    [bound] = events(doc, "name-bound")
    assert bound["name"] == "x" and bound["line"] == 2


def test_name_rebound_without_old_in_graph(program):
    doc = run(program, """
        import torch
        a = torch.ones(2)
        a = torch.zeros(2)
    """)
    [rebound] = events(doc, "name-rebound")
    assert rebound["name"] == "a" and rebound["line"] == 3 and rebound["old_in_graph"] is False


@pytest.mark.parametrize("retain, in_graph", [("", False), ("retain_graph=True", True)])
def test_a_name_that_moved_on_from_a_graph_a_backward_freed_is_not_still_in_the_graph(program, retain, in_graph):
    """A training loop's ``out`` of the last iteration is in ``loss``'s graph,
    which the backward ran through and freed: nothing can use it again, so
    the new ``out`` is a plain rebinding. Kept by retain_graph, it is in a
    graph a backward can still run through."""
    doc = run(program, f"""
        import torch
        w = torch.ones(3, requires_grad=True)
        for i in range(2):
            out = w * 2
            loss = (out ** 2).sum()
            loss.backward({retain})
    """)
    rebound = [(e["line"], e["name"], e["old_in_graph"]) for e in events(doc, "name-rebound")]
    assert (4, "out", in_graph) in rebound


def test_a_name_that_moved_on_in_a_graph_not_run_backward_is_still_in_it(program):
    doc = run(program, """
        import torch
        w = torch.ones(3, requires_grad=True)
        h = torch.zeros(3, requires_grad=True)
        for i in range(2):
            h = torch.tanh(h * w)
    """)
    rebound = [(e["line"], e["name"], e["old_in_graph"]) for e in events(doc, "name-rebound")]
    assert rebound == [(5, "h", True), (5, "h", True)]


def test_backward_counts_freed_nodes_and_retain_graph_as_in_effect(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward(create_graph=True)
        z = (x.exp()).sum()
        z.backward()
        g, = torch.autograd.grad((x ** 3).sum(), x)
    """)
    first, second, third = events(doc, "backward")
    # create_graph=True implies retain_graph=True when retain_graph is not given.
    assert (first["line"], first["retain_graph"], first["create_graph"], first["freed"]) == (4, True, True, 0)
    assert (second["line"], second["retain_graph"], second["freed"]) == (6, False, 1)
    assert (third["api"], third["line"], third["retain_graph"], third["freed"]) == ("autograd.grad", 7, False, 1)


def test_grad_accumulated_only_when_grad_existed(program):
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        (w * 2).sum().backward()
        (w * 3).sum().backward()
        w.grad = None
        (w * 4).sum().backward()
    """)
    assert [e["line"] for e in events(doc, "grad-accumulated")] == [4]
    assert step_at(doc, 6)["grads"]["w"] == [4.0, 4.0]


def test_grad_accumulated_in_a_module_is_reported_per_module(program):
    doc = run(program, """
        import torch
        model = torch.nn.Linear(3, 2)
        inp = torch.ones(3)
        model(inp).sum().backward()
        model(inp).sum().backward()
    """)
    [acc] = events(doc, "grad-accumulated")
    assert acc == {"kind": "grad-accumulated", "line": 5, "name": "model", "parameters": 2}


@pytest.mark.parametrize(
    "before, added", [("", False), ("model(x.exp()).sum().backward()", True)], ids=["filled", "added-to"]
)
def test_gradients_a_failed_backward_filled_are_told_per_module(program, before, added):
    """A backward that fails part-way has already filled the .grad of the
    parameters it reached (the Linear's, before exp's backward): they stay,
    and the next backward adds to them. Told with the error, not only by
    that next backward's "added to"."""
    doc = run(program, f"""
        import torch
        model = torch.nn.Linear(3, 1)
        x = torch.ones(2, 3, requires_grad=True)
        h = x.exp()
        loss = model(h * 2).sum()
        h.add_(1)
        {before}
        try:
            loss.backward()
        except RuntimeError:
            pass
    """)
    line = 9  # loss.backward()
    [error] = events(doc, "error")
    assert (error["line"], error["cause"]) == (line, "inplace-modified")
    # x's gradient would come through exp's backward, which failed: x.grad is left as it was.
    assert events(doc, "grad-before-error") == [
        {"kind": "grad-before-error", "line": line, "name": "model", "parameters": 2, "added": added}
    ]
    assert [e["kind"] for e in step_at(doc, line)["events"]] == ["error", "grad-before-error"]
    assert [e["name"] for e in events(doc, "grad-accumulated")] == []


@pytest.mark.parametrize("retain", [False, True], ids=["freed", "retain-graph"])
def test_a_backward_failing_on_a_changed_tensor_frees_the_nodes_it_ran_first(program, retain):
    """The backward runs loss's nodes and mul_'s, then fails at sigmoid's:
    the nodes it ran freed their saved tensors (unless retain_graph kept
    them), drawn freed by its line; vv's node, never reached, keeps them.
    s's statement holds sigmoid's node, whose saved output was changed: it
    stays drawn modified, the cause of the error, though mul_'s was freed."""
    doc = run(program, f"""
        import torch
        v = torch.ones(3, requires_grad=True)
        vv = v * v
        s = vv.sigmoid()
        s.mul_(2)
        loss = (vv * 3 + s).sum()
        try:
            loss.backward({"retain_graph=True" if retain else ""})
        except RuntimeError:
            pass
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["line"], error["node_line"]) == ("inplace-modified", 8, 4)
    statements = [n for n in step_at(doc, 8)["graph"]["nodes"] if n["kind"] == "statement"]
    saved = {n["label"]: (n["saved"], n.get("freed_by_line")) for n in statements}
    assert saved == {
        "v * v": ("present", None),
        "vv.sigmoid()": ("modified", None),
        "(vv * 3 + s).sum()": ("present", None) if retain else ("freed", 8),
    }


def test_a_picture_may_say_a_failed_backward_freed_nodes(program):
    """The text-picture agreement check (tests/agreement.py) knows a backward
    that failed on a changed tensor as one that frees nodes."""
    from agreement import check_run
    from gradtutor.explain import read_program, run_script

    path = str(program("""
        import torch
        v = torch.ones(3, requires_grad=True)
        s = (v * v).sigmoid()
        s.mul_(2)
        loss = (v * 3 + s).sum()
        try:
            loss.backward()
        except RuntimeError:
            pass
        again = loss * 1
    """))
    source, code = read_program(path)
    steps: list = []
    run_script(path, source, code, [], capture_output=True, on_step=steps.append)
    assert any(n.freed_by_line == 7 for n in steps[-1].snapshot.ops.nodes)
    assert check_run(steps) == []


@pytest.mark.parametrize("fails", [
    "b = (w * 2).exp()\nb.add_(1)",  # exp's saved result changed in place
    "b = w * 2\nb.register_hook(lambda g: 1 / 0)",  # a hook that raises, not a RuntimeError
], ids=["inplace", "hook"])
def test_a_named_tensor_a_failed_backward_filled_is_told(program, fails):
    """v's gradient was complete before the backward failed on b's side."""
    doc = run(program, """
        import torch
        w = torch.ones(3, requires_grad=True)
        v = torch.ones(3, requires_grad=True)
        """ + fails.replace("\n", "\n        ") + """
        loss = b.sum() + (v * 5).sum()
        try:
            loss.backward()
        except (RuntimeError, ZeroDivisionError):
            pass
    """)
    assert events(doc, "grad-before-error") == [{"kind": "grad-before-error", "line": 8, "name": "v", "added": False}]
    assert step_at(doc, 8)["grads"]["v"] == [5.0, 5.0, 5.0]


@pytest.mark.parametrize(
    "line, how",
    [("d = y.detach()", "detach"), ("d = y.data", "data"), ("with torch.no_grad():\n    d = y * 2", "no_grad")],
)
def test_detached(program, line, how):
    doc = run(program, "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 3\n" + line + "\n")
    [detached] = events(doc, "detached")
    assert detached["name"] == "d" and detached["how"] == how
    assert detached["line"] == (5 if how == "no_grad" else 4)


def test_detach_in_place(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x * 3
        y.detach_()
    """)
    [detached] = events(doc, "detached")
    assert detached["name"] == "y" and detached["how"] == "detach_"


def test_graph_growth_in_a_loop(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        total = 0
        for i in range(4):
            total = total + (x * i).sum()
    """)
    growth = events(doc, "graph-growth")
    assert [g["name"] for g in growth] == ["total", "total"]
    assert [g["nodes"] for g in growth] == sorted(g["nodes"] for g in growth)
    assert growth[-1]["nodes"] > growth[0]["nodes"]
    # the fourth run grows it again: said once more, as a repeat, not shown anew
    assert [(r["kind"], r["name"], r["count"]) for r in doc["hidden_repeated"] if r["kind"] == "graph-growth"] == [
        ("graph-growth", "total", 1)
    ]


def test_no_graph_growth_when_the_loop_uses_item(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        total = 0.0
        for i in range(4):
            loss = (x * i).sum()
            total = total + loss.item()
    """)
    assert events(doc, "graph-growth") == []


def test_warning_non_leaf_grad(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        y.sum().backward()
        print(y.grad)
    """)
    [warning] = events(doc, "warning")
    assert warning == {"kind": "warning", "line": 5, "cause": "non-leaf-grad", "name": "y"}
    assert step_at(doc, 5)["output"] == "None\n"


def test_retain_grad_has_no_warning(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.sum().backward()
        print(y.grad)
    """)
    assert events(doc, "warning") == []
    assert [e["name"] for e in events(doc, "retain-grad")] == ["y"]
    assert step_at(doc, 6)["output"] == "tensor([1., 1.])\n"


def test_error_inplace_modified_names_the_node_and_the_inplace_line(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        a = x.exp()
        b = a * 2
        a.add_(1)
        b.sum().backward()
    """)
    [error] = events(doc, "error")
    assert error["cause"] == "inplace-modified"
    assert error["line"] == 6
    assert error["modified_at_line"] == 5
    assert error["modified_at_source"] == "a.add_(1)"
    assert error["node_line"] == 3  # exp saved its output, a


def test_error_leaf_inplace(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        x.add_(1)
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["line"], error["name"]) == ("leaf-inplace", 3, "x")
    assert doc["exception"]["type"] == "RuntimeError"
    assert "view" not in error


def test_an_in_place_change_of_a_slice_of_a_leaf_is_told_as_one_of_a_view(program):
    # torch says "a view of a leaf Variable": the learner changed c[:, 0], not c.
    doc = run(program, """
        import torch
        c = torch.ones(2, 2, requires_grad=True)
        c[:, 0] += 1
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["line"], error["view"]) == ("leaf-inplace", 3, True)
    from gradtutor.explanations import book_for
    from gradtutor.model import Event

    told = book_for("en").explain(Event.make("error", 3, **{k: v for k, v in error.items() if k not in ("kind", "line")}))
    assert "a view of a leaf tensor" in told.text and "`c[:, 0]`" in told.text


def test_error_no_grad_fn(program):
    doc = run(program, """
        import torch
        x = torch.ones(2)
        x.sum().backward()
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["line"]) == ("no-grad-fn", 3)


def test_error_non_scalar_backward(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        (x * 2).backward()
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["line"]) == ("non-scalar-backward", 3)


def test_a_backward_is_via_a_library_function_only_when_one_ran_it(program):
    # loss.backward() runs Tensor.backward's own Python code: that is what
    # the user called, not a library function that ran a backward for them.
    doc = run(program, """
        import torch
        from torch.autograd.functional import jacobian
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        torch.autograd.backward((w * 3).sum())
        g = torch.autograd.grad((w * 4).sum(), w)
        j = jacobian(lambda x: x.exp(), torch.ones(2))
    """)
    said = [(e["line"], e["api"], e.get("via")) for e in events(doc, "backward")]
    assert said == [(4, "backward", None), (5, "backward", None), (6, "autograd.grad", None),
                    (7, "autograd.grad", "jacobian")]


def test_error_out_argument_with_a_tensor_that_requires_grad(program):
    doc = run(program, """
        import torch
        c = torch.randn(2, 3, requires_grad=True)
        try:
            torch.add(c, 1, out=c)
        except RuntimeError as err:
            print("caught")
        with torch.no_grad():
            torch.add(c, 1, out=c)
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["line"]) == ("out-requires-grad", 4)


def test_error_other_is_any_python_exception(program):
    doc = run(program, """
        n = 0
        print(1 / n)
    """)
    [error] = events(doc, "error")
    assert (error["cause"], error["exception"], error["line"]) == ("other", "ZeroDivisionError", 2)
    assert doc["exit_code"] == 1


def test_caught_error_is_reported_and_the_run_goes_on(program):
    """The article's try/except around a second backward."""
    doc = run(program, """
        import torch
        x = torch.tensor([2.0], requires_grad=True)
        y = x**2
        y.backward()
        try:
            y.backward()
        except RuntimeError as e:
            print("caught")
    """)
    [error] = events(doc, "error")
    assert error["cause"] == "second-backward" and error["line"] == 6
    assert error["node_line"] == 3 and error["freed_by_line"] == 4
    assert doc["exit_code"] == 0
    assert "".join(s["output"] for s in doc["steps"]) == "caught\n"


def test_error_in_a_function_is_reported_once_where_it_was_raised(program):
    doc = run(program, """
        import torch

        def step(x):
            y = x ** 2
            y.backward()
            y.backward()

        step(torch.ones((), requires_grad=True))
    """)
    [error] = events(doc, "error")
    assert error["line"] == 6 and error["node_line"] == 4 and error["freed_by_line"] == 5
    [step] = [s for s in doc["steps"] if s["events"] and s["events"][0]["kind"] == "error"]
    assert step["function"] == "step"


def test_no_accumulation_reported_after_zeroing_the_gradient(program):
    doc = run(program, """
        import torch
        x = torch.tensor([2.0], requires_grad=True)
        y = x ** 2
        y.backward(retain_graph=True)
        x.grad.zero_()
        y.backward()
    """)
    assert events(doc, "grad-accumulated") == []
    assert step_at(doc, 6)["grads"]["x"] == [4.0]


def test_an_optimizer_step_is_one_inplace_event_per_module(program):
    doc = run(program, """
        import torch
        model = torch.nn.Linear(3, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(3)).sum().backward()
        opt.step()
    """)
    [step] = events(doc, "inplace")
    assert step == {"kind": "inplace", "line": 5, "name": "model", "op": "add_", "how": "optimizer",
                    "via": "SGD.step", "parameters": 2}


def test_an_init_function_that_passes_its_tensor_by_keyword_is_an_inplace_change(program):
    """torch.nn.init.normal_ hands torch's dispatch ``tensor=w``, not ``w``."""
    doc = run(program, """
        import torch
        w = torch.empty(3, requires_grad=True)
        torch.nn.init.normal_(w, mean=0.0, std=0.02)
        lin = torch.nn.Linear(3, 2)
        torch.nn.init.uniform_(lin.weight, -0.1, 0.1)
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [(3, "w", "normal_"), (5, "lin", "uniform_")]


def test_a_function_called_in_a_loop_is_a_loop_body_and_globals_are_not_new_in_it(program):
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)

        def step(i):
            h = w * i
            return h.sum()

        for i in range(8):
            loss = step(i)
    """)
    body = [s for s in doc["steps"] if s["function"] == "step" and s["line"] == 5]
    assert [s["iteration"] for s in body] == [1, 2, 3]
    bound = [e["name"] for s in doc["steps"] if s["function"] == "step" for e in s["events"] if e["kind"] == "name-bound"]
    assert set(bound) == {"h"}  # not the global w


def test_a_loop_that_grows_one_graph_reports_it_without_repeating_every_iteration(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x
        for i in range(40):
            y = y * 1.01
    """)
    growth = events(doc, "graph-growth")
    assert 1 <= len(growth) <= 3
    assert doc["hidden_steps"] > 60


def test_an_error_passing_through_finally_is_reported_once(program):
    doc = run(program, """
        import torch

        def f():
            try:
                x = torch.ones(2, requires_grad=True)
                y = (x * 2).sum()
                y.backward()
                y.backward()
            finally:
                print("cleanup")

        try:
            f()
        except RuntimeError:
            print("caught")
    """)
    assert [(e["line"], e["cause"]) for e in events(doc, "error")] == [(8, "second-backward")]


def test_a_generator_keeps_its_names_and_counts_across_yields(program):
    doc = run(program, """
        import torch

        def batches(x):
            for i in range(3):
                h = x * i
                yield h.sum()

        x = torch.ones(2, requires_grad=True)
        total = 0
        for loss in batches(x):
            total = total + loss
    """)
    in_gen = [(s["line"], s["iteration"], [(e["kind"], e.get("name")) for e in s["events"]])
              for s in doc["steps"] if s["function"] == "batches" and s["line"] == 5]
    assert in_gen == [(5, 1, [("name-bound", "h")]), (5, 2, [("name-rebound", "h")]), (5, 3, [("name-rebound", "h")])]
    assert len(events(doc, "graph-growth")) == 2


def _nodes(step):
    return step["graph"]["nodes"]


def test_in_place_keeps_one_tensor_one_node_marked_changed(program):
    doc = run(program, """
        import torch
        a = torch.ones(3, requires_grad=True)
        h = a * 2
        h += 1
        h.add_(1)
        h[0] = 0
        out = h.sum()
    """)
    assert events(doc, "name-rebound") == []
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [
        (4, "h", "add_"), (5, "h", "add_"), (6, "h", "[i] = ...")]
    last = doc["steps"][-1]
    [h] = [n for n in _nodes(last) if "h" in n["names"]]
    assert h["label"] == "a * 2" and h["changed_at"] == [4, 5, 6]
    assert not any(n.get("former_names") for n in _nodes(last))  # no "h (old)"


def test_data_updates_and_grad_resets_say_what_happened_to_which_tensor(program):
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        (w * 3).sum().backward()
        w.data.add_(-0.1 * w.grad)
        w.grad.zero_()
        w.data = w.data * 2
        w.grad = None
        model = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(w).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        opt.zero_grad()
        for p in model.parameters():
            p.data.add_(1.0)
    """)
    assert [(e["line"], e["name"], e["op"], e.get("how")) for e in events(doc, "inplace")] == [
        (4, "w", "add_", "data"), (6, "w", "data =", "data"), (11, "model", "add_", "optimizer"),
        (15, "p", "add_", "data"), (15, "p", "add_", "data")]
    resets = [(e["line"], e["name"], e["how"], e.get("parameters")) for e in events(doc, "grad-reset")]
    assert resets == [(5, "w", "zeroed", None), (7, "w", "none", None),
                      (12, "model", "zeroed", 2), (13, "model", "none", 2)]


def test_an_augmented_assignment_to_data_is_one_change(program):
    # ``p.data += x`` runs ``tmp = p.data; tmp += x; p.data = tmp``: one change
    # (the in-place op), not a second one when tmp is handed back.
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        (w * 3).sum().backward()
        for i in range(6):
            w.data += -0.1 * w.grad
        w.data *= 2
        w.data = w.data
        d = w.data
        w.data = torch.zeros(3)
        w.data = d
        print(w.data.tolist())
    """)
    changes = [(e["line"], e["name"], e["op"], e.get("count", 1)) for e in events(doc, "inplace")]
    assert changes == [(5, "w", "add_", 1)] * 3 + [(6, "w", "mul_", 1), (9, "w", "data =", 1), (10, "w", "data =", 1)]
    [note] = [s["hidden_before"] for s in doc["steps"] if "hidden_before" in s]
    assert [(e["kind"], e["op"], e["count"]) for e in note["repeated"]] == [("inplace", "add_", 3)]
    assert doc["steps"][-1]["output"] == "[-1.6000001430511475, -1.6000001430511475]\n"  # (the program's own result)


def test_a_gradient_zeroed_through_data_is_told_as_one_zeroed_directly(program):
    doc = run(program, """
        import torch
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        w.grad.data.zero_()
        (w * 2).sum().backward()
        w.grad.zero_()
    """)
    assert [(e["line"], e["name"], e["how"]) for e in events(doc, "grad-reset")] == [(4, "w", "zeroed"), (6, "w", "zeroed")]
    assert events(doc, "inplace") == []


def test_a_model_made_again_while_a_graph_holds_the_old_one_is_told(program):
    doc = run(program, """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
        model = nn.Linear(3, 1)
        x = torch.randn(4, 3)
        loss = model(x).sum()
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
        for layer in model:
            x = layer(x)
        model = nn.Sequential(model, nn.Linear(1, 1))
        del model
        model = nn.Linear(3, 1)
        loss = model(torch.randn(4, 3)).sum()
        model = None
    """)
    rebound = [(e["line"], e["name"]) for e in events(doc, "name-rebound") if e.get("module")]
    # Line 4: no graph held the first model. Line 8: the old layer is part of
    # model. Line 10: the new model holds the old one's parameters. Line 12:
    # the name was deleted first. Line 14: the name holds no module now.
    assert rebound == [(7, "model")]
    last = doc["steps"][-1]
    assert last["line"] == 14 and not [n for n in last["graph"]["nodes"] if n.get("former_names") == ["model"]]
    step = next(s for s in doc["steps"] if s["line"] == 7)
    [old] = [n for n in step["graph"]["nodes"] if n.get("former_names") == ["model"]]
    assert old["kind"] == "module" and old["detail"] == "2 parameters in the graph, 4 values"
    assert "model (old)" not in [n["label"] for n in step["graph"]["nodes"]]


def test_a_parameter_an_optimizer_changes_is_told_with_its_module_whatever_its_other_names(program):
    # p is left on model.bias by the loop: the optimizer's changes to it are
    # the module's (2 parameters), not a change of "p" besides 1 parameter.
    doc = run(program, """
        import torch
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for p in model.parameters():
            pass
        model(torch.ones(2, 3)).sum().backward()
        opt.step()
        opt.zero_grad()
        p.grad = torch.ones_like(p)
        with torch.no_grad():
            p.mul_(2)
    """)
    said = [(e["line"], e["kind"], e["name"], e.get("parameters")) for e in doc_events(doc) if e["kind"] in ("inplace", "grad-reset")]
    assert said == [(7, "inplace", "model", 2), (8, "grad-reset", "model", 2), (9, "grad-reset", "p", None), (11, "inplace", "p", None)]


def test_gradients_added_to_a_module_count_every_parameter_whatever_its_other_names(program):
    doc = run(program, """
        import torch
        model = torch.nn.Linear(3, 1)
        for p in model.parameters():
            pass
        model(torch.ones(2, 3)).sum().backward()
        model(torch.ones(2, 3)).sum().backward()
    """)
    assert [(e["name"], e.get("parameters")) for e in events(doc, "grad-accumulated")] == [("model", 2)]


def plain_narration(path) -> str:
    """``gradtutor explain --plain`` of the program at ``path``, its lines
    joined into one (a sentence may wrap)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "gradtutor", "explain", "--plain", "--width", "200", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    return " ".join(done.stdout.split())


def test_counts_of_parameters_agree_with_their_number(program):
    text = plain_narration(program("""
        import torch
        model = torch.nn.Linear(3, 1, bias=False)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(2, 3)).sum().backward()
        model(torch.ones(2, 3)).sum().backward()
        opt.zero_grad()
    """))
    assert "model's gradients were added to, not replaced (1 parameter)" in text
    assert "which added its gradients to those already held by 1 parameter of model," in text
    assert "model's gradients were cleared (1 parameter)" in text
    assert "1 parameters" not in text


def test_a_name_moved_off_a_result_says_its_node_stays_not_the_tensor(program):
    """``y = y * 3`` leaves the node that computed the old y in the graph;
    the old tensor itself is freed (the multiplication saved only the 3).
    A leaf the graph uses is kept itself: its words stay as they were."""
    text = plain_narration(program("""
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x * 3
        y = y * 3
        x = x * 2
    """))
    assert "y moved on, but the node of its old value is still in the graph" in text
    assert "the node that computed the tensor y used to name is still part of the graph" in text
    assert "x moved on, but the old tensor is still in the graph" in text
    assert "y moved on, but the old tensor" not in text


def test_gradients_added_to_are_counted_apart_from_ones_the_backward_did_not_reach(program):
    """Both parameters hold a gradient before the second backward, which
    reaches the weight only: one parameter was added to, and the words do
    not say that only one held a gradient (the old text's "while 1
    parameter of model already held gradients" was false: both did)."""
    text = plain_narration(program("""
        import torch
        model = torch.nn.Linear(2, 1)
        model(torch.ones(1, 2)).sum().backward()
        model.weight.sum().backward()
    """))
    assert "model's gradients were added to, not replaced (1 parameter)" in text
    assert "Line 4 ran backward, which added its gradients to those already held by 1 parameter of model," in text
    assert "already held gradients" not in text


def doc_events(doc):
    return [e for s in doc["steps"] for e in s["events"]]


def test_the_legend_names_each_module_node_as_drawn(program):
    import subprocess
    import sys

    path = program("""
        import torch
        from torch import nn
        model = nn.Linear(3, 1)
        x = torch.ones(2, 3)
        loss = model(x).sum()
        model = nn.Linear(3, 2)
        loss = model(x).sum()
    """)
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", "--width", "200", str(path)],
                          capture_output=True, text=True, timeout=120).stdout
    step6, step7 = text.split("── line 6 ")[1].split("── line 7 ")
    assert "model: 2 parameters, 8 values, drawn as one node" in step6
    assert "model (old): 2 parameters in the graph, 4 values, drawn as one node" in step6
    assert "model (dropped): 2 parameters, 4 values, drawn as one node" in step7 and "model (old)" not in step7


def test_a_parameter_taken_out_of_a_module_is_not_the_old_module(program):
    doc = run(program, """
        import torch
        from torch import nn
        model = nn.Linear(3, 1)
        w = model.weight
        loss = model(torch.ones(2, 3)).sum()
        del w
        delattr(model, "weight")
        model.weight = torch.zeros(1, 3)
        model = nn.Linear(3, 1)
    """)
    old_at = [s["line"] for s in doc["steps"] if any(n.get("former_names") == ["model"] for n in s["graph"]["nodes"])]
    assert old_at == [9]  # not at line 7, where model still holds the module the weight was taken out of
    assert [(e["line"], e["name"]) for e in events(doc, "name-rebound") if e.get("module")] == [(9, "model")]


def test_grad_changes_show_the_values_before_and_after(program):
    doc = run(program, """
        import torch
        x = torch.tensor([2.0], requires_grad=True)
        y = x ** 2
        y.backward(retain_graph=True)
        y.backward()
        x.grad = None
        x = torch.tensor([1.0], requires_grad=True)
    """)
    changes = [(s["line"], s.get("grad_changes")) for s in doc["steps"] if s.get("grad_changes")]
    assert changes == [
        (4, [{"name": "x", "before": None, "after": [4.0]}]),
        (5, [{"name": "x", "before": [4.0], "after": [8.0]}]),
        (6, [{"name": "x", "before": [8.0], "after": None}]),
    ]


def test_growth_only_when_a_statement_builds_on_its_previous_iteration(program):
    doc = run(program, """
        import torch
        net = torch.nn.Linear(3, 3)
        def forward(x):
            x = net(x)
            x = torch.relu(x)
            return x
        for i in range(4):
            out = forward(torch.ones(3))
            out = out.mean()
            out.backward()
        h = torch.zeros(3)
        for i in range(4):
            h = net(h)
    """)
    grown = [(e["line"], e["name"]) for e in events(doc, "graph-growth")]
    assert set(grown) == {(13, "h")}


def test_autograd_grad_is_worded_as_returning_the_gradient(program):
    doc = run(program, """
        import torch
        x = torch.tensor([2.0], requires_grad=True)
        y = x ** 3
        (dydx,) = torch.autograd.grad(y, x, create_graph=True)
        d2 = torch.autograd.grad(dydx, x)[0]
    """)
    first, second = events(doc, "backward")
    assert (first["api"], first["create_graph"], first["result"]) == ("autograd.grad", True, "dydx")
    assert (second["api"], second["create_graph"], second["result"]) == ("autograd.grad", False, "d2")
    assert [s.get("grad_changes") for s in doc["steps"] if s.get("grad_changes")] == []  # no .grad touched
    from gradtutor.explanations import book_for
    from gradtutor.model import Event

    book = book_for("en")
    text = book.explain(Event.make("backward", first["line"], **{k: v for k, v in first.items() if k not in ("kind", "line")}))
    assert "has a graph of its own" in text.title and "without touching any .grad" in text.text
    # The gradient is drawn as a node of its own, computed from x.
    [grad_node] = [n for n in doc["steps"][3]["graph"]["nodes"] if "dydx" in n["names"]]
    assert grad_node["label"] == "grad(y, x)"


def test_requires_grad_set_later_makes_the_tensor_a_leaf_in_the_picture(program):
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        x = torch.ones(2)
        y = x * w
        x.requires_grad_(True)
        z = x * 3
    """)
    before = [n for n in step_at(doc, 4)["graph"]["nodes"] if n["names"] == ["x"]]
    after = [n for n in step_at(doc, 6)["graph"]["nodes"] if n["names"] == ["x"]]
    assert [(n["kind"], n["requires_grad"]) for n in before] == [("const", False)]
    assert [(n["kind"], n["requires_grad"]) for n in after] == [("leaf", True)]


def test_a_no_grad_decorated_function_returns_a_detached_tensor(program):
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        @torch.no_grad()
        def evaluate(t):
            return t * 2
        e = evaluate(w)
        def features(t):
            return (t * 3).detach()
        f = features(w)
    """)
    assert [(e["line"], e["name"], e["how"]) for e in events(doc, "detached")] == [
        (6, "e", "no_grad"), (9, "f", "detach")]


def test_library_code_is_attributed_to_the_users_call_and_worded_for_what_it_is(program):
    doc = run(program, """
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1))
        model = model.to("cpu")
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        out = model(torch.ones(5, 3)).sum()
        out.backward()
        opt.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    """)
    inplace = [(e["line"], e["name"], e.get("how"), e.get("via"), e.get("parameters")) for e in events(doc, "inplace")]
    # Building and converting the model says nothing; BatchNorm's running
    # statistics are buffers, not an optimizer step; Adam's own moment
    # estimates are not the user's tensors.
    assert inplace == [(5, "model", "buffers", "Sequential.forward", 3),
                       (7, "model", "optimizer", "Adam.step", 6)]
    [clipped] = events(doc, "grad-reset")
    assert (clipped["line"], clipped["name"], clipped["how"], clipped["parameters"]) == (8, "model", "changed", 6)


def test_running_statistics_updated_inside_batch_norm_are_counted_with_the_counter(program):
    # BatchNorm's forward bumps num_batches_tracked with add_, where the mode
    # sees it; the running mean and variance change inside F.batch_norm's C
    # call, versions untouched. All three are the module's buffers.
    import subprocess
    import sys

    path = program("""
        import torch
        import torch.nn.functional as F
        bn = torch.nn.BatchNorm1d(4)
        x = torch.randn(8, 4)
        y = bn(x)
        bn.eval()
        y = bn(x)
        inorm = torch.nn.InstanceNorm1d(4, track_running_stats=True)
        z = inorm(torch.randn(2, 4, 5))
        mean, var = torch.zeros(4), torch.ones(4)
        y = F.batch_norm(x, mean, var, training=True)
        y = F.batch_norm(x, mean, var)
    """)
    doc = explain_json(path)
    inplace = [(e["line"], e["name"], e.get("how"), e["op"], e.get("parameters"), e.get("times"))
               for e in events(doc, "inplace")]
    # Nothing at line 7 (eval: the statistics are read) nor at line 12.
    assert inplace == [(5, "bn", "buffers", "add_, batch_norm", 3, None),
                       (9, "inorm", "buffers", "instance_norm", 2, None),
                       (11, "mean", None, "batch_norm", None, None),
                       (11, "var", None, "batch_norm", None, None)]
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", "--width", "200", str(path)],
                          capture_output=True, text=True, timeout=120).stdout
    assert "bn's buffers were updated in place (add_, batch_norm, 3 buffers)" in text


def test_a_loop_variable_moving_on_leaves_nothing_behind_when_no_graph_uses_the_old_tensor(program):
    doc = run(program, """
        import torch
        C = torch.randn(3, 2)
        W = torch.randn(2, 2)
        for p in [C, W]:
            p.requires_grad = True
        x = torch.ones(2, requires_grad=True)
        for t in [x * 2, x * 3]:
            y = t.sum()
    """)
    rebound = [(e["line"], e["name"], e["old_in_graph"]) for e in events(doc, "name-rebound")]
    # p let go of C, which is still named C and in no graph; t let go of x * 2, which y still uses.
    assert (4, "p", False) in rebound and (4, "p", True) not in rebound
    assert (7, "t", True) in rebound


def test_second_backward_causes_are_told_apart(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        p = x * x
        p.sum().backward()
        try:
            p.grad_fn._saved_self
        except RuntimeError:
            pass
        w = torch.ones(2, requires_grad=True)
        h = torch.zeros(2)
        for i in range(2):
            try:
                h = h * w + 1
                h.sum().backward()
            except RuntimeError:
                print("second iteration fails")
    """)
    causes = [(e["line"], e["cause"], e.get("again")) for e in events(doc, "error")]
    assert causes == [(6, "freed-saved-read", None), (14, "second-backward", True)]


def test_an_inplace_error_names_the_inplace_op_that_changed_the_saved_tensor(program):
    doc = run(program, """
        import torch
        c = torch.ones(2, 2, requires_grad=True)
        d = c * 1
        d += 1
        model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sigmoid(), torch.nn.ReLU(inplace=True))
        try:
            model(torch.ones(2, 2)).sum().backward()
        except RuntimeError:
            pass
    """)
    [error] = events(doc, "error")
    assert error["cause"] == "inplace-modified"
    assert (error["modified_at_line"], error["modified_op"]) == (7, "relu(inplace=True)")


def test_an_inplace_error_tells_what_was_saved_what_changed_it_and_whether_in_one_statement(program):
    # torch: "[torch.FloatTensor [2, 2]], which is output 0 of Sigmoid, is at
    # version 1" in each of the first two; "output 0 of Mul" in the third,
    # whose PowBackward0 saved its input a. The model call made the node,
    # changed what it saved (through its ReLU built with inplace=True) and
    # ran the backward: one statement, not three places. Line 21 made the
    # node on its first run and changed what it saved on its second.
    doc = run(program, """
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sigmoid(), torch.nn.ReLU(inplace=True))
        try:
            model(torch.ones(2, 2)).sum().backward()
        except RuntimeError:
            pass
        x = torch.ones(2, requires_grad=True)
        y = torch.sigmoid(x).relu_()
        try:
            y.sum().backward()
        except RuntimeError:
            pass
        a = x * 1.5
        sq = a ** 2
        a.mul_(2)
        try:
            sq.sum().backward()
        except RuntimeError:
            pass
        for i in range(2):
            h = h.relu_() if i else torch.sigmoid(x)
        try:
            h.sum().backward()
        except RuntimeError:
            pass
    """)
    keys = ("line", "node_op", "node_line", "saved_output_of", "modified_at_line", "modified_op", "modified_by",
            "changed_in")
    assert [tuple(e.get(k) for k in keys) for e in events(doc, "error")] == [
        (4, "SigmoidBackward0", 4, "Sigmoid", 4, "relu(inplace=True)", "ReLU(inplace=True)", "backward-statement"),
        (10, "SigmoidBackward0", 8, "Sigmoid", 8, "relu_", None, "same-statement"),
        (17, "PowBackward0", 14, "Mul", 15, "mul_", None, None),
        (23, "SigmoidBackward0", 21, "Sigmoid", 21, "relu_", None, "later-run"),
    ]


def test_an_exception_caught_inside_library_code_is_not_the_users_error(program):
    doc = run(program, """
        import torch
        import torch.utils.checkpoint as cp
        def block(t):
            u = t.sin()
            return u * 2
        x = torch.ones(3, requires_grad=True)
        y = cp.checkpoint(block, x, use_reentrant=False).sum()
        y.backward()
        class Net(torch.nn.Module):
            def forward(self, t):
                return t.reshape(5)
        try:
            Net()(x)
        except RuntimeError:
            pass
    """)
    # torch raises and catches its own _StopRecomputationError inside
    # block() while it recomputes; the user's shape error still shows, where
    # it came back into the user's code.
    assert [(e["line"], e["exception"]) for e in events(doc, "error")] == [(13, "RuntimeError")]


def test_tensors_in_a_named_tuple_are_named_by_their_place(program):
    doc = run(program, """
        import torch
        def repackage_hidden(h):
            if isinstance(h, torch.Tensor):
                return h.detach()
            return tuple(repackage_hidden(v) for v in h)
        lstm = torch.nn.LSTM(3, 4)
        hidden = (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
        out, hidden = lstm(torch.ones(2, 1, 3), hidden)
        hidden = repackage_hidden(hidden)
    """)
    named = [(e["line"], e["name"]) for e in events(doc, "detached") if "name" in e]
    assert named == [(9, "hidden[0]"), (9, "hidden[1]")]
    # (and where it was made, the detach() the return used where it stood)
    assert {(e["line"], e["source"]) for e in events(doc, "detached") if "name" not in e} == {(4, "h")}


def test_each_statement_of_a_semicolon_line_gets_its_own_label(program):
    doc = run(program, """
        import torch
        x0 = torch.tensor(2.0, requires_grad=True)
        u = x0 ** 2; u3 = u ** 3; f = u + u3
        f.backward()
    """)
    step = step_at(doc, 3)
    labels = {n["label"]: n["names"] for n in step["graph"]["nodes"] if n["kind"] == "statement"}
    assert labels == {"x0 ** 2": ["u"], "u ** 3": ["u3"], "u + u3": ["f"]}
    assert [n["line"] for n in step["graph"]["nodes"] if n["kind"] == "statement"] == [3, 3, 3]


def test_each_tensor_of_a_tuple_is_labelled_by_its_own_expression(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        def f(t):
            out = t.exp()
            return out.log_softmax(0), out * 2
        a, b = x * 2, x * 3
        output, hidden = f(x)
    """)
    nodes = doc["steps"][-1]["graph"]["nodes"]
    labels = {n["label"]: n["names"] for n in nodes if n["kind"] == "statement"}
    assert labels["x * 2"] == ["a"] and labels["x * 3"] == ["b"]
    assert labels["out.log_softmax(0)"] == ["output"] and labels["out * 2"] == ["hidden"]


def test_forward_mode_dual_tensors_are_marked_as_such(program):
    doc = run(program, """
        import torch
        import torch.autograd.forward_ad as fwAD
        x = torch.ones(2, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, torch.ones(2))
            y = d * 2
        z = x * 3
    """)
    inside = {n["names"][0]: n.get("dual", False) for n in step_at(doc, 6)["graph"]["nodes"] if n["names"]}
    after = {n["names"][0]: n.get("dual", False) for n in step_at(doc, 7)["graph"]["nodes"] if n["names"]}
    assert inside == {"x": False, "d": True, "y": True}
    assert after["z"] is False and after["y"] is False  # no dual level any more: no tangent


def _modules_to_compare():
    import torch
    import torch.nn.utils.parametrize as parametrize

    torch.manual_seed(0)
    shared = torch.nn.Linear(3, 3)
    tied = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False))
    tied[1].weight = tied[0].weight
    with_none = torch.nn.Linear(3, 3, bias=False)
    with_none.register_parameter("extra", None)
    with_none.register_buffer("scale", torch.ones(3))
    with_none.register_buffer("off", None)
    with_none.register_buffer("temp", torch.zeros(1), persistent=False)
    parametrized = torch.nn.Linear(4, 4)

    class Symmetric(torch.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

    parametrize.register_parametrization(parametrized, "weight", Symmetric())
    return [
        torch.nn.Sequential(shared, torch.nn.ReLU(), shared),
        tied,
        with_none,
        torch.nn.Sequential(torch.nn.BatchNorm1d(3), torch.nn.ModuleDict({"a": torch.nn.Linear(3, 2), "b": None})),
        torch.nn.LSTM(3, 4, num_layers=2),
        torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
        parametrized,
        torch.nn.ModuleList([torch.nn.Conv2d(1, 2, 3), torch.nn.ModuleList([torch.nn.LayerNorm(2)])]),
    ]


@pytest.mark.parametrize("index", range(8))
def test_module_parts_are_what_named_parameters_and_buffers_give(index):
    """The tutor reads a module's parameters and buffers from its own tables
    (calling none of its methods); the result must be what named_parameters()
    and buffers() give: the same tensors, paths and order, each once."""
    from gradtutor.snapshot import module_parts

    module = _modules_to_compare()[index]
    params, buffers = module_parts(module)
    assert [(path, id(p)) for path, p in params] == [(path, id(p)) for path, p in module.named_parameters()]
    assert [id(b) for b in buffers] == [id(b) for b in module.buffers()]


def test_a_change_a_statement_makes_to_what_it_made_itself_is_not_a_change_in_place(program):
    # nn.ReLU(inplace=True) inside model(x), F.relu(..., inplace=True) on a
    # fresh result: steps of computing out and x, which never changed after
    # their lines handed them over (dcgan, wgan_gp_toy, finetuning said
    # "output [changed in place]", "x was changed in place").
    doc = run(program, """
        import torch
        from torch import nn
        import torch.nn.functional as F
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
        x = torch.randn(2, 3)
        out = model(x)
        x = F.relu(x @ torch.ones(3, 3, requires_grad=True), inplace=True)
        out.add_(1)
    """)
    assert [(e["line"], e["name"]) for e in events(doc, "inplace")] == [(8, "out")]
    changed = {s["line"]: [n.get("changed_at") for n in (s.get("graph") or s["graph_delta"])["nodes"] if "out" in n.get("names", ())]
               for s in doc["steps"] if s["line"] in (6, 8)}
    assert changed == {6: [None], 8: [[8]]}


def test_torch_func_transforms_are_not_told_as_the_users_backwards(program):
    # torch.func calls autograd.grad(create_graph=True) on tensors of a level
    # of its own; what the user gets has no graph (func_jacobians_hessians
    # said "the gradient has a graph of its own" at 13 lines).
    doc = run(program, """
        import torch
        from torch.func import grad, jacrev, vjp
        x = torch.randn(3)
        g = grad(lambda t: (t ** 3).sum())(x)
        j = jacrev(torch.sin)(x)
        out, vjp_fn = vjp(torch.sin, x)
        (v,) = vjp_fn(torch.ones(3))
        w = torch.randn(3, requires_grad=True)
        (gw,) = torch.autograd.grad((w ** 2).sum(), w, create_graph=True)
    """)
    assert [(e["line"], e["api"], e["create_graph"]) for e in events(doc, "backward")] == [(9, "autograd.grad", True)]


def test_a_custom_function_that_saved_nothing_frees_nothing_and_its_result_has_a_graph(program):
    # MulConstant keeps only ctx.constant: a second backward through it works
    # (extending_autograd_gradcheck said "1 node freed its saved tensors",
    # and "y was computed without recording a graph").
    doc = run(program, """
        import torch
        class MulConstant(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, c):
                ctx.c = c
                return x * c
            @staticmethod
            def backward(ctx, g):
                return g * ctx.c, None
        x = torch.ones(2, requires_grad=True)
        y = MulConstant.apply(x, 2.5)
        y.sum().backward()
        y.sum().backward()
    """)
    assert events(doc, "detached") == [] and events(doc, "error") == []
    assert [(e["line"], e["freed"]) for e in events(doc, "backward")] == [(12, 0), (13, 0)]
    [node] = [n for n in step_at(doc, 13)["graph"]["nodes"] if "y" in n.get("names", ())]
    assert node["saved"] == "none"


def test_an_optimizer_that_updates_the_parameters_again_and_again_in_one_step_says_how_often(program):
    # LBFGS runs the closure up to max_iter times, updating the parameters
    # before each run after the first.
    doc = run(program, """
        import torch
        model = torch.nn.Linear(2, 1)
        opt = torch.optim.LBFGS(model.parameters(), max_iter=4, tolerance_grad=0, tolerance_change=0)
        x, y = torch.randn(8, 2), torch.randn(8, 1)
        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss
        opt.step(closure)
    """)
    [step] = [e for e in events(doc, "inplace") if e.get("how") == "optimizer"]
    assert (step["line"], step["parameters"], step["times"]) == (10, 2, 4)


def test_switching_requires_grad_is_told_for_a_tensor_and_counted_for_a_module(program):
    # (finetuning's freezing, wgan_gp_toy's critic switched off and on,
    # blitz's a.requires_grad_(True) said nothing.) A switch that changes
    # nothing (line 11) is not one.
    doc = run(program, """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
        model[0].requires_grad_(False)
        a = torch.ones(2)
        a.requires_grad_(True)
        for p in model.parameters():
            p.requires_grad = True
        w = torch.ones(2, requires_grad=True)
        w.requires_grad = False
        w.requires_grad = False
        y = (w * a).sum()
        import io
        buffer = io.BytesIO()
        torch.save(a, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer)
    """)
    said = [(e["line"], e["name"], e["on"], e.get("parameters")) for e in events(doc, "requires-grad")]
    assert said == [(4, "model", False, 2), (6, "a", True, None), (8, "p", True, None), (8, "p", True, None),
                    (10, "w", False, None)]
    # (torch.load makes a tensor that requires grad by switching the flag on
    # it: not the user's switch.)
    assert [e["kind"] for e in step_at(doc, 17)["events"]] == ["name-bound"]


def test_in_a_method_of_a_class_that_is_not_a_module_the_modules_self_holds_are_named(program):
    # A trainer (pinn_burgers_identification's PhysicsInformedNN): its
    # optimizer steps and cleared gradients said nothing, and the picture
    # drew the model's parameters as unnamed "tensor" leaves.
    doc = run(program, """
        import torch
        class Trainer:
            def __init__(self):
                self.model = torch.nn.Linear(3, 1)
                self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
            def step(self, x):
                self.opt.zero_grad()
                loss = self.model(x).pow(2).mean()
                loss.backward()
                self.opt.step()
        t = Trainer()
        for i in range(2):
            t.step(torch.randn(4, 3))
    """)
    said = [(e["kind"], e["line"], e["name"], e.get("parameters")) for e in events_of_kinds(doc, ("inplace", "grad-reset"))]
    assert said == [("inplace", 10, "self.model", 2), ("grad-reset", 7, "self.model", 2), ("inplace", 10, "self.model", 2)]
    nodes = step_at(doc, 9)["graph"]["nodes"]
    assert [n["label"] for n in nodes if n["kind"] == "module"] == ["self.model"]
    assert not [n for n in nodes if n["kind"] == "leaf"]


def events_of_kinds(doc, kinds):
    return [e for s in doc["steps"] for e in s["events"] if e["kind"] in kinds]


def test_a_change_through_a_view_made_on_the_same_line_is_the_viewed_tensors(program):
    # char_rnn's one-hot writes, tensor[0][i] = 1: the view tensor[0] is gone
    # when the step ends, and the change was told nowhere.
    doc = run(program, """
        import torch
        u = torch.zeros(3, 4)
        u[0][1] = 1
        u[1].fill_(2)
        for i in range(6):
            u[2][i % 4] = 1
    """)
    said = [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")]
    assert said[:3] == [(3, "u", "[i] = ..."), (4, "u", "fill_"), (6, "u", "[i] = ...")]


def test_a_change_through_a_state_dict_value_is_the_modules(program):
    # A moving average of a model's weights (timm's ModelEma) changes them
    # through state_dict()'s values: detached tensors that share the memory
    # and version counter of the module's parameters and buffers. Told only
    # as "w was changed in place", the module went on being drawn as unchanged.
    doc = run(program, """
        import torch
        ema = torch.nn.BatchNorm1d(2)
        weights = ema.state_dict()
        w, mean = weights["weight"], weights["running_mean"]
        with torch.no_grad():
            w.mul_(0.5)
        mean.add_(1)
        weights["bias"].zero_()
        d = w.detach()
        d.add_(1)
    """)
    said = [(e["line"], e["name"], e.get("how"), e["op"], e.get("parameters"), e.get("through"))
            for e in events(doc, "inplace")]
    assert said == [(6, "ema", "", "mul_", 1, "w"), (7, "ema", "buffers-other", "add_", 1, "mean"),
                    (8, "ema", "", "zero_", 1, None), (10, "ema", "", "add_", 1, "d")]


@pytest.mark.parametrize("share, changed", [
    ("c.detach()", 6), ("c.view(-1)", 6), ("c.t()", 6), ("c[0]", 3), ("c[:, 1:]", 4), ("c.detach()[0]", 3),
])
@pytest.mark.parametrize("graph", [False, True])
def test_a_change_through_a_tensor_that_shares_a_named_tensors_memory_is_told_as_its(program, share, changed, graph):
    # inplace_ops_learner: d = c.detach(); d += 1 was told only as "d was
    # changed in place", though c changed with it (c._version too), and the
    # next picture called c "unchanged since the last picture".
    doc = run(program, f"""
        import torch
        x = torch.zeros(2, 3, requires_grad={graph})
        c = x * 1
        d = {share}
        d += 1
        print(c._version, int(c.sum()))
    """)
    said = [(e["line"], e["name"], e.get("through"), e["op"], e.get("version")) for e in events(doc, "inplace")]
    assert said == [(5, "c", "d", "add_", 1)]
    assert step_at(doc, 6)["output"] == f"1 {changed}\n"  # (torch agrees: c changed, and its version with it)


@pytest.mark.parametrize("language, title, unchanged", [
    ("en", "• c was changed in place through d (add_)", "unchanged since the last picture: c"),
    ("zh", "• c 通过 d 被原地修改了（add_）", "自上一张图以来没有改变的：c"),
])
def test_the_next_picture_does_not_call_unchanged_what_changed_through_a_detached_tensor(
    program, capsys, language, title, unchanged,
):
    from agreement import check_run
    from gradtutor.cli import main
    from gradtutor.explain import read_program, run_script

    path = str(program("""
        import torch
        c = torch.randn(2, 3, requires_grad=True)
        d = c.detach()
        d += 1
        t = torch.ones(3, requires_grad=True)
    """))
    assert main(["--lang", language, "--plain", "--width", "100", "explain", path]) == 0
    out = capsys.readouterr().out
    assert "   " + title in out.splitlines()
    assert "\n   c [" in out.split("t = torch.ones")[1] and unchanged not in out
    source, code = read_program(path)
    steps: list = []
    run_script(path, source, code, [], capture_output=True, on_step=steps.append)
    assert check_run(steps) == []


@pytest.mark.parametrize("share, changed", [("c.data", 6), ("c.data[0]", 3)])
def test_a_change_through_a_named_tensors_data_is_told_as_its_through_the_name(program, share, changed):
    # (.data shares c's memory, not its version counter: c._version stays 0)
    doc = run(program, f"""
        import torch
        c = torch.zeros(2, 3, requires_grad=True)
        d = {share}
        d += 1
        print(c._version, int(c.sum()))
    """)
    said = [(e["line"], e["name"], e.get("how"), e.get("through"), e["op"]) for e in events(doc, "inplace")]
    assert said == [(4, "c", "data", "d", "add_")]
    assert step_at(doc, 5)["output"] == f"0 {changed}\n"


@pytest.mark.parametrize("copy", ["c.clone()", "c + 0", "c.detach().clone()", "c[[0]]"])
def test_a_change_of_a_copy_is_not_told_as_the_originals(program, copy):
    doc = run(program, f"""
        import torch
        c = torch.zeros(2, 3)
        d = {copy}
        d += 1
        print(c._version)
    """)
    said = [(e["line"], e["name"], e.get("through")) for e in events(doc, "inplace")]
    assert said == [(4, "d", None)]


@pytest.mark.parametrize("swap", ["d = c.data", "d = c[0:1]", "d = c.detach()"])
def test_a_tensor_given_other_memory_is_not_told_changed_through_what_shared_its_old_memory(program, swap):
    # d = c.data; c.data = ...; d += 1 was told as "c was changed through
    # .data", though c no longer had that memory.
    doc = run(program, f"""
        import torch
        c = torch.zeros(3)
        {swap}
        c.data = torch.ones(3)
        d += 1
        print(c.tolist())
    """)
    said = [(e["line"], e["name"], e.get("through")) for e in events(doc, "inplace")]
    assert said[1:] == [(5, "d", None)]


def test_buffers_are_told_as_updated_by_running_the_module_only_when_it_ran(program):
    # "Line 4 ran bn, which updated 3 of its buffers" was said of
    # load_state_dict() too, which copies into them without running bn.
    doc = run(program, """
        import torch
        bn = torch.nn.BatchNorm1d(2)
        other = torch.nn.BatchNorm1d(2)
        y = bn(torch.randn(4, 2))
        bn.load_state_dict(other.state_dict())
    """)
    said = [(e["line"], e["name"], e.get("how"), e.get("parameters")) for e in events(doc, "inplace")]
    assert said == [(4, "bn", "buffers", 3), (5, "bn", "", 2), (5, "bn", "buffers-other", 3)]


def test_what_a_custom_functions_backward_does_is_seen_as_the_users_code_is(program):
    # The engine calls it inside the observer's handling of y.backward(),
    # where torch had taken the observer's mode off: scatter_ in
    # extending_autograd_gradcheck's backward said nothing. (Autograd records
    # nothing in a backward by design: not told as the user's no_grad.)
    doc = run(program, """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2
            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                out = g * torch.ones_like(x)
                out.mul_(2)
                return out
        x = torch.ones(2, requires_grad=True)
        Double.apply(x).sum().backward()
        y = (x * 3).sum()
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [(11, "out", "mul_")]
    assert events(doc, "detached") == []
    assert doc["steps"][-1]["line"] == 15  # stepping went on past the backward


def test_what_a_tensor_hook_does_is_seen_as_the_users_code_is(program):
    doc = run(program, """
        import torch
        x = torch.ones(2, requires_grad=True)
        def hook(g):
            h = g.clone()
            h.mul_(2)
            return h
        y = x * 3
        y.register_hook(hook)
        y.sum().backward()
        print(x.grad)
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [(5, "h", "mul_")]
    assert doc["steps"][-1]["output"] == "tensor([6., 6.])\n"


def test_a_change_in_place_of_a_tensor_without_a_graph_the_statement_made_is_not_the_names(program):
    # x = (x * 2).relu_(): the product, made by the statement (no graph to
    # tell it by), was changed, not the tensor x named (blitz_gentle_intro's
    # nn.ReLU(inplace=True) after a BatchNorm said "x was changed in place").
    # Through a view only the statement named, the view's base changed.
    doc = run(program, """
        import torch
        data = torch.tensor([-1.0, 2.0])
        x = data
        x = (x * 2).relu_()
        y = data
        y = y.add_(1)
        zs = [torch.zeros(2)]
        w = zs[0].mul_(2)
        v = data[0:1].add_(5)
        print(data)
    """)
    assert [(e["line"], e["name"]) for e in events(doc, "inplace")] == [(6, "data"), (8, "zs[0]"), (9, "data")]


def test_a_functions_arguments_are_bound_before_its_first_line(program):
    # def f(x): x = x * 2 moves x on (the caller's tensor stays in the graph);
    # it was told "x names a tensor", as if x were new (nanogpt's Block.forward).
    # An in-place op on what the first line made is not a change of x.
    doc = run(program, """
        import torch
        def f(x, t):
            x = x * 2
            t = (t * 2).relu_()
            return x * 3
        a = torch.ones(2, requires_grad=True)
        out = f(a * 1, torch.ones(2))
    """)
    in_f = [(e["line"], e["kind"], e.get("name"), e.get("old_in_graph")) for e in doc_events_between(doc, 3, 4)]
    assert in_f == [(3, "name-rebound", "x", True), (4, "name-rebound", "t", False)]
    assert events(doc, "inplace") == []
    ghost = [n for n in step_at(doc, 3)["graph"]["nodes"] if n.get("former_names") == ["x"]]
    assert len(ghost) == 1  # drawn "x (old)", as the event says


def doc_events_between(doc, first: int, last: int):
    return [e for s in doc["steps"] if first <= s["line"] <= last for e in s["events"]]


def test_a_module_node_says_how_many_of_its_parameters_require_grad_and_an_old_one_what_is_in_the_graph(program):
    # A frozen model drawn "model [grad]: 11 parameters" read as if all were
    # trained (blitz_gentle_intro); "layer (old): 1 parameter" beside
    # "layer: 2 parameters" read as one module of two sizes (parametrizations).
    doc = run(program, """
        import torch
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
        for p in net[0].parameters():
            p.requires_grad = False
        out = net(torch.randn(2, 3)).sum()
        layer = torch.nn.Linear(3, 3)
        y = layer.weight * 2
        layer = torch.nn.Linear(3, 3)
    """)
    details = {(n["label"], tuple(n.get("former_names", ()))): n["detail"]
               for s in doc["steps"] for n in s["graph"]["nodes"] if n["kind"] == "module"}
    assert details == {
        ("net", ()): "4 parameters (2 requiring grad), 16 values",
        ("layer", ()): "2 parameters, 12 values",
        ("layer", ("layer",)): "1 parameter in the graph, 9 values",
    }


def test_a_const_a_called_function_of_the_programs_reads_is_drawn_going_into_its_line_only(program):
    # loss = m(x).sum(), whose forward computes self.w * x: x was drawn going
    # into the sum as well (saved_tensors_hooks), an edge autograd never had.
    # Passed to a library module, it goes into the line that called it.
    doc = run(program, """
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.ones(3))
            def forward(self, x):
                return self.w * x
        m = M()
        x = torch.randn(3)
        loss = m(x).sum()
        lin = torch.nn.Linear(3, 1)
        out = lin(x).sum()
        both = (m(x) * x).sum()
    """)
    graph = doc["steps"][-1]["graph"]
    label = {n["id"]: n.get("names", [None])[0] if n.get("names") else n["label"] for n in graph["nodes"]}
    into = {label[dst] for src, dst in graph["edges"] if label[src] == "x"}
    # (both's line reads x itself too: its MulBackward0 saved it)
    assert into == {"self.w * x", "out", "both"}


def test_under_no_grad_what_is_made_from_a_result_cut_off_is_cut_off_too(program):
    # a = drop(proj(x)) in train mode: the dropout made a new tensor from the
    # linear's, and a was not told (nanogpt's generate() forwards); in eval
    # mode the dropout returned its input, which was.
    doc = run(program, """
        import torch
        proj = torch.nn.Linear(3, 3)
        drop = torch.nn.Dropout(0.5)
        x = torch.randn(2, 3)
        ln = torch.nn.LayerNorm(3)
        with torch.no_grad():
            a = drop(proj(x))
            c = proj(x).relu() * 2
            d = x * 2
            t = proj(x).argmax(dim=1)
            u = proj.weight > 0
            y = ln(x)
    """)
    # (an index or a mask never has a graph: no_grad is not why t and u have
    # none; LayerNorm's weight goes to F.layer_norm as a keyword argument)
    assert [(e["line"], e["name"]) for e in events(doc, "detached")] == [(7, "a"), (8, "c"), (12, "y")]


def test_what_a_pack_hook_meets_untagged_belongs_to_the_statement_whose_op_called_it(program):
    # An nn.Linear's addmm saves weight.t(), which torch made where the
    # observer does not see; the pack hook's step met it first and labelled it
    # with the hook's line: "lin ──▶ if t.numel() > 0 ──▶ lin(h) = out".
    doc = run(program, """
        import torch
        def pack(t):
            if t.numel() > 0:
                return t
        def unpack(t):
            return t
        lin = torch.nn.Linear(3, 2)
        h = torch.randn(5, 3, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = lin(h)
        out.sum().backward()
    """)
    labels = {n["label"] for n in doc["steps"][-1]["graph"]["nodes"] if n["kind"] == "statement"}
    assert labels == {"lin(h)"}


def test_a_model_made_again_after_its_graph_was_run_backward_through_is_told_as_moved_on(program):
    # Its parameters are drawn "model (old)" in the freed graph: the step says
    # why (nothing was said, and the picture fell under the line before).
    doc = run(program, """
        import torch
        model = torch.nn.Linear(3, 1)
        loss = model(torch.rand(2, 3)).sum()
        loss.backward()
        model = torch.nn.Linear(3, 1)
    """)
    rebound = [(e["line"], e.get("module"), e["old_in_graph"]) for e in events(doc, "name-rebound") if e["name"] == "model"]
    assert rebound == [(5, True, False)]


def test_a_change_through_a_view_the_statement_made_of_a_tensor_with_a_graph_is_that_tensors(program):
    doc = run(program, """
        import torch
        w = torch.ones(3, requires_grad=True)
        data = w * 2
        v = data[0:1].add_(5)
        s = (w * 3)[0:1].add_(5)
    """)
    # (line 5: the view and what it is a view of, both made by the line)
    assert [(e["line"], e["name"]) for e in events(doc, "inplace")] == [(4, "data")]


def test_a_global_changed_in_place_in_a_function_is_told_as_at_module_level(program):
    # The function's names are its locals; its globals are names it sees too:
    # from its second step on (or its first, with tensor arguments bound), a
    # change of a global was taken for a change of a tensor the step made,
    # and dropped.
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        def f():
            v = torch.zeros(2)
            (w * 2).sum().backward()
            opt.step()
            with torch.no_grad():
                w.mul_(2)
        t = torch.zeros(2)
        def g(x):
            t.sub_(x)
        f()
        g(torch.ones(2))
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [
        (7, "w", "add_"), (9, "w", "mul_"), (12, "t", "sub_"),
    ]


def test_a_global_hidden_by_a_local_is_told_changed_by_its_shown_name(program):
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        (w * 2).sum().backward()
        opt = torch.optim.SGD([w], lr=0.1)
        def f(w):
            v = w * 2
            opt.step()
            w = torch.zeros(2); opt.step()
        f(torch.ones(2, requires_grad=True))
    """)
    assert [(e["line"], e["name"]) for e in events(doc, "inplace")] == [(7, "global w"), (8, "global w")]


def test_in_a_function_what_a_step_made_and_the_views_it_made_are_told_by_what_the_names_held(program):
    # The module-level cases of _held_before, on globals seen from a function
    # (x declared global: the product the statement made changed, not x),
    # past the iterations shown too (after steps let pass without a look).
    doc = run(program, """
        import torch
        x = torch.tensor([-1.0, 2.0])
        data = torch.tensor([-1.0, 2.0])
        zs = [torch.zeros(2)]
        def f():
            global x, y
            v = torch.zeros(2)
            x = (x * 2).relu_()
            w = zs[0].mul_(2)
            u = data[0:1].add_(5)
            y = (data * 2).relu_()
            for i in range(6):
                x = (x * 2).relu_()
        f()
    """)
    assert [(e["line"], e["name"]) for e in events(doc, "inplace")] == [(9, "zs[0]"), (10, "data")]
    assert all(not note["repeated"] for note in (s["hidden_before"] for s in doc["steps"] if "hidden_before" in s))


def test_a_global_bound_to_another_tensor_by_code_not_looked_at_is_known_bound(program):
    # A function's steps let pass (nothing new to show, no torch call) and a
    # generator's suspension both run code that may bind a global anew: the
    # change of the tensor it holds then is told, not taken for one of a
    # tensor the step made.
    doc = run(program, """
        import torch
        w = torch.ones(2)
        bank = {0: torch.ones(2), 1: torch.zeros(2)}
        def reset(i):
            global w
            w = bank[i % 2]
        def f():
            v = torch.zeros(2)
            for i in range(6):
                reset(i)
                w.add_(1)
        def gen():
            v = torch.zeros(2)
            yield
            w.mul_(2); u.mul_(2)
            yield
        f()
        g = gen()
        next(g)
        w = torch.zeros(2)
        u = torch.ones(2)
        next(g)
    """)
    shown = [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")]
    assert shown == [(11, "w", "add_")] * 3 + [(15, "w", "mul_"), (15, "u", "mul_")]
    assert repeated_counts(doc, "inplace") == [("w", 3)]


def repeated_counts(doc: dict, kind: str) -> list[tuple[str, int]]:
    """(name, count) of the ``kind`` events the notes on hidden steps tell again."""
    return [
        (e["name"], e["count"]) for s in doc["steps"] if "hidden_before" in s
        for e in s["hidden_before"]["repeated"] if e["kind"] == kind
    ]


def test_a_functions_first_step_tells_what_its_names_held_before_it(program):
    # Before a function's first step its own names held only its arguments
    # (no tensor among them here), and its globals what they held when it was
    # called: x = (x * 2).relu_() changed the product the statement made, not
    # x, as at module level (line 19). What a global or closure variable held
    # before the call and the step changed in place is told.
    doc = run(program, """
        import torch
        x = torch.ones(3)
        w = torch.ones(3)
        z = None
        def f():
            global x
            x = (x * 2).relu_()
        def g(n):
            y = (w * n).relu_()
        def h():
            global z
            z = (torch.ones(2) * 2).relu_()
        def k():
            global x
            x = x.relu_()
        def m():
            w.mul_(2)
        f(); g(2); h(); k(); m()
        x = (x * 2).relu_()
        def outer():
            t = torch.ones(2)
            def inner():
                t.mul_(2)
            inner()
        outer()
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [
        (15, "x", "relu_"), (17, "w", "mul_"), (23, "t", "mul_"),
    ]
    rebound = [(e["line"], e["name"]) for e in events(doc, "name-rebound")]
    assert (18, "x") in rebound and (19, "x") in rebound


def test_a_global_a_functions_first_step_binds_unlooked_at_is_known_bound_at_its_next(program):
    # Past the iterations shown, a call's first step (no torch call) is let
    # pass without a look; it bound x to another tensor, which the next step
    # changes in place: x's tensor, told as the calls shown told it (and
    # counted in the note before line 10).
    doc = run(program, """
        import torch
        x = torch.ones(2)
        bank = {0: torch.ones(2), 1: torch.zeros(2)}
        def reset(i):
            global x
            x = bank[i % 2]
            x.add_(1)
        for i in range(6):
            reset(i)
        y = x * 2
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [(7, "x", "add_")] * 3
    assert repeated_counts(doc, "inplace") == [("x", 3)]


def test_a_tensor_a_name_held_before_the_step_is_told_by_that_name(program):
    # a, b = b, a.add_(1): a's tensor changed (b names it now); it was taken
    # for a tensor the statement made, and dropped.
    doc = run(program, """
        import torch
        a = torch.ones(2)
        b = torch.zeros(2)
        a, b = b, a.add_(1)
    """)
    assert [(e["line"], e["name"]) for e in events(doc, "inplace")] == [(4, "a")]


def test_a_closure_variable_bound_anew_while_its_generator_was_suspended_is_known_bound(program):
    # The generator's w is the enclosing function's: bound to another tensor
    # there while the generator waited at its yield, it holds that one when
    # the generator's next step changes it.
    doc = run(program, """
        import torch
        def outer():
            w = torch.ones(2)
            def gen():
                v = torch.zeros(2)
                yield
                w.add_(1)
                yield
            g = gen()
            next(g)
            w = torch.zeros(2)
            next(g)
        outer()
    """)
    assert [(e["line"], e["name"], e["op"]) for e in events(doc, "inplace")] == [(7, "w", "add_")]


def test_a_view_made_under_no_grad_then_changed_in_place_does_not_stop_the_narration(program):
    # torch refuses to give d a node (d.grad_fn and d.is_leaf raise) once
    # d += 1 changed c through it: every step after line 5 was "could not
    # follow line N", the rest of the program not narrated.
    doc = explain_json(program("""
        import torch
        c = torch.ones(3, requires_grad=True) * 2
        with torch.no_grad():
            d = c[0]
            d += 1
        print(c)
        e = c * 3
    """))
    steps = {s["line"]: s for s in doc["steps"]}
    assert [e["kind"] for e in steps[5]["events"]] == ["inplace"] and steps[5]["events"][0]["name"] == "c"
    assert [e["name"] for e in steps[7]["events"] if e["kind"] == "name-bound"] == ["e"]


def test_a_detach_a_line_uses_where_it_stands_is_told_by_the_tensor_it_copies(program):
    # netD(fake.detach()), a GAN's discriminator step, said nothing: only a
    # named result of detach() was told. Library code's own detach() calls
    # are not told, nor one a function returned (its caller names it).
    doc = run(program, """
        import torch
        w = torch.ones(2, requires_grad=True)
        fake = w * 3
        print(fake)
        torch.testing.assert_close(fake, fake)
        def repack(h):
            return h.detach()
        hid = repack(fake)
        out = (fake.detach() * w).sum()
        out.backward()
    """)
    told = [(e["line"], e.get("name"), e.get("source")) for e in events(doc, "detached")]
    assert told == [(7, None, "h"), (8, "hid", "fake"), (9, None, "fake")]
    step = step_at(doc, 9)
    assert [e["kind"] for e in step["events"]][:1] == ["detached"]


def test_a_gradient_added_to_on_a_leaf_no_name_holds_is_told_with_a_count(program):
    # torch.tensor(..., requires_grad=True).float() keeps the copy; the leaf
    # before .float() lives on in the graph and its .grad grows with every
    # backward (a tutorial's PINN inputs), which no zero_grad reaches.
    path = program("""
        import torch
        class Inputs:
            def __init__(self):
                self.x = torch.tensor([1.0, 2.0], requires_grad=True).float()
        data = Inputs()
        w = torch.nn.Parameter(torch.ones(2))
        for i in range(2):
            w.grad = None
            loss = (data.x * w).sum()
            loss.backward()
    """)
    doc = explain_json(path)
    added = events(doc, "grad-accumulated")
    assert [(e["line"], e.get("leaves"), e.get("name")) for e in added] == [(10, 1, None)]
    assert step_at(doc, 10, 1)["events"][-1] == added[0]
    import contextlib
    import io

    from gradtutor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "--plain", "--width", "100", str(path)])
    assert "the .grad of 1 leaf no name holds was added to, not replaced" in out.getvalue()


def test_parameters_library_code_changes_through_data_are_counted_once_each(program):
    # An old-style update in a module of its own (library code to the tutor):
    # each p.data is a view made anew and gone by the step's end; the
    # parameters it was the data of are what is counted.
    helper = program("""
        def sgd(model, lr):
            for p in model.parameters():
                p.data.add_(p.grad.data, alpha=-lr)
    """, name="oldsgd.py")
    doc = explain_json(program("""
        import torch
        import oldsgd

        model = torch.nn.Linear(3, 2)
        model(torch.ones(1, 3)).sum().backward()
        oldsgd.sgd(model, 0.1)
    """))
    assert helper.exists()
    said = [(e["line"], e["name"], e.get("parameters"), e.get("times")) for e in events(doc, "inplace")]
    assert said == [(6, "model", 2, None)]
