"""Time to lay out and render a graph, by size, side by side in one run.

Op graphs of 100, 1,000 and 10,000 autograd nodes shaped like a residual
network (per block: a parameter, Mul, Relu, and an Add that also reads the
block's input, so there are long edges and fan-ins), and statement graphs of
a hand-written MLP: one layer (drawn as the answer's picture) and six (too
wide for 80 columns: the vertical list). The ratio column is each time over
the 100-node op graph's. Up to 100 nodes after folding the op view is the
layered picture; above, the vertical list (linear in the number of nodes).

Run: .venv/bin/python bench/bench_render.py
"""

from __future__ import annotations

import statistics
import time

from gradtutor.model import Edge, Graph, Node
from gradtutor.render import render_graph

REPEATS = 11


def residual_ops(n: int) -> Graph:
    """About ``n`` op-view nodes: x, then blocks of param, Mul, Relu, Add."""
    nodes = [Node("x", "leaf", "x", names=("x",))]
    edges: list[Edge] = []
    h = "x"
    block = 0
    while len(nodes) + 4 <= n:
        p, mul, relu, add = (f"{k}{block}" for k in ("p", "mul", "relu", "add"))
        nodes += [
            Node(p, "leaf", f"model.{block}.weight", detail="model"),
            Node(mul, "op", "MulBackward0", step=9),
            Node(relu, "op", "ReluBackward0", step=9),
            Node(add, "op", "AddBackward0", step=9),
        ]
        edges += [Edge(h, mul), Edge(p, mul), Edge(mul, relu), Edge(relu, add), Edge(h, add)]
        h = add
        block += 1
    nodes.append(Node("loss", "op", "SumBackward0", names=("loss",), step=9))
    edges.append(Edge(h, "loss"))
    return Graph(tuple(nodes), tuple(edges))


def mlp_statements(layers: int) -> Graph:
    """``x``; per layer ``w_i``, ``b_i``, ``z_i = h @ w_i + b_i``, ``h_i = relu(z_i)``; a loss."""
    nodes = [Node(n, "const", n, names=(n,), requires_grad=False) for n in ("x", "t")]
    edges: list[Edge] = []
    h = "x"
    for i in range(layers):
        w, b, z, r = f"w{i}", f"b{i}", f"z{i}", f"h{i}"
        nodes += [Node(w, "leaf", w, names=(w,)), Node(b, "leaf", b, names=(b,)),
                  Node(z, "statement", f"{h} @ {w} + {b}", names=(z,), step=2 * i + 1, saved="present"),
                  Node(r, "statement", f"relu({z})", names=(r,), step=2 * i + 2, saved="present")]
        edges += [Edge(h, z), Edge(w, z), Edge(b, z), Edge(z, r)]
        h = r
    nodes.append(Node("loss", "statement", f"MSE({h}, t)", names=("loss",), step=99))
    edges += [Edge(h, "loss"), Edge("t", "loss")]
    return Graph(tuple(nodes), tuple(edges))


def measure(graph: Graph, level: str) -> tuple[float, str]:
    times = []
    view = ""
    for _ in range(REPEATS):
        start = time.perf_counter()
        drawing = render_graph(graph, width=80, charset="unicode", current_step=9, level=level)
        times.append(time.perf_counter() - start)
        view = drawing.view
    return statistics.median(times), view


def main() -> None:
    cases = [
        ("ops", residual_ops(100)),
        ("ops", residual_ops(1_000)),
        ("ops", residual_ops(10_000)),
        ("statements", mlp_statements(1)),
        ("statements", mlp_statements(6)),
    ]
    base = None
    print(f"{'level':<11} {'nodes':>7} {'view':<11} {'ms':>9} {'ratio':>7}")
    for level, graph in cases:
        seconds, view = measure(graph, level)
        if base is None:
            base = seconds
        print(f"{level:<11} {len(graph.nodes):>7,} {view:<11} {seconds * 1e3:>9.2f} {seconds / base:>7.2f}")


if __name__ == "__main__":
    main()
