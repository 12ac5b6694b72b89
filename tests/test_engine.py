"""The engine on its own: stepping, loops, output capture, references."""

from __future__ import annotations

from collections import Counter
import traceback
from pathlib import Path

import pytest
import torch

from conftest import events, explain_json, step_at
from gradtutor.engine import Engine


def run_source(source: str, **kwargs):
    engine = Engine(capture_output=True, **kwargs)
    engine.add_source("<test>", source)
    result = engine.run_code(compile(source, "<test>", "exec"))
    return engine, result


def test_a_deleted_tensor_is_collected_while_the_tutor_runs():
    source = "\n".join([
        "import torch",
        "x = torch.ones(3, requires_grad=True)",
        "y = (x * 2).exp()",
        "y.sum().backward()",
        "ref = __import__('weakref').ref(y)",
        "ref_x = __import__('weakref').ref(x)",
        "del y",
        "del x",
        "alive = (ref() is not None, ref_x() is not None)",
    ])
    engine, result = run_source(source)
    assert result.exception is None
    assert engine.namespace["alive"] == (False, False)


def test_the_namespace_keeps_nothing_of_a_dropped_graph():
    source = "\n".join([
        "import torch, weakref",
        "x = torch.ones(3, requires_grad=True)",
        "h = x.exp()",
        "out = (h * 3).sum()",
        "ref = weakref.ref(h)",
        "del h, out",
        "gone = ref() is None",
    ])
    engine, _ = run_source(source)
    assert engine.namespace["gone"] is True


def test_a_long_loop_keeps_no_table_that_grows_with_it():
    # Each iteration leaves the old y and z behind ("y (old)" ghosts, dead
    # nodes): what the tutor keeps of them must not grow with the loop.
    def kept(iterations):
        engine, result = run_source("\n".join([
            "import torch",
            "x = torch.ones(3, requires_grad=True)",
            f"for i in range({iterations}):",
            "    y = x * 2",
            "    z = y.sum()",
        ]))
        assert result.exception is None
        return {
            "ghosts": sum(map(len, engine.snapshotter._former.values())),
            "node tags": len(engine.registry.node_tags),
        }

    short, long = kept(300), kept(3000)
    assert all(long[key] <= max(2 * short[key], 600) for key in short), (short, long)


def test_multi_line_statement_is_one_step():
    source = "import torch\nx = torch.ones(\n    2,\n    requires_grad=True,\n)\ny = (x *\n     2)\n"
    _, result = run_source(source)
    assert [(s.line, s.source.splitlines()[0]) for s in result.steps] == [
        (1, "import torch"), (2, "x = torch.ones("), (6, "y = (x *"),
    ]


def test_loop_shows_three_iterations_then_only_steps_with_events():
    source = "\n".join([
        "import torch",
        "x = torch.ones(2, requires_grad=True)",
        "for i in range(10):",
        "    y = x * i",
        "    if i == 7:",
        "        y.sum().backward()",
        "        y.sum().backward()",
    ]) + "\n"
    _, result = run_source(source)
    body = [s for s in result.steps if s.line == 4]
    assert [s.iteration for s in body] == [1, 2, 3]
    error_steps = [s for s in result.steps if any(e.kind == "error" for e in s.events)]
    assert [(s.line, s.iteration) for s in error_steps] == [(7, 1)]
    assert result.hidden_steps > 0


def test_max_iterations_option(program):
    path = program("for i in range(6):\n    v = i\n")
    doc = explain_json(path)
    assert len([s for s in doc["steps"] if s["line"] == 2]) == 3
    doc = explain_json(path, options=("--max-iterations", "5"))
    assert len([s for s in doc["steps"] if s["line"] == 2]) == 5


def test_json_output_holds_prints_even_when_the_program_fails(program):
    doc = explain_json(program("print('hello')\nprint('bye', end='')\nraise ValueError('boom')\n"))
    assert [s["output"] for s in doc["steps"]] == ["hello\n", "bye", ""]
    assert doc["exception"]["type"] == "ValueError"
    assert "line 3" in doc["exception"]["traceback"]
    assert "gradtutor" not in doc["exception"]["traceback"]


def test_user_traceback_has_no_tutor_frames(program):
    doc = explain_json(program("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\ny.backward()\ny.backward()\n"))
    tb = doc["exception"]["traceback"]
    assert tb.startswith("Traceback (most recent call last):")
    assert "/gradtutor/" not in tb and "overrides.py" not in tb
    assert 'line 5, in <module>' in tb


def test_script_sees_argv_name_and_file(program):
    path = program("import sys\nprint(__name__, sys.argv[1:], __file__.endswith('prog.py'))\n")
    doc = explain_json(path, "a", "--b")
    assert doc["steps"][-1]["output"] == "__main__ ['a', '--b'] True\n"


def test_nodes_are_labelled_with_the_line_inside_a_function_that_created_them(program):
    doc = explain_json(program("""
        import torch

        def forward(x):
            h = x.exp()
            return h.sum()

        x = torch.ones(2, requires_grad=True)
        loss = forward(x)
    """))
    final = doc["steps"][-1]["graph"]
    labels = {n["label"]: n["line"] for n in final["nodes"] if n["kind"] == "statement"}
    assert labels == {"x.exp()": 4, "h.sum()": 5}


def test_a_statement_that_runs_the_users_code_midway_is_drawn_in_parts(program):
    # model(x) runs Block.forward (line 10) between the ops line 14 makes itself:
    # the line's first Linear feeds line 10, whose result feeds the last Linear.
    doc = explain_json(program("""
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                return self.lin(x).relu()

        model = nn.Sequential(nn.Linear(3, 4), Block(), nn.Linear(4, 1))
        x = torch.randn(2, 3)
        loss = model(x).sum()
    """))
    graph = doc["steps"][-1]["graph"]
    statements = {n["id"]: n for n in graph["nodes"] if n["kind"] == "statement"}
    [first, block, second] = statements.values()
    assert (first["line"], block["line"], second["line"]) == (14, 10, 14)
    assert second["id"] == first["id"] + "~2" and second["names"] == ["loss"] and first["names"] == []
    # The first part is what the line made on the way, not its value.
    assert first.get("inside") is True and "inside" not in second
    edges = {tuple(e) for e in graph["edges"] if e[0] in statements and e[1] in statements}
    assert edges == {(first["id"], block["id"]), (block["id"], second["id"])}
    # x went into the first Linear: the first part.
    [x] = [n["id"] for n in graph["nodes"] if n.get("names") == ["x"]]
    assert [e[1] for e in graph["edges"] if e[0] == x] == [first["id"]]


@pytest.mark.parametrize("expression, into", [
    ("(inner(w * 3) * data).sum()", "last"),  # data is read after inner's line ran
    ("(inner(w * data) * 2).sum()", "first"),  # data is read before it
])
def test_a_const_is_drawn_into_the_part_of_a_statement_that_read_it(program, expression, into):
    """A statement drawn in parts (its own ops before and after the line
    of a call it made): a const it read goes into the part whose op took
    it, not into whichever part comes first."""
    doc = explain_json(program(f"""
        import torch
        w = torch.ones(3, requires_grad=True)
        data = torch.ones(3)
        def inner(v):
            return v * 2
        loss = {expression}
    """))
    graph = doc["steps"][-1]["graph"]
    parts = [n["id"] for n in graph["nodes"] if n["kind"] == "statement" and n["line"] == 6]
    assert len(parts) == 2
    [data] = [n["id"] for n in graph["nodes"] if n.get("names") == ["data"]]
    assert [e[1] for e in graph["edges"] if e[0] == data] == [parts[-1] if into == "last" else parts[0]]


