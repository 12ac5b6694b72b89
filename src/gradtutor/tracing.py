"""How the engine hears of the program's frames.

The engine speaks ``sys.settrace``'s language: a *global* trace function,
called when a frame starts (``"call"``), that returns a *local* one, called
for that frame's ``"line"``, ``"exception"`` and ``"return"`` events. Two
tracers deliver those calls:

- :class:`SettraceTracer` (Python 3.10, 3.11): ``sys.settrace`` itself. Python
  calls the global function for every call the program makes, library code's
  included, which is most of what tracing costs on a training loop.
- :class:`MonitoringTracer` (Python 3.12 on): ``sys.monitoring`` (PEP 669).
  Library code is told off once per code object (``DISABLE`` at its first
  start) and costs nothing after; line events are switched on for the
  user's code objects only. Events are translated to the ones ``sys.settrace``
  gives on the same Python (its legacy layer is built on the same events):
  a start or resume is ``"call"``, a return or yield ``"return"`` with its
  value, an unwind ``"return"`` with None, a raise ``"exception"`` with
  (type, value, traceback), a new line or a jump back to the same line
  ``"line"``.

Either way, the engine's functions run with tracing off for themselves (a
trace function's own calls are not traced, nor are a monitoring callback's),
and only the thread that started the tracer is followed.
"""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType
from typing import Any, Callable, Collection

TraceFunction = Callable[[FrameType, str, Any], Any]

# Python's own, kept: while a program runs, sys.settrace and sys.gettrace
# are the program's (see Engine._trace_functions_for_the_program).
_settrace, _gettrace = sys.settrace, sys.gettrace
_get_ident = threading.get_ident


class SettraceTracer:
    """``sys.settrace`` with the engine's global trace function."""

    def __init__(self, global_trace: TraceFunction, local_trace: TraceFunction, user_files: Collection[str]) -> None:
        self.global_trace = global_trace
        self.local_trace = local_trace
        self._before: Any = None

    def start(self) -> None:
        self._before = _gettrace()
        _settrace(self.global_trace)

    def stop(self) -> None:
        _settrace(self._before)
        self._before = None

    def halt(self) -> None:
        """Stop now, for good (the process is ending, or forked)."""
        _settrace(None)

    def is_ours(self, function: Any) -> bool:
        """Is ``function`` (what ``sys.gettrace`` returns) the tutor's?"""
        return function is not None and function == self.global_trace

    def lost(self) -> bool:
        """Did Python turn tracing off (an error in calling the trace function)?"""
        return _gettrace() is None

    def quiet(self, code: CodeType) -> None:
        """``code``'s frames are no longer stepped (none is being stepped now).
        Nothing to do: the global function already declines them."""

    def leave(self, frame: FrameType | None) -> None:
        """Stop tracing ``frame`` and the frames below it now (the program set
        its own trace function): no local trace function stays on them."""
        while frame is not None:
            if frame.f_trace is not None and getattr(frame.f_trace, "__self__", None) is getattr(
                self.local_trace, "__self__", None
            ):
                frame.f_trace = None
            frame = frame.f_back


