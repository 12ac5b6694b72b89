"""CPU time of each program of the real-program corpus (tests/corpus) under
the tutor against python, side by side in one run.

For each program, one child process runs it as ``python PATH`` would
(``runpy``), twice: python's figure is the smaller of the two (the first also
pays for torch's lazy imports). Another child imports torch as the
``gradtutor`` command does (gradtutor.torch_import), runs the program once
under python and a small program under the tutor (their imports are not what
is measured), then the program under the tutor (``gradtutor explain --plain``,
its narration written to memory). The figures are CPU time
(``time.process_time``, every thread of the process: torch's OpenMP workers
included); DataLoader worker processes are not counted.

The floor column is what observing this way costs before the tutor does
anything: the program (as python's figure, the smaller of two runs) under
an empty torch function mode and the tutor's tracer (gradtutor.tracing)
with trace functions that do nothing, as bench_loops measures it for the
training loop. On Python 3.11 the tracer is sys.settrace: every Python
call of library code reaches it.

A/B, another version of the tutor against this one on a machine whose
speed moves between runs: ``--against DIR`` (DIR holds that version's
``src`` and ``lessons``, as ``git archive REV src lessons | tar -x -C DIR``
makes it) runs each
program under python, under that version and under this one, one after
the other, before the next program.

Run: .venv/bin/python bench/bench_corpus.py [--against DIR] [PATH...]
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import runpy
import subprocess
import sys
import time

from other_version import child_env, sources_in

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "tests", "corpus")


@contextlib.contextmanager
def as_script(path: str):
    """argv, sys.path[0], the working folder and silence, as for ``python PATH``."""
    argv, path0, cwd = sys.argv, sys.path[0], os.getcwd()
    sys.argv, sys.path[0] = [path], os.path.dirname(os.path.abspath(path))
    os.chdir(sys.path[0])
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        sys.argv, sys.path[0] = argv, path0
        os.chdir(cwd)


def python_cpu(path: str) -> float:
    with as_script(path):
        start = time.process_time()
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException:  # noqa: BLE001 - a program's own error or exit ends its run, as under python
            pass
        return time.process_time() - start


def tutor_cpu(path: str) -> float:
    """``gradtutor explain --plain PATH``, narration included (written to memory)."""
    from gradtutor.cli import main as gradtutor

    with as_script(path):
        start = time.process_time()
        gradtutor(["explain", "--plain", "--width", "100", path])
        return time.process_time() - start


WARM_UP = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"


def floor_cpu(path: str) -> float:
    """``python_cpu`` at the floor of observing the program (see observing_floor)."""
    from observing_floor import observing_floor

    with observing_floor(os.path.abspath(path)):
        return python_cpu(path)


def child(kind: str, path: str) -> None:
    """One measurement, in this process (see the module's text); the figure is printed."""
    if kind in ("python", "floor"):
        import torch  # noqa: F401 - as the program's own first line would (not measured)

        run = python_cpu if kind == "python" else floor_cpu
        print(min(run(path), run(path)))
        return
    warm_up(path)
    print(tutor_cpu(path))


def warm_up(path: str) -> None:
    """Before the tutor's measured run: torch imported as the ``gradtutor``
    command imports it, the program run once under python (torch's lazy
    imports) and a small program under the tutor (the tutor's own)."""
    import tempfile

    from gradtutor.torch_import import import_torch

    import_torch()
    python_cpu(path)
    with tempfile.TemporaryDirectory() as folder:
        small = os.path.join(folder, "warm_up.py")
        with open(small, "w") as f:
            f.write(WARM_UP)
        tutor_cpu(small)


def measure(kind: str, path: str, src: str | None = None) -> float:
    """One measurement in a child process; ``src``: the tutor's sources it
    imports (else this checkout's)."""
    env = child_env(src)
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", kind, path],
        capture_output=True, text=True, check=True, env=env,
    )
    return float(done.stdout.split()[-1])


def against(other: str, paths: list[str]) -> None:
    """python, the tutor from ``other`` (a folder holding another version's
    src) and this one, program by program."""
    other_src = sources_in(other, "bench_corpus")
    print(f"{'program':<40}{'python s':>10}{'other s':>10}{'ratio':>8}{'this s':>10}{'ratio':>8}{'this/other':>12}")
    totals = [0.0, 0.0, 0.0]
    for path in paths:
        found = (measure("python", path), measure("tutor", path, other_src), measure("tutor", path))
        totals = [total + one for total, one in zip(totals, found)]
        _ab_row(os.path.basename(path)[:39], *found)
    _ab_row("all", *totals)
    print(f"other: {other}")


def _ab_row(name: str, plain: float, other: float, this: float) -> None:
    plain = max(plain, 1e-3)
    print(f"{name:<40}{plain:>10.2f}{other:>10.2f}{other / plain:>8.1f}{this:>10.2f}{this / plain:>8.1f}"
          f"{this / max(other, 1e-3):>12.2f}", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3])
        return
    import argparse

    parser = argparse.ArgumentParser(description="the real-program corpus under the tutor against python")
    parser.add_argument("--against", metavar="DIR", help="a folder holding another version's src, run beside this one")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="programs (default: the whole corpus)")
    options = parser.parse_args()
    paths = [os.path.abspath(p) for p in options.paths] or sorted(glob.glob(os.path.join(CORPUS, "*.py")))
    if options.against:
        against(options.against, paths)
        return
    print(f"{'program':<40}{'python s':>10}{'floor s':>10}{'ratio':>8}{'tutor s':>10}{'ratio':>8}")
    total_p = total_f = total_t = 0.0
    for path in paths:
        plain = measure("python", path)
        floor = measure("floor", path)
        tutor = measure("tutor", path)
        total_p, total_f, total_t = total_p + plain, total_f + floor, total_t + tutor
        print(f"{os.path.basename(path)[:39]:<40}{plain:>10.2f}{floor:>10.2f}{floor / max(plain, 1e-3):>8.1f}"
              f"{tutor:>10.2f}{tutor / max(plain, 1e-3):>8.1f}", flush=True)
    print(f"{'all':<40}{total_p:>10.2f}{total_f:>10.2f}{total_f / total_p:>8.1f}{total_t:>10.2f}{total_t / total_p:>8.1f}")


if __name__ == "__main__":
    main()
