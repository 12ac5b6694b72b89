"""Hand-built graphs, as the engine produces them, for the renderer's tests.

Each fixture mirrors a snapshot of a seed program (the engine's own output
was used to check fields and order: consts, then leaves, then statements in
creation order, and nodes dropped this step listed last). Statement ids and
steps follow the program's line numbers so the pictures are easy to check
against the source.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradtutor.model import (
    CONST,
    LEAF,
    MODULE,
    OP,
    SAVED_FREED,
    SAVED_MODIFIED,
    SAVED_NONE,
    SAVED_PRESENT,
    STATEMENT,
    Edge,
    Graph,
    Node,
)


@dataclass(frozen=True)
class Case:
    """A graph, the step it was taken after, and the level to draw it at."""

    name: str
    graph: Graph
    step: int | None
    level: str = "statements"
    width: int = 80
    view: str | None = None


def const(node_id: str, name: str) -> Node:
    return Node(node_id, CONST, name, names=(name,), requires_grad=False)


def leaf(node_id: str, name: str, *, grad: bool = False, former: str | None = None, step: int | None = None) -> Node:
    if former is not None:
        return Node(node_id, LEAF, former, names=(), former_names=(former,), has_grad=grad, step=step)
    return Node(node_id, LEAF, name, names=(name,), has_grad=grad, step=step)


def param(node_id: str, path: str, *, grad: bool = False) -> Node:
    return Node(node_id, LEAF, path, has_grad=grad, detail=path.split(".")[0])


def stmt(
    line: int,
    label: str,
    name: str | None,
    *,
    saved: str = SAVED_PRESENT,
    freed_by: int | None = None,
    former: str | None = None,
    dropped: bool = False,
    grad: bool = False,
    retains: bool = False,
) -> Node:
    return Node(
        f"s{line}",
        STATEMENT,
        label,
        names=(name,) if name else (),
        former_names=(former,) if former else (),
        line=line,
        step=line,
        saved=saved,
        freed_by_line=freed_by,
        dropped=dropped,
        has_grad=grad,
        retains_grad=retains,
    )


def op(node_id: str, label: str, *, step: int, names: tuple[str, ...] = (), saved: str = SAVED_PRESENT) -> Node:
    return Node(node_id, OP, label, names=names, step=step, line=step, saved=saved)


def graph(nodes: list[Node], edges: str) -> Graph:
    """``edges`` as ``"a>b c>d"``."""
    pairs = [e.split(">") for e in edges.split()]
    return Graph(tuple(nodes), tuple(Edge(s, d) for s, d in pairs))


# -- the Stack Overflow answer, first program ----------------------------------
# x = torch.ones(5); y = torch.zeros(3); w, b = randn(..., requires_grad=True)
# 7 z = torch.matmul(x, w)+b   9 loss = BCE(z, y)   10 loss.backward()
# 12 loss = BCE(z, y)          13 loss.backward()  -> the error
SO_EDGES = "x>s7 w>s7 b>s7 s7>s9 y>s9"


def so_first_line9() -> Case:
    nodes = [const("x", "x"), const("y", "y"), leaf("w", "w"), leaf("b", "b"),
             stmt(7, "x @ w + b", "z"), stmt(9, "BCE(z, y)", "loss")]
    return Case("so_first_line9", graph(nodes, SO_EDGES), 9)


def so_first_line10() -> Case:
    nodes = [const("x", "x"), const("y", "y"), leaf("w", "w", grad=True), leaf("b", "b", grad=True),
             stmt(7, "x @ w + b", "z", saved=SAVED_FREED, freed_by=10),
             stmt(9, "BCE(z, y)", "loss", saved=SAVED_FREED, freed_by=10)]
    return Case("so_first_line10", graph(nodes, SO_EDGES), 10)


def so_first_line12(dropped_last: bool = True) -> Case:
    """After the second ``loss = BCE(z, y)``: the first loss is unreachable.
    The engine lists dropped nodes last; ``dropped_last=False`` is the brief's order."""
    old = stmt(9, "BCE(z, y)", None, saved=SAVED_FREED, freed_by=10, former="loss", dropped=True)
    new = stmt(12, "BCE(z, y)", "loss")
    head = [const("x", "x"), const("y", "y"), leaf("w", "w", grad=True), leaf("b", "b", grad=True),
            stmt(7, "x @ w + b", "z", saved=SAVED_FREED, freed_by=10)]
    nodes = head + ([new, old] if dropped_last else [old, new])
    return Case("so_first_line12", graph(nodes, "x>s7 w>s7 b>s7 s7>s12 y>s12 s7>s9 y>s9"), 12)


