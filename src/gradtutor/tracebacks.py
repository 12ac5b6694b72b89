"""The user's own traceback: the frames of their code and the libraries it called,
without the tutor's frames or the dispatch frames its observer adds."""

from __future__ import annotations

import io
import os
import sys
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


def _clean(te: traceback.TracebackException, exc: BaseException, only: Callable[[str], bool] | None) -> None:
    seen: set[int] = set()
    todo: list[tuple[traceback.TracebackException, BaseException | None]] = [(te, exc)]
    while todo:
        cur, cur_exc = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        cur.stack = _filter(cur.stack, only)
        if cur_exc is not None and _NEEDS_SUGGESTIONS:
            cur._str = (cur._str or "") + _suggestion(cur_exc)  # type: ignore[attr-defined]
        for nxt, nxt_exc in (
            (cur.__cause__, getattr(cur_exc, "__cause__", None)),
            (cur.__context__, getattr(cur_exc, "__context__", None)),
        ):
            if nxt is not None:
                todo.append((nxt, nxt_exc))


# Before 3.12 the "Did you mean: ...?" of a NameError or AttributeError is
# added by the interpreter's own exception printer, not by the traceback
# module: ask that printer, so the text is python's on every version.
_NEEDS_SUGGESTIONS = sys.version_info < (3, 12)
_SUGGESTION = ". Did you mean: "


def _suggestion(exc: BaseException) -> str:
    if not isinstance(exc, (NameError, AttributeError)):
        return ""
    printed = io.StringIO()
    stderr = sys.stderr
    sys.stderr = printed
    try:
        sys.__excepthook__(type(exc), exc, None)
    except Exception:  # the printer failing is no reason to lose the traceback
        return ""
    finally:
        sys.stderr = stderr
    text = printed.getvalue()
    start = text.rfind(_SUGGESTION)
    if start < 0:
        return ""
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def format_user_traceback(exc: BaseException, only: Callable[[str], bool] | None = None) -> str:
    """``exc`` formatted as python would print it, minus the tutor's frames.

    ``only``, when given, keeps just the frames whose file name it accepts
    (the shell shows the lines the user typed, not library internals).
    """
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    _clean(te, exc, only)
    return "".join(te.format())


def format_exception_only(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