def test_the_graph_of_a_gradient_made_with_create_graph_belongs_to_the_backward_line(program):
    doc = explain_json(program("""
        import torch
        x = torch.tensor(3.0, requires_grad=True)
        y = x ** 4
        y.backward(create_graph=True)
        first = x.grad
    """))
    step = doc["steps"][-1]
    [node] = [n for n in step["graph"]["nodes"] if n["names"] == ["first"]]
    assert node["line"] == 4 and node["label"] == "y.backward(create_graph=True)"


def _explain_text(path) -> str:
    import contextlib
    import io

    from gradtutor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "--plain", "--width", "100", str(path)])
    return out.getvalue()


def test_what_a_line_handed_to_a_function_of_the_programs_is_drawn_inside_it(program):
    # nanogpt_lecture_gpt: self.ln2(x) of 'x = x + self.ffwd(self.ln2(x))' was
    # drawn 'x + self.ffwd(self.ln2(x))', the line's words, as if it were the
    # line's value; the value is the part after ffwd's line.
    path = program("""
        import torch
        from torch import nn

        class FeedForward(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 4)

            def forward(self, x):
                return self.net(x)

        ffwd = FeedForward()
        ln = nn.LayerNorm(4)
        x = torch.randn(2, 4, requires_grad=True)
        y = x + ffwd(ln(x))
    """)
    graph = explain_json(path)["steps"][-1]["graph"]
    statements = [(n["line"], n["names"], n.get("inside", False)) for n in graph["nodes"] if n["kind"] == "statement"]
    assert statements == [(15, [], True), (10, [], False), (15, ["y"], False)]
    text = _explain_text(path)
    assert "x [leaf] --> inside x + ffwd(ln(x)) [new] --> self.net(x) --> x + ffwd(ln(x)) = y [new]" in text
    assert "x [leaf] --> x + ffwd(ln(x)) [new]" not in text


def test_a_custom_functions_node_is_the_line_that_called_it_not_a_line_of_its_jvp(program):
    # forward_ad_usage: the custom Function's node, met first in its jvp, was
    # taken for jvp's line: 'gI * ctx.result = dual_output, jvp'.
    doc = explain_json(program("""
        import torch
        import torch.autograd.forward_ad as fwAD

        class Exp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = torch.exp(x)
                ctx.result = result
                return result

            @staticmethod
            def jvp(ctx, t):
                out = t * ctx.result
                return out

        primal = torch.randn(3, dtype=torch.double, requires_grad=True)
        with fwAD.dual_level():
            dual_input = fwAD.make_dual(primal, torch.randn(3, dtype=torch.double))
            dual_output = Exp.apply(dual_input)
            jvp = fwAD.unpack_dual(dual_output).tangent
    """))
    graph = step_at(doc, 20)["graph"]
    statements = {n["id"]: (n["line"], n["names"]) for n in graph["nodes"] if n["kind"] == "statement"}
    assert sorted(statements.values()) == [(13, ["jvp"]), (18, ["dual_input"]), (19, ["dual_output"])]
    by_line = {line: node_id for node_id, (line, _) in statements.items()}
    edges = {tuple(e) for e in graph["edges"]}
    assert {(by_line[18], by_line[19]), (by_line[19], by_line[13])} <= edges
    # In jvp, the line calling apply runs still: its node is drawn inside it.
    in_jvp = [(n["line"], n["names"], n.get("running", False)) for n in step_at(doc, 13)["graph"]["nodes"]
              if n["kind"] == "statement"]
    assert in_jvp == [(18, ["dual_input"], False), (19, [], True), (13, ["out"], False)]


def _statement_names(step: dict) -> dict[int, set[str]]:
    """line -> the names of its statement node, in a step's graph."""
    return {n["line"]: set(n["names"]) for n in step["graph"]["nodes"] if n["kind"] == "statement"}


def test_a_statement_is_not_named_by_what_a_function_it_called_named(program):
    # lpe_legendre_function: in the custom Function's backward, the line was
    # drawn 'a + b * P3(c + d * x) = input, y_pred'; input is backward's name
    # for c + d * x, which the line handed to P3, not the line's value.
    path = program("""
        import torch

        class P3(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return input ** 3

            @staticmethod
            def backward(ctx, grad_output):
                input, = ctx.saved_tensors
                return grad_output * 3 * input ** 2

        x = torch.ones(3, requires_grad=True)
        y = 2 * P3.apply(x + 1)
        y.sum().backward()
    """)
    doc = explain_json(path)

    def statements(line: int) -> list[tuple[list[str], str]]:
        return [
            (n["names"], "running" if n.get("running") else "inside" if n.get("inside") else "")
            for n in step_at(doc, line)["graph"]["nodes"] if n["kind"] == "statement"
        ]

    # In forward, the line runs still: what it made so far is drawn inside it.
    assert statements(6) == [(["input"], "running")]
    assert statements(15) == [(["y"], "")]
    # In backward, input is drawn by its name as what the line made on the way.
    assert statements(11) == statements(12) == [(["input"], "inside"), (["y"], "")]
    text = _explain_text(path)
    assert "= input, y" not in text
    assert "x [leaf] --> inside 2 * P3.apply(x + 1) = input --> 2 * P3.apply(x + 1) = y" in text


def test_a_return_inside_a_with_block_is_named_by_the_value_it_returned(program):
    # saved_tensors_hooks: the unpack hook drew 'self.module(*args, **kwargs)
    # = tensor_or_sctf, out'; tensor_or_sctf holds the weight.t() the Linear
    # saved. The return ends before the with block does: its value comes at
    # the block's end, when the frame returns.
    doc = explain_json(program("""
        import torch

        def pack(t):
            return t

        def unpack(t):
            return t

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(2, 2)

            def forward(self, x):
                with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
                    return self.lin(x)

        model = Wrap()
        out = model(torch.ones(1, 2, requires_grad=True))
        out.sum().backward()
    """))
    statements = [
        (n["line"], n["names"], n.get("inside", False))
        for step in doc["steps"] if step["function"] == "unpack" for n in step["graph"]["nodes"] if n["kind"] == "statement"
    ]
    assert (16, ["t"], True) in statements and (16, ["out"], False) in statements
    assert all(names in ([], ["t"], ["out"]) for _, names, _ in statements)


def test_the_names_of_a_statements_value_stay_whoever_bound_them(program):
    # Several names of one tensor, two tensors of one statement (c is what h
    # is computed from, inside the LSTM cell), a function's name for its
    # argument, and a name given later: all are names of what a line made.
    doc = explain_json(program("""
        import torch

        def double(t):
            return t * 2

        x = torch.ones(1, 2, requires_grad=True)
        a = b = x * 2
        h, c = torch.nn.LSTMCell(2, 2)(a)
        y = double(h)
        same = y
    """))
    inside = _statement_names(step_at(doc, 4))
    assert inside[7] == {"a", "b"} and inside[8] == {"h", "c", "t"}
    assert _statement_names(doc["steps"][-1]) == {7: {"a", "b"}, 8: {"h", "c"}, 4: {"y", "same"}}


def test_ops_level_lists_every_autograd_node(program):
    path = program("import torch\nx = torch.ones(5)\nw = torch.ones(5, 3, requires_grad=True)\nz = torch.matmul(x, w)\n")
    doc = explain_json(path, options=("--level", "ops"))
    ops = [n["label"] for n in doc["steps"][-1]["graph"]["nodes"]]
    assert ops == ["w", "MmBackward0", "SqueezeBackward4"]
    assert doc["level"] == "ops"


