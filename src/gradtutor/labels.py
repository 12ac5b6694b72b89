"""Short labels for drawings, made from the user's own source text.

``torch.matmul(x, w)+b`` -> ``x @ w + b``; ``F.mse_loss(h, t)`` -> ``MSE(h, t)``;
``torch.exp(x)`` -> ``exp(x)``; an over-long label is cut with ``…``.
"""

from __future__ import annotations

import ast

# Functions a drawing names by their usual short name. Keys are the bare
# function names; the call may be spelled torch.nn.functional.X, F.X or
# nn.functional.X.
_SHORT_NAMES = {
    "binary_cross_entropy_with_logits": "BCE",
    "binary_cross_entropy": "BCE",
    "cross_entropy": "CE",
    "nll_loss": "NLL",
    "mse_loss": "MSE",
    "l1_loss": "L1",
    "smooth_l1_loss": "SmoothL1",
    "huber_loss": "Huber",
    "kl_div": "KL",
}

# Prefixes that add nothing once the function name is known.
_PREFIXES = ("torch.nn.functional.", "nn.functional.", "F.", "torch.")

# Calls that are an operator in disguise: torch.add(a, b) is a + b.
_OPERATORS: dict[str, ast.operator] = {
    "matmul": ast.MatMult(),
    "mm": ast.MatMult(),
    "bmm": ast.MatMult(),
    "add": ast.Add(),
    "sub": ast.Sub(),
    "mul": ast.Mult(),
    "div": ast.Div(),
    "pow": ast.Pow(),
}


def shorten_expression(source: str, max_len: int = 40) -> str:
    """Return a short label for an expression: ``torch.matmul(x, w)+b`` -> ``x @ w + b``.

    Cases: a known loss becomes its short name (``BCE(z, y)``); ``torch.``,
    ``F.`` and ``torch.nn.functional.`` prefixes go; a function or method
    that is an operator becomes the operator (``torch.mul(a, b)``,
    ``a.mul(b)`` -> ``a * b``), unless it has keyword arguments; anything
    else stays as written (``model(x)``, ``x.exp()``). Source that does not
    parse is returned as written. The result is at most ``max_len``
    characters, cut with ``…``.
    """
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return _cut(source.strip(), max_len)
    shorten = _Shorten()
    tree = ast.fix_missing_locations(shorten.visit(tree))
    if not shorten.changed and any(
        isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords and isinstance(n.args[0], ast.GeneratorExp)
        for n in ast.walk(tree)
    ):
        # As written, spaces tidied: unparse would add parentheses of its own
        # around a lone generator argument (sum((p for p in ps))).
        return _cut(" ".join(source.split()), max_len)
    return _cut(ast.unparse(tree), max_len)


# torch.autograd.grad(y, x, create_graph=True) -> grad(y, x)
_GRAD_CALLS = ("torch.autograd.grad", "autograd.grad")


class _Shorten(ast.NodeTransformer):
    def __init__(self) -> None:
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = ast.unparse(node.func)
        if name in _GRAD_CALLS:
            self.changed = True
            named = {kw.arg: kw.value for kw in node.keywords}
            args = list(node.args) + [named[k] for k in ("outputs", "inputs") if k in named]
            return ast.Call(ast.Name("grad", ast.Load()), args, [])
        before = ast.dump(node)
        result = self._shorter(node, name)
        if result is not node or ast.dump(node) != before:
            self.changed = True
        return result

    def _shorter(self, node: ast.Call, name: str) -> ast.AST:
        bare = _strip_prefix(name)
        if bare is not None and not node.keywords:
            if bare in _OPERATORS and len(node.args) == 2:
                return ast.BinOp(node.args[0], _OPERATORS[bare], node.args[1])
        if bare is not None:
            node.func = ast.Name(_SHORT_NAMES.get(bare, bare), ast.Load())
            return node
        method = _operator_method(node)
        if method is not None:
            return method
        return node


def _strip_prefix(name: str) -> str | None:
    """``torch.nn.functional.relu`` -> ``relu``; None for anything not torch's."""
    for prefix in _PREFIXES:
        if name.startswith(prefix) and "." not in name[len(prefix):]:
            return name[len(prefix):]
    return None


def _operator_method(node: ast.Call) -> ast.AST | None:
    """``a.matmul(b)`` -> ``a @ b``, ``x.pow(2)`` -> ``x ** 2``."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _OPERATORS
        and len(node.args) == 1
        and not node.keywords
        and not (isinstance(func.value, ast.Name) and func.value.id in ("torch", "F", "nn"))
    ):
        return ast.BinOp(func.value, _OPERATORS[func.attr], node.args[0])
    return None


def _cut(text: str, max_len: int) -> str:
    return text if len(text) <= max_len else text[: max_len - 1] + "…"
