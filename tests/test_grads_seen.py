"""A shown step's ``w.grad: before → after`` starts from the value the step
started from, also when loop steps not shown changed it in between
(gradtutor.grads_seen)."""

from __future__ import annotations

from conftest import explain_json

PROGRAM = """
import torch

w = torch.ones(2, requires_grad=True)
b = torch.zeros(2, requires_grad=True)
params = [w, b]
for i in range(6):
    loss = ((w + b) * (i + 1)).sum()
    for p in params:
        p.grad = None
    loss.backward()
print(w.grad, b.grad)
"""


def changes(doc: dict, line: int) -> list[list]:
    return [[c["name"], c["before"], c["after"]] for s in doc["steps"] if s["line"] == line for c in s.get("grad_changes", [])]


def test_a_gradient_set_to_none_by_steps_not_shown_is_none_before_the_backward(program):
    doc = explain_json(program(PROGRAM))
    backwards = [s for s in doc["steps"] if s["line"] == 10]
    assert [s["iteration"] for s in backwards] == [1, 2, 3]
    # Iteration 2: w's reset is shown (the line's 3rd run), b's is not (its 4th):
    # the backward still starts from b.grad = None, not from iteration 1's [1, 1].
    assert [[c["name"], c["before"], c["after"]] for c in backwards[1]["grad_changes"]] == [
        ["w", None, [2.0, 2.0]], ["b", None, [2.0, 2.0]],
    ]
    assert [[c["name"], c["before"], c["after"]] for c in backwards[2]["grad_changes"]] == [
        ["w", None, [3.0, 3.0]], ["b", None, [3.0, 3.0]],
    ]


def test_a_step_that_did_not_touch_a_gradient_reports_no_change_of_it(program):
    doc = explain_json(program(PROGRAM))
    # The loop's hidden iterations changed both gradients; the print did not.
    assert doc["steps"][-1]["output"] == "tensor([6., 6.]) tensor([6., 6.])\n"
    assert changes(doc, 11) == []


def test_a_gradient_written_through_data_by_steps_not_shown_is_not_reported_later(program):
    doc = explain_json(program("""
        import torch

        w = torch.ones(2, requires_grad=True)
        (w * 4).sum().backward()
        for i in range(5):
            w.grad.data.mul_(0.5)
        print(w.grad)
    """))
    # Runs 4 and 5 halve the gradient where no version counter sees it: the
    # print, which did not touch it, reports no change (not "[0.5, 0.5] → [0.125, 0.125]").
    assert doc["steps"][-1]["output"] == "tensor([0.1250, 0.1250])\n"
    assert changes(doc, 7) == []
    assert [c[2] for c in changes(doc, 6)] == [[2.0, 2.0], [1.0, 1.0], [0.5, 0.5]]


def test_a_gradient_changed_while_no_name_held_its_tensor_is_not_told_at_the_next_line_that_names_it(program):
    # lpe_polynomial_nn: the backward ran while ``param`` named the bias; the
    # weight's new gradient was told at ``param -= ...`` (line 10), which
    # reads it. pinn_burgers: one a backward in train() set was told at
    # ``lam = self.lam`` (line 15), in another method.
    doc = explain_json(program("""
        import torch
        model = torch.nn.Linear(3, 1)
        x = torch.randn(4, 3)
        for t in range(3):
            y = model(x).sum()
            model.zero_grad()
            y.backward()
            with torch.no_grad():
                for param in model.parameters():
                    param -= 0.1 * param.grad
        class P:
            def __init__(self):
                self.lam = torch.ones(1, requires_grad=True)
            def f(self, x):
                lam = self.lam
                return (lam * x).sum()
        p = P()
        for i in range(3):
            p.f(torch.ones(2)).backward()
    """))
    assert changes(doc, 10) == [] and changes(doc, 15) == []
    assert ["param", None, [4.0]] in changes(doc, 7)  # (the bias's, which param names then)


HOOKED = """
import torch
lin = torch.nn.Linear(3, 2)
def report(module, grad_input, grad_output):
    print("norm", round(grad_output[0].norm().item(), 3))
lin.register_full_backward_hook(report)
w = torch.ones(3, requires_grad=True)
x = torch.ones(4, 3)
for i in range(5):
    loss = lin(x).sum() + (w ** 2).sum()
    loss.backward()
print(w.grad)
"""


def test_a_hook_a_backward_calls_does_not_tell_what_the_backward_filled(program):
    # w's AccumulateGrad runs before lin's backward hook: the hook's print
    # line was shown with "w.grad: None -> [2, 2, 2]", and the backward's
    # line, which filled it, said nothing of w.grad.
    doc = explain_json(program(HOOKED))
    assert changes(doc, 4) == []
    assert changes(doc, 10)[:2] == [["w", None, [2.0, 2.0, 2.0]], ["w", [2.0, 2.0, 2.0], [4.0, 4.0, 4.0]]]
    # Past the shown iterations the hook's steps are hidden: the backward's
    # line still tells the change from the value before it (8 -> 10 at the
    # 5th backward is not shown; the 3rd, shown, went 4 -> 6).
    assert changes(doc, 10)[2] == ["w", [4.0, 4.0, 4.0], [6.0, 6.0, 6.0]]
