"""Readable at any size: a step draws what it touched, loops fold, a picture
is about one screen, and the JSON document is small and rebuilds every graph."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import explain_json, step_at
from gradtutor.cli import main
from gradtutor.jsondoc import apply_delta, graph_delta, schema
from gradtutor.model import Edge, Graph, Node
from gradtutor.explanations import book_for
from gradtutor.narrate import MAX_PICTURE_LINES, NarrationOptions, Narrator
from gradtutor.render import render_graph
from gradtutor.render.focus import Focus, touched_part
from gradtutor.render.repeats import fold_repeats
from test_render_properties import check, small_dags

GOLDEN = Path(__file__).parent / "golden"
CORPUS = Path(__file__).parent / "corpus"
REGENERATE = os.environ.get("GRADTUTOR_REGEN") == "1"
HEADER = re.compile(r"^(── |-- )line ")


def explain_text(path: Path, *options: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["explain", "--plain", "--width", "100", *options, str(path)])
    return out.getvalue()


def steps_of(text: str) -> list[list[str]]:
    """The narration cut at each step header."""
    steps: list[list[str]] = []
    for line in text.splitlines():
        if HEADER.match(line) or not steps:
            steps.append([])
        steps[-1].append(line)
    return steps


def matches_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGENERATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


# -- the part a step touched ------------------------------------------------------
BIG = """
import torch
x = torch.randn(4, 3)
w1 = torch.randn(3, 5, requires_grad=True)
b1 = torch.zeros(5, requires_grad=True)
w2 = torch.randn(5, 2, requires_grad=True)
b2 = torch.zeros(2, requires_grad=True)
h = torch.relu(x @ w1 + b1)
z = h @ w2 + b2
p = torch.softmax(z, dim=1)
t = torch.tensor([0, 1, 1, 0])
loss = torch.nn.functional.nll_loss(torch.log(p), t)
n = 3
reg = (w1 ** 2).sum()
"""


def test_a_statement_on_a_big_graph_draws_what_it_made_and_its_inputs(program):
    text = explain_text(program(BIG))
    steps = steps_of(text)
    # `n = 3` touched no graph: nothing is drawn.
    [quiet] = [s for s in steps if s[0].endswith("n = 3")]
    assert quiet == [quiet[0]]
    [reg] = [s for s in steps if s[0].endswith("reg = (w1 ** 2).sum()")]
    picture = "\n".join(reg)
    assert "(w1 ** 2).sum() = reg" in picture and "w1" in picture
    for unchanged in ("w2", "b2", "softmax", "NLL"):
        assert unchanged not in picture.split("not drawn")[0], picture
    assert "not drawn, unchanged since the last picture: x, t, b1 and 6 more nodes (--graph full shows the whole graph)" in " ".join(
        picture.split()
    )
    matches_golden("touched_reg.txt", "\n".join(reg) + "\n")


def test_graph_full_draws_everything_as_before(program):
    text = explain_text(program(BIG), "--graph", "full")
    [reg] = [s for s in steps_of(text) if s[0].endswith("reg = (w1 ** 2).sum()")]
    picture = "\n".join(reg)
    assert "NLL(log(p), t) = loss" in picture and "not drawn" not in picture


def test_an_input_whose_own_inputs_are_left_out_says_so():
    nodes = [Node(f"l{i}", "leaf", f"w{i}", names=(f"w{i}",)) for i in range(6)]
    nodes += [Node("a", "statement", "w0 + w1", names=("a",), step=1), Node("b", "statement", "a * w2", names=("b",), step=2),
              Node("c", "statement", "b + w3 + w4 + w5", names=("c",), step=3)]
    edges = [Edge("l0", "a"), Edge("l1", "a"), Edge("a", "b"), Edge("l2", "b"), Edge("b", "c"),
             Edge("l3", "c"), Edge("l4", "c"), Edge("l5", "c")]
    before = Graph(tuple(nodes[:8]), tuple(edges[:4]))
    after = Graph(tuple(nodes), tuple(edges))
    part, focus = touched_part(after, before)
    assert {n.id for n in part.nodes} == {"c", "b", "l3", "l4", "l5"}
    assert [n.id for n in part.nodes if n.inputs_hidden] == ["b"]
    assert focus.omitted == 4 and focus.names == ("w0", "w1", "w2", "a")
    drawing = render_graph(part, width=80, current_step=3)
    assert "a * w2 = b [more before]" in str(drawing)
    assert "what it was computed from is left out of this picture" in str(drawing)


def test_a_node_with_two_names_left_out_is_counted_once():
    """A loop variable left on a parameter (``for p in parameters``) gives
    its node a second name: the note still counts nodes, never "-1 more"."""
    nodes = (Node("w", "leaf", "W2", names=("W2",)), Node("b", "leaf", "b2", names=("b2", "p")),
             Node("x", "leaf", "x", names=("x",)), Node("y", "statement", "x * 2", names=("y",), step=2))
    before = Graph(nodes[:3])
    part, focus = touched_part(Graph(nodes, (Edge("x", "y"),)), before)
    assert {n.id for n in part.nodes} == {"x", "y"}
    assert focus == Focus(2, ("W2", "b2"))
    note = Narrator(book_for("en"), NarrationOptions()).focus_note(focus)
    assert note.startswith("not drawn, unchanged since the last picture: W2, b2 (")


def test_a_calls_names_are_compared_with_its_own_not_the_last_calls(program):
    """A function called again starts with none of its names: nodes its last
    call named are not changed by that (the picture it drew there was of the
    last call's graph, nothing the step touched)."""
    text = explain_text(program("""
        import torch
        w = torch.ones(2, requires_grad=True)

        def penalty(x):
            scale = torch.ones(2)
            inner = w * x
            return (inner * scale).sum()

        x = torch.ones(2)
        total = penalty(x)
        loss = total * 2
        x = torch.zeros(2)
        total = penalty(torch.ones(2))
    """))  # (printed to a StringIO: in ASCII)
    [second] = [step for step in steps_of(text) if step[0].endswith("line 5 in penalty(), run 2 scale = torch.ones(2)")]
    assert second[1:] == ["   * scale names a tensor"]
    [inner] = [step for step in steps_of(text) if step[0].endswith("line 6 in penalty(), run 2 inner = w * x")]
    assert any(line.endswith("w * x = inner [new]") for line in inner)


def test_a_name_a_function_gave_a_node_is_the_frames_not_a_change():
    """Back from a call, the caller's names are compared with its own last
    picture, not the call's: a const drawn "gI (in jvp)" inside the call and
    "tangent (old)" in the caller is not touched by the return."""
    in_caller = Node("t", "const", "tangent", former_names=("tangent",), requires_grad=False)
    in_call = Node("t", "const", "gI", local_of="jvp", requires_grad=False)
    x = Node("x", "leaf", "x", names=("x",))
    y = Node("y", "statement", "x * tangent", names=("y",), step=2)
    edges = (Edge("t", "y"), Edge("x", "y"))
    caller_before = Graph((in_caller, x, y), edges)
    call = Graph((in_call, x, y), edges)
    assert touched_part(caller_before, call, caller_before) == (Graph(), Focus())
    # (what the call itself changed still counts)
    changed = Graph((in_caller, x, replace(y, saved="freed")), edges)
    assert touched_part(changed, call, caller_before)[0].nodes


@settings(max_examples=150, deadline=None)
@given(small_dags(), st.data())
def test_the_touched_part_is_a_subgraph_that_draws_every_edge_in_the_width(graph: Graph, data) -> None:
    kept = data.draw(st.sets(st.sampled_from([n.id for n in graph.nodes])))
    previous = Graph(tuple(n for n in graph.nodes if n.id in kept), tuple(e for e in graph.edges if e.src in kept and e.dst in kept))
    part, focus = touched_part(graph, previous)
    if kept == {n.id for n in graph.nodes}:
        assert part == Graph() and focus.omitted == 0  # nothing changed: nothing drawn
        return
    ids = {n.id for n in part.nodes}
    assert ids <= {n.id for n in graph.nodes}
    assert {n.id for n in graph.nodes if n.id not in kept} <= ids  # every new node is drawn
    # Every edge between drawn nodes is kept, and nothing else.
    assert set(part.edges) == {e for e in graph.edges if e.src in ids and e.dst in ids}
    assert focus.omitted == sum(1 for n in graph.nodes if n.id not in ids and not n.dropped)
    if part.nodes:
        width = data.draw(st.integers(40, 120))
        check(part, width, "statements", "unicode")
        check(part, width, "ops", "ascii")


# -- loops fold -------------------------------------------------------------------
CHAIN = """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x
for i in range(60):
    y = y * 1.0001
loss = y * 3
loss.backward()
"""

RNN = """
import torch
torch.manual_seed(0)
W = torch.randn(4, 4, requires_grad=True)
xs = torch.randn(30, 4)
h = torch.zeros(4)
outputs = []
for t in range(30):
    h = torch.tanh(h @ W + xs[t])
    outputs.append(h * 2)
out = torch.stack(outputs).sum()
out.backward()
"""


def test_a_long_chain_is_drawn_folded(program):
    text = explain_text(program(CHAIN))
    [step] = [s for s in steps_of(text) if s[0].endswith("loss = y * 3")]
    picture = "\n".join(step)
    # (plain output is ASCII) The current y is named, so 59 rounds fold: 2
    # first, 55 in one entry, 2 last.
    assert [line.split("  <-")[0].strip() for line in step if "1.0001" in line.split("  <-")[0]] == [
        "y * 1.0001 = y (old) #1", "y * 1.0001 = y (old) #2", "... 55 x y * 1.0001 ...",
        "y * 1.0001 = y (old) #3", "y * 1.0001 = y (old) #4", "y * 1.0001 = y"]
    matches_golden("folded_chain.txt", picture + "\n")
    # The whole graph on request: every round.
    full = explain_text(program(CHAIN), "--graph", "full")
    [step] = [s for s in steps_of(full) if s[0].endswith("loss = y * 3")]
    assert "\n".join(step).count("y * 1.0001 = y") == 60


def test_a_repeated_block_is_drawn_once_with_a_count(program):
    text = explain_text(program(RNN))
    [step] = [s for s in steps_of(text) if s[0].endswith("out = torch.stack(outputs).sum()")]
    picture = "\n".join(step)
    assert "... 25 x tanh(...), outputs.append(...) ..." in picture
    assert len(step) <= MAX_PICTURE_LINES + 12
    matches_golden("folded_block.txt", picture + "\n")


def test_folding_keeps_the_graph_acyclic_and_named_nodes():
    nodes = [Node("x", "leaf", "x", names=("x",))]
    edges = []
    for i in range(10):
        nodes.append(Node(f"a{i}", "statement", "h * 2", line=5))
        nodes.append(Node(f"b{i}", "statement", "tanh(h)", line=6))
        edges += [Edge(nodes[-3].id if i else "x", f"a{i}"), Edge(f"a{i}", f"b{i}")]
    nodes.append(Node("h", "statement", "tanh(h)", line=6, names=("h",)))
    edges.append(Edge("b9", "h"))
    folded, info = fold_repeats(Graph(tuple(nodes), tuple(edges)))
    assert info.nodes == 12 and info.stretches == 1
    ids = [n.id for n in folded.nodes]
    assert "h" in ids and "x" in ids and "a1" in ids and "b8" in ids and "a5" not in ids
    position = {node_id: i for i, node_id in enumerate(ids)}
    assert all(position[e.src] < position[e.dst] for e in folded.edges)  # inputs before users: no cycle
    [fold] = [n for n in folded.nodes if n.id.startswith("fold:")]
    assert fold.label == "… 6 × h * 2, tanh(…) …"


# -- bounded on real programs ------------------------------------------------------
def test_a_real_training_script_stays_readable():
    """The LSTM time-series script (60 steps unrolled, LBFGS): every step fits
    about one screen, and the whole narration is a few pages, not thousands."""
    text = explain_text(CORPUS / "examples_time_sequence_prediction.py")
    steps = steps_of(text)
    assert max(len(s) for s in steps) <= 60, max(steps, key=len)
    assert len(text.splitlines()) <= 1500
    assert all(len(line) <= 100 for line in text.splitlines() if not line.startswith("loss:"))


def test_a_gan_at_the_op_level_stays_readable():
    text = explain_text(CORPUS / "examples_dcgan.py", "--level", "ops")
    assert len(text.splitlines()) <= 2500
    assert max(len(s) for s in steps_of(text)) <= 60


# -- JSON ---------------------------------------------------------------------------
def test_the_document_has_a_version_and_carries_a_graph_only_where_it_changed(program):
    path = program(BIG)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "--format", "json", str(path)])
    raw = json.loads(out.getvalue())
    assert raw["version"] == 2
    by_source = {s["source"]: s for s in raw["steps"]}
    assert "graph" not in by_source["n = 3"] and "graph_delta" not in by_source["n = 3"]
    delta = by_source["reg = (w1 ** 2).sum()"]["graph_delta"]
    assert [n["label"] for n in delta["nodes"]] == ["(w1 ** 2).sum()"] and delta["removed"] == []
    # One step per line: a reader can grep it.
    assert len(out.getvalue().splitlines()) == len(raw["steps"]) + len(raw) + 3  # braces, "steps": [ and ]
    doc = explain_json(path)  # schema-valid, graphs rebuilt (conftest)
    assert [n["label"] for n in doc["steps"][-1]["graph"]["nodes"]][-1] == "(w1 ** 2).sum()"


