"""For ``--against DIR``: another version of the tutor run beside this one.

DIR holds that version's ``src`` (``git archive REV src | tar -x -C DIR``);
a child process imports it when its ``PYTHONPATH`` starts there.
"""

from __future__ import annotations

import os


def sources_in(other: str, script: str) -> str:
    """The ``src`` folder in ``other``; the script stops, saying why, when there is none."""
    src = os.path.join(os.path.abspath(other), "src")
    if not os.path.isdir(os.path.join(src, "gradtutor")):
        raise SystemExit(f"{script}: --against {other}: no src/gradtutor there (make it with git archive REV src)")
    return src


def child_env(src: str | None) -> dict[str, str] | None:
    """The environment of a child that imports the tutor from ``src`` (None: this checkout's)."""
    return None if src is None else {**os.environ, "PYTHONPATH": src}
