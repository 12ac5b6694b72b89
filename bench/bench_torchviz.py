"""Drawing a real autograd graph: the tutor against torchviz's ``make_dot``,
side by side in one run, on the same graphs.

Each graph is a residual chain built with real torch ops (per block: a
parameter, Mul, Relu, Add that also reads the block's input), of 100, 1,000
and 10,000 autograd nodes. For each, the median of alternating runs of:

  make_dot   torchviz.make_dot(y, params): walks the graph and builds the
             graphviz source (no layout: that is the ``dot`` program's work,
             which is not counted).
  tutor      what the tutor does to show the same graph at the op level
             (``--level ops --graph full``): tag the nodes (from scratch, as
             make_dot walks from scratch), take the snapshot of the names, lay
             out and draw the text picture (``render_graph``, 80 columns):
             every node drawn or, past 100, listed one line per node.
  draw       the same without tagging: in a run the observer tags each node
             as the op that makes it runs, so showing a step costs this.

Past about 1,000 nodes in a chain torchviz's recursive walk reaches
Python's recursion limit (the bench leaves the limit as it is); it says so
instead of a time.

torchviz is not a dependency of the tutor; install it to run this bench:
``.venv/bin/pip install torchviz``.

Run: .venv/bin/python bench/bench_torchviz.py
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

from gradtutor import autograd_graph as ag
from gradtutor.render import render_graph
from gradtutor.snapshot import Snapshotter

REPEATS = 7


def residual(blocks: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    x = torch.randn(4, requires_grad=True)
    params = {f"p{i}": torch.randn(4, requires_grad=True) for i in range(blocks)}
    h = x
    for p in params.values():
        h = h + torch.relu(h * p)
    return h.sum(), {"x": x, **params}


def count_nodes(y: torch.Tensor) -> int:
    return len(list(ag.iter_nodes([y.grad_fn])))


def tutor_draw(y: torch.Tensor, names: dict[str, torch.Tensor], registry: ag.TagRegistry | None = None) -> str:
    registry = registry or ag.TagRegistry()
    origin = ag.Origin(1, 1, "y = model(x)", "model(x)", "<module>", "bench.py")
    snapshot = Snapshotter(registry).take({"y": y, **names}, origin=origin)
    drawing = render_graph(snapshot.ops, width=80, charset="unicode", current_step=1, level="ops")
    return drawing.view


def make_dot(y: torch.Tensor, names: dict[str, torch.Tensor]) -> None:
    import torchviz

    torchviz.make_dot(y, params=names).source  # noqa: B018 (the source is what is built)


def timed(draw, *args) -> float:
    start = time.perf_counter()
    draw(*args)
    return time.perf_counter() - start


def main() -> None:
    try:
        import torchviz  # noqa: F401
    except ImportError:
        sys.exit("bench_torchviz: torchviz is not installed (.venv/bin/pip install torchviz)")
    print(f"{'nodes':>7} {'make_dot ms':>12} {'tutor ms':>9} {'ratio':>6} {'draw ms':>8} {'ratio':>6}  tutor's view")
    for blocks in (33, 333, 3_333):  # 100, 1,000 and 10,000 nodes (3 per block, and the sum)
        y, names = residual(blocks)
        tagged = ag.TagRegistry()
        tutor_draw(y, names, tagged)
        theirs, ours, drawn = [], [], []
        for _ in range(REPEATS):
            try:
                theirs.append(timed(make_dot, y, names))
            except RecursionError:
                pass
            ours.append(timed(tutor_draw, y, names))
            drawn.append(timed(tutor_draw, y, names, tagged))
        view = tutor_draw(y, names, tagged)
        o, d = statistics.median(ours), statistics.median(drawn)
        if theirs:
            t = statistics.median(theirs)
            print(f"{count_nodes(y):>7,} {t * 1e3:>12.1f} {o * 1e3:>9.1f} {o / t:>6.2f} {d * 1e3:>8.1f} {d / t:>6.2f}  {view}")
        else:
            print(f"{count_nodes(y):>7,} {'RecursionError':>12} {o * 1e3:>9.1f} {'':>6} {d * 1e3:>8.1f} {'':>6}  {view}")


if __name__ == "__main__":
    main()
