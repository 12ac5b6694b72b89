"""Where an iteration of the training loop spends its time, call by call:
each torch function the program calls, timed where a torch function mode
sees it (the call itself and everything done around it), under python with
an empty mode and under the tutor (its observer, the mode the tutor
observes with), side by side in one run.

The loop is bench_loops' training loop (a 3-layer MLP, batch 64, hidden 128,
SGD). Its iterations past the first WARM are measured (the tutor shows the
first ones). For each function: calls per iteration, microseconds per call
under each, and the time the tutor adds per iteration. Then the iteration
split: the time inside torch calls, and the rest (the program's own lines
and the library code they run); and what the tutor adds, split three ways:
inside torch calls, in its handling of the program's lines (the trace
events of the user's frames, where its steps end), and elsewhere (library
code's Python calls, each a call event for the tracer on Python 3.11).

Each side is a child process that imports torch as its command would. The
tutor's side wraps the observer's ``__torch_function__`` and the engine's
per-line trace function in timers (this file is made one of the tutor's, so
the observer walks past its frames as past its own). A timer costs about a
microsecond a call on either side.

Run: .venv/bin/python bench/bench_calls.py [ITERATIONS]
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from typing import Any

from bench_loops import MLP

ITERATIONS = 1500
WARM = 20
# The tutor's handling of its trace events in the program's lines: the ends
# of steps, mostly (a step ends at the next line's event).
_LINES = "(the program's lines: step ends)"

PROGRAM = "import _bench_calls as bench" + MLP + """for i in range({iterations}):
    if i == {warm}:
        bench.start()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), t)
    loss.backward()
    opt.step()
bench.stop()
"""


class Tally:
    """Per function: calls and seconds (the call inclusive); and the loop's
    own time between start() and stop()."""

    def __init__(self) -> None:
        self.on = False
        self.calls: collections.Counter[str] = collections.Counter()
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.began = 0.0
        self.loop = 0.0

    def start(self) -> None:
        self.calls.clear()
        self.seconds.clear()
        self.on = True
        self.began = time.perf_counter()

    def stop(self) -> None:
        self.loop = time.perf_counter() - self.began
        self.on = False

    def timed(self, call: Any, func: Any) -> Any:
        """``call()``, timed as a call of ``func`` (or of what a string names)."""
        if not self.on:
            return call()
        start = time.perf_counter()
        try:
            return call()
        finally:
            name = func if type(func) is str else (
                getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or type(func).__name__
            )
            self.seconds[name] += time.perf_counter() - start
            self.calls[name] += 1


def child(kind: str, iterations: int) -> None:
    tally = Tally()
    module = types.ModuleType("_bench_calls")
    module.start, module.stop = tally.start, tally.stop  # type: ignore[attr-defined]
    sys.modules["_bench_calls"] = module
    source = PROGRAM.format(iterations=iterations, warm=WARM)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    try:
        if kind == "tutor":
            from gradtutor import engine, observer, tracebacks
            from gradtutor.explain import read_program, run_script
            from gradtutor.torch_import import import_torch

            import_torch()
            tracebacks._tutor_files[os.path.abspath(__file__)] = True  # (see the module's text)
            observed = observer.CallObserver.__torch_function__

            def timed_observer(self: Any, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                return tally.timed(lambda: observed(self, func, types, args, kwargs), func)

            observer.CallObserver.__torch_function__ = timed_observer
            traced = engine.Engine._local_trace

            def timed_lines(self: Any, frame: Any, event: str, arg: Any) -> Any:
                return tally.timed(lambda: traced(self, frame, event, arg), _LINES)

            engine.Engine._local_trace = timed_lines
            text, code = read_program(f.name)
            with contextlib.redirect_stderr(io.StringIO()):
                result = run_script(f.name, text, code, [], capture_output=True)
            assert result.exception is None, result.traceback
        else:
            import torch
            from torch.overrides import TorchFunctionMode

            class Timed(TorchFunctionMode):
                def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                    return tally.timed(lambda: func(*args, **(kwargs or {})), func)

            with Timed():
                exec(compile(source, f.name, "exec"), {"__name__": "__main__"})
    finally:
        os.unlink(f.name)
    print(json.dumps({"loop": tally.loop, "calls": tally.calls, "seconds": tally.seconds}))


def measure(kind: str, iterations: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", kind, str(iterations)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
        return
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else ITERATIONS
    measured = iterations - WARM
    python, tutor = measure("python", iterations), measure("tutor", iterations)
    lines = tutor["seconds"].pop(_LINES, 0.0) / measured * 1e6
    tutor["calls"].pop(_LINES, None)
    names = set(python["calls"]) | set(tutor["calls"])

    def per_call(side: dict[str, Any], name: str) -> float:
        calls = side["calls"].get(name, 0)
        return side["seconds"].get(name, 0.0) / calls * 1e6 if calls else 0.0

    def per_iteration(side: dict[str, Any], name: str) -> float:
        return side["seconds"].get(name, 0.0) / measured * 1e6

    added = {name: per_iteration(tutor, name) - per_iteration(python, name) for name in names}
    total_added = (tutor["loop"] - python["loop"]) / measured * 1e6
    print(f"training loop, {measured} iterations measured; µs per call under python (empty mode) and the tutor")
    print(f"{'torch function':<44}{'calls/it':>9}{'python':>9}{'tutor':>9}{'added µs/it':>13}{'share':>7}")
    for name in sorted(names, key=lambda n: -added[n]):
        calls = tutor["calls"].get(name, python["calls"].get(name, 0)) / measured
        if calls < 0.01:
            continue
        print(
            f"{name[:43]:<44}{calls:>9.2f}{per_call(python, name):>9.1f}{per_call(tutor, name):>9.1f}"
            f"{added[name]:>13.1f}{added[name] / total_added:>7.0%}"
        )
    for label, side in (("python", python), ("tutor", tutor)):
        inside = sum(side["seconds"].values()) / measured * 1e6
        whole = side["loop"] / measured * 1e6
        print(f"{label:>6}: an iteration {whole:7.0f} µs; inside torch calls {inside:7.0f} µs, the rest {whole - inside:7.0f} µs")
    inside_added = sum(added.values())
    print(f"the tutor adds {total_added:.0f} µs an iteration ({tutor['loop'] / python['loop']:.2f}x): "
          f"{inside_added:.0f} µs inside torch calls, {lines:.0f} µs handling the program's lines "
          f"(its step ends), {total_added - inside_added - lines:.0f} µs elsewhere (library code's Python "
          "calls, each an event for the tracer)")


if __name__ == "__main__":
    main()