def test_grads_of_large_tensors_are_summarised(program):
    doc = explain_json(program("import torch\nw = torch.ones(20, 20, requires_grad=True)\n(w * 2).sum().backward()\n"))
    grad = doc["steps"][-1]["grads"]["w"]
    assert grad["shape"] == [20, 20] and grad["mean"] == 2.0 and grad["max"] == 2.0


def test_engine_restores_trace_and_torch_function_mode():
    import sys
    before = sys.gettrace()
    run_source("import torch\nx = torch.ones(1, requires_grad=True) * 2\n")
    assert sys.gettrace() is before
    assert not torch._C._is_torch_function_mode_enabled()


def test_a_named_module_is_one_statement_node_with_its_parameter_count(program):
    doc = explain_json(program("""
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        out = model(torch.ones(4)).sum()
    """))
    graph = doc["steps"][-1]["graph"]
    [module] = [n for n in graph["nodes"] if n["kind"] == "module"]
    assert module["label"] == "model" and module["detail"] == "4 parameters, 49 values"
    assert not [n for n in graph["nodes"] if n["kind"] == "leaf"]  # the parameters are inside it
    [stmt] = [n for n in graph["nodes"] if n["kind"] == "statement"]
    assert ["m:model", stmt["id"]] in graph["edges"]


def test_saved_state_agrees_with_torch():
    """Torch is the oracle: a node the snapshot calls freed really refuses its saved tensors."""
    from gradtutor.autograd_graph import iter_nodes, read_saved_state

    source = "\n".join([
        "import torch",
        "x = torch.ones(3, requires_grad=True)",
        "a = x.exp()",
        "b = (a * x).sum()",
        "c = (x + 1).sum()",
        "b.backward()",
    ]) + "\n"
    engine, result = run_source(source)
    ns = engine.namespace
    tags = {}
    for fn in iter_nodes([ns["b"].grad_fn, ns["c"].grad_fn]):
        tag = engine.registry.tag_of(fn)
        tags[tag.node_id] = (tag.saved, read_saved_state(fn, tag.saved_attrs))
    ops = {n.id: n.saved for n in result.steps[-1].snapshot.ops.nodes if n.kind == "op"}
    assert {k: v[0] for k, v in tags.items()} == ops
    assert all(ours == torch_says for ours, torch_says in tags.values())
    # exp and mul saved tensors (freed by b.backward()); sum and add saved none.
    assert sorted(ops.values()) == ["freed", "freed", "none", "none", "none"]


def test_no_color_and_plain_output():
    import io

    from gradtutor.environment import Environment

    env = Environment.from_process({"NO_COLOR": "1", "TERM": "xterm-256color"})
    assert env.color is False
    assert Environment.from_process({"LANG": "zh_CN.UTF-8"}).language == "zh"
    assert Environment.from_process({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}).language == "en"


ORACLE_PROGRAMS = {
    "all": "a = x.exp()\nb = (a * x).sum()\nb.backward()\n",
    "grad-partial": "h = x.exp()\nk = y.sin()\nout = (h * k).sum()\ng, = torch.autograd.grad(out, [y])\n",
    "grad-nonleaf-input": "h = x.exp()\nk = h.cos()\nout = (k * y).sum()\ng, = torch.autograd.grad(out, [h])\n",
    "backward-inputs": "h = x.exp()\nk = y.sin()\nout = (h * k).sum()\nout.backward(inputs=[x])\n",
    "failed-second": "h = x.exp()\nout = (h * h).sum()\nout.backward()\nout2 = (out * y.sum()).sin()\ntry:\n    out2.backward()\nexcept RuntimeError:\n    pass\n",
    # Fails at out's nodes, freed by the first: k's sin, made after them, does not lead to x and never ran.
    "failed-second-inputs": "h = x.exp()\nout = (h * h).sum()\nout.backward()\nk = y.sin()\n"
                            "out2 = (out * k.sum()).sin()\ntry:\n    out2.backward(inputs=[x])\nexcept RuntimeError:\n    pass\n",
    # Fails at sigmoid's node: the nodes run before it (mul_, * 3) are freed, vv's is not.
    "failed-inplace": "vv = x * x\ns = vv.sigmoid()\ns.mul_(2)\nloss = (vv * 3 + s).sum()\n"
                      "try:\n    loss.backward()\nexcept RuntimeError:\n    pass\n",
    "failed-inplace-retain": "vv = x * x\ns = vv.sigmoid()\ns.mul_(2)\nloss = (vv * 3 + s).sum()\n"
                             "try:\n    loss.backward(retain_graph=True)\nexcept RuntimeError:\n    pass\n",
    # Made under saved-tensor hooks, * 3 and exp are not read: worked out as run before sigmoid's node.
    "failed-inplace-hooks": "vv = x * x\ns = vv.sigmoid()\ns.mul_(2)\n"
                            "with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):\n"
                            "    k = (vv * 3).exp()\nloss = (k + s).sum()\n"
                            "try:\n    loss.backward()\nexcept RuntimeError:\n    pass\n",
    "failed-inplace-inputs": "vv = x * x\ns = vv.sigmoid()\ns.mul_(2)\nloss = (vv * 3 + s + y.exp()).sum()\n"
                             "try:\n    loss.backward(inputs=[x])\nexcept RuntimeError:\n    pass\n",
}


@pytest.mark.parametrize("name", sorted(ORACLE_PROGRAMS))
def test_freed_state_is_inferred_as_torch_has_it(name):
    """The tutor works out which nodes a backward freed without unpacking them;
    torch, asked afterwards, must agree."""
    from gradtutor.autograd_graph import iter_nodes, read_saved_state

    source = "import torch\nx = torch.ones(3, requires_grad=True)\ny = torch.ones(3, requires_grad=True)\n"
    engine, result = run_source(source + ORACLE_PROGRAMS[name])
    assert result.exception is None
    roots = [v.grad_fn for v in engine.namespace.values() if isinstance(v, torch.Tensor) and v.grad_fn is not None]
    checked = 0
    for fn in iter_nodes(roots):
        tag = engine.registry.tag_of(fn)
        if tag is not None and tag.saved_attrs:
            assert tag.saved == read_saved_state(fn, tag.saved_attrs), (name, tag.op)
            checked += 1
    assert checked >= 2


def test_a_node_whose_saved_tensor_was_changed_in_place_is_marked_before_backward_fails(program):
    # torch is the oracle: the node the later backward fails at is the one
    # marked, from the step that changed the tensor on; nodes made under
    # saved-tensor hooks are never read (it would run the unpack hook).
    path = program("""
        import torch
        w = torch.randn(3, requires_grad=True)
        a = w * 1.5
        sq = a ** 2
        e = a.exp()
        a.mul_(2)
        calls = []
        def unpack(t):
            calls.append(1)
            return t
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            b = w * 3
            c = b ** 2
        b.add_(1)
        e.sum().backward(retain_graph=True)
        print(len(calls))
        try:
            sq.sum().backward()
        except RuntimeError as err:
            print("modified" if "inplace operation" in str(err) else "other")
    """)
    import subprocess
    import sys

    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert plain.stdout == "0\nmodified\n"
    doc = explain_json(path)
    assert "".join(s["output"] for s in doc["steps"]) == plain.stdout

    def saved(line, label):
        step = next(s for s in doc["steps"] if s["line"] == line)
        [node] = [n for n in step["graph"]["nodes"] if n["label"] == label]
        return node["saved"]

    assert saved(4, "a ** 2") == "present" and saved(6, "a ** 2") == "modified"
    assert saved(6, "a.exp()") == "present"  # exp saved its result, not a
    assert saved(14, "b ** 2") == "present"  # under hooks: not asked (torch would say modified)


