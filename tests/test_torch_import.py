"""torch is imported with idle OpenMP workers spinning only briefly
(gradtutor.torch_import): seen in the OpenMP runtime's own report of its
settings (OMP_DISPLAY_ENV), with the program's os.environ left as the user
had it. (GNU OpenMP, which torch's Linux wheels load, reports how long an
idle worker spins before it sleeps: 300,000 rounds by default.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gradtutor.torch_import import SPIN_ROUNDS

PROGRAM = (
    "import os, torch\n"
    "print('policy seen by the program:', os.environ.get('OMP_WAIT_POLICY'))\n"
    "print('spin count seen by the program:', os.environ.get('GOMP_SPINCOUNT'))\n"
)


def _environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"  # the OpenMP runtime prints its settings when it starts
    env.update(extra)
    return env


def _spins(stderr: str) -> int:
    """The rounds an idle OpenMP worker spins before it sleeps, as the runtime reports them."""
    lines = [line for line in stderr.splitlines() if line.strip().startswith("GOMP_SPINCOUNT = ")]
    if not lines:
        pytest.fail(f"the OpenMP runtime printed no GOMP_SPINCOUNT:\n{stderr[-2000:]}")
    return int(lines[0].split("=", 1)[1].strip().strip("'"))


def _explain(tmp_path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return subprocess.run(
        [sys.executable, "-m", "gradtutor", "explain", "--plain", str(path)],
        capture_output=True, text=True, timeout=120, env=env,
    )


def test_python_alone_spins(tmp_path) -> None:
    """(What the tutor changes: torch under python keeps OpenMP's default.)"""
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=_environ())
    assert _spins(done.stderr) == 300_000


def test_explain_makes_idle_workers_spin_briefly_and_leaves_the_environment(tmp_path) -> None:
    done = _explain(tmp_path, _environ())
    assert done.returncode == 0, done.stderr
    assert _spins(done.stderr) == int(SPIN_ROUNDS)
    assert "policy seen by the program: None" in done.stdout
    assert "spin count seen by the program: None" in done.stdout


def test_the_users_policy_is_kept(tmp_path) -> None:
    done = _explain(tmp_path, _environ(OMP_WAIT_POLICY="ACTIVE"))
    assert done.returncode == 0, done.stderr
    assert _spins(done.stderr) > 300_000  # (ACTIVE: spin far longer than by default)
    assert "policy seen by the program: ACTIVE" in done.stdout
    done = _explain(tmp_path, _environ(GOMP_SPINCOUNT="50000"))
    assert _spins(done.stderr) == 50_000
    assert "spin count seen by the program: 50000" in done.stdout


def test_the_shell_imports_torch_the_same_way() -> None:
    code = (
        "import os, sys\n"
        "from gradtutor.shell_session import TorchLoader\n"
        "loader = TorchLoader()\n"
        "loader.wait()\n"
        "print('after:', os.environ.get('GOMP_SPINCOUNT'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_environ())
    assert done.returncode == 0, done.stderr
    assert _spins(done.stderr) == int(SPIN_ROUNDS)
    assert "after: None" in done.stdout
