"""The user's own traceback: the frames of their code and the libraries it called,
without the tutor's frames or the dispatch frames its observer adds."""

from __future__ import annotations

import os
import traceback
from typing import Callable

import gradtutor

_PACKAGE_DIR = os.path.dirname(os.path.abspath(gradtutor.__file__))
OVERRIDES_FILE = os.path.join("torch", "overrides.py")


def is_tutor_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def _filter(stack: traceback.StackSummary, only: Callable[[str], bool] | None) -> traceback.StackSummary:
    frames = list(stack)
    kept: list[traceback.FrameSummary] = []
    for i, frame in enumerate(frames):
        if is_tutor_file(frame.filename) or frame.filename.endswith(OVERRIDES_FILE):
            continue
        if only is not None and not only(frame.filename):
            continue
        nxt = frames[i + 1] if i + 1 < len(frames) else None
        # The frame that handed the call to the observer (``return
        # handle_torch_function(...)``) is not in a plain run's traceback.
        if nxt is not None and nxt.filename.endswith(OVERRIDES_FILE):
            continue
        kept.append(frame)
    return traceback.StackSummary.from_list(kept)


def _clean(te: traceback.TracebackException, only: Callable[[str], bool] | None) -> None:
    seen: set[int] = set()
    todo = [te]
    while todo:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        cur.stack = _filter(cur.stack, only)
        for nxt in (cur.__cause__, cur.__context__):
            if nxt is not None:
                todo.append(nxt)


def format_user_traceback(exc: BaseException, only: Callable[[str], bool] | None = None) -> str:
    """``exc`` formatted as python would print it, minus the tutor's frames.

    ``only``, when given, keeps just the frames whose file name it accepts
    (the shell shows the lines the user typed, not library internals).
    """
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    _clean(te, only)
    return "".join(te.format())


def format_exception_only(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