def test_a_backward_failing_on_a_changed_tensor_runs_no_unpack_hook_it_did_not_run(program):
    # Finding the node the backward stopped at asks torch of the graph's
    # nodes, but not of those made under saved-tensor hooks: c's exp never
    # ran (pow, run first, fails), so its unpack hook never runs either.
    path = program("""
        import torch
        calls = []
        def unpack(t):
            calls.append(1)
            return t
        w = torch.randn(3, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            c = (w * 3).exp()
        a = w * 1.5
        sq = a ** 2
        a.mul_(2)
        try:
            (sq.sum() + c.sum()).backward()
        except RuntimeError as err:
            print("modified" if "inplace operation" in str(err) else "other")
        print(len(calls))
    """)
    import subprocess
    import sys

    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert plain.stdout == "modified\n0\n"
    doc = explain_json(path)
    assert "".join(s["output"] for s in doc["steps"]) == plain.stdout
    [error] = events(doc, "error")
    assert (error["cause"], error["node_line"]) == ("inplace-modified", 10)


def test_custom_function_and_saved_tensor_hooks_run_as_often_as_without_the_tutor(program):
    path = program("""
        import torch

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return 2 * a * grad

        calls = []

        def pack(t):
            calls.append("pack")
            return t

        def unpack(t):
            calls.append("unpack")
            return t

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tensor([3.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = (Square.apply(x).sum() * y.exp()).sum()
        g, = torch.autograd.grad(out, [y])
        print(calls.count("pack"), calls.count("unpack"), g.tolist())
        Square.apply(x).sum().backward()
        print(x.grad.tolist())
    """)
    import subprocess
    import sys

    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    doc = explain_json(path)
    assert doc["exception"] is None
    assert "".join(s["output"] for s in doc["steps"]) == plain.stdout


def test_forked_dataloader_workers_never_narrate(program):
    path = program("""
        import torch
        from torch.utils.data import Dataset, DataLoader

        class Squares(Dataset):
            def __len__(self):
                return 8
            def __getitem__(self, i):
                x = torch.tensor([float(i)])
                y = x * x
                return x, y

        if __name__ == "__main__":
            loader = DataLoader(Squares(), batch_size=4, num_workers=2)
            w = torch.ones(1, requires_grad=True)
            for x, y in loader:
                loss = ((x * w - y) ** 2).mean()
                loss.backward()
            print(w.grad)
    """)
    import subprocess, sys
    plain = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert plain.stdout == "tensor([-322.])\n"
    assert "in __getitem__()" not in text.stdout  # the workers' steps are not narrated
    assert "tensor([-322.])" in text.stdout
    doc = explain_json(path)
    assert not [s for s in doc["steps"] if s["function"] == "__getitem__"]
    assert "".join(s["output"] for s in doc["steps"]) == plain.stdout


def test_hidden_loop_steps_say_what_they_did_again(program):
    path = program("""
        import torch
        w = torch.ones(2, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        for i in range(8):
            loss = (w * 3).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
        for i in range(6):
            a = i * 2
        print(a)
    """)
    doc = explain_json(path)
    notes = [s["hidden_before"] for s in doc["steps"] if "hidden_before" in s]
    repeated = {(e["kind"], e.get("name") or e.get("root"), e["count"]) for e in notes[0]["repeated"]}
    assert repeated == {("backward", "loss", 5), ("inplace", "w", 5), ("grad-reset", "w", 5)}
    assert notes[1] == {"steps": 7, "repeated": []}  # the second loop's hidden steps did nothing
    import subprocess, sys
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", "--width", "200", str(path)],
                          capture_output=True, text=True, timeout=120).stdout
    flat = " ".join(text.split())
    assert "(26 more repeated steps not shown; what they did was shown above and happened again: " in flat
    assert "w.grad was set to None ×5" in flat
    assert "(7 more repeated steps not shown: nothing new)" in text


def test_a_function_called_again_and_again_has_repeated_steps_not_loop_steps(program):
    """Runs of a line past --max-iterations come from a loop or from a function
    called again and again: the notes say "repeated", which fits both."""
    path = program("""
        import torch
        def f(t):
            u = t * 2
            return u
        a = torch.ones(2, requires_grad=True)
        b = f(a)
        b = f(a)
        b = f(a)
        b = f(a)
        b = f(a)
    """)
    import subprocess, sys
    text = subprocess.run([sys.executable, "-m", "gradtutor", "explain", "--plain", "--width", "200", str(path)],
                          capture_output=True, text=True, timeout=120).stdout
    assert "loop" not in text
    assert "repeated steps not shown" in text


def _gaps(light: dict, full: dict) -> list[tuple[int, Counter, Counter]]:
    """Per step shown in ``light``: how many steps its note says were hidden
    before it and what they did again, beside the steps ``full`` (every step
    shown) has between it and the step shown before it, and what they did."""
    where = [(s["function"], s["line"], s["iteration"], s.get("leaving_block", False)) for s in full["steps"]]
    out, after = [], 0
    for step in light["steps"]:
        at = where.index((step["function"], step["line"], step["iteration"],
                          step.get("leaving_block", False)), after)
        note = step.get("hidden_before", {"steps": 0, "repeated": []})
        told, did = Counter(), Counter()
        for e in note["repeated"]:
            told[(e["kind"], e.get("name") or e.get("root"))] += e["count"]
        for hidden in full["steps"][after:at]:
            for e in hidden["events"]:
                if e["kind"] != "name-bound" and not (e["kind"] == "name-rebound" and not e.get("old_in_graph")):
                    did[(e["kind"], e.get("name") or e.get("root"))] += 1
        out.append((at - after, +did, +told))
        assert note["steps"] == at - after, (step["function"], step["line"], step["iteration"])
        after = at + 1
    return out


HIDDEN_IN_CALLERS = [
    # a caller's hidden steps (its backward) before a step its call shows
    """
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
    """,
    # the same, the call's step shown for something new past its first runs
    """
    import torch
    w = torch.ones(2, requires_grad=True)
    def f(n):
        y = w * 2
        for _ in range(n):
            y = y * 3
        return y.sum()
    for i in range(8):
        loss = f(3 if i == 5 else 1)
        loss.backward()
    """,
    # a generator's hidden steps before a step of its consumer's
    """
    import torch
    w = torch.ones(2, requires_grad=True)
    def batches():
        for i in range(8):
            x = w * i
            yield x.sum()
    for i, loss in enumerate(batches()):
        loss.backward()
        if i == 6:
            w.grad = None
    """,
]


@pytest.mark.parametrize("source", HIDDEN_IN_CALLERS)
def test_a_note_tells_the_steps_hidden_since_the_step_shown_before_it_in_any_frame(program, source):
    """A step shown in a function its caller's hidden steps came before (or a
    caller's after a generator's): its note tells them, not a note further
    on, after steps that ran after them."""
    path = program(source)
    light = explain_json(path)
    full = explain_json(path, options=("--max-iterations", "1000"))
    assert light["hidden_steps"] > 0 and full["hidden_steps"] == 0
    gaps = _gaps(light, full)
    last = [(s["function"], s["line"], s["iteration"]) for s in full["steps"]].index(
        (light["steps"][-1]["function"], light["steps"][-1]["line"], light["steps"][-1]["iteration"]))
    # (those after the last step shown are told by the closing note only)
    assert sum(n for n, _, _ in gaps) + len(full["steps"]) - last - 1 == light["hidden_steps"]
    assert [told for _, _, told in gaps] == [did for _, did, _ in gaps]


