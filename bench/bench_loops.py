"""The tutor's cost on loops, measured inside the program's own loop, side by
side with plain python in this one process (alternating runs, medians).

  training  a 3-layer MLP (batch 64, hidden 128) trained with SGD: the time
            of one iteration, under python and under ``gradtutor explain``
            (the first iterations are shown, later ones hidden).
  growing   ``y = y * 1.0001`` for N iterations on one graph: the time per
            iteration at N = 500 and N = 2,000. Linear means the ratio of the
            two totals is 4; the tutor's cost per hidden iteration is printed.

For the training loop it also prints the tutor's figure with torch's OpenMP
workers waiting as they do under python (the tutor has them sleep sooner,
for the CPU they would spin away: see gradtutor.torch_import), and the
floor of observing this way: the program under an empty torch function mode
and the tutor's tracer (see gradtutor.tracing) with trace functions that do
nothing; and each of the two alone. Their costs need not add up: under
the tracer, each call of the mode is a traced Python call too (on Python
3.11, where the tracer is sys.settrace).

Each run is a child process that imports torch as its command would: python
and the floor plainly, the tutor as ``gradtutor`` does (gradtutor.torch_import).

Run: .venv/bin/python bench/bench_loops.py

A/B, another version of the tutor against this one, on a machine whose speed
moves between runs: ``--against DIR`` (DIR holds that version's ``src``
and ``lessons``, made by ``git archive REV src lessons | tar -x -C DIR``)
runs python, that version
and this one alternately, ``--repeats N`` times (default 5), and prints for
each the median and the minimum over the runs, and the two versions'
ratio. Each run's figure is then the 20th percentile of its iteration
times (less moved by a slow spell than the median), and the growing loop
times its iterations one by one.
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

from other_version import child_env, sources_in

# The training loop's model, optimizer and batch (bench_calls times the same loop).
MLP = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                            torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 32)
t = torch.randint(0, 10, (64,))
"""

TRAINING = "import time" + MLP + """times = []
for i in range({iterations}):
    start = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - start)
RESULT = sorted(times[10:])[len(times[10:]) * {quantile} // 100]
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

# The tutor with torch's OpenMP workers waiting as they do under python
# (GOMP_SPINCOUNT at libgomp's default), not as the tutor has them wait:
# what the tutor's choice costs the training loop (see gradtutor.torch_import).
SPINNING = "tutor, workers spinning as under python"
GOMP_DEFAULT_SPIN = "300000"

# For --against: the growing loop's iterations timed one by one, each run's
# figure the 20th percentile of them, as the training loop's (see the module's text).
GROWING_AB = """
import time, torch
x = torch.tensor(1.0, requires_grad=True)
y = x
times = []
for i in range({iterations}):
    start = time.perf_counter()
    y = y * 1.0001
    times.append(time.perf_counter() - start)