def test_the_schema_rejects_what_the_document_must_not_be(program):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "--format", "json", str(program(BIG))])
    doc = json.loads(out.getvalue())
    jsonschema.validate(doc, schema())
    for broken in (
        {k: v for k, v in doc.items() if k != "version"},
        dict(doc, version=1),
        dict(doc, steps=[dict(doc["steps"][0], graph={"nodes": [], "edges": []}, graph_delta={
            "nodes": [], "removed": [], "edges_added": [], "edges_removed": []})]),
        dict(doc, steps=[dict(doc["steps"][0], graph={"nodes": [{"id": "n1"}], "edges": []})]),
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema())


def test_a_delta_puts_a_node_made_long_ago_in_its_place():
    a, b, c = ({"id": i, "kind": "leaf"} for i in "abc")
    before = {"nodes": [a, c], "edges": []}
    after = {"nodes": [a, b, c], "edges": [["a", "c"], ["b", "c"]]}
    delta = graph_delta(before, after)
    assert delta is not None and delta["order"] == ["a", "b", "c"]
    rebuilt = apply_delta(before, delta)
    assert rebuilt["nodes"] == after["nodes"]
    assert sorted(rebuilt["edges"]) == sorted(after["edges"])


def test_the_json_of_the_time_series_script_is_small():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["explain", "--format", "json", str(CORPUS / "examples_time_sequence_prediction.py")])
    assert len(out.getvalue().encode()) < 600 * 1024


