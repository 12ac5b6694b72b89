"""Runs user code one statement at a time and reports each step.

The engine owns a persistent namespace, the observer (a torch function mode)
and the snapshotter. ``run_code`` executes a code object under a tracer
(``sys.settrace``, or ``sys.monitoring`` from Python 3.12 on: see
``gradtutor.tracing``), following only code compiled from sources the
engine was given; each time a statement finishes (the frame moves to another
statement, returns, or raises) it takes a snapshot of the names that frame
can see, detects events and hands a :class:`Step` to ``on_step``.

It does no terminal I/O: front ends decide how to show steps.
"""

from __future__ import annotations

import ast
import builtins
import dis
import linecache
import os
import sys
import warnings
import weakref
from dataclasses import dataclass, field, replace
from types import CodeType, FrameType
from typing import Any, Callable, Iterator, Mapping
from collections import ChainMap
from contextlib import contextmanager

import torch

from gradtutor import autograd_graph as ag
from gradtutor import depth, repeat_steps
from gradtutor.swap import swapped
from gradtutor.capture import OutputCapture
from gradtutor.events import (
    NameTracker, detect_events, grew, is_routine, note_outer, old_still_in_graph, params_once, with_growth_sizes,
)
from gradtutor.model import HIDDEN_GLOBAL, Event, Snapshot, Step
from gradtutor.grads_seen import GradsSeen
from gradtutor.observer import CallObserver, DetachRecord, LineContext, UnfollowedRecord
from gradtutor.plain_calls import PlainCalls, QuietFunction, carries_tensors, function_name
from gradtutor.snapshot import ScanLayouts, Snapshotter, StepNames, is_tracked_name, scan_names
from gradtutor.source_index import SourceIndex, StatementInfo
from gradtutor.tracebacks import OVERRIDES_FILE, exception_text, format_user_traceback, is_tutor_file
from gradtutor.tracing import _gettrace, _settrace, make_tracer

_CO_OPTIMIZED = 0x0001
_CO_SUSPENDABLE = 0x0020 | 0x0080 | 0x0200  # generator, coroutine, async generator
_LEAVING = "end of with"  # marks where the end of a with block's hidden runs are kept
_YIELD_VALUE = dis.opmap["YIELD_VALUE"]
_RESUME = dis.opmap.get("RESUME", -1)  # 3.11+
_YIELD_FROM = dis.opmap.get("YIELD_FROM")  # 3.10 only


def _runs_key(state: _Frame) -> Any:
    """Where a frame's hidden runs are kept (see repeat_steps.FrameRuns): the
    module's by its frame, a function's by its code (a new frame each call)."""
    return state.key if state.is_module else ("code", state.code_key)


def _frame_key(frame: FrameType) -> int:
    """What the tutor keys a running frame's state by. Module-level code
    shares one namespace across shell inputs: its key is that namespace."""
    return id(frame.f_globals) if frame.f_code.co_name == "<module>" else id(frame)


class _CodeKey:
    """A code object in the engine's tables (statement counts, what each
    statement showed): equal as code objects are, with its hash computed
    once. Python hashes a code object by walking its bytecode and, through
    its constants, every function and class body nested in it: 37 µs for
    the module of a 300-line script, asked at each of its steps. It also
    keeps what the engine works out once about its code (where its jumps
    back land, its positions, the globals it rebinds)."""

    __slots__ = ("code", "_hash", "jumps", "positions", "globals_stored")

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self._hash = hash(code)
        self.jumps: dict[int, int] | None = None  # see _landing
        self.positions: list[tuple[int | None, int | None]] | None = None  # see _looping_in_comprehension
        self.globals_stored: tuple[str, ...] | None = None  # see _globals_stored_by

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CodeKey) and (self.code is other.code or self.code == other.code)


_QUIET_EXCEPTIONS = (StopIteration, StopAsyncIteration, GeneratorExit, SystemExit, KeyboardInterrupt)


@dataclass
class _Frame:
    """Stepping state of one running frame of user code."""

    key: int
    function: str
    filename: str
    index: SourceIndex
    is_module: bool
    call: int = 0  # which call of a function this is, counted over the run (0: a module's code)
    stmt: StatementInfo | None = None
    origin: ag.Origin = ag.UNKNOWN_ORIGIN
    lasti: int = -1
    exception: BaseException | None = None
    code: Any = None
    code_key: Any = None  # ``code`` as the engine's tables key it (see _CodeKey)
    calls_at_begin: int = 0  # the observer's count of torch calls, less its reads, when the statement began
    calls_at_start: int = 0  # ... when the frame started
    plain: bool = True  # no step of this call had an event (see plain_calls)
    # What a settled call leaves as it found (see plain_calls): the steps
    # shown and the tutor's failures when the frame started; and whether an
    # exception was raised in it.
    shown_at_start: int = 0
    errors_at_start: int = 0
    raised: bool = False
    leaving: bool = False  # the pending step is the end of a with block (its __exit__)
    observed: bool = False  # the observer's mode was put back on for this call (see _start_frame)
    # A saved-tensor hook's call: the statement whose op called it, which
    # made the nodes its names meet untagged (see _start_frame).
    tags_as: ag.Origin | None = None
    # The last statement that ended, not the end of a with block: a return
    # inside one ends before the block, and its value comes when the frame
    # returns, at the block's end (see _record_value).
    ended: ag.Origin | None = None
    # A function that rebinds globals (``global x``), until its first step is
    # looked at: the tensor each of those globals held (weakly; None for
    # another value), as when it was called or after the steps let pass.
    globals_before: dict[str, weakref.ref[torch.Tensor] | None] | None = None
    # The pending statement's names it reads and binds (StatementInfo.rereads):
    # the tensors they named when it began, until its end records what it
    # read (weakly: one it let go of is gone, as without the tutor).
    reads_before: dict[str, weakref.ref[torch.Tensor]] | None = None


@dataclass
class _Unshown:
    """The steps hidden since the last step shown ended, in whichever frame
    they ran: a note before the next step shown tells them."""

    hidden: int = 0
    # What they did again: signature -> [an example event, how many times].
    repeated: dict[tuple[Any, ...], list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class StepStart:
    """A statement starting, for front ends that head a step before it runs
    (so what it prints, and the steps of the functions it calls, come under
    its heading). ``shown``: it will be shown whatever happens (a loop past
    its first iterations is shown only if it says something new).
    ``pending_output``: what the statement running further up printed since
    its last step (it belongs under that statement's heading)."""

    index: int
    line: int
    source: str
    function: str
    file: str
    iteration: int
    shown: bool
    pending_output: str = ""
    # The steps hidden since the last step shown finished, in any frame (a
    # heading shown since told some of them already), and what they did again.
    hidden: int = 0
    repeated: tuple[tuple[Event, int], ...] = ()
    leaving: bool = False  # the end of a with block, not the with statement again


@dataclass(frozen=True)
class InternalError:
    """A failure of the tutor's own while it followed a step. The step goes
    unnarrated; the program itself runs on as it would without the tutor."""

    file: str
    line: int | None
    message: str
    # Narration stopped here for good: Python turned the tracer off (an
    # error in calling it).
    stopped: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "line": self.line, "message": self.message}
        if self.stopped:
            out["stopped"] = True
        return out


@dataclass
class RunResult:
    """How a run ended. ``exception`` is the uncaught exception (not SystemExit)."""

    steps: list[Step]
    exception: BaseException | None = None
    traceback: str | None = None
    exit_code: int = 0
    exited: bool = False  # the code raised SystemExit
    hidden_steps: int = 0
    hidden_repeated: list[tuple[Event, int]] = field(default_factory=list)  # events of hidden steps, with counts
    # The hidden steps after the last step shown (no step's note counts them), and their events.
    hidden_at_end: int = 0
    repeated_at_end: list[tuple[Event, int]] = field(default_factory=list)
    quiet_functions: list[QuietFunction] = field(default_factory=list)  # run without stepping (plain_calls)
    value: Any = None  # the value of the last expression statement (run_cell)
    has_value: bool = False
    internal_errors: list[InternalError] = field(default_factory=list)
    # What the program printed after its last narrated step (also added to
    # that step's output): a front end that printed the step already shows it.
    leftover_output: str = ""
    exit_output: str = ""  # printed as the program ended (see ``run_code``'s ``ending``)
    ended_by: str | None = None  # "os._exit": the process ends now, as the program asked


_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


def _silence_in_child() -> None:
    """After a fork (a DataLoader worker, multiprocessing): the child runs the
    user's code as python would, without narrating it."""
    for engine in list(_engines):
        engine.in_child = True
        engine.observer.paused = True
        engine.tracer.halt()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_silence_in_child)