# -- the answer's second program: z recomputed before the second loss --------------
# 8 z = ...  10 loss = ...  11 loss.backward()  14 z = ...  15 loss = ...
def so_second_line14() -> Case:
    nodes = [const("x", "x"), const("y", "y"), leaf("w", "w", grad=True), leaf("b", "b", grad=True),
             stmt(8, "x @ w + b", None, saved=SAVED_FREED, freed_by=11, former="z"),
             stmt(10, "BCE(z, y)", "loss", saved=SAVED_FREED, freed_by=11),
             stmt(14, "x @ w + b", "z")]
    return Case("so_second_line14", graph(nodes, "x>s8 y>s10 x>s14 w>s8 b>s8 s8>s10 w>s14 b>s14"), 14)


def so_second_line15() -> Case:
    nodes = [const("x", "x"), const("y", "y"), leaf("w", "w", grad=True), leaf("b", "b", grad=True),
             stmt(14, "x @ w + b", "z"), stmt(15, "BCE(z, y)", "loss"),
             stmt(8, "x @ w + b", None, saved=SAVED_FREED, freed_by=11, former="z", dropped=True),
             stmt(10, "BCE(z, y)", None, saved=SAVED_FREED, freed_by=11, former="loss", dropped=True)]
    edges = "x>s14 y>s15 w>s14 b>s14 s14>s15 x>s8 y>s10 w>s8 b>s8 s8>s10"
    return Case("so_second_line15", graph(nodes, edges), 15)


# -- the forum thread ------------------------------------------------------------
# 3 x = torch.tensor(42., requires_grad=True)  4 x2 = x ** 2  5 x3 = x ** 3
# 6 f = x2 + x3  7 f.backward()
def forum_base_line6() -> Case:
    nodes = [leaf("x", "x", step=3), stmt(4, "x ** 2", "x2"), stmt(5, "x ** 3", "x3"),
             stmt(6, "x2 + x3", "f", saved=SAVED_NONE)]
    return Case("forum_base_line6", graph(nodes, "x>s4 x>s5 s4>s6 s5>s6"), 6)


def forum_base_line7() -> Case:
    nodes = [leaf("x", "x", grad=True, step=3),
             stmt(4, "x ** 2", "x2", saved=SAVED_FREED, freed_by=7),
             stmt(5, "x ** 3", "x3", saved=SAVED_FREED, freed_by=7),
             stmt(6, "x2 + x3", "f", saved=SAVED_NONE)]
    return Case("forum_base_line7", graph(nodes, "x>s4 x>s5 s4>s6 s5>s6"), 7)


# WhatIF(1): 3 x = tensor(42.)  4 x = x ** 2  5 x3 = x ** 3  6 f = x + x3
#            7 x.retain_grad()  8 f.backward()
def whatif1_line6() -> Case:
    nodes = [leaf("x0", "x", former="x", step=3), stmt(4, "x ** 2", "x"), stmt(5, "x ** 3", "x3"),
             stmt(6, "x + x3", "f", saved=SAVED_NONE)]
    return Case("whatif1_line6", graph(nodes, "x0>s4 s4>s5 s4>s6 s5>s6"), 6)


def whatif1_line8() -> Case:
    nodes = [leaf("x0", "x", former="x", grad=True, step=3),
             stmt(4, "x ** 2", "x", saved=SAVED_FREED, freed_by=8, grad=True, retains=True),
             stmt(5, "x ** 3", "x3", saved=SAVED_FREED, freed_by=8),
             stmt(6, "x + x3", "f", saved=SAVED_NONE)]
    return Case("whatif1_line8", graph(nodes, "x0>s4 s4>s5 s4>s6 s5>s6"), 8)


