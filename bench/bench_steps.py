"""Where the tutor's time goes in each program of the real-program corpus
(tests/corpus): the ends of its steps, by what each step turned out to be,
as shares of the run under ``gradtutor explain --plain``.

A step's end is where the tutor decides what the statement did. It ends as
one of:

- shown: detected in full, snapshot and narration (its picture printed;
  the narration's own share, from the step to the lines printed, is given
  apart);
- detected, hidden: detected in full on a lite snapshot, then hidden as
  saying nothing new;
- repeat: recognised as a repeat of a hidden run of its statement
  (``repeat_steps``), nothing detected;
- unchanged: a loop step that called no torch function and bound no tensor.

For each kind: how many steps, and their time as a share of the whole run
(wall time, the program's own work and torch's import left in; the import
and torch's lazy imports are done before, as ``bench_corpus`` does). What is
not a step's end is the program itself, the observer's handling of its
torch calls and the tracer's of its lines. Each step end is timed by a
wrapper (about a microsecond of its own).

Run: .venv/bin/python bench/bench_steps.py [PATH...]
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench_corpus import CORPUS, tutor_cpu, warm_up

KINDS = ("shown", "detected, hidden", "repeat", "unchanged")
NARRATION = "narration"  # (of the shown steps' time)


def classify_step_ends() -> dict[str, list[float]]:
    """Time each step end by kind (see the module's text): kind -> [count, seconds]."""
    import gradtutor.engine as engine
    from gradtutor.step_printer import StepPrinter

    found: dict[str, list[float]] = {kind: [0, 0.0] for kind in (*KINDS, NARRATION)}
    outcome: dict[str, Any] = {}
    cls = engine.Engine
    repeat, unchanged, finish = cls._repeat, cls._nothing_happened, cls._finish

    def timed_repeat(self: Any, *args: Any, **kwargs: Any) -> Any:
        outcome["repeat"] = result = repeat(self, *args, **kwargs)
        return result

    def timed_unchanged(self: Any, *args: Any, **kwargs: Any) -> bool:
        outcome["unchanged"] = result = unchanged(self, *args, **kwargs)
        return result

    def timed_finish(self: Any, *args: Any, **kwargs: Any) -> None:
        outcome.clear()
        shown = len(self._steps)
        start = time.perf_counter()
        try:
            finish(self, *args, **kwargs)
        finally:
            spent = time.perf_counter() - start
            if len(self._steps) > shown:
                kind = "shown"
            elif outcome.get("unchanged"):
                kind = "unchanged"
            elif outcome.get("repeat") is True:
                kind = "repeat"
            else:
                kind = "detected, hidden"
            found[kind][0] += 1
            found[kind][1] += spent

    narrate = StepPrinter.finish

    def timed_narration(self: Any, *args: Any, **kwargs: Any) -> None:
        start = time.perf_counter()
        try:
            narrate(self, *args, **kwargs)
        finally:
            found[NARRATION][0] += 1
            found[NARRATION][1] += time.perf_counter() - start

    cls._repeat, cls._nothing_happened, cls._finish = timed_repeat, timed_unchanged, timed_finish
    StepPrinter.finish = timed_narration
    return found


def child(path: str) -> None:
    """One program, in this process: its warm-up, then the measured run (JSON printed)."""
    warm_up(path)
    found = classify_step_ends()
    start = time.perf_counter()
    tutor_cpu(path)
    print(json.dumps({"run": time.perf_counter() - start, "kinds": found}))


def measure(path: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", path], capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
        return
    paths = [os.path.abspath(p) for p in sys.argv[1:]] or sorted(glob.glob(os.path.join(CORPUS, "*.py")))
    print(f"{'program':<34}{'run s':>7}{'shown':>31}" + "".join(f"{kind:>22}" for kind in KINDS[1:]))
    print(f"{'':<41}{'steps':>13}{'share':>9}{'narr.':>9}" + "".join(f"{'steps':>13}{'share':>9}" for _ in KINDS[1:]))
    run_total = 0.0
    totals = {kind: [0, 0.0] for kind in (*KINDS, NARRATION)}
    for path in paths:
        measured = measure(path)
        run = measured["run"]
        run_total += run
        cells = []
        for kind in (*KINDS, NARRATION):
            count, spent = measured["kinds"][kind]
            totals[kind][0] += count
            totals[kind][1] += spent
            if kind != NARRATION:
                cells.append(f"{count:>13}{spent / run:>9.0%}")
        cells[0] += f"{measured['kinds'][NARRATION][1] / run:>9.0%}"
        print(f"{os.path.basename(path)[:33]:<34}{run:>7.2f}" + "".join(cells), flush=True)
    cells = [f"{int(totals[kind][0]):>13}{totals[kind][1] / run_total:>9.0%}" for kind in KINDS]
    cells[0] += f"{totals[NARRATION][1] / run_total:>9.0%}"
    print(f"{'all':<34}{run_total:>7.2f}" + "".join(cells))


if __name__ == "__main__":
    main()