class Engine:
    """Executes code with observation. One engine, one namespace.

    ``max_iterations``: a statement that runs more often than this within
    one frame (a loop body) yields visible steps only when an event other
    than a routine one happens; the rest are counted in ``Step.extra["hidden"]``.
    """

    # Hidden steps that repeat one exactly are passed over (see repeat_steps);
    # off, every hidden step is detected in full (the tests compare the two).
    pass_over_repeats = True

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        *,
        on_step: Callable[[Step], None] | None = None,
        on_begin: Callable[[StepStart], None] | None = None,
        max_iterations: int = 3,
        capture_output: bool = False,
        announce_hidden: bool = True,
        unstep_plain_functions: bool = False,
        describe_names: bool = True,
    ) -> None:
        if namespace is None:
            namespace = {"__name__": "__main__"}
        # exec() inserts __builtins__; seed it so it never shows up as a new name.
        namespace.setdefault("__builtins__", builtins)
        self.namespace = namespace
        self.on_step = on_step
        self.on_begin = on_begin
        # Whether ``on_begin`` hears of a step that will most likely be hidden
        # (a loop past its first iterations) when nothing was printed before
        # it: the shell's does (it heads any output), explain's does not.
        self.announce_hidden = announce_hidden
        self.max_iterations = max_iterations
        self.capture_output = capture_output
        self.registry = ag.TagRegistry()
        self.registry.is_user_file = self._is_user_file
        self.context = LineContext()
        self.observer = CallObserver(self.registry, self.context, is_user_file=self._is_user_file)
        # (what each name holds, in words, for the shell's :names: explain
        # shows none, and leaves them unsaid)
        self.snapshotter = Snapshotter(self.registry, describe=describe_names)
        self._indexes: dict[str, SourceIndex] = {}
        # Per frame: the type of each name's value when a step last changed
        # nothing (see _nothing_happened).
        self._scope_types: dict[Any, tuple[tuple[str, ...], tuple[int, ...]]] = {}  # (StepNames.shape)
        self._layouts = ScanLayouts()  # per frame: the layout of its last step's scan of its names
        self._frames: dict[int, _Frame] = {}
        self._stack: list[_Frame] = []
        self._trackers: dict[int, NameTracker] = {}
        self._const_read_at: dict[int, int] = {}  # a const's tag serial -> the last step that read it
        # Per frame: its statements' last hidden runs, to pass over their repeats (see repeat_steps).
        self._hidden_runs: dict[int, repeat_steps.FrameRuns] = {}
        self._calls_started = 0  # function calls stepped into (see _Frame.call)
        self._next_exec = 0
        # Exceptions a user frame passed to library code unreported, by id: reported
        # where they come back into the user's code (see _raised_here).
        self._withdrawn: dict[int, BaseException] = {}
        self._out: OutputCapture | None = None
        self._orphan_output = ""  # what a step the tutor failed on printed (see _finish)
        self._closing: tuple[RunResult, Any] | None = None  # the run in progress and the displayhook to restore
        self._steps: list[Step] = []
        self._hidden_total = 0
        self._repeated_total: dict[tuple[Any, ...], list[Any]] = {}
        self._unshown = _Unshown()  # the steps hidden since the last step shown
        self._grads = GradsSeen()  # for each step's grad_changes
        self._displayed: list[Any] = []
        self.internal_errors: list[InternalError] = []  # the tutor's own failures while tracing
        self.in_child = False  # a forked child process: it never narrates
        self._handed_over = False  # the program set its own trace function: the tutor stepped aside
        self._observer_pushed = False
        self.tracer = make_tracer(_global_trace_of(self), self._local_trace, self._indexes)
        _engines.add(self)
        self._counts: dict[tuple[Any, str, int], int] = {}  # executions of each statement
        self._code_keys: dict[int, _CodeKey] = {}  # id(code) -> its key (which keeps it alive)
        # Functions of the program's that never touch torch, or whose calls
        # repeat themselves, stop being stepped after their first calls (see
        # plain_calls): ``explain`` asks for it, where a long run of a
        # micrograd-like program, or of a model's forward, is stepped.
        self._plain_calls = PlainCalls(max_iterations + 2) if unstep_plain_functions else None
        self._shown: dict[tuple[Any, int], set[tuple[Any, ...]]] = {}  # event kinds shown per statement
        self._shown_anywhere: set[tuple[Any, ...]] = set()  # ... and in the whole run

    def _is_user_file(self, filename: str) -> bool:
        return filename in self._indexes

    # ---- sources ------------------------------------------------------------
    def add_source(self, filename: str, source: str, tree: ast.Module | None = None) -> None:
        """Make ``filename`` steppable and let tracebacks show its lines."""
        self._indexes[filename] = SourceIndex(source, tree)
        if filename.startswith("<") and filename != "<stdin>":  # (python shows no line of <stdin>)
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)

    # ---- running ------------------------------------------------------------
    def run_cell(self, source: str, filename: str) -> RunResult:
        """Run one shell input as python's REPL would: statement by statement,
        showing the value of a final expression statement (``result.value``)
        and binding it to ``_``.

        Raises SyntaxError (with the input's filename and line) when the
        input does not compile; nothing has run then.
        """
        tree = ast.parse(source, filename, "exec")
        # As IPython does: only a final expression statement shows its value.
        codes = [
            compile(ast.Interactive(body=[stmt]), filename, "single")
            if i == len(tree.body) - 1 and isinstance(stmt, ast.Expr)
            else compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec")
            for i, stmt in enumerate(tree.body)
        ]
        self.add_source(filename, source, tree)
        return self.run_code(codes)

    def _display(self, value: Any) -> None:
        if value is None:
            return
        self.namespace["_"] = value
        self._displayed.append(value)

    def run_code(
        self, code: CodeType | list[CodeType], *, interrupt_raises: bool = True, ending: Callable[[], None] | None = None
    ) -> RunResult:
        """Execute ``code`` (or several code objects, in order, stopping at the
        first that raises) in the namespace, stepping through traced sources.

        Outcomes: normal completion (``exception`` None, exit_code 0); an
        uncaught exception (``exception`` set, its user traceback formatted,
        exit_code 1); ``SystemExit`` (``exited`` set, exit_code from it).
        KeyboardInterrupt propagates to the caller after the steps so far
        are reported; with ``interrupt_raises`` False it ends the run as
        python ends a script with it: the program's exception, exit code 130.
        ``ending`` runs after the code, unobserved, what it prints kept as
        ``exit_output``: for a script, what python does as it exits.
        """
        self._steps = []
        self._hidden_total = 0
        self._repeated_total = {}
        self._unshown = _Unshown()
        self._displayed = []
        self.internal_errors = []
        result = RunResult(self._steps, internal_errors=self.internal_errors)
        old_displayhook = sys.displayhook
        if self.capture_output:
            self._out = OutputCapture()
            self._out.start()
        sys.displayhook = self._display
        self._closing = (result, old_displayhook)
        try:
            # The code's first frame sits on this one: under python it would be the stack's first.
            with self._observing(below=depth.frames_below(sys._getframe())):
                for one in code if isinstance(code, list) else [code]:
                    exec(one, self.namespace)
        except SystemExit as exc:
            result.exit_code = _exit_code(exc)
            result.exited = True
        except KeyboardInterrupt as exc:
            if interrupt_raises:
                raise
            result.exception = exc
            result.traceback = format_user_traceback(exc)
            result.exit_code = 130  # python dies of the SIGINT it re-raises: the shell sees 128 + 2
        except BaseException as exc:  # the user's exception, reported not raised
            result.exception = exc
            result.traceback = format_user_traceback(exc)
            result.exit_code = 1
        finally:
            self._close_run(ending)
        return result

    def end_now(self, status: int) -> RunResult:
        """The run as it stands, closed now: the program asked for the
        process to end at once (``os._exit``) from inside ``run_code``."""
        self.tracer.halt()
        assert self._closing is not None, "end_now is for a run in progress"
        result = self._closing[0]
        result.exit_code, result.ended_by = status, "os._exit"
        self._close_run(None)
        return result

    def _close_run(self, ending: Callable[[], None] | None) -> None:
        """Finish what ``run_code`` started: open frames, output, the
        ``ending``; fill in the result's totals."""
        if self._closing is None:
            return
        result, old_displayhook = self._closing
        self._closing = None
        try:
            self._finish_all()
            leftover = self._take_output()  # printed after the last step finished
            result.leftover_output = leftover
            if leftover and self._steps:
                self._steps[-1] = replace(self._steps[-1], output=self._steps[-1].output + leftover)
            if ending is not None:
                try:
                    ending()
                except BaseException:  # python reports errors of its own exit itself, and exits anyway
                    pass
                result.exit_output = self._take_output()
        finally:
            if self._out is not None:
                self._out.stop()
                self._out = None
            sys.displayhook = old_displayhook
            self._withdrawn.clear()
        result.hidden_steps = self._hidden_total
        result.hidden_repeated = [(e, n) for e, n in self._repeated_total.values()]
        result.hidden_at_end = self._unshown.hidden
        result.repeated_at_end = [(e, n) for e, n in self._unshown.repeated.values()]
        result.quiet_functions = self._plain_calls.summary() if self._plain_calls is not None else []
        if self._displayed:
            result.value = self._displayed[-1]
            result.has_value = True
        self._displayed = []

    @contextmanager
    def stepping(self) -> Iterator[list[Step]]:
        """Observe code that the caller runs itself inside the block (IPython
        runs a cell with its own exec, displayhook and error display). Steps of
        traced sources (see ``add_source``) are appended to the yielded list as
        they finish. Exceptions, output and displayed values pass through
        untouched; frames still open at the end finish then."""
        steps: list[Step] = []
        self._steps = steps
        self._hidden_total = 0
        self._repeated_total = {}
        self._unshown = _Unshown()
        try:
            with self._observing():
                yield steps
        finally:
            self._finish_all()
            self._withdrawn.clear()
            self._steps = []

    def catch_up(self) -> None:
        """Take in, without reporting, what code run unobserved did to the
        namespace (notebook cells run while narration was off): its graph
        nodes are tagged as made elsewhere and its names as known, so the
        next step reports only what that step does."""
        quiet_reads = ag.hidden_from_user_modes()
        with quiet_reads:
            key = id(self.namespace)
            for name, value in list(self.namespace.items()):
                if isinstance(value, torch.Tensor) and is_tracked_name(name):
                    self._next_exec += 1
                    self.registry.tag_unobserved(value, self._next_exec)
            snapshot = self.snapshotter.take(self.namespace, origin=ag.UNKNOWN_ORIGIN, frame_key=key)
            detect_events(
                line=0, iteration=1, namespace=self.namespace, scope=self.namespace,
                tracker=self._trackers.setdefault(key, NameTracker()), snapshot=snapshot,
                records=self.observer.take_records(), exception=None, error_details={},
            )

    @contextmanager
    def _observing(self, below: int = 0) -> Iterator[None]:
        """Observe the code run in the block. ``below``: frames of the tutor
        (and its caller) under the code's first, which python would not have."""
        old_showwarning = warnings.showwarning
        self.observer.paused = False
        self._handed_over = False
        warnings.showwarning = _at_user_location(old_showwarning)
        with depth.reserved(below), self._observer_on(), self._trace_functions_for_the_program():
            self.tracer.start()
            try:
                yield
            finally:
                if self.tracer.lost() and not self._handed_over:
                    # Python turns the tracer off when calling it fails (a
                    # RecursionError at the recursion limit). Where it
                    # happened: the tutor's last failure, else its last step.
                    failed = self.internal_errors[-1] if self.internal_errors else None
                    last = self._steps[-1] if self._steps else None
                    file = failed.file if failed else last.file if last else ""
                    line = failed.line if failed else last.line if last else None
                    self.internal_errors.append(InternalError(
                        file, line,
                        "Python turned the tracer off after an error in calling it (such as a RecursionError "
                        "at the recursion limit)", stopped=True,
                    ))
                self.tracer.stop()
                if getattr(warnings.showwarning, "_gradtutor", False):
                    warnings.showwarning = old_showwarning

    @contextmanager
    def _observer_on(self) -> Iterator[None]:
        """The observer's torch function mode, on for the block unless the
        program took over tracing (see ``_hand_over``), which takes it off."""
        _put_under(self.observer)
        self._observer_pushed = True
        try:
            yield
        finally:
            if self._observer_pushed:
                self._observer_pushed = False
                _take_off(self.observer)

    @contextmanager
    def _trace_functions_for_the_program(self) -> Iterator[None]:
        """``sys.gettrace`` answers the program as python would (its own trace
        function, or None); ``sys.settrace`` from the program hands tracing
        over to it (a debugger, a coverage tool, its own tracer)."""
        def gettrace() -> Any:
            trace = _gettrace()
            return None if self.tracer.is_ours(trace) else trace

        def settrace(function: Any) -> None:
            if not self._handed_over:
                self._hand_over(sys._getframe(1), "sys.settrace")
            _settrace(function)

        gettrace.__doc__, settrace.__doc__ = _gettrace.__doc__, _settrace.__doc__
        with swapped(sys, gettrace=gettrace, settrace=settrace):
            yield

    def _hand_over(self, frame: FrameType, what: str) -> None:
        """The program installs its own trace function: its steps so far are
        finished, narration stops with one line saying so, and the tutor
        steps aside (no local trace functions on the program's frames, no
        torch function mode) so that the program's tracer sees only what it
        would see under python."""
        self._handed_over = True
        sys.gettrace, sys.settrace = _gettrace, _settrace  # python's own again, for the rest of the run
        self.internal_errors.append(InternalError(
            frame.f_code.co_filename, frame.f_lineno, f"the program set its own trace function ({what})", stopped=True
        ))
        below: FrameType | None = frame
        while below is not None:  # the statements running now end their steps here
            state = self._frames.get(_frame_key(below))
            if state is not None and state.stmt is not None:
                self._finish(below, state)
                state.stmt = None
            below = below.f_back
        self.tracer.leave(frame)
        self._finish_all()
        self.observer.paused = True
        if self._observer_pushed:
            self._observer_pushed = False
            _take_off(self.observer)

    def snapshot_now(self) -> Snapshot:
        """The module namespace as it is now, without counting as a step (a
        mode the program left on, ``mode.__enter__()`` in the shell, does not
        see the tutor's reads)."""
        with ag.hidden_from_user_modes():
            return self.snapshotter.take(
                self.namespace, origin=ag.UNKNOWN_ORIGIN, frame_key=id(self.namespace), remember=False
            )

    # ---- tracing ------------------------------------------------------------
    def _global_trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        # A call in one of the user's files (_global_trace_of looked).
        if event != "call" or self.in_child:
            return None
        try:
            return self._start_frame(frame)
        except Exception as exc:  # never into the user's program: see _local_trace
            self._internal_error(frame, exc)
            return None

    def _start_frame(self, frame: FrameType) -> Any:
        code = frame.f_code
        index = self._indexes.get(code.co_filename)
        if index is None or not _steppable(code):
            return None
        plain_calls = self._plain_calls
        if plain_calls is not None and code in plain_calls.quiet:
            plain_calls.unstepped_call(code)
            return None
        is_module = code.co_name == "<module>"
        resumed = self._frames.get(id(frame))
        if resumed is not None and resumed.code is code and code.co_flags & _CO_SUSPENDABLE and _suspended(frame):
            # A generator or coroutine resuming at its yield: the same frame, names and counts.
            # (Its globals, and the variables it shares with other functions,
            # may have been bound to other tensors meanwhile.)
            self._stack.append(resumed)
            self.context.origin = resumed.origin
            with ag.hidden_from_user_modes():  # (the tutor's reads of its globals' tensors)
                self._globals_after(resumed, frame, everything=True)
            tracker = self._trackers.get(resumed.key)
            shared = code.co_cellvars + code.co_freevars
            if tracker is not None and shared:
                tracker.resumed_with(frame.f_locals, shared)
            return self._local_trace
        if not is_module and resumed is not None:
            # A new frame where one that never ended was (a generator left
            # suspended, then dropped): nothing of that one's is this one's.
            self._forget_frame(resumed.key)
        state = _Frame(
            key=_frame_key(frame),
            function=code.co_name,
            filename=code.co_filename,
            code=code,
            code_key=self._code_key(code),
            index=index,
            is_module=is_module,
            calls_at_start=self.observer.calls,
            shown_at_start=len(self._steps),
            errors_at_start=len(self.internal_errors) + len(self.observer.failures),
        )
        if not is_module:
            self._calls_started += 1
            state.call = self._calls_started
        self._frames[state.key] = state
        self._stack.append(state)
        if not is_module:
            self._bind_arguments(state, frame)
            stored = state.code_key.globals_stored
            if stored is None:
                stored = state.code_key.globals_stored = _globals_stored_by(code)
            if stored:
                state.globals_before = _tensors_held(frame.f_globals, stored)
            if len(self._stack) > 1 and code in ag.saved_tensor_hook_codes():
                # A pack hook, called by an op of the statement running below
                # (an nn.Linear's addmm saving weight.t(), which torch made
                # where the observer does not see): what it meets untagged,
                # that statement made, not a line of the hook.
                state.tags_as = self._stack[-2].origin
        caller = frame.f_back
        if caller is not None and caller.f_code in _CALLED_FOR_JVP and len(self._stack) > 1:
            self._tag_function_node(frame, self._stack[-2].origin)
        if self._observer_pushed and (
            caller is not None and caller.f_code in _CALLED_BY_AUTOGRAD or self.observer.backwards_running
        ):
            # A custom autograd.Function's backward or a tensor hook, called
            # by the autograd engine inside the observer's handling of the
            # user's backward, or the program's code that library code runs
            # there (a checkpointed segment, computed again for its saved
            # tensors), where torch has taken the observer's mode off: it goes
            # back on for the call, so what the function does is seen as code
            # of the user's is (an in-place op, ...).
            state.observed = _observe_again(self.observer)
        return self._local_trace

    def _code_key(self, code: CodeType) -> _CodeKey:
        key = self._code_keys.get(id(code))
        if key is None or key.code is not code:
            key = self._code_keys[id(code)] = _CodeKey(code)
        return key

    def _tag_function_node(self, frame: FrameType, origin: ag.Origin) -> None:
        """A custom autograd.Function's jvp, called by its apply once the
        outputs have their node: its ``ctx`` is that node, which the line
        calling apply made (``dual_output = fn(dual_input)``). Tagged so
        before jvp's lines meet it untagged, and take it for theirs
        (``gI * ctx.result = dual_output``)."""
        code = frame.f_code
        ctx = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
        if not isinstance(ctx, torch.autograd.function.BackwardCFunction):
            return
        observer = self.observer
        paused, observer.paused = observer.paused, True
        try:
            with ag.hidden_from_user_modes():
                self.registry.tag_graph(ctx, origin)
        finally:
            observer.paused = paused

    def _globals_after(self, state: _Frame, frame: FrameType, everything: bool = False) -> None:
        """A function's globals may have been bound to other tensors by code
        its steps did not look at: see ``NameTracker.outer_after``; before
        its first step is looked at, the globals it rebinds are looked at again."""
        if state.globals_before is not None:
            state.globals_before = _tensors_held(frame.f_globals, tuple(state.globals_before))
        tracker = self._trackers.get(state.key)
        if tracker is not None and not state.is_module:
            tracker.outer_after(frame.f_globals, everything)

    def _bind_arguments(self, state: _Frame, frame: FrameType) -> None:
        """A function's tensor arguments are bound before its first line: its
        first step finds them bound, as a later step finds what the one before
        left (``def f(x): x = x * 2`` moves x on; it does not name a new x)."""
        local = frame.f_locals
        arguments = [(name, value) for name, value in local.items() if isinstance(value, torch.Tensor)]
        if not arguments:
            return
        state.plain = False  # a tensor among its names: never made quiet (see plain_calls)
        observer = self.observer
        paused, observer.paused = observer.paused, True  # (the tutor's own reads of the tensors)
        try:
            with ag.hidden_from_user_modes():
                tags = [(name, t, self.registry.known_tag(t)) for name, t in arguments]
                # Its module arguments (a forward's self), as its first step's
                # detection records them (a new name of a frame is told as
                # nothing): a first step that binds nothing else can be a repeat.
                scan = StepNames(local, self._layouts, (state.code_key, "arguments")).scan()
                modules = {
                    name: (weakref.ref(module), tuple(weakref.ref(p) for _, p in scan.parts(module)[0]))
                    for name, module in scan.modules
                }
        finally:
            observer.paused = paused
        tracker = self._trackers[state.key] = NameTracker()
        tracker.bind_arguments([(name, t, tag.node_id if tag is not None else None) for name, t, tag in tags])
        tracker.modules = modules
        self.snapshotter.bind_arguments(state.key, [(name, t, tag.serial) for name, t, tag in tags if tag is not None])

    def _local_trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        """The per-line trace function. An exception raised here would reach the
        user's program (and make Python stop tracing), so the tutor's own
        failures, a RecursionError at the user's recursion limit included, are
        recorded in ``internal_errors`` and that step is skipped."""
        if self.in_child:
            return None
        try:
            return self._trace_event(frame, event, arg)
        except Exception as exc:
            self._internal_error(frame, exc)
            self.observer.paused = False
            return self._local_trace

    def _finish_safely(self, frame: FrameType, state: _Frame, returning: Any = None) -> None:
        """``_finish``; a failure of the tutor's own is that step's, reported,
        and stepping goes on with the next statement (not stuck on this one,
        failing again at every line that follows)."""
        try:
            self._finish(frame, state, returning)
        except Exception as exc:
            self._internal_error(frame, exc)
            self.observer.paused = False

    def _internal_error(self, frame: FrameType, exc: Exception) -> None:
        try:
            text = f"{type(exc).__name__}: {exc}"
        except Exception:  # an exception whose text cannot be made
            text = type(exc).__name__
        # The step the tutor was following: the frame's pending statement
        # (a "line" event finishes the previous one before it begins its own).
        state = self._frames.get(_frame_key(frame))
        line = state.stmt.start if state is not None and state.stmt is not None else frame.f_lineno
        self.internal_errors.append(InternalError(frame.f_code.co_filename, line, text))

    def _trace_event(self, frame: FrameType, event: str, arg: Any) -> Any:
        state = self._frames.get(_frame_key(frame))
        if state is None:
            return None
        if event == "line":
            stmt = state.index.statement(frame.f_lineno)
            lasti = _landing(state.code_key, frame.f_lasti)
            if state.stmt is not None and stmt.start == state.stmt.start and (
                lasti > state.lasti or _looping_in_comprehension(state.code_key, lasti, stmt)
            ):
                state.lasti = lasti  # another line, or another round of a comprehension, of the same statement
                return self._local_trace
            previous = state.stmt
            if previous is not None:
                self._finish_safely(frame, state)
            state.leaving = previous is not None and stmt.start < previous.start <= stmt.with_end
            if state.is_module:
                self._withdrawn.clear()  # once a top-level statement is over, it is over
            self._begin(state, stmt, lasti, frame)
        elif event == "exception":
            exc, tb = arg[1], arg[2]
            if not isinstance(exc, _QUIET_EXCEPTIONS):
                state.raised = True
                if self._raised_here(frame, exc, tb):
                    state.exception = exc
        elif event == "return":
            exc = state.exception
            if exc is not None and not state.is_module and not self._is_user_file(_caller_file(frame)):
                # Leaving for library code, which may catch it (torch's own
                # control-flow exceptions do): report it where it comes back
                # into the user's code, if it does.
                self._withdrawn[id(exc)] = exc
                state.exception = None
            if state.stmt is not None:
                self._finish_safely(frame, state, returning=arg)
            if _suspended(frame):
                state.stmt = None  # the statement after the yield starts anew on resume
                self._leave_frame(state)
            else:
                if self._plain_calls is not None and not state.is_module and not frame.f_code.co_flags & _CO_SUSPENDABLE:
                    self._end_call(state, arg)
                self._end_frame(state)
        return self._local_trace

    def _raised_here(self, frame: FrameType, exc: BaseException, tb: Any) -> bool:
        """Is this 'exception' event where ``exc`` is to be reported? An
        exception is reported once, in the user frame it was raised in (or
        came from library code into): not again in the callers it unwinds
        through (a user frame deeper in its traceback reported it), nor when
        it passes through a finally block or a bare ``raise`` in the same
        frame (its traceback entry for this frame is from an earlier
        instruction). Nothing is kept of the exception: it is freed when
        python frees it."""
        withdrawn = self._withdrawn.pop(id(exc), None)
        if withdrawn is exc:
            return True  # back from library code that did not catch it
        if tb is None or tb.tb_frame is not frame or tb.tb_lasti != frame.f_lasti:
            return False
        deeper = tb.tb_next
        quiet = self._plain_calls.quiet if self._plain_calls is not None else ()
        while deeper is not None:
            code = deeper.tb_frame.f_code
            if code.co_filename in self._indexes and code not in quiet:  # (a quiet function's is reported here)
                return False
            deeper = deeper.tb_next
        return True

    def _end_call(self, state: _Frame, returning: Any) -> None:
        """A stepped call of a function returned: count it for plain_calls.
        A function made quiet for its settled calls is said to be, at the
        step of the line that called this call (see ``UnfollowedRecord``)."""
        plain_calls = self._plain_calls
        assert plain_calls is not None
        code = state.code
        observer = self.observer
        plain = (
            state.plain and state.exception is None and observer.calls == state.calls_at_start
            and not carries_tensors(returning)
        )
        settled = (
            not plain and not state.raised and len(self._steps) == state.shown_at_start
            and len(self.internal_errors) + len(observer.failures) == state.errors_at_start
            and state.tags_as is None and not state.observed and not state.code_key.globals_stored
        )
        running = lambda: any(other.code is code for other in self._stack if other is not state)  # noqa: E731
        if not plain_calls.ended(code, plain, running, settled):
            return
        self.tracer.quiet(code)
        caller = self._stack[-2] if len(self._stack) > 1 and self._stack[-1] is state else None
        if not plain and caller is not None and caller.stmt is not None:
            stepped = plain_calls.stepped_calls(code)
            told = UnfollowedRecord(caller.stmt.start, function_name(code), stepped, plain_calls.after)
            observer.add_record(told, caller.origin.exec_id)

    def _begin(self, state: _Frame, stmt: StatementInfo, lasti: int, frame: FrameType) -> None:
        fresh = state.stmt is None
        self._next_exec += 1
        state.stmt = stmt
        state.reads_before = self._reads_before(state, stmt, frame) if stmt.rereads else None
        state.lasti = lasti
        state.calls_at_begin = self.observer.calls - self.observer.reads
        state.origin = ag.Origin(
            self._next_exec, stmt.start, stmt.text, stmt, state.function, state.filename
        )
        if stmt.parts:
            parts = []
            for part in stmt.parts:
                self._next_exec += 1
                origin = ag.Origin(self._next_exec, part.start, part.text, part, state.function, state.filename)
                origin.step_id = state.origin.exec_id
                parts.append(origin)
            state.origin.parts = tuple(parts)
        # Counted per code object, not per call: a function called in a loop is
        # a loop body too. Code objects compare equal across files (the same
        # line typed in two shell inputs): the file is part of the key.
        key = (state.code_key, state.code.co_filename, stmt.start)
        if state.leaving:  # leaving a with block: the with statement is not run again
            count = self._counts.get(key, 1)
        else:
            count = self._counts[key] = self._counts.get(key, 0) + 1
        self.context.origin = state.origin
        if self.on_begin is not None:
            # Output printed before this step began: only possible when the
            # frame's previous step did not just end (its end takes the
            # output): the frame's first step, or its first on resuming.
            pending = self._take_output() if fresh else ""
            if pending or count <= self.max_iterations or self.announce_hidden:
                self._announce(state, stmt, count, pending)

    @staticmethod
    def _reads_before(state: _Frame, stmt: StatementInfo, frame: FrameType) -> dict[str, weakref.ref[torch.Tensor]]:
        """The tensors the names ``stmt`` reads and binds hold as it begins:
        ``x = self.relu(self.conv1(x))`` read the x it rebinds. (Looked at
        only with isinstance: what they are is read at the statement's end,
        hidden from the program's modes.)"""
        own = frame.f_globals if state.is_module else frame.f_locals
        found = {}
        for name in stmt.rereads:
            value = own.get(name)
            if value is None and not state.is_module:
                value = frame.f_globals.get(name)
            if isinstance(value, torch.Tensor):
                found[name] = weakref.ref(value)
        return found

    def _announce(self, state: _Frame, stmt: StatementInfo, iteration: int, pending: str) -> None:
        observer = self.observer
        observer.paused = True
        try:
            shown = iteration <= self.max_iterations
            unshown = self._unshown
            assert self.on_begin is not None
            self.on_begin(StepStart(
                index=state.origin.exec_id, line=stmt.start, source=stmt.text, function=state.function,
                file=state.filename, iteration=iteration, shown=shown, pending_output=pending,
                hidden=unshown.hidden if shown else 0,
                repeated=tuple((e, n) for e, n in unshown.repeated.values()) if shown else (),
                leaving=state.leaving,
            ))
        finally:
            observer.paused = False

    def _end_frame(self, state: _Frame) -> None:
        if state.observed:
            state.observed = False
            _stop_observing_again(self.observer)
        self._frames.pop(state.key, None)
        self._scope_types.pop(state.key, None)
        self._layouts.forget(state.key)
        if not state.is_module:
            self._forget_frame(state.key)
        self._leave_frame(state)

    def _forget_frame(self, key: int) -> None:
        """Drop what the tutor keeps of a function's frame (its key, an id, may come back)."""
        self._scope_types.pop(key, None)
        self._layouts.forget(key)
        self._trackers.pop(key, None)
        self._hidden_runs.pop(key, None)
        self.snapshotter.forget_frame(key)

    def _leave_frame(self, state: _Frame) -> None:
        """Off the stack (returned, or a generator suspended at a yield)."""
        if self._stack and self._stack[-1] is state:
            self._stack.pop()
        else:
            try:
                self._stack.remove(state)
            except ValueError:
                pass
        self.context.origin = self._stack[-1].origin if self._stack else ag.UNKNOWN_ORIGIN

    def _finish_all(self) -> None:
        """Frames still open when the run ends (an uncaught exception) finish now."""
        while self._stack:
            state = self._stack[-1]
            self._end_frame(state)

    def _namespace_of(self, frame: FrameType, state: _Frame, local: dict[str, Any], layout_key: Any) -> StepNames:
        """The names a step can see. In a function, its locals (``local``) hide
        globals of the same name; a hidden global tensor or module is still
        named, as ``global x``, so it is not mistaken for the local ``x``
        (the key stays English: a narration in another language says it as
        it shows it, see ``render.words.shown_name``)."""
        merged = dict(frame.f_globals)
        for name, value in local.items():
            hidden = merged.get(name)
            if hidden is not None and hidden is not value and isinstance(hidden, (torch.Tensor, torch.nn.Module)):
                merged[HIDDEN_GLOBAL + name] = hidden
        merged.update(local)
        return StepNames(merged, self._layouts, (HIDDEN_GLOBAL, layout_key))

    def _finish(self, frame: FrameType, state: _Frame, returning: Any = None) -> None:
        """The pending statement of ``frame`` completed: snapshot, detect, report."""
        stmt = state.stmt
        assert stmt is not None
        before, state.reads_before = state.reads_before, None
        observer = self.observer
        observer.paused = True
        quiet_reads = None
        try:
            iteration = self._counts.get((state.code_key, state.code.co_filename, stmt.start), 1)
            output = self._take_output()
            # Kept until the step is made: if the tutor fails on this step, the
            # output goes with the next one (see _take_output), never lost.
            self._orphan_output = output
            # (A function's f_locals is made anew on each read: read it once.)
            own = frame.f_globals if state.is_module else frame.f_locals
            # (A function's names at a line are much the same in every call:
            # its scans' layouts are kept by code and line, not by frame.)
            layout_key = state.key if state.is_module else (state.code_key, stmt.start)
            scope = StepNames(own, self._layouts, layout_key)
            if (
                iteration > self.max_iterations and not output and not carries_tensors(returning)
                and self._nothing_happened(own, scope, state)
            ):
                # A loop step that called no torch function, raised nothing and
                # bound no tensor: nothing to report, so nothing to compute.
                # (It may have bound a global to another tensor.)
                self._count_hidden(state.key, ())
                self._globals_after(state, frame)
                return
            self._scope_types.pop(state.key, None)
            # The tutor's own reads of tensors must not reach the user's modes.
            quiet_reads = ag.hidden_from_user_modes()
            quiet_reads.__enter__()
            namespace = scope if state.is_module else self._namespace_of(frame, state, own, layout_key)
            if isinstance(returning, torch.Tensor) and returning.grad_fn is not None:
                # Nodes only reachable from a return value belong to this line.
                self.registry.tag_graph(returning.grad_fn, state.tags_as or state.origin)
            self._record_const_reads(state.origin, stmt, namespace, before)
            if stmt.parts:
                self._assign_parts(state.origin, stmt, namespace)
            elif stmt.elements:
                self._assign_elements(state.origin, stmt, namespace, returning)
            self._record_value(state, stmt, namespace, returning)
            # Past its first iterations a loop step is shown only when it says
            # something new: look only at what decides that, and take the
            # whole snapshot once it is to be shown.
            likely_hidden = iteration > self.max_iterations
            tracker = self._trackers.get(state.key)
            records = observer.take_records(state.origin.exec_id)
            repeat = None
            # (The end of a with block has the with statement's line: its runs
            # are kept apart from the statement's.)
            runs_where = (state.code_key, stmt.start, _LEAVING) if state.leaving else (state.code_key, stmt.start)
            if (
                likely_hidden and self.pass_over_repeats and not output and state.exception is None
                and not stmt.parts and not observer.failures
            ):
                repeat = self._repeat(state, runs_where, tracker, scope, namespace, records, iteration)
                if repeat is True:
                    state.plain = False
                    if returning is not None:
                        self._hand_to_caller(records, returning, state)  # (as its detection would)
                    if records:  # (as a hidden step detected in full: a rebinding records no call)
                        self._grads_hidden(records)
                    self._remember_types(state, scope)
                    self._globals_after(state, frame)
                    return
            snapshot = self.snapshotter.take(
                namespace, origin=state.origin, frame_key=state.key, lite=likely_hidden, tags_as=state.tags_as,
                running=() if likely_hidden else self._running_lines(state, frame),
            )
            if tracker is None:
                tracker = self._trackers[state.key] = _new_tracker(state)
            if state.globals_before is not None:
                tracker.outer_at_call(state.globals_before)
                state.globals_before = None
            exception = state.exception
            events = detect_events(
                line=stmt.start,
                iteration=iteration,
                namespace=namespace,
                scope=scope,
                tracker=tracker,
                snapshot=snapshot,
                records=records,
                exception=exception,
                error_details=observer.error_details,
            )
            if returning is not None:
                self._hand_to_caller(records, returning, state)
            if exception is not None:
                observer.error_details.pop(id(exception), None)
            events = [_with_origins(e) for e in events]
            if events:
                state.plain = False
            if observer.failures:
                events = self._failed_observing(state, stmt.start, events)
            state.exception = None
            signatures = [_signature(e) for e in events]
            # (A step of the first iterations is shown whatever it says; what
            # it said counts as shown for the later ones.)
            where = (state.code_key, stmt.start)
            hidden = likely_hidden and not output and self._seen_before(where, events, signatures)
            if hidden:
                repeats = _repeats(events, signatures)
                self._count_hidden(state.key, repeats)
                if records:
                    self._grads_hidden(records)
                if isinstance(repeat, tuple):
                    runs = self._hidden_runs.setdefault(_runs_key(state), repeat_steps.FrameRuns())
                    runs.keep(runs_where, repeat, repeat_steps.remember(repeat, repeats))
                elif isinstance(repeat, repeat_steps.RebindingKey) and repeat.told_by(events):
                    runs = self._hidden_runs.setdefault(_runs_key(state), repeat_steps.FrameRuns())
                    calls = repeat_steps.remember(repeat.calls, ()) if repeat.calls is not None else None
                    runs.keep_rebinding(runs_where, repeat, repeat_steps.Rebinding(repeat.names, repeat.found, repeats, calls))
                self._remember_types(state, scope)
                return
            self._shown.setdefault(where, set()).update(signatures)
            self._shown_anywhere.update(signatures)
            if likely_hidden:
                snapshot = self.snapshotter.take(
                    namespace, origin=state.origin, frame_key=state.key, names_current=True, tags_as=state.tags_as,
                    running=self._running_lines(state, frame),
                )
                events = with_growth_sizes(events, snapshot)
            grad_changes = self._grad_changes(namespace, snapshot, records)
            self._orphan_output = ""
            # The steps hidden since the last step shown, in any frame (a
            # caller's before a step of its call, a call's last ones before
            # its caller's next): they ran between the two.
            unshown, self._unshown = self._unshown, _Unshown()
            step = Step(
                index=state.origin.exec_id,
                line=stmt.start,
                source=stmt.text,
                snapshot=snapshot,
                events=tuple(events),
                output=output,
                function=state.function,
                file=state.filename,
                iteration=iteration,
                traceback=None,
                extra=(
                    {"hidden": unshown.hidden, "repeated": tuple((e, n) for e, n in unshown.repeated.values())}
                    if unshown.hidden else {}
                ),
                grad_changes=grad_changes,
                leaving=state.leaving,
                function_line=state.code.co_firstlineno,
                call=state.call,
            )
            self._remember_types(state, scope)
            self._steps.append(step)
            if self.on_step is not None:
                self.on_step(step)
        finally:
            if quiet_reads is not None:
                quiet_reads.__exit__(None, None, None)
            observer.paused = False

    def _running_lines(self, state: _Frame, frame: FrameType) -> set[int]:
        """The steps (and their statements' parts) of the lines still running
        in the frames below ``state``'s (``frame``'s): this step is in a call
        they made. What they read as const inputs is recorded now (see
        ``_consts_read_so_far``), for the picture drawn inside the call."""
        running: set[int] = set()
        waiting: dict[int, _Frame] = {}
        for other in self._stack:
            if other is not state and other.stmt is not None:
                running.add(other.origin.exec_id)
                running.update(part.exec_id for part in other.origin.parts)
                if not other.origin.const_reads and not other.stmt.parts:
                    waiting[other.key] = other
        below = frame.f_back
        while below is not None and waiting:
            found = waiting.pop(_frame_key(below), None)
            if found is not None and found.code is below.f_code and found.stmt is not None:
                self._consts_read_so_far(found, below)
            below = below.f_back
        return running

    def _consts_read_so_far(self, state: _Frame, frame: FrameType) -> None:
        """The const inputs the statement still running in ``frame`` read
        before the call it is in (see ``_record_const_reads``)."""
        assert state.stmt is not None
        names = frame.f_globals if state.is_module else ChainMap(frame.f_locals, frame.f_globals)
        self._record_const_reads(state.origin, state.stmt, names, so_far=True)

    def _repeat(
        self, state: _Frame, where: tuple[Any, ...], tracker: NameTracker | None, scope: StepNames,
        namespace: Mapping[str, Any], records: list[Any], iteration: int,
    ) -> Any:
        """Is this hidden-looking step a repeat of a hidden run of its
        statement (see ``repeat_steps``)? True: it was counted as one. Else the
        fingerprint to keep should the step be hidden (None: not one to keep).
        ``where``: its code and line, and for the end of a with block, a mark
        of its own."""
        runs = self._hidden_runs.get(_runs_key(state))
        rebinding_looked = False
        if runs is not None and not runs.worth_looking(where):
            found = self._rebinding_repeat(state, where, tracker, scope, namespace, iteration, records)
            if found is not None:
                return found
            # (Not a rebinding: `tensor[i][j] = 1` in a function whose first
            # runs of it in each call met new names. Looked at as any step.)
            rebinding_looked = True
        tagged = repeat_steps.names_as_bound(tracker, scope, self.registry)
        if tagged is None or not self.snapshotter.names_unchanged(
            namespace, state.key, tagged if namespace is scope else None,
        ):
            self._hidden_runs.setdefault(_runs_key(state), repeat_steps.FrameRuns()).rebound(where)
            if rebinding_looked:
                return None
            return self._rebinding_repeat(state, where, tracker, scope, namespace, iteration, records)
        found = repeat_steps.fingerprint(records, namespace)
        last = runs.kept(where, found) if runs is not None and found is not None else None
        if (
            last is not None and found is not None and last.repeated_by(*found)
            # (each event already counted since the last shown step, with an
            # example of its own: only the counts go up)
            and all(sig in self._unshown.repeated for sig, _ in last.repeats)
        ):
            self._count_hidden(state.key, last.repeats)
            return True
        return found

    def _rebinding_repeat(
        self, state: _Frame, where: tuple[Any, ...], tracker: NameTracker | None, scope: StepNames,
        namespace: Mapping[str, Any], iteration: int, records: list[Any],
    ) -> Any:
        """Is this step a repeat of a hidden run of its statement that only
        bound names (anew, or for the first time: see ``repeat_steps``), as
        this one did, and made calls the observer recorded with the
        fingerprint of that run's, if any? True: it was counted as one, and
        what a lite snapshot and the detection would leave is left. Else
        what it found (a ``RebindingKey``), kept with its events should it
        be hidden; None when it is not such a step. A function's step is
        one when its code binds no global (``global x``, detected in
        full): its own names (``scope``) are the ones bound anew, and what
        it sees of its globals (``namespace``: their graphs, names and
        modules) is looked at as the detection looks at it. Its runs are
        kept by code, not by call: a function called in a loop repeats its
        steps in every call."""
        if state.tags_as is not None or not state.is_module and state.code_key.globals_stored:
            return None
        found = repeat_steps.rebound_names(tracker, scope, self.registry)
        if found is None or tracker is None:
            return None
        calls = repeat_steps.fingerprint(records, namespace) if records else None
        if records and calls is None:
            return None  # (a record it cannot vouch for)
        rebound = found.rebound
        roots, named, names_of = found.roots, found.named, found.names_of
        if namespace is not scope:
            seen = repeat_steps.names_seen(namespace, self.registry)
            if seen is None:
                return None
            roots, named, names_of = seen
        reach = ag.Reach(roots, self.registry)
        previous_run = tracker.after_statement.get(where[1], {})
        params_of = params_once(namespace)
        names: list[str] = []
        outcome: list[tuple[bool | None, bool]] = []
        for name, _, old, tag in rebound:
            names.append(name)
            if old is None:
                outcome.append((None, False))  # (bound for the first time: told as bound)
                continue
            node = tag.node_id if tag is not None else None
            in_graph = old_still_in_graph(old, named, reach, tracker, params_of)
            growing = node is not None and node != old.node and grew(name, node, iteration, previous_run, reach)
            outcome.append((in_graph, growing))
        if any(grew(name, tag.node_id, iteration, previous_run, reach) for name, _, tag in found.tagged):
            return None  # (a guard: a tensor without a graph has none to grow)
        key = repeat_steps.RebindingKey(tuple(names), tuple(outcome), calls)
        runs = self._hidden_runs.get(_runs_key(state))
        kept = runs.rebinding(where, key) if runs is not None else None
        repeated = self._unshown.repeated
        if (
            kept is None or not kept.repeated_by(key.names, key.found, calls)
            or not all(sig in repeated for sig, _ in kept.repeats)
        ):
            return key
        # A repeat: the names as the detection leaves them (each one's tensor
        # and node, the node each one bound anew holds after this statement),
        # and the names nodes lost, as a lite snapshot leaves them.
        self.snapshotter.follow_names(namespace, names_of, state.key)
        now = {name: (t, tag.node_id if tag is not None else None) for name, t, _, tag in rebound}
        now.update((name, (t, tag.node_id)) for name, t, tag in found.tagged)
        tracker.bind_anew(where[1], found.order, now)
        if namespace is not scope:
            note_outer(tracker, namespace, scope)
        self._count_hidden(state.key, kept.repeats)
        return True

    def _count_hidden(self, frame_key: int, repeats: tuple[tuple[tuple[Any, ...], Event], ...]) -> None:
        """A hidden step of the frame ``frame_key``: counted, with its events
        that a note says happened again (``repeats``: see ``_repeats``); its
        next snapshot knows steps ran unseen."""
        self._unshown.hidden += 1
        self._hidden_total += 1
        self.snapshotter.hidden_step(frame_key)
        for signature, event in repeats:
            _count(self._unshown.repeated, signature, event)
            _count(self._repeated_total, signature, event)

    def _failed_observing(self, state: _Frame, line: int, events: list[Event]) -> list[Event]:
        """The observer failed during this step (see ``CallObserver._recover``):
        the failure is reported with the step, whose events, incomplete, are dropped."""
        mine = [exc for exec_id, exc in self.observer.failures if exec_id == state.origin.exec_id]
        if not mine:
            return events
        self.observer.failures = [f for f in self.observer.failures if f[0] != state.origin.exec_id]
        failure = f"{type(mine[0]).__name__}: {exception_text(mine[0])}"
        self.internal_errors.append(InternalError(state.filename, line, failure))
        return []

    def _nothing_happened(self, own: Mapping[str, Any], scope: StepNames, state: _Frame) -> bool:
        """Did the statement leave everything the tutor reports as it was? No
        torch function called but ones that only read a tensor (x.shape) or
        switch grad mode (``with torch.no_grad():``), so no graph, gradient
        or record changed; no exception; every tensor name of the frame
        bound as before."""
        if (
            state.exception is not None or self.observer.calls - self.observer.reads != state.calls_at_begin
            or state.origin.exec_id in self.observer._record_execs
        ):
            return False
        tracker = self._trackers.get(state.key)
        bound = tracker.bound if tracker is not None else {}
        assert state.stmt is not None
        for name in state.stmt.targets:
            # What the statement binds first (``for p in parameters:``): a
            # tensor name bound anew, or a tensor bound to a new name, is
            # found here without looking at every name.
            old = bound.get(name)
            value = own.get(name)
            if value is not (old.ref() if old is not None else None) and (
                old is not None or isinstance(value, torch.Tensor)
            ):
                return False
        types = self._scope_types.get(state.key)
        if types is not None:
            # The same names, each holding a value of the type it held when
            # last looked at with nothing changed: the tensor names are the
            # ones bound, and each must still hold its tensor.
            if (
                len(types[0]) == len(own) and all(own.get(name) is old.ref() for name, old in bound.items())
                and scope.shape() == types
                and (tracker is None or all(own.get(name) is old[0]() for name, old in tracker.modules.items()))
            ):
                return True
            self._scope_types.pop(state.key, None)
        seen = 0
        with ag.hidden_from_user_modes():  # (the scan reads the tensors: the program's modes must not see it)
            tensors = scope.scan().tensors
        for name, value in tensors:
            old = bound.get(name)
            if old is None or old.ref() is not value:
                return False
            seen += 1
        if seen != len(bound) or not repeat_steps.modules_as_bound(tracker, scope):
            return False
        if tracker is None:
            self._trackers[state.key] = _new_tracker(state)  # a new frame with no tensors: nothing bound yet
        self._remember_types(state, scope)
        return True

    def _remember_types(self, state: _Frame, scope: StepNames) -> None:
        """The frame's names and the type of each, once its tracker knows
        every tensor name as it is now: a next step that leaves them so
        changed nothing the tutor reports (see ``_nothing_happened``)."""
        self._scope_types[state.key] = scope.shape()

    def _grad_changes(
        self, namespace: Mapping[str, Any], snapshot: Snapshot, records: list[Any]
    ) -> tuple[tuple[str, Any, Any], ...]:
        """The .grad values this step changed, of the tensors it can name.
        Followed per tensor, not per name: a name bound to another tensor
        (for p in model.parameters()) is not a change of its gradient."""
        if self.observer.backwards_running:
            # A step of a hook a backward calls: what the backward filled so
            # far is told when the backward ends, as what its line did.
            return ()
        return tuple(self._grads.shown(scan_names(namespace).tensors, dict(snapshot.grads), records))

    def _grads_hidden(self, records: list[Any]) -> None:
        """A hidden step's gradients (see ``GradsSeen.hidden``); not within a
        backward, whose line tells what it changed (see ``_grad_changes``)."""
        if not self.observer.backwards_running:
            self._grads.hidden(records)

    def _hand_to_caller(self, records: list[Any], returning: Any, state: _Frame) -> None:
        """A function returned a tensor it made without a graph (under
        @torch.no_grad(), or by detach()): the caller's step names it, so the
        caller's step reports it."""
        returned = returning if isinstance(returning, (tuple, list)) else (returning,)
        ids = {id(t) for t in returned if isinstance(t, torch.Tensor)}
        if not ids:
            return
        stack = self._stack
        caller = stack[-2] if len(stack) > 1 and stack[-1] is state else None
        for rec in records:
            if isinstance(rec, DetachRecord) and id(rec.ref()) in ids:
                self.observer.add_record(replace(rec, line=None), caller.origin.exec_id if caller is not None else 0)

    def _seen_before(self, where: tuple[Any, int], events: list[Event], signatures: list[tuple[Any, ...]]) -> bool:
        """Past the first iterations, a loop step is hidden when it says nothing
        new: the same kinds for the same names as a step of this line already
        shown (a growing graph is reported, not reported again every
        iteration), or routine events (a backward, an in-place change) shown
        somewhere already: a hidden step's note says its events were "shown
        above", which must be so. Errors are always shown.
        ``signatures``: the events' (``_signature``)."""
        shown = self._shown.get(where, ())
        for event, signature in zip(events, signatures):
            if event.kind == "error":
                return False
            if is_routine(event):
                if _worth_repeating(event) and signature not in self._shown_anywhere:
                    return False
            elif signature not in shown:
                return False
        return True

    def _record_const_reads(
        self, origin: ag.Origin, stmt: StatementInfo, namespace: Mapping[str, Any],
        before: Mapping[str, weakref.ref[torch.Tensor]] | None = None, *, so_far: bool = False,
    ) -> None:
        """The named tensors without requires_grad the statement read: its const
        inputs. Not one it only handed to a function of the program's that
        read it itself: it is drawn going into that function's line (``loss
        = model(x).sum()``, whose ``forward`` computes ``self.w * x``, does
        not read x again, ``(model(x) * x).sum()`` does; a step that began
        after this statement is a step of a call it made).

        Each const a statement read keeps the name it read it by, and so does
        each leaf a function's statement read: once no name holds it, it is
        drawn by that name, and the function's (see Node.local_of), or for
        the program's own top level as ``h (old)`` (the first ``h`` of ``h =
        tanh(h @ W)``).

        ``so_far``: the statement is still running (a step of a call it made
        is shown): the consts it read before that call, but those it hands to
        a function of the program's (that function may read them itself: the
        statement's end decides), and nothing kept for the steps after.

        ``before``: the tensors the names it reads and binds held as it began
        (``_reads_before``): those are what it read, not what it bound."""
        consts = []
        read_at = self._const_read_at
        in_function = origin.function != "<module>"
        for name in stmt.reads:
            if so_far and name in stmt.passed:
                continue
            if before is not None and name in stmt.rereads:
                ref = before.get(name)
                value = ref() if ref is not None else None
            else:
                value = namespace.get(name)
            if not isinstance(value, torch.Tensor):
                continue
            if not value.requires_grad:
                tag = self.registry.leaf_tag(value)
                if so_far or name not in stmt.passed or read_at.get(tag.serial, 0) <= origin.exec_id:
                    consts.append(tag)
                    into = origin.const_inputs.get(id(value)) if origin.const_inputs is not None else None
                    if into is not None:
                        origin.const_into[tag.node_id] = into
                tag.read_as = (name, origin.function)
            elif in_function and value.grad_fn is None:
                known = self.registry.known_leaf(value)  # (tagged if a graph of the statement uses it)
                if known is not None:
                    known.read_as = (name, origin.function)
        origin.const_reads = tuple(consts)
        if so_far:
            return
        origin.const_inputs = None  # (ids of tensors that may die now: what they told is in const_into)
        if len(read_at) > 100_000:
            read_at.clear()  # (forgetting only risks drawing a const's edge twice)
        for tag in consts:
            read_at[tag.serial] = origin.exec_id

    def _assign_parts(self, origin: ag.Origin, stmt: StatementInfo, namespace: Mapping[str, Any]) -> None:
        """A line of several statements: each gets the nodes it made, found from
        the tensors its targets name, so each is labelled by its own code."""
        outputs = []
        for part_origin, part in zip(origin.parts, stmt.parts):
            self._record_const_reads(part_origin, part, namespace)
            tensors = [namespace[n] for n in part.targets if isinstance(namespace.get(n), torch.Tensor)]
            outputs.append((part_origin, tensors))
        self.registry.assign_parts(origin, outputs)

    def _record_value(self, state: _Frame, stmt: StatementInfo, namespace: Mapping[str, Any], returning: Any) -> None:
        """The statement ended: what it bound its targets to, or returned, is
        its value (``Origin.value``); each statement of a ``;`` line has its
        own. What it made on the way there is not: ``self.ln2(x)``, which
        ``x = x + self.ffwd(self.ln2(x))`` handed to ``ffwd``, or the ``c + d
        * x`` of ``a + b * P3(c + d * x)``, which P3's ``backward`` calls
        ``input``."""
        origin = state.origin
        tags_as = state.tags_as or origin
        if state.leaving:
            # The end of a with block, left by a return inside it (``with
            # saved_tensors_hooks(...): return self.module(x)``): the value
            # returned is that return's.
            ended = state.ended
            if returning is not None and ended is not None and ended.value is None and not ended.parts:
                ended.value = self._nodes_of([returning], tags_as)
            return
        state.ended = origin
        if stmt.parts:
            for part_origin, part in zip(origin.parts, stmt.parts):
                part_origin.value = self._nodes_of(self._bound_to(namespace, part.targets), tags_as)
            return
        if stmt.elements:
            return  # (each element's value is kept by _assign_elements)
        origin.value = self._nodes_of([returning, *self._bound_to(namespace, stmt.targets)], tags_as)

    @staticmethod
    def _bound_to(namespace: Mapping[str, Any], targets: tuple[str, ...]) -> list[Any]:
        """The tensors, tuples and lists ``targets`` hold, in the order of the
        names (the order a snapshot meets them in)."""
        if not targets:
            return []
        scan = scan_names(namespace)
        return [value for name, value in (*scan.tensors, *scan.sequences) if name in targets]

    def _nodes_of(self, values: list[Any], origin: ag.Origin) -> tuple[str, ...] | None:
        """The nodes of the tensors with a graph among ``values``, in tuples
        and lists too (``hidden`` of ``output, hidden = self.rnn(emb,
        hidden)``), tagged as a snapshot would tag them; None when there is
        none, or more than the tutor looks at (the value is then not known).
        (Tuples and lists are read with their own types' methods: a subclass's
        code is not run.)"""
        nodes: list[str] = []
        todo = values[::-1]  # (taken in order: untagged nodes are tagged in the order they are met)
        looked = 0
        while todo:
            value = todo.pop()
            if isinstance(value, torch.Tensor):
                if value.grad_fn is not None:
                    tag = self.registry.tag_graph(value.grad_fn, origin)
                    if tag is not None:
                        nodes.append(tag.node_id)
            elif isinstance(value, (tuple, list)):
                items = list(tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value))
                looked += len(items)
                if looked > _VALUE_ITEMS:
                    return None
                todo.extend(reversed(items))
        return tuple(dict.fromkeys(nodes)) or None

    def _assign_elements(
        self, origin: ag.Origin, stmt: StatementInfo, namespace: Mapping[str, Any], returning: Any
    ) -> None:
        """``return out, hidden`` or ``a, b = x * 2, y * 3``: each tensor of the
        tuple gets the nodes it needed, labelled by its own expression."""
        values: list[Any]
        if stmt.elements[0][1] is None:  # a return
            values = list(returning) if isinstance(returning, tuple) and len(returning) == len(stmt.elements) else []
        else:
            values = [namespace.get(target) if target else None for _, target in stmt.elements]
        outputs = []
        for (label, _), value in zip(stmt.elements, values):
            if isinstance(value, torch.Tensor):
                self._next_exec += 1
                part = ag.Origin(self._next_exec, stmt.start, origin.source, label, origin.function, origin.filename)
                part.step_id = origin.exec_id
                outputs.append((part, [value]))
                known = self.registry.tag_of(value.grad_fn) if value.grad_fn is not None else None
                part.value = (known.node_id,) if known is not None else None
        if outputs:
            self.registry.assign_parts(origin, outputs)

    def _take_output(self) -> str:
        orphan, self._orphan_output = self._orphan_output, ""
        return orphan + (self._out.take() if self._out is not None else "")

    def write_through(self, text: str) -> bool:
        """Write to the real standard output while output is being captured;
        False when it is not (then write to sys.stdout as usual)."""
        if self._out is None:
            return False
        self._out.write_through(text)
        return True


