"""Time from starting `gradtutor` to a usable prompt, against `python -c "import torch"`.

Both are measured side by side in this one run, alternating, in a pseudo-
terminal for the shell (the prompt is what a person waits for). The shell
imports torch in the background, so its prompt should come well before an
import of torch alone finishes. Run: .venv/bin/python bench/bench_startup.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import pexpect

REPEATS = 5


def shell_prompt_seconds(env: dict[str, str]) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "gradtutor"], env=env, encoding="utf-8", dimensions=(40, 100), timeout=60)
    child.expect(r"In \[1\]:")
    elapsed = time.perf_counter() - start
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def import_torch_seconds() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env.update(PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color", XDG_DATA_HOME=tempfile.mkdtemp())
    shell, torch_import = [], []
    import_torch_seconds()  # warm the file cache for both
    for _ in range(REPEATS):
        torch_import.append(import_torch_seconds())
        shell.append(shell_prompt_seconds(env))
    s, t = statistics.median(shell), statistics.median(torch_import)
    print(f"{'measure':<34} {'median s':>9}  runs")
    print(f"{'gradtutor: start to prompt':<34} {s:>9.3f}  {', '.join(f'{x:.2f}' for x in shell)}")
    label = 'python -c "import torch"'
    print(f"{label:<34} {t:>9.3f}  {', '.join(f'{x:.2f}' for x in torch_import)}")
    print(f"prompt time / torch import time: {s / t:.2f} (aim: under 0.33)")


if __name__ == "__main__":
    main()
