"""Room on the stack for the tutor, out of the program's sight.

Under ``python FILE`` a script's first frame is the bottom of the stack; under
the tutor the tutor's own frames lie below it, and the trace function runs
on top of the program's deepest frame. So while the program runs, the
recursion limit is raised by both (the frames below, and ``RESERVE`` for the
trace function), and ``sys.getrecursionlimit``/``sys.setrecursionlimit``
speak of the limit as the program knows it. A recursion as deep as python
allows works, narrated; a runaway one still ends in RecursionError, some
``RESERVE`` frames deeper than under python (the README lists this limit).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from types import FrameType
from typing import Iterator

from gradtutor.swap import swapped

RESERVE = 50  # frames the trace function may need on top of the program's deepest


def frames_below(frame: FrameType | None) -> int:
    """How many frames ``frame`` and its callers take."""
    count = 0
    while frame is not None:
        count += 1
        frame = frame.f_back
    return count


@contextmanager
def reserved(below: int) -> Iterator[None]:
    """Raise the limit by ``below + RESERVE`` while the block runs; the
    program reads and sets the limit it would have without the tutor."""
    offset = below + RESERVE
    real_get, real_set = sys.getrecursionlimit, sys.setrecursionlimit

    def getrecursionlimit() -> int:
        return real_get() - offset

    def setrecursionlimit(limit: int) -> None:
        if not isinstance(limit, int) or limit < 1:
            real_set(limit)  # python's own TypeError or ValueError
        real_set(limit + offset)

    getrecursionlimit.__doc__, setrecursionlimit.__doc__ = real_get.__doc__, real_set.__doc__
    real_set(real_get() + offset)
    try:
        with swapped(sys, getrecursionlimit=getrecursionlimit, setrecursionlimit=setrecursionlimit):
            yield
    finally:
        real_set(max(1, real_get() - offset))