# The frames the autograd engine calls the user's code from during a
# backward: a custom Function's backward, a tensor's hooks.
_CALLED_BY_AUTOGRAD = frozenset(
    f.__code__ for f in (
        torch.autograd.function.BackwardCFunction.apply,
        getattr(torch.autograd.graph, "_engine_run_backward", None),
    ) if f is not None
)


# The items of tuples and lists a statement's value is looked for in.
_VALUE_ITEMS = 256

# The frame the user's jvp of a custom Function is called from.
_CALLED_FOR_JVP = frozenset(
    f.__code__ for f in (getattr(torch.autograd.function.BackwardCFunction, "apply_jvp", None),) if f is not None
)


def _global_trace_of(engine: Engine) -> Callable[[FrameType, str, Any], Any]:
    """The engine's global trace function. Python calls it for every Python
    call the program makes, library code's included (each of torch's, and
    of the mode torch calls for each torch function): only a call in one of
    the user's files goes on to ``Engine._global_trace``. A closure, so that
    a library call costs one dict lookup and no lookup of a method or an
    attribute of the engine's (about a seventh less per call event)."""
    indexes = engine._indexes
    user_call = engine._global_trace

    def global_trace(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename not in indexes:
            return None
        return user_call(frame, event, arg)

    return global_trace


def _mode_stack() -> list[Any]:
    return [torch._C._get_function_stack_at(i) for i in range(torch._C._len_torch_function_stack())]


def _put_under(mode: Any) -> None:
    """Put ``mode`` on the torch function mode stack under the modes on it
    already: a mode the program left on (``log.__enter__()`` in an earlier
    shell input) sees the program's calls first, as it would under python,
    and none of the reads ``mode`` makes while it handles one."""
    others = []
    while torch._C._len_torch_function_stack():
        others.append(torch._C._pop_torch_function_stack())
    mode.__enter__()
    for other in reversed(others):
        torch._C._push_on_torch_function_stack(other)


def _take_off(mode: Any) -> None:
    """Take ``mode`` off the torch function mode stack wherever it is: the
    modes the program put on above it and left on stay on, in their order."""
    above = []
    while torch._C._len_torch_function_stack():
        top = torch._C._pop_torch_function_stack()
        if top is mode:
            break
        above.append(top)
    for other in reversed(above):
        torch._C._push_on_torch_function_stack(other)


def _observe_again(observer: Any) -> bool:
    """Put ``observer``'s mode back on, if torch took it off; True if it did."""
    if any(mode is observer for mode in _mode_stack()):
        return False
    observer.__enter__()
    observer.in_backward += 1
    return True


def _stop_observing_again(observer: Any) -> None:
    """Take ``observer``'s mode off again (only if it is on top: what the
    program put on since is the program's)."""
    observer.in_backward -= 1
    stack = _mode_stack()
    if stack and stack[-1] is observer:
        observer.__exit__(None, None, None)


def _count(into: dict[tuple[Any, ...], list[Any]], signature: tuple[Any, ...], event: Event) -> None:
    """Count ``event`` once more in ``into`` (signature -> [an example event, count])."""
    entry = into.get(signature)
    if entry is None:
        into[signature] = [event, 1]
    else:
        entry[1] += 1


def _repeats(events: list[Event], signatures: list[tuple[Any, ...]]) -> tuple[tuple[tuple[Any, ...], Event], ...]:
    """(signature, event) of each of a hidden step's events that a note says
    happened again (see ``_worth_repeating``)."""
    return tuple((signature, event) for event, signature in zip(events, signatures) if _worth_repeating(event))


def _worth_repeating(event: Event) -> bool:
    """Events of hidden steps that a note says happened again: not a name
    bound or moved on that leaves nothing behind."""
    if event.kind == "name-bound":
        return False
    return not (event.kind == "name-rebound" and not event.get("old_in_graph"))


def _signature(event: Event) -> tuple[Any, ...]:
    """What makes two events the same thing happening again: a note counts
    them under one title, so all that title says is in it (a backward's
    root, API and freed nodes; how, by which op and on how many parameters
    a tensor changed), and nothing that moves at every iteration (a
    version, a graph's size)."""
    return (event.kind,) + tuple((key, _hashable(value)) for key, value in event.fields if key not in _VOLATILE)


# Event fields that change at every iteration of the same thing happening (a
# version, a graph's size, the nodes a name points at, where a node was made),
# or that no title says (what autograd.grad's result was named, what a tensor
# was detached from, which library function did it): two events the same
# but for those read the same in a note, and are counted as one.
_VOLATILE = frozenset({"version", "nodes", "times", "node", "old_node", "node_line", "node_file", "node_source",
                       "message", "result", "source", "via"})


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _with_origins(event: Event) -> Event:
    """Replace the statement executions an event refers to (``node_origin``...)
    with plain data: ``node_line``, ``node_file`` and ``node_source``."""
    if not any(key.endswith("_origin") for key, _ in event.fields):
        return event
    fields: list[tuple[str, Any]] = []
    for key, value in event.fields:
        if not key.endswith("_origin"):
            fields.append((key, value))
        elif value is not None:
            stem = key[: -len("_origin")]
            fields += [(f"{stem}_line", value.line), (f"{stem}_file", value.filename), (f"{stem}_source", value.source)]
    return Event(event.kind, event.line, tuple(fields))


def _at_user_location(show: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``warnings.showwarning`` so a warning torch raises while the observer
    calls an op is shown at the user's line, as it would be without the tutor."""

    def showwarning(message: Any, category: Any, filename: str, lineno: int, *rest: Any, **kw: Any) -> Any:
        if is_tutor_file(filename):
            frame = sys._getframe(1)
            while frame is not None and (
                is_tutor_file(frame.f_code.co_filename) or frame.f_code.co_filename.endswith(OVERRIDES_FILE)
                or frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename.endswith("warnings.py")
            ):
                frame = frame.f_back  # type: ignore[assignment]
            if frame is not None:
                filename, lineno = frame.f_code.co_filename, frame.f_lineno
                if len(rest) >= 2:
                    rest = (rest[0], None, *rest[2:])  # the line: read again from the new place
                kw.pop("line", None)
        return show(message, category, filename, lineno, *rest, **kw)

    showwarning._gradtutor = True  # type: ignore[attr-defined]
    return showwarning


def _caller_file(frame: FrameType) -> str:
    """The file of the code that called ``frame``, past the tutor's own frames."""
    caller = frame.f_back
    while caller is not None and (is_tutor_file(caller.f_code.co_filename) or caller.f_code.co_filename.endswith(OVERRIDES_FILE)):
        caller = caller.f_back
    return caller.f_code.co_filename if caller is not None else ""


def _suspended(frame: FrameType) -> bool:
    """Is this "return" a generator or coroutine pausing at a yield (or await)?

    Where ``f_lasti`` points then differs by version: at the YIELD_VALUE
    (3.11, 3.12); at the RESUME after it (3.13); in 3.10, ``yield from`` and
    ``await`` pause with ``f_lasti`` on the instruction before YIELD_FROM.
    """
    if not frame.f_code.co_flags & _CO_SUSPENDABLE:
        return False
    code = frame.f_code.co_code
    lasti = frame.f_lasti
    if not 0 <= lasti < len(code):
        return False
    op = code[lasti]
    if op == _YIELD_VALUE:
        return True
    if op == _RESUME:
        return lasti >= 2 and code[lasti - 2] == _YIELD_VALUE
    return _YIELD_FROM is not None and lasti + 2 < len(code) and code[lasti + 2] == _YIELD_FROM


_BACKWARD_JUMPS = {dis.opmap[name] for name in ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT") if name in dis.opmap}


def _landing(key: _CodeKey, lasti: int) -> int:
    """Where a "line" event puts the frame. Python 3.13 reports the line event
    of a backward jump at the jump itself, earlier versions at its target:
    the target, in both cases, is where the frame goes on."""
    code = key.code
    raw = code.co_code
    if not _BACKWARD_JUMPS or not 0 <= lasti < len(raw) or raw[lasti] not in _BACKWARD_JUMPS:
        return lasti
    targets = key.jumps
    if targets is None:
        targets = key.jumps = {
            ins.offset: ins.argval for ins in dis.get_instructions(code)
            if ins.opcode in _BACKWARD_JUMPS and isinstance(ins.argval, int)
        }
    return targets.get(lasti, lasti)


def _looping_in_comprehension(key: _CodeKey, lasti: int, stmt: StatementInfo) -> bool:
    """Did a jump back land inside one of the statement's own comprehensions
    (inlined into the frame from Python 3.12 on)? Then the statement is
    still running, not running again."""
    if not stmt.comprehensions or sys.version_info < (3, 12):
        return False
    positions = key.positions
    if positions is None:
        positions = key.positions = [(line, col) for line, _, col, _ in key.code.co_positions()]
    index = lasti // 2
    if not 0 <= index < len(positions):
        return False
    line, column = positions[index]
    return line is not None and column is not None and stmt.in_comprehension(line, column)


def _new_tracker(state: _Frame) -> NameTracker:
    """The tracker of a frame none of whose steps was looked at yet. A
    function's own names held, before its first step, only its arguments
    and closure variables, none of them a tensor (``_bind_arguments`` makes
    the tracker of a function that has one): known, not unknown as a
    module's names are."""
    tracker = NameTracker()
    tracker.seen = not state.is_module
    return tracker


_GLOBAL_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})


def _globals_stored_by(code: CodeType) -> tuple[str, ...]:
    """The globals a function binds or deletes (``global x``), by name: the
    only ones its own steps can bind to another tensor."""
    return tuple(dict.fromkeys(i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_STORES))


def _tensors_held(names: Mapping[str, Any], among: tuple[str, ...]) -> dict[str, weakref.ref[torch.Tensor] | None]:
    """The tensor each of the names ``among`` holds, weakly; None for a
    name that holds something else or is not bound."""
    held: dict[str, weakref.ref[torch.Tensor] | None] = {}
    for name in among:
        value = names.get(name)
        held[name] = weakref.ref(value) if isinstance(value, torch.Tensor) else None
    return held


def _steppable(code: CodeType) -> bool:
    """Module code and real functions; not class bodies, lambdas or comprehensions."""
    if code.co_name == "<module>":
        return True
    return bool(code.co_flags & _CO_OPTIMIZED) and not code.co_name.startswith("<")


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)  # sys.exit(True) exits with 1
    print(code, file=sys.stderr)
    return 1
