"""Runs programs under python or under the tutor, in one process (torch is
imported once), and prints one JSON document of what each did.

    python corpus_runner.py python PATH...
    python corpus_runner.py tutor PATH...

Each program runs as ``python PATH`` would: ``__main__``, ``sys.argv``,
``sys.path[0]``. Under the tutor the result also has the tutor's internal
errors, the number of steps shown, and every disagreement between a step's
picture and its words (``agreement.check_run``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import runpy
import sys

_ADDRESS = re.compile(r"0x[0-9a-f]+")


def normal(text: str) -> str:
    """Output as compared: object addresses differ from run to run."""
    return _ADDRESS.sub("0x…", text)


def run_python(path: str) -> dict:
    if "atexit.register" in open(path, encoding="utf-8").read():
        return run_python_process(path)
    out = io.StringIO()
    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    exception, code = None, 0
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # the program's own error, as python would end with it
            exception, code = [type(exc).__name__, str(exc)], 1
    return {"stdout": normal(out.getvalue()), "exception": exception, "exit_code": code}


def run_python_process(path: str) -> dict:
    """A program that registers atexit handlers runs in a python of its own:
    what its handlers print at the process's end is part of what it does."""
    import subprocess

    done = subprocess.run([sys.executable, path], capture_output=True, text=True, cwd=os.path.dirname(path) or ".")
    exception = None
    if "Traceback (most recent call last)" in done.stderr:
        kind, _, message = done.stderr.rstrip("\n").splitlines()[-1].partition(": ")
        exception = [kind, message]
    return {"stdout": normal(done.stdout), "exception": exception, "exit_code": done.returncode}


def run_tutor(path: str) -> dict:
    from agreement import check_run
    from gradtutor.explain import read_program, run_script

    source, code = read_program(path)
    steps = []
    result = run_script(path, source, code, [], capture_output=True, on_step=steps.append)
    exception = [type(result.exception).__name__, str(result.exception)] if result.exception else None
    return {
        "stdout": normal("".join(s.output for s in result.steps) + result.exit_output),
        "exception": exception,
        "exit_code": result.exit_code,
        "internal_errors": [e.to_json() for e in result.internal_errors],
        "steps": len(result.steps),
        "disagreements": check_run(steps),
        "unseen_in_notes": unseen_in_notes(steps, result.hidden_repeated),
    }


def unseen_in_notes(steps: list, total_repeated: list) -> list[str]:
    """Events a note on hidden steps says were "shown above" that no earlier
    step showed: each as "line N: kind name"."""
    from gradtutor.engine import _signature

    seen: set = set()
    unseen = []
    for step in steps:
        for event, _ in step.extra.get("repeated", ()):
            if _signature(event) not in seen:
                unseen.append(f"before line {step.line}: {event.kind} {event.get('name') or event.get('root') or ''}")
        seen.update(_signature(e) for e in step.events)
    unseen += [f"at the end: {e.kind} {e.get('name') or e.get('root') or ''}" for e, _ in total_repeated
               if _signature(e) not in seen]
    return unseen


def main() -> None:
    mode, paths = sys.argv[1], sys.argv[2:]
    run = run_python if mode == "python" else run_tutor
    results = {}
    real_stdout = sys.stdout
    for path in paths:
        results[path] = run(path)
    sys.stdout = real_stdout
    print(json.dumps(results))


if __name__ == "__main__":
    main()