def test_a_note_is_said_once_in_a_picture():
    g = Graph((Node("x", "leaf", "x", names=("x",)), Node("s", "statement", "x * 2", names=("y",), step=1)), (Edge("x", "s"),))
    drawing = render_graph(g, width=80, current_step=1, notes=("the same note", "the same note"))
    assert sum("the same note" in line for line in drawing.legend) == 1


def test_what_a_legend_told_once_is_not_told_again_in_the_same_words():
    """The gradient-accumulation script draws its model as one node and its
    pictures as lists, freed by the same backward, at step after step: each
    of those is explained the first time, and again only in other words
    (another backward freed what is drawn)."""
    text = explain_text(CORPUS / "grad_accumulation.py")
    lines = [line.strip() for line in text.splitlines()]
    for said in ("model: 4 parameters, 193 values, drawn as one node", "drawn as a list: no picture of it fits in"):
        assert sum(line.startswith(said) for line in lines) == 1, said
    freed = [line for line in lines if "its saved tensors were freed by the backward at" in line]
    assert len(freed) == len(set(freed)) >= 3  # the backwards of lines 27, 42, 58: each once
    assert sum("freed]" in line for line in lines) > 10 * len(freed)  # drawn many times


def test_an_explanation_is_given_once_in_the_same_words():
    """The accumulation loop's rounds 2 and 3 add to the gradients at the same
    line: both say so, the second without the paragraph the first gave. Each
    line that accumulates (27, 42, 58) gets its own paragraph: other words."""
    text = " ".join(explain_text(CORPUS / "grad_accumulation.py").split())
    paragraph = re.findall(r"Line (\d+) ran backward, which added its gradients to those already held by \d+ parameters of model,", text)
    assert sorted(paragraph) == ["27", "42", "58"]
    assert text.count("model's gradients were added to, not replaced") > len(paragraph)