@pytest.mark.corpus
def test_each_note_of_a_training_loop_tells_the_steps_hidden_just_before_it(monkeypatch, every_call_stepped):
    """lpe_dynamic_net: an iteration's backward and optimizer step, hidden,
    were told in the note after forward()'s next step shown, not before it."""
    path = Path(__file__).parent / "corpus" / "lpe_dynamic_net.py"
    monkeypatch.chdir(path.parent)
    light = explain_json(path)
    full = explain_json(path, options=("--max-iterations", "1000"))
    gaps = _gaps(light, full)
    assert [told for _, _, told in gaps] == [did for _, did, _ in gaps]


HIDDEN_LOOPS = [
    # a graph that grows from the 2nd iteration on
    """
    import torch
    x = torch.tensor(2.0, requires_grad=True)
    y = x
    for i in range(30):
        y = y * 1.0001
    """,
    # a name whose old tensor stays in the graph only from iteration 7 on
    """
    import torch
    x = torch.ones(2, requires_grad=True)
    keep = None
    for i in range(12):
        h = x * i if i >= 6 else torch.ones(2)
        if i >= 6:
            s = h + 1
        keep = s if i >= 7 else None
    """,
    # errors caught late in a loop: a second backward, then an in-place change
    """
    import torch
    w = torch.ones(3, requires_grad=True)
    for i in range(10):
        loss = (w * 2).sum()
        loss.backward()
        if i >= 7:
            try:
                loss.backward()
            except RuntimeError:
                pass
        if i == 8:
            a = w.exp()
            b = a.sin()
            try:
                a.add_(1)
                b.sum().backward()
            except RuntimeError:
                pass
    """,
    # tensors rebound late in a loop by steps that call no torch function: by
    # the step's own assignment, and by a function it calls (global)
    """
    import torch
    x = torch.ones(2, requires_grad=True)
    pair = [x * 2]
    pair.append(pair[0] * 3)
    y = pair[1]
    z = y + 1
    def swap():
        global y
        y = pair[0]
    for i in range(12):
        j = i * 2
        if i >= 7:
            y = pair[i % 2]
        if i == 10:
            swap()
            w = z
    """,
    # a model made again while the old one's loss is kept, from iteration 5
    # on; a module name rebound by a step that calls no torch function
    """
    import torch
    from torch import nn
    x = torch.randn(4, 3)
    spare = nn.Linear(3, 1)
    kept = None
    for fold in range(10):
        model = nn.Linear(3, 1)
        loss = model(x).sum()
        if fold >= 5:
            kept = loss
        if fold == 8:
            model = spare
    """,
]


def _said(doc) -> Counter:
    """What a run reported, shown or counted in the notes on hidden steps:
    (kind, name, cause, old_in_graph) -> how many times."""
    said: Counter = Counter()
    found = [(e, 1) for s in doc["steps"] for e in s["events"]]
    found += [(e, e["count"]) for e in doc["hidden_repeated"]]  # every hidden step's, counted
    for e, times in found:
        if e["kind"] == "name-bound" or (e["kind"] == "name-rebound" and not e.get("old_in_graph")):
            continue  # not reported for hidden steps
        said[(e["kind"], e.get("name"), e.get("cause"), e.get("old_in_graph"))] += times
    return said


@pytest.mark.parametrize("source", HIDDEN_LOOPS)
def test_hidden_loop_steps_catch_what_shown_steps_would(program, source):
    """Past --max-iterations a loop step is looked at lightly (no graph
    built); every event and error it has is still reported, as when every
    step is shown."""
    path = program(source)
    light = explain_json(path, options=("--max-iterations", "2"))
    full = explain_json(path, options=("--max-iterations", "1000"))
    assert full["hidden_steps"] == 0 and light["hidden_steps"] > 0
    assert _said(light) == _said(full)
    # A growing graph shown after lighter steps still says how big it is.
    for step in light["steps"]:
        for e in step["events"]:
            if e["kind"] == "graph-growth":
                assert isinstance(e["nodes"], int) and e["nodes"] > 0


def test_statement_code_is_cut_from_the_source_as_ast_would():
    """The source index cuts each node's code from lines it splits once; the
    cut must equal ``ast.get_source_segment`` with any line ending, non-ASCII
    text (column offsets are UTF-8 bytes) and a form feed (not a line end)."""
    import ast

    from gradtutor.source_index import _Text

    source = (
        "x = 'é' + 'ü'  ;  y = (1,\r\n 2)\r\nz = '日本' ; w = 3\rq = [w,\n\x0c  4]\n"
        "def f(a):\n    return (a *\n            2)\n"
    )
    text = _Text(source)
    cut = 0
    for node in ast.walk(ast.parse(source)):
        if hasattr(node, "lineno"):
            assert text.segment(node) == ast.get_source_segment(source, node)
            cut += 1
    assert cut > 20


def test_leaving_a_with_block_is_not_the_with_statement_running_again(tmp_path):
    """Python comes back to a with statement's line to call __exit__: that
    step is the block's end, not a second run of the line."""
    import contextlib
    import io

    from gradtutor.cli import main

    path = tmp_path / "prog.py"
    path.write_text(
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    y = x * 2\n"
        "for i in range(2):\n"
        "    with torch.enable_grad():\n"
        "        w = x * i\n"
    )
    doc = explain_json(path)
    steps = [(s["line"], s["iteration"], s.get("leaving_block", False)) for s in doc["steps"]]
    assert [s for s in steps if s[0] == 3] == [(3, 1, False), (3, 1, True)]
    assert [s for s in steps if s[0] == 6] == [(6, 1, False), (6, 1, True), (6, 2, False), (6, 2, True)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "--plain", "--ascii", str(path)])
    headings = [line for line in out.getvalue().splitlines() if line.startswith("--")]
    assert "-- line 3, leaving with torch.no_grad():" in headings
    assert "-- line 6, run 2, leaving with torch.enable_grad():" in headings
    assert not any(h.startswith("-- line 3, run 2") for h in headings)


def test_node_tags_are_kept_beside_the_graph_and_go_when_their_nodes_go():
    """The program never sees a tag (its grad_fn.metadata stays its own), and
    the side table does not keep the tags of nodes that died."""
    from gradtutor import autograd_graph as ag

    registry = ag.TagRegistry()
    origin = ag.Origin(1, 3, "y = x * 2")
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    tag = registry.tag_graph(y.grad_fn, origin)
    assert y.grad_fn.metadata == {} and registry.tag_of(y.grad_fn) is tag
    y.grad_fn.metadata["the program's"] = 1
    assert registry.tag_of(y.grad_fn) is tag and registry.sweep() == 1
    del y
    assert registry.sweep() == 0
    for i in range(3 * ag._FIRST_SWEEP):
        registry.tag_graph((x * i).grad_fn, origin)  # each node dies at once
    assert len(registry.node_tags) < ag._FIRST_SWEEP and registry.sweep() == 0