# WhatIF(2): 3 x = tensor(42.)  4 y = x ** 2  5 x = y ** 3  6 f = y + x
#            7 x.retain_grad()  8 f.backward()
def whatif2_line8() -> Case:
    nodes = [leaf("x0", "x", former="x", grad=True, step=3),
             stmt(4, "x ** 2", "y", saved=SAVED_FREED, freed_by=8),
             stmt(5, "y ** 3", "x", saved=SAVED_FREED, freed_by=8, grad=True, retains=True),
             stmt(6, "y + x", "f", saved=SAVED_NONE)]
    return Case("whatif2_line8", graph(nodes, "x0>s4 s4>s5 s4>s6 s5>s6"), 8)


# -- the article: y = x**2, backward with and without retain_graph ---------------
# 3 x = torch.tensor([2.0], requires_grad=True)  4 y = x**2  5 y.backward(...)
def article_line5(retain: bool) -> Case:
    saved = dict(saved=SAVED_PRESENT) if retain else dict(saved=SAVED_FREED, freed_by=5)
    nodes = [leaf("x", "x", grad=True, step=3), stmt(4, "x ** 2", "y", **saved)]  # type: ignore[arg-type]
    return Case("article_retain" if retain else "article_freed", graph(nodes, "x>s4"), 5)


# -- a diamond: 3 x = ...  4 a = x.exp()  5 b = x.sin()  6 d = a + b  7 d.backward()
def diamond_line6() -> Case:
    nodes = [leaf("x", "x", step=3), stmt(4, "x.exp()", "a"), stmt(5, "x.sin()", "b"),
             stmt(6, "a + b", "d", saved=SAVED_NONE)]
    return Case("diamond_line6", graph(nodes, "x>s4 x>s5 s4>s6 s5>s6"), 6)


def diamond_line7() -> Case:
    nodes = [leaf("x", "x", grad=True, step=3), stmt(4, "x.exp()", "a", saved=SAVED_FREED, freed_by=7),
             stmt(5, "x.sin()", "b", saved=SAVED_FREED, freed_by=7), stmt(6, "a + b", "d", saved=SAVED_NONE)]
    return Case("diamond_line7", graph(nodes, "x>s4 x>s5 s4>s6 s5>s6"), 7)


# -- every marker at once -----------------------------------------------------------
def markers() -> Case:
    nodes = [
        leaf("p", "p"),  # [leaf]
        leaf("q", "q", grad=True),  # [grad]
        leaf("old", "h", former="h"),  # h (old)
        stmt(5, "p * q", "r", saved=SAVED_FREED, freed_by=6),  # [freed]
        stmt(7, "r + h", "s", saved=SAVED_NONE),  # [none saved], shown because something is freed
        stmt(8, "s.exp_()", "t", saved=SAVED_MODIFIED),  # [modified]
        stmt(9, "t * 2", "u"),  # [new]
        stmt(4, "p.sin()", None, former="v", dropped=True),  # (dropped)
    ]
    return Case("markers", graph(nodes, "p>s5 q>s5 s5>s7 old>s7 s7>s8 s8>s9 p>s4"), 9)


# -- op view --------------------------------------------------------------------
def mlp_ops(layers: int = 12, grads: bool = False) -> Case:
    """``model = Sequential(Linear, ReLU, ..., Linear)``, ``loss = F.mse_loss(model(x), t)``
    at the op level, as the engine records it: per Linear a bias, a weight, its
    TBackward0 and an AddmmBackward0. 12 layers make 60 nodes."""
    nodes: list[Node] = []
    edges: list[str] = []
    prev: str | None = None
    serial = 0

    def nid(prefix: str) -> str:
        nonlocal serial
        serial += 1
        return f"{prefix}{serial}"

    for i in range(layers):
        bias, weight, t, addmm = nid("t"), nid("t"), nid("n"), nid("n")
        nodes += [param(bias, f"model.{2 * i}.bias", grad=grads), param(weight, f"model.{2 * i}.weight", grad=grads),
                  op(t, "TBackward0", step=13, saved=SAVED_NONE), op(addmm, "AddmmBackward0", step=13)]
        edges += [f"{weight}>{t}", f"{bias}>{addmm}", f"{t}>{addmm}"] + ([f"{prev}>{addmm}"] if prev else [])
        prev = addmm
        if i < layers - 1:
            relu = nid("n")
            nodes.append(op(relu, "ReluBackward0", step=13))
            edges.append(f"{prev}>{relu}")
            prev = relu
    loss = nid("n")
    nodes.append(op(loss, "MseLossBackward0", step=13, names=("loss",)))
    edges.append(f"{prev}>{loss}")
    return Case(f"mlp{layers}_ops", graph(nodes, " ".join(edges)), 13, "ops")