def test_an_old_tensor_is_drawn_with_the_result_that_keeps_it_in_the_graph():
    """makemore's second round draws ``emb (old)``, kept by the last round's
    h: that h is drawn with it (unchanged since the last picture, it would
    be left out, and "(old)" would point at nothing), its other inputs left
    out ("more before")."""
    steps = steps_of(explain_text(CORPUS / "makemore_mlp.py"))
    [step] = [s for s in steps if s[0].startswith("-- line 75, run 2") or s[0].startswith("── line 75, run 2")]
    text = "\n".join(step)
    assert "emb (old) --> tanh(emb.view(-1, 30) @ W1 + b1) = h" in text
    assert "[more before, freed]" in text
    assert "because a result still in the graph was computed from it" in " ".join(text.split())


def test_a_parameter_a_loop_variable_let_go_of_is_drawn_by_its_path(program):
    path = program("""
        import torch
        net = torch.nn.Linear(3, 1)
        for p in net.parameters():
            p.requires_grad = True
        p = None
        out = net(torch.ones(2, 3)).sum()
    """)
    doc = explain_json(path, options=("--level", "ops"))
    leaves = [n for n in doc["steps"][-1]["graph"]["nodes"] if n["kind"] == "leaf"]
    assert sorted(n["label"] for n in leaves) == ["net.bias", "net.weight"]
    assert not any(n.get("former_names") for n in leaves)


def test_ascii_narration_of_a_folded_loop_is_all_ascii(program):
    text = explain_text(program(CHAIN), "--ascii")
    assert "... 55 x y * 1.0001 ..." in text
    assert text.isascii(), [line for line in text.splitlines() if not line.isascii()]


def test_no_edge_lands_on_a_marker():
    # Three inputs the label does not name, and a one-character expression:
    # the bars have nowhere to land but the markers. They never do.
    nodes = (Node("a", "leaf", "a", names=("a",)), Node("b", "leaf", "b", names=("b",)), Node("c", "leaf", "c", names=("c",)),
             Node("s", "statement", "f", names=("y",), step=1, saved="freed", freed_by_line=3))
    edges = (Edge("a", "s"), Edge("b", "s"), Edge("c", "s"))
    for width in (40, 80):
        drawing = render_graph(Graph(nodes, edges), width=width, current_step=2)
        line, start, end = next(a[1:] for a in drawing.anchors if a[0] == "s")
        expr_end = start + len("f")
        for row in (line - 1, line + 1):
            if 0 <= row < len(drawing.picture):
                above = drawing.picture[row][expr_end:end]
                assert not set(above) & set("│╮╯╰╭┬┴┼▼▲|"), (width, str(drawing))


def test_places_are_named_in_the_order_they_ran():
    # Cells sort as numbers: In [9] before In [11], not as text.
    from gradtutor.render.compose import _natural

    assert sorted(["<In [11]>", "<In [9]>", "<In [10]>"], key=_natural) == ["<In [9]>", "<In [10]>", "<In [11]>"]


def test_a_module_under_two_names_is_one_node(program):
    doc = explain_json(program("""
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 1)
            def forward(self, x):
                y = self.fc(x)
                return y
        model = Net()
        out = model(torch.ones(2, 3)).sum()
    """))
    [inside] = [s for s in doc["steps"] if s["source"] == "y = self.fc(x)"]
    modules = [n for n in inside["graph"]["nodes"] if n["kind"] == "module"]
    assert len(modules) == 1 and modules[0]["names"][0] in ("model", "self")
    # __init__ gave the module parameters but built no graph: nothing to draw there.
    text = explain_text(program("""
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 1)
        model = Net()
    """))
    [init] = [s for s in steps_of(text) if s[0].endswith("self.fc = torch.nn.Linear(3, 1)")]
    assert init == [init[0]]