def test_a_node_known_dead_or_freed_is_out_of_reach_and_reach_answers_as_by_walking():
    """A rebinding step asks whether the node a name held is still in the
    graph, and whether the new graph grew from the last one: the registry
    answers no at once for a node that died, or for one a backward freed
    (a walk that stops at freed nodes never looks at it). Every answer is
    the walk's, and the walk still answers for what is not known so."""
    from gradtutor import autograd_graph as ag

    registry = ag.TagRegistry()
    origin = ag.Origin(1, 3, "y = x * 2")
    x = torch.ones(2, requires_grad=True)

    def tagged(t):
        return registry.tag_graph(t.grad_fn, origin)

    old = x * 2
    old_tag = tagged(old)
    new = old * 3
    new_tag = tagged(new)
    both = {new_tag.node_id: new_tag}

    def answers(reach):
        return reach.in_graph(old_tag.node_id), reach.grew_from(new_tag.node_id, old_tag.node_id)

    # Alive and not freed: not known out of reach, found by the walk.
    assert not registry.out_of_reach(old_tag.node_id, freed_too=True)
    assert answers(ag.Reach(both, registry)) == answers(ag.Reach(both)) == (True, True)
    # Freed by a backward: out of the live graph, still below the new node.
    new.sum().backward()
    assert registry.mark_freed([new.grad_fn], origin) >= 1 and old_tag.saved == ag.SAVED_FREED
    assert registry.out_of_reach(old_tag.node_id, freed_too=True)
    assert not registry.out_of_reach(old_tag.node_id)
    assert answers(ag.Reach(both, registry)) == answers(ag.Reach(both)) == (False, True)
    # Dead: neither, without a walk (a graph made anew does not hold it).
    del old, new
    again = (x * 2) * 3
    again_tag = tagged(again)
    assert registry.out_of_reach(old_tag.node_id)
    fresh = {again_tag.node_id: again_tag}
    assert ag.Reach(fresh, registry).in_graph(old_tag.node_id) is False
    assert ag.Reach(fresh, registry).grew_from(again_tag.node_id, old_tag.node_id) is False
    # A leaf's id, or a node of another registry's: not known, walked for.
    leaf = registry.leaf_tag(x)
    assert not registry.out_of_reach(leaf.node_id, freed_too=True)
    assert ag.Reach(fresh, ag.TagRegistry()).in_graph(leaf.node_id) is True


def test_output_kept_in_memory_is_read_once_and_in_order():
    # Without a usable fd 1 (here: sys.stdout replaced, as in a notebook) the
    # program's output goes to memory; each step takes only what is new.
    import io
    import sys

    from gradtutor.capture import OutputCapture

    saved = sys.stdout
    sys.stdout = io.StringIO()
    capture = OutputCapture()
    try:
        capture.start()
        taken = []
        print("a")
        taken += [capture.take(), capture.take()]
        print("b", end="")
        sys.stdout.write("c\n")
        taken.append(capture.take())
        for i in range(3):
            print(i)
        taken.append(capture.take())
        reads = []
        big = "x" * 100_000
        print(big)
        taken.append(len(capture.take()))
        print("y")
        memory = sys.stdout
        memory.getvalue = lambda: reads.append("all") or ""  # (a copy of everything printed: not wanted)
        taken.append(capture.take())
    finally:
        capture.stop()
        sys.stdout = saved
    assert taken == ["a\n", "", "bc\n", "0\n1\n2\n", 100_001, "y\n"] and reads == []


CAPTURE_WHILE_A_THREAD_PRINTS = """
import sys, threading
from gradtutor.capture import OutputCapture
capture = OutputCapture()
capture.start()  # fd 1 now points at the capture's file
lines = [f"línea {i} — ok" for i in range(20_000)]
def speak():
    for line in lines:
        print(line)
speaker = threading.Thread(target=speak)
speaker.start()
taken = []
while speaker.is_alive():
    taken.append(capture.take())
speaker.join()
taken.append(capture.take())
capture.stop()
want = "".join(line + "\\n" for line in lines)
sys.stderr.write(f"{''.join(taken) == want} {sum(1 for t in taken if t)}")
"""


def test_what_a_thread_prints_while_steps_take_the_output_is_captured_whole_and_in_order(tmp_path):
    # The program's threads write at fd 1's offset, which the capture's file
    # shares: a take that moved it to read lost or garbled their lines (a CI
    # run read "he thread speaks ...linee"). Many takes race many writes here.
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text(CAPTURE_WHILE_A_THREAD_PRINTS, encoding="utf-8")
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    whole, takes_with_text = run.stderr.split()
    assert run.stdout == "" and whole == "True" and int(takes_with_text) > 1, run.stderr


CAPTURE_OF_A_STREAM_THE_PROGRAM_PUT = """
import io, sys
from gradtutor.capture import OutputCapture
capture = OutputCapture()
capture.start()  # fd 1 now points at the capture's file
ours = sys.stdout
taken = []
print("ours")
taken.append(capture.take())
# The program's own stream on fd 1, buffered: each take flushes it, so
# what it printed goes with the step that printed it.
sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
print("theirs")
taken.append(capture.take())
print("again")
taken.append(capture.take())
taken.append(capture.take())
# Its own stream reconfigured to buffer: flushed at a take as well.
sys.stdout = ours
sys.stdout.reconfigure(write_through=False)
print("buffered")
taken.append(capture.take())
capture.stop()
sys.stderr.write(repr(taken))
"""


def test_a_take_flushes_a_stream_the_program_put_in_place_of_sys_stdout(tmp_path):
    # The capture's own sys.stdout writes through to fd 1 (nothing to flush
    # at a take); a buffered stream the program put there is flushed at
    # every take, or its lines would go with a later step.
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text(CAPTURE_OF_A_STREAM_THE_PROGRAM_PUT, encoding="utf-8")
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert run.stdout == "" and run.stderr == repr(["ours\n", "theirs\n", "again\n", "", "buffered\n"]), run.stderr


def test_an_input_without_grad_leaves_the_picture_once_a_backward_freed_what_saved_it(program):
    # (mnist's "target (old)", "this one stays in the graph": the backward had
    # freed the only node that kept it.) Named, it is still drawn; a named one
    # no statement drawn reads any more is not "(dropped)" (dcgan's fixed_noise).
    doc = explain_json(program("""
        import torch
        w = torch.ones(3, requires_grad=True)
        data = [(torch.randn(2, 3), torch.randn(2)) for _ in range(2)]
        for X, y in data:
            out = X @ w
            loss = (out - y).pow(2).sum()
            loss.backward()
        keep = torch.ones(3)
        z = (keep * w).sum()
        z = (w * 2).sum()
    """))
    def drawn(step):
        return {(n["label"], tuple(n.get("names", ())), tuple(n.get("former_names", ())), bool(n.get("dropped")))
                for n in (step.get("graph") or step["graph_delta"])["nodes"] if n["kind"] == "const"}
    after_backward = step_at(doc, 7)
    assert {label for label, *_ in drawn(after_backward)} == {"X", "y"}
    rebound = step_at(doc, 4, 1)  # X and y move on: the old ones were only saved by freed nodes
    assert not [n for n in drawn(rebound) if n[2]]  # no "X (old)", "y (old)"
    assert not [n for n in drawn(step_at(doc, 10)) if n[3]]  # keep is not "(dropped)"


