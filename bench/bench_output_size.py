"""How much a learner has to read: lines of narration and bytes of JSON for
each program of the real-program corpus (tests/corpus), side by side in one run.

Each program runs once under the tutor; its steps are then narrated twice at
100 columns, as ``explain --plain`` prints them: with the whole graph redrawn
whenever it changed (``--graph full``, what every step drew before the
touched-part view) and with the default view (the part the step touched).
The JSON columns are the document with the whole graph in every step (the
old format) and the document ``explain --format json`` writes now (a graph
only when it changed, as a delta). Ratios are new over old.

Run: .venv/bin/python bench/bench_output_size.py [--level ops] [PATH...]
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import json
import os
import sys

from rich.console import Console

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "tests", "corpus")
WIDTH = 100


def narrated_lines(steps: list, level: str, graph: str) -> list[int]:
    """Lines printed per step (header, events, gradients, picture; not the
    program's own output)."""
    from gradtutor.explanations import book_for
    from gradtutor.narrate import NarrationOptions, Narrator

    options = NarrationOptions(level=level, width=WIDTH, language="en", graph=graph)
    narrator = Narrator(book_for("en"), options)
    per_step = []
    for step in steps:
        console = Console(file=io.StringIO(), width=WIDTH, no_color=True, color_system=None, highlight=False)
        for renderable in narrator.step(step):
            console.print(renderable)
        per_step.append(console.file.getvalue().count("\n"))
    return per_step


def run(path: str) -> tuple[list, object]:
    from gradtutor.explain import read_program, run_script

    source, code = read_program(path)
    argv, cwd = sys.argv, os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            result = run_script(path, source, code, [], capture_output=True)
    finally:
        sys.argv = argv
        os.chdir(cwd)
    return result.steps, result


def json_sizes(result: object, path: str, level: str) -> tuple[int, int]:
    from gradtutor.jsondoc import document, dumps

    new = document(result, path, level)
    old = dict(new, steps=[dict(s.to_json(level), graph=s.snapshot.graph(level).to_json()) for s in result.steps])
    old.pop("version", None)
    before = json.dumps(old, ensure_ascii=False, indent=1, default=repr) + "\n"
    return len(before.encode()), len(dumps(new).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--level", choices=("statements", "ops"), default="statements")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = args.paths or sorted(glob.glob(os.path.join(CORPUS, "*.py")))
    header = f"{'program':<38}{'lines full':>11}{'touched':>9}{'ratio':>7}{'max/step':>10}{'JSON old KB':>13}{'new KB':>8}{'ratio':>7}"
    print(header)
    totals = [0, 0, 0, 0]
    worst = 0
    for path in paths:
        steps, result = run(path)
        full = narrated_lines(steps, args.level, "full")
        touched = narrated_lines(steps, args.level, "touched")
        old, new = json_sizes(result, path, args.level)
        worst = max(worst, max(touched, default=0))
        totals = [totals[0] + sum(full), totals[1] + sum(touched), totals[2] + old, totals[3] + new]
        print(
            f"{os.path.basename(path)[:37]:<38}{sum(full):>11}{sum(touched):>9}{sum(touched) / max(1, sum(full)):>7.2f}"
            f"{max(touched, default=0):>10}{old / 1024:>13.0f}{new / 1024:>8.0f}{new / max(1, old):>7.2f}",
            flush=True,
        )
    print(
        f"{'all':<38}{totals[0]:>11}{totals[1]:>9}{totals[1] / max(1, totals[0]):>7.2f}{worst:>10}"
        f"{totals[2] / 1024:>13.0f}{totals[3] / 1024:>8.0f}{totals[3] / max(1, totals[2]):>7.2f}"
    )


if __name__ == "__main__":
    main()