def test_entering_and_leaving_a_function_does_not_redraw_what_it_did_not_touch(program):
    # In f, whose own w hides the global one, the global w is drawn
    # "global w": names belong to frames, and the renaming alone is not a
    # change to draw, neither going in nor coming back.
    text = explain_text(program("""
        import torch
        w = torch.ones(3, requires_grad=True)
        loss = (w * 2).sum()
        def f(w):
            return w.exp()
        y = f(torch.zeros(2))
        n = 1
    """))
    [inside] = [s for s in steps_of(text) if "in f()" in s[0]]
    assert "w * 2" not in "\\n".join(inside) and "global w" not in "\\n".join(inside)  # only f's own
    [back] = [s for s in steps_of(text) if s[0].endswith("y = f(torch.zeros(2))") and "continued" in s[0]] or [
        s for s in steps_of(text) if s[0].endswith("y = f(torch.zeros(2))")]
    assert "w * 2" not in "\\n".join(back)


def test_a_function_named_as_another_does_not_redraw_what_it_did_not_touch(program):
    # Two hooks called pack: the second's first step changed nothing of the
    # graph, and must not draw a and its graph as if it had because the first
    # pack named a "x" (names belong to one function, not to every function
    # of that name).
    text = explain_text(program("""
        import torch
        def pack(x):
            return x
        a = torch.ones(4, requires_grad=True)
        b = torch.ones(4, requires_grad=True) * 3
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            y = a * b
        y.sum().backward()
        def pack(t):
            name = str(t.shape)
            return name
        x = torch.ones(4, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda n: x):
            z = x.pow(2)
    """))
    [second] = [s for s in steps_of(text) if s[0].endswith("name = str(t.shape)")]
    assert second == [second[0]], second


def test_the_nodes_a_name_moved_on_from_count_as_touched():
    # "x moved on, but the old tensor is still in the graph (drawn as x (old))":
    # the picture draws x (old), even when it looks as it did when drawn last.
    # Of two, the newer: the one the name moved on from (the older is its input).
    nodes = (
        Node("a", "leaf", "a", names=("a",)),
        Node("x0", "statement", "a * 2", former_names=("x",), step=1),
        Node("x1", "statement", "x + 1", former_names=("x",), step=2),
    )
    graph = Graph(nodes, (Edge("a", "x0"), Edge("x0", "x1")))
    assert touched_part(graph, graph, None) == (Graph(), Focus())
    part, _ = touched_part(graph, graph, None, old_names={"x"})
    assert [n.id for n in part.nodes] == ["a", "x0", "x1"]  # (a part this small is drawn whole)
    big = Graph(
        tuple(Node(f"c{i}", "leaf", f"c{i}", names=(f"c{i}",)) for i in range(8)) + nodes,
        tuple(Edge(f"c{i}", "x0") for i in range(8)) + graph.edges,
    )
    part, _ = touched_part(big, big, None, old_names={"x"})
    assert [n.id for n in part.nodes] == ["x0", "x1"]
    assert part.nodes[0].inputs_hidden
    assert touched_part(graph, graph, None, old_names={"y"}) == (Graph(), Focus())


def _bounded_by_every_render(narrator, snapshot, part, notes):
    """The bound as first written: every fold and view drawn until one fits."""
    from gradtutor.narrate import graph_drawing
    from gradtutor.render.vertical_view import VERTICAL

    options, hint = narrator.options, narrator.options.full_graph_hint
    dots, times = ("...", "x") if options.ascii else ("…", "×")
    for keep in (2, 1):
        folded_part, folded = fold_repeats(part, keep=keep, ascii=options.ascii)
        fold_notes = (narrator.say("fold", nodes=folded.nodes, hint=hint, dots=dots, times=times),) if folded.nodes else ()
        for view in (None, VERTICAL):
            drawing = graph_drawing(snapshot, options, explained=set(narrator.explained), graph=folded_part,
                                    notes=notes + fold_notes, view=view)
            if len(drawing.picture) <= MAX_PICTURE_LINES:
                return drawing
    gone = drawing.rows_to_cut(MAX_PICTURE_LINES)
    cut = narrator.say("cut", lines=gone, hint=hint)
    return graph_drawing(snapshot, options, explained=set(narrator.explained), graph=folded_part,
                         notes=notes + fold_notes + (cut,), view=VERTICAL).last(len(drawing.picture) - gone)


def test_a_cut_list_starts_with_an_entry_not_with_the_end_of_one():
    """Entries whose inputs wrap take two lines: the kept part of a list too
    long for the screen begins where an entry begins, and the note counts
    the lines left out."""
    from gradtutor.explanations import book_for
    from gradtutor.model import Snapshot
    from gradtutor.narrate import NarrationOptions, Narrator, graph_drawing
    from gradtutor.render.vertical_view import VERTICAL

    leaves = [Node(f"w{i}", "leaf", f"weight_with_a_long_name_{i}", names=(f"weight_with_a_long_name_{i}",))
              for i in range(60)]
    sums = [Node(f"s{i}", "statement", f"total_{i}", names=(f"total_{i}",), step=i + 1) for i in range(30)]
    edges = [Edge(f"w{2 * i + j}", f"s{i}") for i in range(30) for j in range(2)]
    edges += [Edge(f"s{i - 1}", f"s{i}") for i in range(1, 30)]
    graph = Graph(tuple(leaves + sums), tuple(edges))
    snapshot = Snapshot(30, 30, graph, graph)
    narrator = Narrator(book_for("en"), NarrationOptions(width=60))
    whole = graph_drawing(snapshot, narrator.options, explained=set(), graph=graph, view=VERTICAL)
    starts = {row for _, row, _, _ in whole.anchors}
    assert len(whole.picture) - MAX_PICTURE_LINES not in starts  # a plain cut would start mid-entry
    drawing = narrator.bounded_drawing(snapshot, graph, ())
    assert 0 in {row for _, row, _, _ in drawing.anchors} and len(drawing.picture) <= MAX_PICTURE_LINES
    assert drawing.picture == whole.picture[len(whole.picture) - len(drawing.picture):]
    [note] = [line for line in drawing.legend if "lines of this picture are not shown" in line]
    assert note.lstrip().startswith(f"the first {len(whole.picture) - len(drawing.picture)} lines")