def test_a_module_whose_parameters_have_gradients_is_drawn_with_grad_outside_any_graph(program):
    # (pinn_burgers: self.dnn drawn without [grad] while all its parameters
    # had one, because none of them was in the graph drawn.)
    doc = explain_json(program("""
        import torch
        model = torch.nn.Linear(2, 1)
        loss = model(torch.ones(2)).sum()
        loss.backward()
        del loss
        x = torch.ones(2, requires_grad=True)
        model.zero_grad()
    """))
    def module(line):
        return [n for n in step_at(doc, line)["graph"]["nodes"] if n["kind"] == "module"]
    assert [bool(n.get("has_grad")) for n in module(6)] == [True]
    assert [bool(n.get("has_grad")) for n in module(7)] == [False]


def test_a_node_is_drawn_dropped_once_whatever_frame_draws_it_later(program):
    # wgan_gp_toy: a data generator resumed at each iteration still had its
    # picture from the last resume, and drew the first iteration's graph
    # "(dropped)" again, under its own "while True:".
    doc = explain_json(program("""
        import torch
        w = torch.ones(2, requires_grad=True)
        def batches():
            while True:
                yield torch.randn(2)
        data = batches()
        for i in range(3):
            x = next(data)
            loss = (w * x).sum()
            loss.backward()
    """))
    dropped = Counter(n["id"] for s in doc["steps"] for n in (s.get("graph_delta") or {}).get("nodes", ())
                      if n.get("dropped"))
    assert dropped and max(dropped.values()) == 1


LOCAL_CONST = """\
import torch

class RNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.i2h = torch.nn.Linear(4, 2)

    def forward(self, x, h):
        combined = torch.cat((x, h), 1)
        return self.i2h(combined)

rnn = RNN()
out = rnn(torch.ones(1, 2), torch.zeros(1, 2))
c = torch.ones(2)
w = torch.ones(2, requires_grad=True)
y = w * c
del c
loss = out.sum() + y.sum()

def penalty(p):
    return (p ** 2).sum()

reg = penalty(torch.ones(2, requires_grad=True))
"""


def test_a_const_a_returned_function_read_by_a_local_name_is_drawn_by_that_name_and_function(tmp_path):
    # rnn.forward's ``combined`` needs no grad (its inputs do not): a const
    # input of self.i2h(combined). Once forward returned, no name holds it;
    # drawn as "tensor" it read as a variable of that name.
    path = tmp_path / "rnn.py"
    path.write_text(LOCAL_CONST)
    doc = explain_json(path, options=("--graph", "full"))
    nodes = step_at(doc, 18)["graph"]["nodes"]
    [combined] = [n for n in nodes if n.get("local_of")]
    assert (combined["kind"], combined["label"], combined["local_of"], combined["names"]) == (
        "const", "combined", "forward", []
    )
    # A module's name deleted is no function's local: still the generic label.
    assert [n["label"] for n in nodes if n["kind"] == "const" and not n["names"]] == ["combined", "tensor"]
    # A leaf too: the one made in the call's argument list, penalty's p.
    [p] = [n for n in step_at(doc, 23)["graph"]["nodes"] if n["kind"] == "leaf" and not n["names"]]
    assert (p["label"], p.get("local_of")) == ("p", "penalty")
    # (printed to a StringIO: in ASCII)
    text = _explain_text(path)
    assert "combined (in forward) --> self.i2h(combined) = out" in text[text.index("-- line 18"):]
    assert "tensor --------->|" in text[text.index("-- line 17"):]
    assert "p (in penalty) [leaf] --> (p ** 2).sum() = reg" in text[text.index("-- line 23"):]
    import contextlib
    import io

    from gradtutor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "--plain", "--width", "100", "--lang", "zh", str(path)])
    zh = out.getvalue()
    assert "forward 中的 combined --> self.i2h(combined) = out" in zh[zh.index("第 18 行"):]


def test_a_line_still_running_draws_the_consts_it_read_before_its_call(tmp_path):
    # Inside double(), line 9 is still running: it read x (w * x) before it
    # called double, so the picture drawn there draws x going into it.
    path = tmp_path / "running.py"
    path.write_text(
        "import torch\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "x = torch.arange(3.0)\n"
        "\n"
        "def double(t):\n"
        "    out = t * 2\n"
        "    return out\n"
        "\n"
        "y = double(w * x) + x\n"
    )
    doc = explain_json(path)
    graph = step_at(doc, 6)["graph"]
    ids = {n["label"]: n["id"] for n in graph["nodes"]}
    running = next(n["id"] for n in graph["nodes"] if n.get("running"))
    assert [ids["x"], running] in graph["edges"] and [ids["w"], running] in graph["edges"]
    # At its end the line's const inputs are found again: x drawn once, into line 9.
    graph = step_at(doc, 9)["graph"]
    lines = {n["id"]: n.get("line") for n in graph["nodes"]}
    assert [lines[dst] for src, dst in graph["edges"] if src == ids["x"]] == [9]


def test_in_a_later_call_an_earlier_calls_tensor_is_old_not_in_the_function(tmp_path):
    # Inside f's second call, the first call's x is "x (old)": the name x
    # now means another tensor. Back in the caller, both are "x (in f)".
    path = tmp_path / "twice.py"
    path.write_text(
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "\n"
        "def f(x):\n"
        "    k = 2\n"
        "    y = w * x * k\n"
        "    return y\n"
        "\n"
        "a = f(torch.ones(2))\n"
        "b = f(torch.ones(2))\n"
    )
    doc = explain_json(path)
    inside = [n for n in step_at(doc, 6, 1)["graph"]["nodes"] if n["kind"] == "const"]
    assert sorted((n["label"], tuple(n["names"]), tuple(n.get("former_names", ())), n.get("local_of")) for n in inside) == [
        ("x", (), ("x",), None), ("x", ("x",), (), None),
    ]
    after = [n for n in step_at(doc, 10)["graph"]["nodes"] if n["kind"] == "const"]
    assert [(n["label"], n.get("local_of")) for n in after] == [("x", "f"), ("x", "f")]


CHECKPOINTED_BN = """\
import torch
from torch.utils.checkpoint import checkpoint
bn = torch.nn.BatchNorm1d(3)
def segment(x):
    return bn(x) * 2
x = torch.randn(4, 3, requires_grad=True)
y = checkpoint(segment, x, use_reentrant=False)
z = (y * y).sum()
z.backward()
"""


def test_a_checkpointed_segment_computed_again_in_the_backward_is_observed(tmp_path):
    # The backward runs segment() again for the tensors it saved: its batch
    # norm updates bn's running statistics and count a second time (the
    # program would print num_batches_tracked 2). checkpoint stops the
    # segment early, by raising from the hook of the last node it needs:
    # after batch_norm ran. y * y's node ran before, its saved tensors freed
    # already when the segment's step is drawn.
    path = tmp_path / "ckpt.py"
    path.write_text(CHECKPOINTED_BN)
    text = _explain_text(path)
    again = text[text.index("-- line 5 in segment(), run 2"):text.index("-- line 9 (continued)")]
    assert "bn's buffers were updated in place (add_, batch_norm, 3 buffers)" in again
    doc = explain_json(path)
    [backward] = events(doc, "backward")
    freed = [n for n in step_at(doc, 9)["graph"]["nodes"] if n["saved"] == "freed"]
    # (y * y's node, found freed while the backward ran, is the backward's, with its line)
    assert freed and all(n.get("freed_by_line") == 9 for n in freed)
    assert backward["freed"] == 3


REBOUND_CONST = """\
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Linear(3, 3)

    def forward(self, x):
        x = self.conv(x)
        return x

net = Net()
data = torch.ones(2, 3)
out = net(data).sum()
h = torch.zeros(3)
W = torch.ones(3, 3, requires_grad=True)
h = torch.tanh(h @ W)
"""


