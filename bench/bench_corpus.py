"""CPU time of each program of the real-program corpus (tests/corpus) under
the tutor against python, side by side in one process (torch imported once).

For each program: a run as ``python PATH`` would run it (``runpy``), a run
under the tutor (``gradtutor explain --plain``, its narration written to memory),
then python again; python's figure is the smaller of its
two runs (the first also pays for torch's lazy imports). CPU time
(``time.process_time``); DataLoader worker processes are not counted.

Run: .venv/bin/python bench/bench_corpus.py [PATH...]
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import runpy
import sys
import time

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


def main() -> None:
    paths = [os.path.abspath(p) for p in sys.argv[1:]] or sorted(glob.glob(os.path.join(CORPUS, "*.py")))
    print(f"{'program':<40}{'python s':>10}{'tutor s':>10}{'ratio':>8}")
    total_p = total_t = 0.0
    for path in paths:
        first = python_cpu(path)
        tutor = tutor_cpu(path)
        plain = min(first, python_cpu(path))
        total_p, total_t = total_p + plain, total_t + tutor
        print(f"{os.path.basename(path)[:39]:<40}{plain:>10.2f}{tutor:>10.2f}{tutor / max(plain, 1e-3):>8.1f}", flush=True)
    print(f"{'all':<40}{total_p:>10.2f}{total_t:>10.2f}{total_t / total_p:>8.1f}")


if __name__ == "__main__":
    main()
