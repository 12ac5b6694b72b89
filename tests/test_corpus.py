"""The real-program corpus (``tests/corpus``, programs of our own following the
shape of public tutorials and examples) and the test programs, each run under
python and under the tutor: same output and ending, no failure of the
tutor's own, and on every step the picture shows what the words say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROGRAMS

HERE = Path(__file__).parent
CORPUS = sorted((HERE / "corpus").glob("*.py"))
ALL = CORPUS + sorted(PROGRAMS.glob("*.py"))
ARGS_FREE = [p for p in ALL if p.name != "mlp_train.py"]  # it wants arguments: test_differential runs it

pytestmark = pytest.mark.corpus


def _run(mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / "corpus_runner.py"), mode, *map(str, ARGS_FREE)],
        capture_output=True, text=True, timeout=900, cwd=HERE,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def runs() -> tuple[dict, dict]:
    return _run("python"), _run("tutor")


def test_the_corpus_is_there():
    assert len(CORPUS) >= 15
    for path in CORPUS:
        head = path.read_text(encoding="utf-8").splitlines()[:3]
        assert head[0].startswith("# Follows the shape of:") and "http" in head[0], path.name
        assert head[2].startswith("# Adapted to run offline"), path.name


@pytest.mark.parametrize("path", ARGS_FREE, ids=lambda p: p.stem)
def test_each_program_behaves_as_under_python_and_says_only_what_its_picture_shows(runs, path):
    plain, tutor = (r[str(path)] for r in runs)
    assert tutor["internal_errors"] == []
    assert tutor["stdout"] == plain["stdout"]
    assert (tutor["exit_code"], tutor["exception"]) == (plain["exit_code"], plain["exception"])
    assert tutor["disagreements"] == []
    # A note on hidden steps says what they did "was shown above": it was.
    assert tutor["unseen_in_notes"] == []
