"""Per-step cost of the tutor, against running the same step without it.

Two kinds of step, for graphs of 10, 100, 1,000 and 10,000 autograd nodes:

  build  one statement creates the whole graph (`out = chain(x, n)`: n ops);
         the tutor tags every new node and snapshots it.
  touch  one small statement on a graph that already exists (`y = out * 2`);
         the tutor walks the graph to snapshot it.

Both versions run side by side in this one process, alternating, and the
median of the repeats is printed. Run: .venv/bin/python bench/bench_engine.py
"""

from __future__ import annotations

import statistics
import time

import torch

from gradtutor.engine import Engine

SIZES = (10, 100, 1_000, 10_000)
REPEATS = 7


def chain(x: torch.Tensor, n: int) -> torch.Tensor:
    for _ in range(n):
        x = x * 1.0001
    return x


def _plain(code, namespace) -> float:
    start = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - start


def _tutor(source: str, code, namespace) -> float:
    engine = Engine(namespace)
    engine.add_source("<bench>", source)
    if "out" in namespace:
        # The tutor has seen this graph in an earlier step: measure the
        # steady state, not the first sight.
        engine.add_source("<warm>", "pass\n")
        engine.run_code(compile("pass\n", "<warm>", "exec"))
    start = time.perf_counter()
    result = engine.run_code(code)
    elapsed = time.perf_counter() - start
    assert result.exception is None, result.traceback
    return elapsed


def measure(kind: str, n: int) -> tuple[float, float]:
    x = torch.ones(4, requires_grad=True)
    if kind == "build":
        source = "out = chain(x, n)\n"
    else:
        source = "y = out * 2\n"
    code = compile(source, "<bench>", "exec")
    plain_times, tutor_times = [], []
    for _ in range(REPEATS):
        ns = {"chain": chain, "x": x, "n": n, "torch": torch}
        if kind == "touch":
            ns["out"] = chain(x, n)
        plain_times.append(_plain(code, dict(ns)))
        tutor_times.append(_tutor(source, code, dict(ns)))
    return statistics.median(plain_times), statistics.median(tutor_times)


def main() -> None:
    torch.set_num_threads(1)
    print(f"{'step':<6} {'nodes':>7} {'plain ms':>10} {'tutor ms':>10} {'overhead ms':>12} {'ratio':>8}")
    for kind in ("build", "touch"):
        for n in SIZES:
            plain, tutor = measure(kind, n)
            print(
                f"{kind:<6} {n:>7,} {plain * 1e3:>10.3f} {tutor * 1e3:>10.3f} "
                f"{(tutor - plain) * 1e3:>12.3f} {tutor / plain:>8.1f}"
            )


if __name__ == "__main__":
    main()
