"""Short labels from the user's own source text (gradtutor.labels)."""

from __future__ import annotations

import pytest

from gradtutor.labels import shorten_expression


@pytest.mark.parametrize(
    ("source", "label"),
    [
        ("torch.matmul(x, w)+b", "x @ w + b"),
        ("torch.mm(x, w.T)", "x @ w.T"),
        ("x.matmul(w)", "x @ w"),
        ("torch.nn.functional.binary_cross_entropy_with_logits(z, y)", "BCE(z, y)"),
        ("F.mse_loss(model(inputs), targets)", "MSE(model(inputs), targets)"),
        ("F.cross_entropy(logits, labels)", "CE(logits, labels)"),
        ("nn.functional.l1_loss(a, b)", "L1(a, b)"),
        ("torch.exp(x)", "exp(x)"),
        ("F.relu(x @ w)", "relu(x @ w)"),
        ("torch.add(a, b) * 2", "(a + b) * 2"),
        ("a.mul(b + 1)", "a * (b + 1)"),
        ("x.pow(2)", "x ** 2"),
        ("x**2", "x ** 2"),
        ("x.exp()", "x.exp()"),
        ("model(x)", "model(x)"),
        ("torch.mul(a, b, out=c)", "mul(a, b, out=c)"),  # keywords: not an operator any more
        ("np.add(a, b)", "np.add(a, b)"),  # not torch's
        ("torch.nn.Linear(4, 8)", "torch.nn.Linear(4, 8)"),  # a class path, not a function
    ],
)
def test_labels_use_the_short_forms(source: str, label: str) -> None:
    assert shorten_expression(source) == label


def test_source_that_does_not_parse_is_kept_as_written() -> None:
    assert shorten_expression("  x +  ") == "x +"


def test_an_over_long_label_is_cut_with_an_ellipsis() -> None:
    out = shorten_expression("f(" + ", ".join(f"arg{i}" for i in range(20)) + ")", max_len=20)
    assert len(out) == 20 and out.endswith("…")
    assert shorten_expression("x + y", max_len=40) == "x + y"


def test_labels_of_autograd_grad_and_a_lone_generator_argument():
    from gradtutor.labels import shorten_expression

    assert shorten_expression("torch.autograd.grad(y, x, create_graph=True)") == "grad(y, x)"
    assert shorten_expression("torch.autograd.grad(outputs=y, inputs=x)[0]") == "grad(y, x)[0]"
    assert shorten_expression("sum(p.sum() for p in  parts)") == "sum(p.sum() for p in parts)"


def test_a_reference_to_a_statement_that_made_several_named_tensors_names_them_all():
    # time_sequence_prediction: "self.linear(h_t2) = output ◀ seq, c_t2", the
    # first of the LSTM cell's two names, when the line read h_t2.
    from gradtutor.model import STATEMENT, Node
    from gradtutor.render.charset import UNICODE_CHARSET
    from gradtutor.render.node_text import ref_name

    both = Node("s7", STATEMENT, "self.lstm2(h_t, (h_t2, c_t2))", names=("c_t2", "h_t2"))
    one = Node("s8", STATEMENT, "self.linear(h_t2)", names=("output",))
    assert ref_name(both, UNICODE_CHARSET) == "(c_t2, h_t2)" and ref_name(one, UNICODE_CHARSET) == "output"
    from gradtutor.model import LEAF

    aliases = Node("t3", LEAF, "primal", names=("foo", "primal"))  # one tensor, two names
    assert ref_name(aliases, UNICODE_CHARSET) == "foo"


def test_a_reference_to_a_statement_whose_tensors_lost_their_names_names_them_all():
    # time_sequence_prediction's next iteration: "self.linear(h_t2) = output
    # ◀ seq, c_t2 (old)", the first of the cell's old names, as if the line
    # had read c_t2; and "c + 1 = c ◀ h" when h kept its name and c did not.
    from gradtutor.model import STATEMENT, Node
    from gradtutor.render.charset import UNICODE_CHARSET
    from gradtutor.render.node_text import ref_name

    both_old = Node("s7", STATEMENT, "self.lstm2(h_t, (h_t2, c_t2))", former_names=("c_t2", "h_t2"))
    mixed = Node("s4", STATEMENT, "cell(x)", names=("h",), former_names=("c",))
    lone = Node("s5", STATEMENT, "h * 2", former_names=("y",))
    assert ref_name(both_old, UNICODE_CHARSET) == "(c_t2 (old), h_t2 (old))"
    assert ref_name(mixed, UNICODE_CHARSET) == "(h, c (old))"
    assert ref_name(lone, UNICODE_CHARSET) == "y (old)"
