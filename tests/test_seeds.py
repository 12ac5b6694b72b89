"""The seeds' programs: what the tutor must get right, including where the seeds are wrong."""

from __future__ import annotations

import pytest

from conftest import PROGRAMS, events, explain_json, in_main, step_at


def test_first_scenario_blames_the_matmul_statement_and_the_first_backward():
    doc = explain_json(PROGRAMS / "so_first.py")
    [error] = events(doc, "error")
    assert error["cause"] == "second-backward"
    assert error["line"] == 13
    # The node that was freed is in z's statement (line 7), freed by line 10.
    assert error["node_line"] == 7
    assert error["node_source"] == "z = torch.matmul(x, w)+b"
    assert error["freed_by_line"] == 10
    assert error["freed_by_source"] == "loss.backward()"
    assert doc["exit_code"] == 1
    assert doc["exception"]["type"] == "RuntimeError"


def test_first_scenario_rebinding_loss_drops_the_old_loss_but_keeps_z():
    doc = explain_json(PROGRAMS / "so_first.py")
    [rebound] = [e for e in events(doc, "name-rebound") if e["name"] == "loss"]
    assert rebound["line"] == 12 and rebound["old_in_graph"] is False
    graph = step_at(doc, 12)["graph"]
    labels = [(n["label"], tuple(n["names"]), n.get("dropped", False)) for n in graph["nodes"]]
    assert ("x @ w + b", ("z",), False) in labels
    assert ("BCE(z, y)", ("loss",), False) in labels
    assert ("BCE(z, y)", (), True) in labels  # the first loss, drawn once more as a ghost
    z = next(n for n in graph["nodes"] if n["names"] == ["z"])
    assert z["saved"] == "freed" and z["freed_by_line"] == 10
    # The const inputs the statements read are in the statement view.
    assert {n["label"] for n in graph["nodes"] if n["kind"] == "const"} == {"x", "y"}


def test_backward_frees_saved_tensors_by_default():
    """The article claims PyTorch keeps the graph after backward by default; it does not."""
    doc = explain_json(PROGRAMS / "so_first.py")
    [first_backward] = [e for e in events(doc, "backward") if e["line"] == 10]
    assert first_backward["retain_graph"] is False
    assert first_backward["freed"] >= 2  # the matmul and the BCE nodes saved tensors


def test_second_scenario_recomputes_and_gradients_double():
    doc = explain_json(PROGRAMS / "so_second.py")
    assert events(doc, "error") == []
    assert doc["exit_code"] == 0
    assert step_at(doc, 17)["output"] == "True\n"
    accumulated = {e["name"] for e in events(doc, "grad-accumulated")}
    assert accumulated == {"w", "b"}
    first = step_at(doc, 11)["grads"]["w"]
    second = step_at(doc, 16)["grads"]["w"]
    for row_first, row_second in zip(first, second):
        assert row_second == pytest.approx([2 * v for v in row_first])


def test_forum_base_case_gradient_is_5376():
    """The forum thread says 53376; the gradient of x**2 + x**3 at 42 is 5376."""
    doc = explain_json(PROGRAMS / "forum_base.py")
    assert step_at(doc, 7)["grads"]["x"] == 5376.0
    assert step_at(doc, 8)["output"] == "tensor(5376.)\n"


def test_forum_whatif1_reports_x_rebound_with_the_old_leaf_still_in_the_graph():
    doc = explain_json(PROGRAMS / "forum_whatif1.py")
    [rebound] = events(doc, "name-rebound")
    assert rebound == {
        "kind": "name-rebound", "line": 4, "name": "x", "old_in_graph": True,
        "old_node": rebound["old_node"], "node": rebound["node"],
    }
    assert step_at(doc, 8)["grads"]["x"] == 9335089.0
    # The 42. leaf lost its name but is drawn as a ghost of x.
    graph = step_at(doc, 6)["graph"]
    old = [n for n in graph["nodes"] if n["kind"] == "leaf"]
    assert [(n["names"], n["former_names"]) for n in old] == [([], ["x"])]


def test_forum_whatif2_gradient_is_1():
    doc = explain_json(PROGRAMS / "forum_whatif2.py")
    [rebound] = events(doc, "name-rebound")
    assert rebound["name"] == "x" and rebound["line"] == 5 and rebound["old_in_graph"] is True
    assert step_at(doc, 8)["grads"]["x"] == 1.0
    assert step_at(doc, 9)["output"] == "tensor(1.)\n"


def test_article_retain_graph_accumulates_4_then_8():
    doc = explain_json(PROGRAMS / "article_retain.py")
    backwards = events(doc, "backward")
    assert [b["retain_graph"] for b in backwards] == [True, True]
    assert [b["freed"] for b in backwards] == [0, 0]
    assert step_at(doc, 6)["grads"]["x"] == [4.0]
    assert step_at(doc, 8)["grads"]["x"] == [8.0]
    [acc] = events(doc, "grad-accumulated")
    assert acc["name"] == "x" and acc["line"] == 8
    assert "".join(s["output"] for s in doc["steps"]) == "tensor([4.])\ntensor([8.])\n"


SEEDS = ["so_first.py", "so_second.py", "forum_base.py", "forum_whatif1.py", "forum_whatif2.py", "article_retain.py"]


@pytest.mark.parametrize("name", SEEDS)
def test_seed_programs_inside_main_give_the_same_events(name, program):
    flat = explain_json(PROGRAMS / name)
    nested_path = program(in_main((PROGRAMS / name).read_text()), name=name)
    nested = explain_json(nested_path)

    def summary(doc):
        out = []
        for e in events(doc):
            fields = {
                k: v for k, v in e.items()
                if k not in ("line", "node", "old_node") and not k.endswith(("_line", "_file"))
            }
            out.append(fields)
        return out

    assert summary(nested) == summary(flat)
    assert [s["function"] for s in nested["steps"] if s["events"]][-1] == "main"
    assert nested["exit_code"] == flat["exit_code"]
    assert "".join(s["output"] for s in nested["steps"]) == "".join(s["output"] for s in flat["steps"])
