"""CPU time of each program of the real-program corpus (tests/corpus) under
the tutor against python, side by side in one run.

Each program runs in its own process, as ``python PATH`` and as
``gradtutor explain --plain PATH`` (narration to /dev/null: what a learner's
run costs, drawings included), one after the other. The CPU time of
importing torch (the median of 3) is taken off both, so the ratio is of the
program's own work and the tutor's.

Run: .venv/bin/python bench/bench_corpus.py [PATH...]
"""

from __future__ import annotations

import glob
import os
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests")


def cpu(args: list[str], cwd: str = TESTS) -> float:
    """User and system CPU seconds of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    paths = sys.argv[1:] or sorted(glob.glob(os.path.join(TESTS, "corpus", "*.py")))
    base = statistics.median(cpu([sys.executable, "-c", "import torch"]) for _ in range(3))
    print(f"importing torch: {base:.2f} s CPU, taken off every figure below")
    print(f"{'program':<40}{'python s':>10}{'tutor s':>10}{'ratio':>8}")
    total_p = total_t = 0.0
    for path in paths:
        where = os.path.dirname(os.path.abspath(path))
        plain = max(0.01, cpu([sys.executable, path], where) - base)
        tutor = max(0.01, cpu([sys.executable, "-m", "gradtutor", "explain", "--plain", "--width", "100", path], where) - base)
        total_p, total_t = total_p + plain, total_t + tutor
        print(f"{os.path.basename(path)[:39]:<40}{plain:>10.2f}{tutor:>10.2f}{tutor / plain:>8.1f}", flush=True)
    print(f"{'all':<40}{total_p:>10.2f}{total_t:>10.2f}{total_t / total_p:>8.1f}")


if __name__ == "__main__":
    main()
