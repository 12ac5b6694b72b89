"""``gradtutor explain FILE``: run a script like python would, narrating each step."""

from __future__ import annotations

import argparse
import atexit
import importlib.machinery
import io
import os
import sys
import threading
import tokenize
import traceback
import types
from contextlib import contextmanager
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn

from gradtutor.environment import Environment, make_console
from gradtutor.errors import ExitStatus, UsageError
from gradtutor.swap import swapped
from gradtutor.model import LEVEL_OPS, LEVEL_STATEMENTS
from gradtutor.transcript import Listing

if TYPE_CHECKING:
    from gradtutor.engine import RunResult


class ProgramSyntaxError(UsageError):
    """The script does not compile. Shown as python shows it; exit status 1 as python's."""

    exit_status = ExitStatus.ERROR


STDIN = "-"  # as for python: the program comes from standard input
STDIN_NAME = "<stdin>"


def read_program(path: str) -> tuple[str, CodeType]:
    """Read and compile a script (``-``: standard input, as ``python -``
    reads it), or raise a UsageError that says what is wrong."""
    if path == STDIN:
        return _compile(_decode(sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read(), path),
                        STDIN_NAME, path)
    if not os.path.exists(path):
        raise UsageError.said("error_no_file", path=path)
    if os.path.isdir(path):
        raise UsageError.said("error_directory", path=path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise UsageError.said("error_open", path=path, reason=exc.strerror) from None
    # python gives __main__ its absolute path (tracebacks and __file__ show it).
    return _compile(_decode(raw, path), os.path.abspath(path), path)


def _decode(raw: bytes | str, path: str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        source = raw.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise UsageError.said("error_not_source", path=path, error=exc) from None
    return source[1:] if source.startswith("\ufeff") else source


def _compile(source: str, filename: str, path: str) -> tuple[str, CodeType]:
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        import traceback

        text = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
        raise ProgramSyntaxError(f"'{path}' has a syntax error:\n{text}") from None
    except (RecursionError, MemoryError) as exc:
        # Nested too deeply for the compiler: python's own words, exit 1.
        raise ProgramSyntaxError(f"'{path}' cannot be compiled:\n{type(exc).__name__}: {exc}") from None
    return source, code


@contextmanager
def _as_main_program(path: str, args: list[str], module: types.ModuleType) -> Iterator[None]:
    """``sys.argv``, ``sys.path[0]`` and ``sys.modules["__main__"]`` as ``python
    FILE ARGS`` sets them (pickle finds classes the script defines); restored after."""
    old_argv, old_path0 = sys.argv, sys.path[0] if sys.path else None
    old_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    sys.argv = [path, *args]
    folder = "" if path == STDIN else os.path.dirname(os.path.abspath(path))
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    try:
        yield
    finally:
        sys.argv = old_argv
        if old_path0 is not None:
            sys.path[0] = old_path0
        if old_main is not None:
            sys.modules["__main__"] = old_main


def run_script(
    path: str, source: str, code: CodeType, args: list[str], *, max_iterations: int = 3, **engine_options: Any
) -> RunResult:
    """Run a script as ``python PATH ARGS`` would, in a fresh ``__main__``
    namespace, stepping through it. ``engine_options`` go to the Engine
    (``on_step``, ``capture_output``...); ``narration_stream``, if given, is
    pointed at the real standard output while the run captures the program's."""
    from gradtutor.engine import Engine

    module = types.ModuleType("__main__")
    # As python sets up a script's __main__: a source loader and no spec.
    # (Python 3.12's warnings machinery refuses module globals whose
    # __loader__ and __spec__ are both None.)
    loader: Any = importlib.machinery.SourceFileLoader("__main__", code.co_filename)
    if path == STDIN:
        loader = importlib.machinery.BuiltinImporter  # what python - gives it
    module.__dict__.update(
        __file__=code.co_filename, __cached__=None, __loader__=loader, __spec__=None, __annotations__={}
    )
    stream = engine_options.pop("narration_stream", None)
    on_os_exit = engine_options.pop("on_os_exit", None)
    engine_options.setdefault("unstep_plain_functions", True)
    engine_options.setdefault("describe_names", False)  # (no :names to say them in)
    engine = Engine(module.__dict__, max_iterations=max_iterations, **engine_options)
    engine.add_source(code.co_filename, source)
    if stream is not None:
        stream.write_through = engine.write_through
    with _as_main_program(path, args, module), _os_exit_reported(engine, on_os_exit), \
            _ProgramExit().watching() as ending:
        # Ctrl-C, or a KeyboardInterrupt the program raises, ends the program
        # as it ends it under python: with its traceback and exit status 130.
        return engine.run_code(code, interrupt_raises=False, ending=ending)


@contextmanager
def _os_exit_reported(engine: Any, report: Callable[[RunResult], Any] | None) -> Iterator[None]:
    """While the program runs, ``os._exit`` first closes the run and hands it
    to ``report`` (which writes what the tutor knows: the JSON document, the
    end of the narration), then ends the process as the program asked. The
    program's finally blocks and atexit handlers do not run, as under python.
    A forked child (a DataLoader worker) exits untouched."""
    real_exit = os._exit

    def exit_now(status: int) -> NoReturn:
        if isinstance(status, int) and not engine.in_child and report is not None:
            os._exit = real_exit
            try:
                report(engine.end_now(status))
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:  # whatever happens, the process ends as asked
                pass
        real_exit(status)

    with swapped(os, _exit=exit_now):
        yield


class _ProgramExit:
    """What python does after a script's last line, before the process ends,
    for what the program itself started: wait for the threads it left
    running (not daemons), then run the atexit handlers it registered, last
    first. Either may print. While the program runs, ``atexit.register``
    notes its handlers (and still registers them, in case the run is cut
    short); the ending runs them once and unregisters them. Handlers and
    threads of the process hosting the tutor are left alone."""

    def __init__(self) -> None:
        self._handlers: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self._threads: set[threading.Thread] = set()

    @contextmanager
    def watching(self) -> Iterator[_ProgramExit]:
        real_register, real_unregister = atexit.register, atexit.unregister
        handlers = self._handlers

        def register(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
            handlers.append((func, args, kwargs))
            return real_register(func, *args, **kwargs)

        def unregister(func: Callable[..., Any]) -> None:
            handlers[:] = [h for h in handlers if h[0] != func]
            real_unregister(func)

        self._threads = set(threading.enumerate())
        with swapped(atexit, register=register, unregister=unregister):
            yield self

    def __call__(self) -> None:
        current = threading.current_thread()
        while True:
            running = [t for t in threading.enumerate()
                       if t is not current and t not in self._threads and not t.daemon and t.is_alive()]
            if not running:
                break
            for thread in running:
                thread.join()
        while self._handlers:
            func, args, kwargs = self._handlers.pop()
            atexit.unregister(func)
            try:
                func(*args, **kwargs)
            except BaseException:  # as python reports it, and goes on with the next handler
                print(f"Exception ignored in atexit callback: {func!r}", file=sys.stderr)
                traceback.print_exc()


def run_explain(args: argparse.Namespace, env: Environment | None = None) -> int:
    env = env or Environment.from_process()
    source, code = read_program(args.file)
    level = LEVEL_OPS if args.level == "ops" else LEVEL_STATEMENTS

    def run(**engine_options: Any) -> RunResult:
        return run_script(args.file, source, code, list(args.args), max_iterations=args.max_iterations, **engine_options)

    if args.format == "json":
        return _explain_json(args, env, run, level)
    if args.format != "text":
        return _explain_export(args, env, run, level, Listing(code.co_filename, args.file, source))
    return _explain_text(args, env, run, level)


def _explain_export(
    args: argparse.Namespace, env: Environment, run: Callable[..., RunResult], level: str, listing: Listing
) -> int:
    """``--format markdown|html|svg|dot``: the narration of the run as a document,
    written to ``--output`` or standard output. The program's output is kept
    in the document, where it was printed."""
    from gradtutor.explanations import book_for
    from gradtutor.export import export_document, write_export
    from gradtutor.narrate import NarrationOptions, Narrator, quiet_texts
    from gradtutor.transcript import Transcript, step_frame

    output = getattr(args, "output", None)
    if output:
        folder = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(folder):
            raise UsageError.said("error_no_folder_to_write", path=output, folder=folder)
    language = args.lang or env.language
    options = NarrationOptions(
        level=level, width=args.width or 80, ascii=args.ascii, language=language, graph=getattr(args, "graph", "touched")
    )
    narrator = Narrator(book_for(language), options)

    def finish(result: RunResult) -> int:
        transcript = Transcript(os.path.basename(args.file), options, listings=[listing])
        transcript.frames = [step_frame(narrator, step, i) for i, step in enumerate(result.steps, 1)]
        last_note = _hidden_at_end(result, narrator)
        if last_note:
            transcript.epilogue.append(last_note)
        if result.hidden_steps:
            transcript.epilogue.append(_hidden_epilogue(result, narrator))
        transcript.epilogue.extend(quiet_texts(result.quiet_functions, language))
        if result.traceback:
            transcript.epilogue.append(result.traceback.rstrip("\n"))
        if result.exit_output:
            transcript.epilogue.append(result.exit_output.rstrip("\n"))
        if output:
            write_export(transcript, args.format, output, args.step)
        else:
            env.stdout.write(export_document(transcript, args.format, args.step))
            env.stdout.flush()
        return result.exit_code

    return finish(run(capture_output=True, on_os_exit=finish))


def _explain_json(args: argparse.Namespace, env: Environment, run: Callable[..., RunResult], level: str) -> int:
    from gradtutor.jsondoc import document, dumps

    def finish(result: RunResult) -> int:
        env.stdout.write(dumps(document(result, args.file, level), default=_json_default))
        env.stdout.flush()
        _report_internal_errors(result, env)
        return result.exit_code

    return finish(run(capture_output=True, on_os_exit=finish))


def _hidden_at_end(result: RunResult, narrator: Any) -> str:
    """The note on the steps hidden after the last step shown, as each shown
    step has one on those before it: the notes add up to the closing total.
    Empty when there are none, or when they are all the total says."""
    from gradtutor.narrate import hidden_text

    if not 0 < result.hidden_at_end < result.hidden_steps:
        return ""
    options = narrator.options
    return hidden_text(result.hidden_at_end, narrator.repeated(result.repeated_at_end), ascii=options.ascii,
                       language=options.language)


def _hidden_epilogue(result: RunResult, narrator: Any) -> str:
    """The closing note on loop steps not shown: how many, what they did
    again, and how to see them."""
    from gradtutor.narrate import hidden_text

    from gradtutor.render.words import say

    language = narrator.options.language
    text = hidden_text(result.hidden_steps, narrator.repeated(result.hidden_repeated), more=False,
                       ascii=narrator.options.ascii, language=language)
    return text[:-1] + say(language, "hidden_end")


def _report_internal_errors(result: RunResult, env: Environment) -> None:
    """One line on stderr per distinct failure of the tutor's own."""
    seen: set[tuple[str, int | None, str]] = set()
    for error in result.internal_errors:
        key = (error.file, error.line, error.message)
        if key in seen:
            continue
        seen.add(key)
        where = f"line {error.line}" if error.line is not None else "a line"
        if error.stopped:
            env.stderr.write(
                f"gradtutor: narration stopped at {where} of {os.path.basename(error.file) or 'the program'}: "
                f"{error.message}; the rest of the program ran unchanged, without narration\n"
            )
            continue
        env.stderr.write(
            f"gradtutor: could not follow {where} of {os.path.basename(error.file)} ({error.message}); "
            "that step is not narrated, the program ran unchanged\n"
        )
    env.stderr.flush()


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def _explain_text(args: argparse.Namespace, env: Environment, run: Callable[..., RunResult], level: str) -> int:
    from gradtutor.explanations import book_for
    from gradtutor.narrate import NarrationOptions, Narrator, Wrapped, console_printer, indented, quiet_texts
    from gradtutor.step_printer import NarrationStream, StepPrinter

    width = args.width or env.width
    stream = NarrationStream(env.stdout)
    console = make_console(env, width=width, plain=args.plain, file=stream)
    language = args.lang or env.language
    options = NarrationOptions(
        level=level, width=width, ascii=args.ascii or not env.unicode, language=language, graph=getattr(args, "graph", "touched")
    )
    narrator = Narrator(book_for(language), options)
    # Not cropped: what the program printed, and a traceback, come out whole
    # (a long line wraps in the terminal); the rest is made to fit already.
    show = console_printer(console)
    printer = StepPrinter(narrator, show)

    def finish(result: RunResult) -> int:
        stream.write_through = None
        printer.late_output(result.leftover_output)
        last_note = _hidden_at_end(result, narrator)
        if last_note:
            show(indented(Wrapped(last_note, "dim")))  # (as the note before a shown step)
        if result.hidden_steps:
            # (wrapped as the narration's notes are: no line ends in a space)
            show(Wrapped(_hidden_epilogue(result, narrator), "dim"))
        for text in quiet_texts(result.quiet_functions, language):
            show(Wrapped(text, "dim"))
        if result.traceback:
            env.stdout.flush()
            env.stderr.write(result.traceback)
            env.stderr.flush()
        if result.exit_output:  # after the traceback, as python prints them
            env.stdout.write(result.exit_output)
            env.stdout.flush()
        if console.quiet:
            # The reader closed the pipe (``explain ... | head``): rich's
            # console ended the run there, from inside a step, which turned
            # the tracer off. Nothing went wrong to report.
            result.internal_errors = [e for e in result.internal_errors if not e.stopped]
        _report_internal_errors(result, env)
        return result.exit_code

    return finish(run(
        on_step=printer.finish, on_begin=printer.begin, capture_output=True, narration_stream=stream,
        announce_hidden=False, on_os_exit=finish,
    ))