@pytest.mark.parametrize("level", ["statements", "ops"])
@pytest.mark.parametrize("size", [10, 30, 41, 60, 130, 400])
def test_the_picture_bound_skips_only_lists_that_cannot_fit(level, size):
    """A big graph is not drawn as a list only to be measured; what is shown
    is what drawing every attempt would show."""
    from gradtutor.explanations import book_for
    from gradtutor.model import Snapshot
    from gradtutor.narrate import NarrationOptions, Narrator

    nodes = [Node("x", "leaf", "x", names=("x",))]
    edges = []
    h = "x"
    for i in range(size // 4):  # a residual chain: a parameter, two ops, a sum
        p, mul, relu, add = f"p{i}", f"mul{i}", f"relu{i}", f"add{i}"
        nodes += [Node(p, "leaf", f"model.{i}.weight", detail="model"), Node(mul, "op", "MulBackward0", step=9),
                  Node(relu, "op", "ReluBackward0", step=9), Node(add, "op", "AddBackward0", step=9, names=(f"h{i}",))]
        edges += [Edge(h, mul), Edge(p, mul), Edge(mul, relu), Edge(relu, add), Edge(h, add)]
        h = add
    graph = Graph(tuple(nodes), tuple(Edge(e.src, e.dst) for e in edges))
    snapshot = Snapshot(9, 1, graph, graph)
    for width in (60, 100):
        narrator = Narrator(book_for("en"), NarrationOptions(level=level, width=width))
        expected = _bounded_by_every_render(narrator, snapshot, graph, ("a note",))
        assert narrator.bounded_drawing(snapshot, graph, ("a note",)) == expected


# -- a line still running -------------------------------------------------------
INSIDE = """
import torch
from torch.autograd.functional import hessian


def cube_sum(x):
    return x.pow(3).sum()


def triple(t):
    return t * 3


a = torch.ones(2, requires_grad=True)
y = triple(a * 2)
h = hessian(cube_sum, torch.ones(2))
"""


def test_a_tensor_made_by_a_line_still_running_is_drawn_inside_it(program):
    """In a call a line makes, what that line made so far is drawn "inside"
    it: ``t`` holds ``a * 2``, not the value of ``triple(a * 2)``; hessian's
    own copy of its input is not the value of ``hessian(...)`` either."""
    path = program(INSIDE)
    steps = steps_of(explain_text(path))
    [in_triple] = [s for s in steps if s[0].endswith("return t * 3")]
    assert "   a [leaf] --> inside triple(a * 2) = t" in in_triple
    [in_cube] = [s for s in steps if s[0].endswith("return x.pow(3).sum()")]
    assert any(line.startswith("   tensor [leaf] --> inside hessian(") and line.endswith(") = x") for line in in_cube)
    after = [s for s in steps if s[0].endswith("y = triple(a * 2)")][-1]
    # The line is over, and a * 2 is still not its value: t * 3 is (nanogpt's
    # self.ln2(x) was drawn 'x + self.ffwd(self.ln2(x))', the whole line's words).
    assert "   a [leaf] --> inside triple(a * 2) [new] --> t * 3 = y" in after
    zh = steps_of(explain_text(path, "--lang", "zh"))
    assert any("triple(a * 2) 之中 = t" in line for s in zh for line in s)
    doc = explain_json(path)
    [node] = [n for s in doc["steps"] if s["function"] == "triple" for n in s["graph"]["nodes"] if "t" in n["names"]]
    assert node["running"] is True and node["label"] == "triple(a * 2)"
    [ended] = [n for n in step_at(doc, 14)["graph"]["nodes"] if n["id"] == node["id"]]
    assert ended.get("inside") is True and "running" not in ended and ended["names"] == []


def test_a_step_draws_the_tensor_its_events_name(program):
    """Back from ``make``, ``out`` names the tensor the function's picture
    drew last: unchanged since that picture, it is still drawn, because the
    step says "out names a tensor"."""
    steps = steps_of(explain_text(program("""
        import torch


        def make(x):
            out = x * 2
            return out


        a = torch.ones(2, requires_grad=True)
        out = make(a)
    """)))
    back = steps[-1]
    assert back[0].endswith("(continued) out = make(a)")
    assert back[1:] == ["   * out names a tensor", "   a [leaf] --> x * 2 = out"]


@pytest.mark.parametrize("change", [
    "with torch.no_grad():\n    ema.weight.mul_(0.5)",
    "with torch.no_grad():\n    for v in ema.state_dict().values():\n        v.mul_(0.5)",
    # (in a function of the program's, as timm's ModelEmaV2.update, told from its frame)
    "@torch.no_grad()\ndef update(decay):\n    for v in ema.state_dict().values():\n        v.mul_(decay)\n"
    "\n\nupdate(0.5)",
])
def test_a_module_changed_in_place_since_the_last_picture_is_not_said_to_be_unchanged(program, change):
    """Changed under no_grad, a module's parameters get no new autograd node:
    its node looks as it did, and the next picture said "not drawn, unchanged
    since the last picture: ema" (an EMA of a model's weights, updated after
    each optimizer step). What the words told changed in place is drawn."""
    head = "import torch\nmodel = torch.nn.Linear(2, 1)\nema = torch.nn.Linear(2, 1)\nx = torch.ones(3, 2)\n"
    steps = steps_of(explain_text(program(head + "y = model(x).sum()\n" + change + "\nz = model(x).sum()\n")))
    [after] = [s for s in steps if s[0].endswith("z = model(x).sum()")]
    picture = "\n".join(after)
    assert "ema" in picture and "unchanged since the last picture" not in picture, picture


def test_a_module_made_when_no_picture_was_drawn_is_drawn_by_the_next_picture(program):
    """Making a module draws nothing (its parameters are in no graph yet). The
    first picture after it, with no picture before it at all, said "not
    drawn, unchanged since the last picture: ema"."""
    steps = steps_of(explain_text(program("""
        import torch
        model = torch.nn.Linear(2, 1)
        ema = torch.nn.Linear(2, 1)
        y = model(torch.ones(3, 2)).sum()
        other = torch.nn.Linear(2, 1)
        z = model(torch.ones(3, 2)).sum()
    """)))
    [first] = [s for s in steps if s[0].endswith("y = model(torch.ones(3, 2)).sum()")]
    assert "   ema" in first and "unchanged since the last picture" not in "\n".join(first)
    [second] = [s for s in steps if s[0].endswith("z = model(torch.ones(3, 2)).sum()")]
    assert "   other" in second  # made since the last picture
    assert "not drawn, unchanged since the last picture: ema (" in "\n".join(second)  # drawn in it


def test_the_nodes_of_names_count_as_touched():
    nodes = (Node("x", "leaf", "x", names=("x",)), Node("y", "statement", "x * 2", names=("y",), step=2))
    graph = Graph(nodes, (Edge("x", "y"),))
    assert touched_part(graph, graph, None) == (Graph(), Focus())
    part, _ = touched_part(graph, graph, None, names={"y"})
    assert [n.id for n in part.nodes] == ["x", "y"]


def test_the_closing_note_shows_brackets_as_written(program):
    """``[i] = ...`` is the note's words, not rich markup for italics."""
    text = explain_text(program("""
        import torch
        losses = torch.zeros(10)
        for k in range(10):
            losses[k] = k * 2.0
    """))
    assert " ".join(text.split()).endswith("losses was changed in place ([i] = ...) x7; --max-iterations N shows more)")


def test_a_node_that_a_current_node_was_computed_from_is_not_drawn_dropped():
    """Statements are grouped anew at each step: a statement node missing from
    the new grouping while something still shown was computed from it is not
    gone (forward_ad_usage drew it "(dropped)" beside its own consumer)."""
    from gradtutor.snapshot import with_dropped

    a, b, c, d = (Node(i, "statement", i, step=n) for n, i in enumerate("abcd", 1))
    previous = Graph((a, b, c, d), (Edge("a", "b"), Edge("c", "d")))
    current = Graph((b,), ())
    out = with_dropped(previous, current)
    assert [(n.id, n.dropped) for n in out.nodes] == [("b", False), ("c", True), ("d", True)]
    assert out.edges == (Edge("c", "d"),)


def test_a_forward_mode_tangent_is_drawn_where_the_op_made_it(program):
    """The tangent of ``model(input)``'s result is computed by the op's
    forward-mode formula, from the weight's transpose inside the op: the
    line that reads it made nothing, and it was not computed from ``out``
    (forward_ad_usage drew ``jvp [new]  ◀ out``). The transpose both used is
    drawn on its own, ``out`` keeps what it was computed from, and once
    ``out`` names another tensor the tangent's part is not drawn dropped."""
    steps = steps_of(explain_text(program("""
        import torch
        import torch.autograd.forward_ad as fwAD
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 3)
        input = torch.randn(6, 3)
        with fwAD.dual_level():
            for name, p in list(model.named_parameters()):
                delattr(model, name)
                setattr(model, name, fwAD.make_dual(p, torch.rand_like(p)))
            out = model(input)
            jvp = fwAD.unpack_dual(out).tangent
        out = input * 2
        print(jvp.shape)
    """)))
    [read] = [s for s in steps if s[0].endswith("jvp = fwAD.unpack_dual(out).tangent")]
    text = "\n".join(read)
    assert "[new]" not in text
    # (the narration in a test is plain ASCII: "<-" for the arrow, "..." for the ellipsis)
    assert not any(line.rstrip().endswith("<- out") for line in read)
    assert "   inside model(input)  <- setattr(model, name, fwAD.make_dual(p, ... #1" in read
    assert "   inside model(input) = jvp  <- inside model(input)" in read
    assert "<- input, setattr(model, name, fwAD.make_dual(p, ... #2, inside model(input)" in text
    [rebound] = [s for s in steps if s[0].endswith("out = input * 2")]
    assert not any("dropped" in line for line in rebound)


def test_a_module_whose_last_parameter_was_deleted_is_not_drawn_dropped(program):
    """After ``delattr`` of its last parameter a module has nothing left to
    draw, but its name still holds it and the next line calls it: it is not
    "(dropped): nothing uses it any more" (forward_ad_usage said so)."""
    text = explain_text(program("""
        import torch
        model = torch.nn.Linear(2, 2)
        params = dict(model.named_parameters())
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, p * 1.0)
        out = model(torch.ones(1, 2))
    """))
    assert "delattr(model, name)" in text
    assert "dropped" not in text


def test_dropped_is_said_only_of_what_is_gone(program):
    """A tensor the names no longer lead to but a dict still holds is not
    "(dropped): nothing uses it any more"; one nothing holds is."""
    steps = steps_of(explain_text(program("""
        import torch
        w = torch.ones(2, requires_grad=True)
        v = torch.ones(2, requires_grad=True)
        keep = {"w": w}
        w = None
        v = None
        print(keep["w"].sum())
    """)))
    [w_gone] = [s for s in steps if s[0].endswith("w = None")]
    [v_gone] = [s for s in steps if s[0].endswith("v = None")]
    assert not any("dropped" in line for line in w_gone)
    assert "   v (dropped)" in v_gone


def test_a_step_that_changed_only_what_a_graph_starts_from_draws_only_that(program):
    """A backward through a graph no name holds sets w's .grad: the picture
    drew w's whole small part with it, the graph of loss, right under
    "backward: 1 node freed", as if that backward went through loss. Only w
    is drawn (the rest is unchanged); a backward through a named tensor that
    kept its graph (retain_graph) still draws that graph."""
    steps = steps_of(explain_text(program("""
        import torch
        w = torch.ones(2, requires_grad=True)
        loss = (w * 2).sum()
        (w * 3).sum().backward()
        v = torch.ones(2, requires_grad=True)
        y = (v * 4).sum()
        y.backward(retain_graph=True)
    """)))
    [unnamed] = [s for s in steps if s[0].endswith("(w * 3).sum().backward()")]
    assert "w [grad]" in "\n".join(unnamed) and "= loss" not in "\n".join(unnamed)
    [kept] = [s for s in steps if s[0].endswith("y.backward(retain_graph=True)")]
    assert "v [grad] --> (v * 4).sum() = y" in "\n".join(kept)


def test_the_notes_of_hidden_steps_add_up_to_the_closing_total(program):
    """The steps hidden after the last step shown (here the loop's last
    rounds, after the print) had no note of their own: the notes summed to
    fewer than the "in all" total. They get one, before the total."""
    text = " ".join(explain_text(program("""
        import torch
        x = torch.ones(2, requires_grad=True)
        for i in range(9):
            y = x * 2
            if i == 5:
                print('five')
    """)).split())
    notes = [int(n) for n in re.findall(r"\((\d+) more repeated steps? not shown", text)]
    [total] = [int(n) for n in re.findall(r"\(in all, (\d+) repeated steps? not shown", text)]
    assert len(notes) == 2 and sum(notes) == total
    assert text.rindex("more repeated step") < text.index("(in all,")


def test_a_gradient_value_that_only_rounds_to_a_whole_number_keeps_its_zeros():
    # backward_twice's W_xh.grad held 1.0004, shown "1." beside "0.192":
    # "1." is how torch prints an exact 1.
    from gradtutor.narrate import _format_values
    from gradtutor.transcript import format_grad

    assert _format_values([0.192, 1.0004, 1.0, -2.0, 100.02]) == "[0.192, 1.000, 1., -2., 100.0]"
    assert format_grad([1.0004, 1.0]) == "[1.000, 1]"


LSTM_CELL = """
import torch
torch.manual_seed(0)
cell = torch.nn.LSTMCell(1, 3)
xs = torch.randn(4, 2, 1)
h = torch.zeros(2, 3)
c = torch.zeros(2, 3)
for x in xs:
    h, c = cell(x, (h, c))
"""


def test_a_list_numbers_a_name_said_alike_by_two_entries_apart(program):
    # After the loop's second run, h (old) names the zeros it started from,
    # and the first run's result, (h (old), c (old)), too. A list refers to
    # entries by name: each look-alike gets a number of its own.
    text = explain_text(program(LSTM_CELL), "--width", "60")
    [step] = [s for s in steps_of(text) if s[0].endswith("line 8, run 2 h, c = cell(x, (h, c))")]
    entries = [line.strip() for line in step]
    assert "h (old) #1" in entries and "c (old) #1" in entries
    assert "cell(x, (h, c)) = h (old), c (old) #2" in entries
    assert "<- cell, x (old), h (old) #1, c (old) #1" in entries
    assert "<- cell, x, (h (old), c (old)) #2" in entries
