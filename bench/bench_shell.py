"""How long the shell takes to answer one small statement on a big graph.

A session holds ``out``, a chain of N autograd nodes built in an earlier
input (N = 100, 1,000 and 10,000); the input measured is ``y = out * 2``:
running it, detecting its events and printing its answer (the picture of
the part it touched and its notes, through rich, as the shell prints it).
Side by side in this one run: the same statement under plain python. The
tutor's time is the difference (median of alternating repeats).

Run: .venv/bin/python bench/bench_shell.py
"""

from __future__ import annotations

import io
import statistics
import time

from rich.console import Console

from gradtutor.shell_session import ShellSession, ShellSettings

REPEATS = 7
SETUP = """\
import torch
def chain(x, n):
    for _ in range(n):
        x = x * 1.0001
    return x
x = torch.ones(4, requires_grad=True)
"""


def answer_seconds(n: int) -> tuple[float, float]:
    """(the tutor's answer to ``y = out * 2``, python running it), in seconds."""
    session = ShellSession(ShellSettings(width=100))
    console = Console(file=io.StringIO(), width=100, color_system=None, force_terminal=False)
    session.execute(SETUP)
    session.execute(f"out = chain(x, {n})")
    ns = session.namespace
    code = compile("y = out * 2", "<plain>", "exec")
    tutor, plain = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        reply = session.execute("y = out * 2")
        for renderable in reply.renderables:
            console.print(renderable)
        tutor.append(time.perf_counter() - start)
        start = time.perf_counter()
        exec(code, ns)
        plain.append(time.perf_counter() - start)
    return statistics.median(tutor), statistics.median(plain)


def main() -> None:
    print(f"{'nodes':>7} {'python ms':>10} {'shell ms':>9} {'tutor ms':>9}")
    for n in (100, 1_000, 10_000):
        tutor, plain = answer_seconds(n)
        print(f"{n:>7,} {plain * 1e3:>10.3f} {tutor * 1e3:>9.1f} {(tutor - plain) * 1e3:>9.1f}")


if __name__ == "__main__":
    main()
