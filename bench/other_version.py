"""For ``--against DIR``: another version of the tutor run beside this one.

DIR holds that version's ``src`` and ``lessons`` (``git archive REV src
lessons | tar -x -C DIR``): a child process imports the tutor from ``src``
when its ``PYTHONPATH`` starts there, and the tutor finds its explanations
in ``lessons`` beside it (without them every run of it fails at once).
"""

from __future__ import annotations

import os


def sources_in(other: str, script: str) -> str:
    """The ``src`` folder in ``other``; the script stops, saying why, when
    it or the ``lessons`` beside it is missing."""
    src = os.path.join(os.path.abspath(other), "src")
    for needed in (os.path.join(src, "gradtutor"), os.path.join(other, "lessons")):
        if not os.path.isdir(needed):
            raise SystemExit(
                f"{script}: --against {other}: no {os.path.relpath(needed, other)} there "
                "(make it with git archive REV src lessons | tar -x -C DIR)"
            )
    return src


def child_env(src: str | None) -> dict[str, str] | None:
    """The environment of a child that imports the tutor from ``src`` (None: this checkout's)."""
    return None if src is None else {**os.environ, "PYTHONPATH": src}