def test_a_const_a_statement_reads_and_rebinds_is_the_one_it_read(tmp_path):
    # ``x = self.conv(x)`` read the x it rebinds: its const input is the x
    # of before (here the program's data), not the result the name holds
    # after it, which is how data was lost and then drawn going into ``out
    # = net(data)``, a line whose own node (the sum) never read it.
    path = tmp_path / "rebound.py"
    path.write_text(REBOUND_CONST)
    doc = explain_json(path, options=("--graph", "full"))
    graph = step_at(doc, 14)["graph"]
    labels = {n["id"]: n["label"] for n in graph["nodes"]}
    into = {}
    for src, dst in graph["edges"]:
        into.setdefault(labels[dst], []).append(labels[src])
    assert "data" in into["self.conv(x)"]
    assert "data" not in into["net(data).sum()"]
    # The first h of ``h = tanh(h @ W)``, a const no name holds now: "h (old)".
    nodes = step_at(doc, 17)["graph"]["nodes"]
    [old] = [n for n in nodes if n["kind"] == "const" and not n["names"]]
    assert (old["label"], old["former_names"]) == ("h", ["h"])
    assert "h (old) --> tanh(h @ W) = h" in _explain_text(path)


TRANSFORMED = """\
import torch
from torch.func import grad, jacrev

def f(x):
    y = x.sin()
    return y.sum()

x = torch.randn(3)
g = grad(f)(x)
j = jacrev(f)(x)
"""


def test_a_torch_func_transform_s_own_tensors_are_not_drawn_as_the_program_s(tmp_path):
    # Inside grad(f)(x), f's x is the transform's leaf that requires grad and
    # y has a node: neither is the program's (its x never requires grad, no
    # .grad is filled). Drawn, f's x read "x [leaf]: backward fills its .grad".
    path = tmp_path / "transformed.py"
    path.write_text(TRANSFORMED)
    doc = explain_json(path, options=("--max-iterations", "5"))
    inside = [s for s in doc["steps"] if s["function"] == "f"]
    assert len(inside) == 4
    for step in inside:
        assert step["graph"]["nodes"] == [], step
        assert step["events"] == [], step["events"]


def assert_seen_as_under_python(source: str, among: tuple[str, ...] = ("backward",)) -> None:
    """The calls the program's logger (``seen``) saw under the tutor are
    those it sees under python, the calls named ``among`` among them."""
    plain: dict = {}
    exec(compile(source, "<plain>", "exec"), plain)
    engine, result = run_source(source)
    assert result.exception is None
    assert engine.namespace["seen"] == plain["seen"] and set(among) <= set(plain["seen"])


def test_a_torch_function_mode_of_the_program_sees_its_calls_only():
    # The tutor reads the program's tensors at every step (is it a view, has
    # it a node): those reads go past the program's own modes, on a loop step
    # that made no torch call (its names are looked at all the same) and
    # when a generator that rebinds a global resumes.
    source = "\n".join([
        "import torch",
        "from torch.overrides import TorchFunctionMode",
        "seen = []",
        "class Log(TorchFunctionMode):",
        "    def __torch_function__(self, func, types, args=(), kwargs=None):",
        "        seen.append(getattr(func, '__name__', str(func)))",
        "        return func(*args, **(kwargs or {}))",
        "total = torch.zeros(2)",
        "def batches():",
        "    global total",
        "    for i in range(4):",
        "        total = total + 1",
        "        yield total",
        "def f(a, b):",
        "    c = a * b",
        "    return c.sum(), [c]",
        "w = torch.ones(2, requires_grad=True)",
        "opt = torch.optim.SGD([w], lr=0.1)",
        "with Log():",
        "    for i, b in enumerate(batches()):",
        "        s = 'a' if i % 2 else 1",  # (no torch call; a name's type changes)
        "        loss, parts = f(w, b)",
        "        opt.zero_grad()",
        "        loss.backward()",
        "        opt.step()",
    ])
    assert_seen_as_under_python(source)


def test_a_tensor_subclass_of_the_program_sees_its_calls_only():
    # A subclass with a __torch_function__ of its own sees each torch call
    # made on its tensors, as python makes them: not the tutor's reads of
    # their grad_fn while it observes those calls, nor its reads for a
    # backward or an optimizer step through them.
    source = "\n".join([
        "import torch",
        "seen = []",
        "class Logged(torch.Tensor):",
        "    @classmethod",
        "    def __torch_function__(cls, func, types, args=(), kwargs=None):",
        "        seen.append(getattr(func, '__name__', str(func)))",
        "        return super().__torch_function__(func, types, args, kwargs or {})",
        "w = torch.ones(3, requires_grad=True)",
        "opt = torch.optim.SGD([w], lr=0.1)",
        "x = torch.ones(3).as_subclass(Logged)",
        "for i in range(6):",
        "    y = (x * w).sum()",
        "    opt.zero_grad()",
        "    y.backward()",
        "    opt.step()",
        "    s = 'a' if i % 2 else 1",
    ])
    assert_seen_as_under_python(source)


def test_a_parameter_subclass_of_the_program_sees_its_calls_only():
    # Calls on parameters need no quieting (nn.Parameter leaves them to
    # torch), but a subclass of Parameter with a __torch_function__ of its
    # own, beside plain parameters and a subclass that keeps Tensor's, sees
    # only the program's calls: the optimizer's reads of its .grad, and
    # the tutor's reads of it as it observes them, are told apart.
    source = "\n".join([
        "import torch",
        "seen = []",
        "class LoggedParameter(torch.nn.Parameter):",
        "    @classmethod",
        "    def __torch_function__(cls, func, types, args=(), kwargs=None):",
        "        seen.append(getattr(func, '__name__', str(func)))",
        "        return super().__torch_function__(func, types, args, kwargs or {})",
        "class Quiet(torch.Tensor):",
        "    pass",
        "w = LoggedParameter(torch.ones(3))",
        "b = torch.nn.Parameter(torch.zeros(3))",
        "opt = torch.optim.SGD([w, b], lr=0.1)",
        "x = torch.ones(3).as_subclass(Quiet)",
        "for i in range(6):",
        "    y = (x * w + b).sum()",
        "    opt.zero_grad()",
        "    y.backward()",
        "    w.grad",
        "    opt.step()",
    ])
    # (its own calls: the .grad reads and zero_grad's sets, the step's add_)
    assert_seen_as_under_python(source, among=("__get__", "__set__", "add_"))


def test_a_subclass_whose_class_cannot_be_hashed_fails_as_under_python():
    # torch itself cannot dispatch a backward on such a class; the tutor's
    # look at the classes of each call must not fail first, and elsewhere.
    source = "\n".join([
        "import torch",
        "class Meta(type(torch.Tensor)):",
        "    def __eq__(cls, other):",
        "        return cls is other",
        "    __hash__ = None",
        "class Odd(torch.Tensor, metaclass=Meta):",
        "    pass",
        "w = torch.ones(3, requires_grad=True)",
        "x = torch.ones(3).as_subclass(Odd)",
        "y = (x * w).sum()",
        "y.backward()",
    ])
    with pytest.raises(TypeError) as plain:
        exec(compile(source, "<plain>", "exec"), {})
    engine, result = run_source(source)
    assert type(result.exception) is TypeError and str(result.exception) == str(plain.value)
    assert result.exception.__traceback__ is not None
    lines = [entry.lineno for entry in traceback.extract_tb(result.exception.__traceback__) if entry.filename == "<test>"]
    assert lines == [11]
