"""Differential test on generated programs (``program_generator.py``): each
runs under python and under the tutor, with the same output, the same
ending, no failure of the tutor's own, and pictures that show what the
words say. 200 programs by default; ``GRADTUTOR_GENERATED=2000`` (``make
test-generated``) runs more."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from program_generator import generate

HERE = Path(__file__).parent
COUNT = int(os.environ.get("GRADTUTOR_GENERATED", "200"))
BATCH = 100  # programs per runner process: torch is imported once per batch

pytestmark = pytest.mark.corpus


def _run(mode: str, paths: list[Path]) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / "corpus_runner.py"), mode, *map(str, paths)],
        capture_output=True, text=True, timeout=1800, cwd=HERE,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_generated_programs_behave_as_under_python(tmp_path):
    paths = []
    for seed in range(COUNT):
        path = tmp_path / f"gen_{seed}.py"
        path.write_text(generate(seed), encoding="utf-8")
        paths.append(path)
    failures = []
    endings = set()
    for start in range(0, COUNT, BATCH):
        batch = paths[start:start + BATCH]
        plain, tutor = _run("python", batch), _run("tutor", batch)
        for path in batch:
            p, t = plain[str(path)], tutor[str(path)]
            endings.add(p["exception"][0] if p["exception"] else "ok")
            for what in ("stdout", "exit_code", "exception"):
                if p[what] != t[what]:
                    failures.append(f"{path.name}: {what} differs: python {p[what]!r:.300} tutor {t[what]!r:.300}")
            if t["internal_errors"]:
                failures.append(f"{path.name}: internal errors {t['internal_errors']}")
            failures.extend(f"{path.name}: {d}" for d in t["disagreements"])
    assert failures == []
    # The generator reaches what it is meant to: clean runs and programs ending in an error,
    # and each of the shapes that tell whether the tutor changes what it observes.
    assert {"ok", "RuntimeError"} <= endings
    texts = [p.read_text() for p in paths]
    for shape in ("register_hook(doubled)", "saved_tensors_hooks(pack, unpack)", "things = [Counted()",
                  "print('thread', round(in_a_thread(", "\nrounds(", "warn('step", "raise SystemExit(",
                  "atexit.register("):
        assert sum(shape in t for t in texts) >= COUNT // 40, shape
