"""The tutor's cost on loops, measured inside the program's own loop, side by
side with plain python in this one process (alternating runs, medians).

  training  a 3-layer MLP (batch 64, hidden 128) trained with SGD: the time
            of one iteration, under python and under ``gradtutor explain``
            (the first iterations are shown, later ones hidden).
  growing   ``y = y * 1.0001`` for N iterations on one graph: the time per
            iteration at N = 500 and N = 2,000. Linear means the ratio of the
            two totals is 4; the tutor's cost per hidden iteration is printed.

Run: .venv/bin/python bench/bench_loops.py
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import tempfile
import textwrap

TRAINING = """
import time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                            torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 32)
t = torch.randint(0, 10, (64,))
times = []
for i in range({iterations}):
    start = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - start)
RESULT = sorted(times[10:])[len(times[10:]) // 2]
open(OUT, "w").write(repr(RESULT))
"""

GROWING = """
import time, torch
x = torch.tensor(1.0, requires_grad=True)
y = x
start = time.perf_counter()
for i in range({iterations}):
    y = y * 1.0001
RESULT = time.perf_counter() - start
open(OUT, "w").write(repr(RESULT))
"""

REPEATS = 5


def run(source: str, tutor: bool) -> float:
    """RESULT of the program, run as a script under python or under the tutor."""
    out = tempfile.mktemp(suffix=".txt")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(f"OUT = {out!r}\n" + textwrap.dedent(source))
    try:
        if tutor:
            from gradtutor.explain import read_program, run_script

            text, code = read_program(f.name)
            with contextlib.redirect_stderr(io.StringIO()):
                result = run_script(f.name, text, code, [], capture_output=True)
            assert result.exception is None, result.traceback
        else:
            exec(compile(open(f.name).read(), f.name, "exec"), {"__name__": "__main__"})
        with open(out) as o:
            return float(o.read())
    finally:
        os.unlink(f.name)
        if os.path.exists(out):
            os.unlink(out)


def median_pair(source: str) -> tuple[float, float]:
    plain, tutor = [], []
    for _ in range(REPEATS):
        plain.append(run(source, False))
        tutor.append(run(source, True))
    return statistics.median(plain), statistics.median(tutor)


def main() -> None:
    plain, tutor = median_pair(TRAINING.format(iterations=60))
    print(f"training loop, one iteration: python {plain * 1e3:.2f} ms, tutor {tutor * 1e3:.2f} ms, ratio {tutor / plain:.2f}")
    small_p, small_t = median_pair(GROWING.format(iterations=500))
    big_p, big_t = median_pair(GROWING.format(iterations=2000))
    print(f"growing loop, 500 iterations: python {small_p * 1e3:.1f} ms, tutor {small_t * 1e3:.1f} ms")
    print(f"growing loop, 2,000 iterations: python {big_p * 1e3:.1f} ms, tutor {big_t * 1e3:.1f} ms")
    print(f"  4x the iterations cost {big_t / small_t:.2f}x under the tutor (linear: 4); "
          f"tutor cost per iteration at 2,000: {(big_t - big_p) / 2000 * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
