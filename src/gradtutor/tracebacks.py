"""The user's own traceback: the frames of their code and the libraries it called,
without the tutor's frames or the dispatch frames its observer adds."""

from __future__ import annotations

import io
import os
import sys
import traceback
import types
from typing import Callable, Iterator

import gradtutor

_PACKAGE_DIR = os.path.dirname(os.path.abspath(gradtutor.__file__))
OVERRIDES_FILE = os.path.join("torch", "overrides.py")


_tutor_files: dict[str, bool] = {}


def is_tutor_file(filename: str) -> bool:
    """Is ``filename`` one of the tutor's own modules? (Asked for every frame
    the observer walks past, so the answer is kept per file name.)"""
    known = _tutor_files.get(filename)
    if known is None:
        known = os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)
        if len(_tutor_files) < 4096:
            _tutor_files[filename] = known
    return known


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or what python's traceback prints when that raises."""
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


def _added_by_tutor(filename: str, next_filename: str | None) -> bool:
    """Is a frame of ``filename`` (called into ``next_filename``) one a plain run would not have?"""
    if is_tutor_file(filename) or filename.endswith(OVERRIDES_FILE):
        return True
    # The frame that handed the call to the observer (``return
    # handle_torch_function(...)``) is not in a plain run's traceback.
    return next_filename is not None and next_filename.endswith(OVERRIDES_FILE)


def _filter(stack: traceback.StackSummary, only: Callable[[str], bool] | None) -> traceback.StackSummary:
    frames = list(stack)
    kept: list[traceback.FrameSummary] = []
    for i, frame in enumerate(frames):
        nxt = frames[i + 1].filename if i + 1 < len(frames) else None
        if _added_by_tutor(frame.filename, nxt):
            continue
        if only is not None and not only(frame.filename):
            continue
        kept.append(frame)
    return traceback.StackSummary.from_list(kept)


def user_traceback_object(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the frames ``format_user_traceback`` leaves out, as a
    traceback object, for tools that format tracebacks themselves (IPython)."""
    entries: list[types.TracebackType] = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    names = [t.tb_frame.f_code.co_filename for t in entries]
    kept = [t for i, t in enumerate(entries) if not _added_by_tutor(names[i], names[i + 1] if i + 1 < len(names) else None)]
    rebuilt: types.TracebackType | None = None
    for t in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return rebuilt


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
    if sys.version_info < (3, 11):
        _as_python_310_prints(te)
    return "".join(te.format())


def _as_python_310_prints(te: traceback.TracebackException) -> None:
    """Python 3.10 prints an exception's last line itself, not as its
    traceback module does: a class of ``__main__`` with its module
    (``__main__.E: x``), and ``<exception str() failed>`` when ``str()``
    raises. Every exception of the chain is worded so."""
    seen: set[int] = set()
    stack: list[traceback.TracebackException | None] = [te]
    while stack:
        one = stack.pop()
        if one is None or id(one) in seen:
            continue
        seen.add(id(one))
        one.format_exception_only = types.MethodType(_exception_only_310, one)  # type: ignore[method-assign]
        stack += [one.__cause__, one.__context__]


def _exception_only_310(self: traceback.TracebackException) -> Iterator[str]:
    lines = list(traceback.TracebackException.format_exception_only(self))
    kind = self.exc_type
    if not lines or kind is None:
        return iter(lines)
    last = lines[-1]
    unprintable = f"<unprintable {kind.__name__} object>"
    if last.rstrip("\n").endswith(": " + unprintable) or last.rstrip("\n") == f"{kind.__qualname__}: {unprintable}":
        last = last.replace(unprintable, "<exception str() failed>")
    if kind.__module__ == "__main__" and last.startswith(kind.__qualname__):
        last = "__main__." + last
    lines[-1] = last
    return iter(lines)


def format_exception_only(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