RESULT = sorted(times[100:])[len(times[100:]) // 5]
open(OUT, "w").write(repr(RESULT))
"""


def run(source: str, tutor: bool | str) -> float:
    """RESULT of the program, run as a script under python, under the tutor,
    or (``tutor="floor"``) under an empty mode and a tracer that does nothing
    (``"mode"``, ``"tracer"``: one of them alone)."""
    out = tempfile.mktemp(suffix=".txt")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(f"OUT = {out!r}\n" + textwrap.dedent(source))
    try:
        if tutor in FLOORS:
            from observing_floor import observing_floor

            code = compile(open(f.name).read(), f.name, "exec")
            with observing_floor(f.name, mode=tutor != "tracer", tracer=tutor != "mode"):
                exec(code, {"__name__": "__main__"})
        elif tutor:
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


FLOORS = ("floor", "mode", "tracer")
KINDS: dict[str, bool | str] = {"python": False, "tutor": True, SPINNING: True, **{kind: kind for kind in FLOORS}}


def child(kind: str, source: str) -> None:
    """One run, in this process; its RESULT is printed."""
    if KINDS[kind] is True:
        from gradtutor.torch_import import import_torch

        if kind == SPINNING:
            os.environ["GOMP_SPINCOUNT"] = GOMP_DEFAULT_SPIN  # (a user's choice, which the tutor keeps)

        import_torch()
        try:
            from gradtutor.gcpause import settle_startup
        except ImportError:  # (another version's, --against, that has none)
            pass
        else:
            settle_startup()  # (as the command does)
    else:
        import torch  # noqa: F401
    print(run(source, KINDS[kind]))


def run_in_child(kind: str, source: str, src: str | None = None) -> float:
    """RESULT of one run in a child process; ``src``: the tutor's sources it imports (else this checkout's)."""
    env = child_env(src)
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", kind],
        input=source, capture_output=True, text=True, check=True, env=env,
    )
    return float(done.stdout.split()[-1])


def against(other: str, repeats: int) -> None:
    """python, the tutor from ``other`` (a folder holding another version's
    src) and this one, run alternately: medians, minimums and the ratios."""
    other_src = sources_in(other, "bench_loops")
    for title, source, scale, unit in (
        ("training loop, one iteration", TRAINING.format(iterations=300, quantile=20), 1e3, "ms"),
        ("growing loop, one hidden iteration at 2,000", GROWING_AB.format(iterations=2000), 1e6, "µs"),
    ):
        found: dict[str, list[float]] = {"python": [], "other": [], "this": []}
        for _ in range(repeats):
            found["python"].append(run_in_child("python", source))
            found["other"].append(run_in_child("tutor", source, other_src))
            found["this"].append(run_in_child("tutor", source))
        print(title)
        for name, pick in (("median", statistics.median), ("minimum", min)):
            p, o, t = (pick(found[k]) for k in ("python", "other", "this"))
            print(f"  {name:7}: python {p * scale:.2f} {unit}, {other} {o * scale:.2f} {unit} ({o / p:.2f}x), "
                  f"this {t * scale:.2f} {unit} ({t / p:.2f}x); this / {other}: {t / o:.3f}")


def median_pair(source: str, floor: bool = False) -> tuple[float, ...]:
    kinds = ["python", "tutor"] + ([SPINNING, *FLOORS] if floor else [])
    times: list[list[float]] = [[] for _ in kinds]
    for _ in range(REPEATS):
        for kind, found in zip(kinds, times):
            found.append(run_in_child(kind, source))
    return tuple(statistics.median(found) for found in times)


def main() -> None:
    print(f"Python {sys.version.split()[0]}, tracer: {type(_tracer_kind()).__name__}")
    plain, tutor, spinning, floor, mode, tracer = median_pair(TRAINING.format(iterations=200, quantile=50), floor=True)
    print(f"training loop, one iteration: python {plain * 1e3:.2f} ms, tutor {tutor * 1e3:.2f} ms, ratio {tutor / plain:.2f}")
    print(f"  the tutor with torch's OpenMP workers spinning as under python (GOMP_SPINCOUNT={GOMP_DEFAULT_SPIN}): "
          f"{spinning * 1e3:.2f} ms, ratio {spinning / plain:.2f}")
    print(f"  floor (empty torch function mode + tracer doing nothing): {floor * 1e3:.2f} ms, ratio {floor / plain:.2f}")
    print(f"    the mode alone: {mode * 1e3:.2f} ms, ratio {mode / plain:.2f}; "
          f"the tracer alone: {tracer * 1e3:.2f} ms, ratio {tracer / plain:.2f}")
    small_p, small_t = median_pair(GROWING.format(iterations=500))
    big_p, big_t = median_pair(GROWING.format(iterations=2000))
    print(f"growing loop, 500 iterations: python {small_p * 1e3:.1f} ms, tutor {small_t * 1e3:.1f} ms")
    print(f"growing loop, 2,000 iterations: python {big_p * 1e3:.1f} ms, tutor {big_t * 1e3:.1f} ms")
    print(f"  4x the iterations cost {big_t / small_t:.2f}x under the tutor (linear: 4); "
          f"tutor cost per iteration at 2,000: {(big_t - big_p) / 2000 * 1e6:.0f} µs")


def _tracer_kind():  # type: ignore[no-untyped-def]
    from gradtutor.tracing import make_tracer

    return make_tracer(lambda *a: None, lambda *a: None, ())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.stdin.read())
    elif "--against" in sys.argv:
        import argparse

        parser = argparse.ArgumentParser(description="bench_loops A/B: another version of the tutor against this one")
        parser.add_argument("--against", required=True, metavar="DIR", help="a folder holding that version's src")
        parser.add_argument("--repeats", type=int, default=REPEATS, metavar="N")
        options = parser.parse_args()
        against(options.against, options.repeats)
    else:
        main()