def so_ops() -> Case:
    """The answer's first program at the op level, after line 9: x is 1-D, so
    matmul records Mm then Squeeze; w and b are the user's own leaves."""
    nodes = [leaf("w", "w"), leaf("b", "b"), op("n3", "MmBackward0", step=7),
             op("n4", "SqueezeBackward4", step=7, saved=SAVED_NONE),
             op("n5", "AddBackward0", step=7, names=("z",), saved=SAVED_NONE),
             op("n6", "BinaryCrossEntropyWithLogitsBackward0", step=9, names=("loss",))]
    return Case("so_ops", graph(nodes, "w>n3 n3>n4 n4>n5 b>n5 n5>n6"), 9, "ops")


def diamond_ops() -> Case:
    nodes = [leaf("x", "x", step=3), op("n4", "ExpBackward0", step=4, names=("a",)),
             op("n5", "SinBackward0", step=5, names=("b",)),
             op("n6", "AddBackward0", step=6, names=("d",), saved=SAVED_NONE)]
    return Case("diamond_ops", graph(nodes, "x>n4 x>n5 n4>n6 n5>n6"), 6, "ops")


def module_statement() -> Case:
    """``h = model(x)`` and ``loss = F.mse_loss(h, t)`` in the statement view."""
    nodes = [const("x", "x"), const("t", "t"),
             Node("m:model", MODULE, "model", names=("model",), detail="4 parameters, 600 values"),
             stmt(5, "model(x)", "h"), stmt(6, "MSE(h, t)", "loss")]
    return Case("module_statement", graph(nodes, "x>s5 m:model>s5 s5>s6 t>s6"), 6)


def chain_ops(n: int) -> Graph:
    """A long op chain with a parameter every few nodes: the benchmark's shape."""
    nodes: list[Node] = [leaf("x", "x")]
    edges: list[Edge] = []
    prev = "x"
    for i in range(n - 1):
        node_id = f"n{i}"
        nodes.append(op(node_id, "MulBackward0" if i % 3 else "AddBackward0", step=5))
        edges.append(Edge(prev, node_id))
        if i % 7 == 3:
            p = f"p{i}"
            nodes.append(param(p, f"model.{i}.weight"))
            edges.append(Edge(p, node_id))
        prev = node_id
    return Graph(tuple(nodes), tuple(edges))


def as_list(case: Case) -> Case:
    """The same snapshot drawn as the vertical list."""
    return Case(case.name + "_list", case.graph, case.step, case.level, view="vertical")


def narrow(case: Case, width: int) -> Case:
    """The same snapshot in a narrower terminal."""
    return Case(f"{case.name}_w{width}", case.graph, case.step, case.level, width=width)


GOLDEN_CASES = [
    so_first_line9, so_first_line10, so_first_line12, so_second_line14, so_second_line15,
    forum_base_line6, forum_base_line7, whatif1_line6, whatif1_line8, whatif2_line8,
    lambda: article_line5(False), lambda: article_line5(True), diamond_line6, diamond_line7,
    markers, module_statement, so_ops, diamond_ops, mlp_ops,
    lambda: as_list(so_first_line12()), lambda: as_list(forum_base_line7()), lambda: as_list(mlp_ops(3)),
    lambda: narrow(whatif1_line8(), 44), lambda: narrow(so_first_line12(), 60), lambda: narrow(mlp_ops(4), 50),
]