class MonitoringTracer:
    """``sys.monitoring`` events, delivered as ``sys.settrace`` would deliver them."""

    def __init__(self, global_trace: TraceFunction, local_trace: TraceFunction, user_files: Collection[str]) -> None:
        self.global_trace = global_trace
        self.local_trace = local_trace
        self.user_files = user_files
        self._tool: int | None = None
        self._codes: set[CodeType] = set()  # user code with local events on
        self._thread = 0
        self._lines: dict[CodeType, dict[int, int | None]] = {}

    # ---- switching on and off ------------------------------------------------
    def start(self) -> None:
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        events = monitoring.events
        tool = next((t for t in (4, 3, 5, 2, 0, 1) if monitoring.get_tool(t) is None), None)
        if tool is None:
            raise RuntimeError("every sys.monitoring tool id is taken: the tutor cannot follow the program")
        monitoring.use_tool_id(tool, "gradtutor")
        self._tool = tool
        self._thread = _get_ident()
        for event, callback in self._callbacks():
            monitoring.register_callback(tool, event, callback)
        # Code told off in an earlier run (DISABLE) is heard of again.
        monitoring.restart_events()
        # Starts, unwinds, throws and raises cannot be asked of single code
        # objects; the rest are switched on per user code object (_on_start).
        monitoring.set_events(tool, events.PY_START | events.PY_UNWIND | events.PY_THROW | events.RAISE)

    def stop(self) -> None:
        tool, self._tool = self._tool, None
        if tool is None:
            return
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        monitoring.set_events(tool, 0)
        for code in self._codes:
            monitoring.set_local_events(tool, code, 0)
        self._codes.clear()
        self._lines.clear()
        for event, _ in self._callbacks():
            monitoring.register_callback(tool, event, None)
        monitoring.free_tool_id(tool)

    halt = stop

    def _callbacks(self) -> list[tuple[int, Callable[..., Any]]]:
        events = sys.monitoring.events  # type: ignore[attr-defined]
        return [
            (events.PY_START, self._on_start),
            (events.PY_RESUME, self._on_resume),
            (events.PY_THROW, self._on_throw),
            (events.LINE, self._on_line),
            (events.JUMP, self._on_jump),
            (events.PY_RETURN, self._on_return),
            (events.PY_YIELD, self._on_return),
            (events.PY_UNWIND, self._on_unwind),
            (events.RAISE, self._on_raise),
        ]

    def is_ours(self, function: Any) -> bool:
        return False  # sys.settrace is left to the program

    def lost(self) -> bool:
        return False  # an error in a callback reaches the program; it never turns the tracer off

    def leave(self, frame: FrameType | None) -> None:
        self.stop()

    def quiet(self, code: CodeType) -> None:
        """Switch ``code``'s line events off: none of its frames is stepped now
        or will be (the engine declines its starts)."""
        if code in self._codes and self._tool is not None:
            self._codes.discard(code)
            sys.monitoring.set_local_events(self._tool, code, 0)  # type: ignore[attr-defined]

    # ---- events ----------------------------------------------------------------
    def _on_start(self, code: CodeType, offset: int) -> Any:
        if code.co_filename not in self.user_files:
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        if _get_ident() != self._thread:
            return None
        frame = sys._getframe(1)
        if self.global_trace(frame, "call", None) is not None and code not in self._codes and self._tool is not None:
            events = sys.monitoring.events  # type: ignore[attr-defined]
            self._codes.add(code)
            sys.monitoring.set_local_events(  # type: ignore[attr-defined]
                self._tool, code, events.LINE | events.JUMP | events.PY_RETURN | events.PY_YIELD | events.PY_RESUME
            )
        return None

    def _on_resume(self, code: CodeType, offset: int) -> Any:
        if _get_ident() == self._thread:
            self.global_trace(sys._getframe(1), "call", None)
        return None

    def _on_throw(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        if code in self._codes and _get_ident() == self._thread:
            self.global_trace(sys._getframe(1), "call", None)
        return None

    def _on_line(self, code: CodeType, line: int) -> Any:
        if _get_ident() == self._thread:
            self.local_trace(sys._getframe(1), "line", None)
        return None

    def _on_jump(self, code: CodeType, source: int, destination: int) -> Any:
        """A jump back to the same line is a "line" event of its own (a
        loop on one line); any other jump is told off: a forward one is no
        line event, and one to another line gets that line's event."""
        if destination > source:
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        lines = self._lines.get(code)
        if lines is None:
            lines = self._lines[code] = {}
            for start, end, line in code.co_lines():
                for offset in range(start, end, 2):
                    lines[offset] = line
        if lines.get(source) != lines.get(destination):
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        if _get_ident() == self._thread:
            self.local_trace(sys._getframe(1), "line", None)
        return None

    def _on_return(self, code: CodeType, offset: int, value: Any) -> Any:
        if _get_ident() == self._thread:
            self.local_trace(sys._getframe(1), "return", value)
        return None

    def _on_unwind(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        if code in self._codes and _get_ident() == self._thread:
            self.local_trace(sys._getframe(1), "return", None)
        return None

    def _on_raise(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        if code in self._codes and _get_ident() == self._thread:
            self.local_trace(sys._getframe(1), "exception", (type(exc), exc, exc.__traceback__))
        return None


def make_tracer(global_trace: TraceFunction, local_trace: TraceFunction, user_files: Collection[str]) -> Any:
    """The tracer for this Python: ``sys.monitoring`` where it exists."""
    kind = MonitoringTracer if hasattr(sys, "monitoring") else SettraceTracer
    return kind(global_trace, local_trace, user_files)
