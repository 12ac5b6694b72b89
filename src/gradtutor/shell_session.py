"""The shell's core: one input in, the renderables to show out.

:class:`ShellSession` owns the engine and the namespace. It runs Python
inputs and ``:commands`` and answers with a :class:`Reply` (rich
renderables, and an exit status when the session should end). It does no
terminal I/O, so the interactive shell, the piped shell and the tests all
drive the same object. The user's own prints go to ``sys.stdout`` as the
code runs, like in python's REPL.
"""

from __future__ import annotations

import builtins
import codeop
import contextlib
import inspect
import io
import os
import re
import threading
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gradtutor import __version__
from gradtutor.errors import GradtutorError
from gradtutor.gcpause import settle_startup
from gradtutor.lesson_catalog import Catalog
from gradtutor.lesson_runner import LessonRun
from gradtutor.progress import ProgressStore
from gradtutor.explanations import book_for, line_locator
from gradtutor.messages import message
from gradtutor.model import LEVEL_OPS, LEVEL_STATEMENTS, Event, Step, is_routine
from gradtutor.narrate import (
    NarrationOptions,
    Narrator,
    Verbatim,
    Wrapped,
    event_renderable,
    graph_drawing,
    graph_renderable,
    indented,
    step_header,
)
from gradtutor.transcript import Listing, Transcript, cell_frame, cell_place, frame_renderables
from gradtutor.torch_import import import_torch


class _HeadingBeforeOutput:
    """``sys.stdout`` while an input runs in the shell: before the first text a
    statement writes, the heading that names it is printed."""

    def __init__(self, stream: Any, pending: list[RenderableType], show: Callable[[RenderableType], None]) -> None:
        self._stream = stream
        self._pending = pending
        self._show = show

    def write(self, text: str) -> int:
        if text and self._pending:
            heading = self._pending.pop()
            self._pending.clear()
            self._stream.flush()
            self._show(heading)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _several_statements(source: str) -> bool:
    import ast

    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    # (A one-line input is named by its prompt already.)
    return len(source.strip().splitlines()) > 1 and (len(body) > 1 or any(hasattr(stmt, "body") for stmt in body))


CELL_PREFIX = "<In ["
# Keywords that continue a compound statement at column 0 (not a new statement).
_CONTINUATIONS = ("else", "elif", "except", "finally", "case")


class TorchLoader:
    """Imports torch and the engine in a background thread, so the prompt
    comes first. ``settle``: then freeze what importing made (see
    ``gcpause.settle_startup``): for the shell command, whose first
    statement waits for the import and so runs after it."""

    def __init__(self, settle: bool = False) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._settle = settle

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._load, name="gradtutor-import-torch", daemon=True)
            self._thread.start()

    def _load(self) -> None:
        try:
            import_torch()
            import gradtutor.engine  # noqa: F401
        except BaseException as exc:  # reported when the first statement needs torch
            self._error = exc
            return
        if self._settle:
            settle_startup()

    @property
    def ready(self) -> bool:
        return self._thread is not None and not self._thread.is_alive()

    def wait(self) -> None:
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise GradtutorError(f"cannot import torch: {self._error}")


@dataclass
class ShellSettings:
    language: str = "en"
    level: str = LEVEL_STATEMENTS
    show_graph: bool = True
    width: int = 80
    ascii: bool = False
    data_dir: str = ""  # where lesson progress is kept ("" keeps none)
    lessons_dirs: tuple[str, ...] = ()  # teachers' lesson folders, besides the course


@dataclass
class Reply:
    renderables: list[RenderableType] = field(default_factory=list)
    exit_code: int | None = None  # set when the session should end
    steps: list[Step] = field(default_factory=list)


def is_complete(text: str) -> bool:
    """Whether Enter should run ``text`` (True) or start a new line (False).

    Runs: an empty input, a command, a complete single line, a block whose
    last line is blank, and anything that cannot compile (to show the error).
    Continues: an incomplete statement, or a complete block whose last line
    is still indented (more of the block may follow).
    """
    stripped = text.strip()
    if not stripped or stripped.startswith(":"):
        return True
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1].strip():
        return True
    try:
        code = codeop.compile_command(text, "<input>", "exec")
    except (SyntaxError, ValueError, OverflowError):
        return True
    if code is None:
        return False
    return not (len(lines) > 1 and lines[-1][:1].isspace())


def next_indent(text: str) -> str:
    """The indentation for the line after ``text``: the same, or one level deeper after ':'."""
    last = text.split("\n")[-1]
    indent = last[: len(last) - len(last.lstrip())]
    code = last.split("#", 1)[0].rstrip()
    return indent + "    " if code.endswith(":") else indent


def starts_new_statement(line: str) -> bool:
    """For piped input: a line at column 0 that is not ``else:``/``except:``... begins a new statement."""
    if not line.strip() or line[:1].isspace():
        return False
    word = line.lstrip().split(None, 1)[0].rstrip(":")
    return word not in _CONTINUATIONS


class ShellSession:
    """Runs inputs in one persistent namespace. See the module docstring."""

    def __init__(self, settings: ShellSettings, loader: TorchLoader | None = None) -> None:
        """``loader``: a TorchLoader the front end starts when it likes (the
        interactive shell starts it once the first prompt is drawn); without
        one, torch is imported when the first statement needs it."""
        self.settings = settings
        self.loader = loader or TorchLoader()
        self.namespace: dict[str, Any] = {}
        self.counter = 0
        self.history: list[str] = []
        self.numbered: list[tuple[int, str]] = []  # (N, source) of each In [N]
        # What :explain explains: the events of the last input that had any,
        # however many inputs ago (an input with none leaves them).
        self.last_events: list[tuple[str, Event]] = []
        self._engine: Any = None
        self._narrator: Narrator | None = None
        self.lesson: LessonRun | None = None
        # The person's own work while a lesson runs in a namespace of its own:
        # (names, engine, narrator, last events), given back when it ends.
        self._put_aside: tuple[dict[str, Any], Any, Narrator | None, list[tuple[str, Event]]] | None = None
        self._store: ProgressStore | None = None
        self._cell_lines: dict[str, int] = {}
        self.transcript = Transcript("gradtutor session", self._options())
        # Set by a front end that prints as the code runs: in an input of
        # several statements, what a statement prints comes under a heading
        # naming it (printed just before its first output).
        self.print_now: Callable[[RenderableType], None] | None = None
        self._fresh_namespace()

    # ---- state ----------------------------------------------------------------
    def _fresh_namespace(self) -> None:
        self.namespace.clear()
        self.namespace.update({"__name__": "__main__", "__builtins__": builtins, "__doc__": None})

    @property
    def engine(self) -> Any:
        if self._engine is None:
            self.loader.wait()
            import torch
            import torch.nn.functional as F

            from gradtutor.engine import Engine

            self.namespace.setdefault("torch", torch)
            self.namespace.setdefault("F", F)
            self._engine = Engine(self.namespace, max_iterations=3)
        return self._engine

    @property
    def narrator(self) -> Narrator:
        if self._narrator is None:
            self._narrator = Narrator(book_for(self.settings.language), self._options(), self.locate)
        return self._narrator

    def locate(self, file: str, line: int) -> str:
        """Places in the session: "In [3]", or "In [3] line 2" in a multi-line input."""
        if file.startswith(CELL_PREFIX):
            return cell_place(int(file[len(CELL_PREFIX) : -2]), line, self._cell_lines.get(file, 1), self.settings.language)
        return line_locator(self.settings.language)(file, line)

    def _options(self, level: str | None = None) -> NarrationOptions:
        s = self.settings
        return NarrationOptions(
            level=level or s.level,
            width=s.width,
            ascii=s.ascii,
            show_graph=s.show_graph,
            language=s.language,
            locate=self.locate,
            full_graph_hint=":graph",
        )

    def msg(self, key: str, **fields: object) -> str:
        return message(self.settings.language, key, **fields)

    def welcome(self) -> Text:
        return Text(self.msg("welcome", version=__version__))

    @property
    def prompt(self) -> str:
        return f"In [{self.counter + 1}]: "

    @property
    def continuation(self) -> str:
        return " " * (len(self.prompt) - 5) + "...: "

    # ---- inputs ---------------------------------------------------------------
    def execute(self, text: str) -> Reply:
        """Run one input: a lesson's answer or command, a ``:command``, or Python source."""
        if text.strip():
            self.history.append(text)
        if self.lesson is not None:
            answer = self.lesson.intercept(text)
            if answer is not None:
                return answer
        stripped = text.strip()
        if not stripped:
            return Reply()
        if stripped.startswith(":"):
            return self.command(stripped)
        if stripped.startswith("%"):
            # IPython's magics are not Python: say so, and how to do it here.
            return Reply([Text(self.msg("magic", magic=stripped.split()[0]), "yellow")])
        query = _HELP_QUERY.match(stripped)
        if query is not None and bool(query.group(1)) != bool(query.group(3)):
            return self.help_on(query.group(2))
        reply = self.run_python(text)
        if self.lesson is not None and reply.exit_code is None:
            reply.renderables.extend(self.lesson.after_input(reply.steps))
        return reply

    def help_on(self, name: str) -> Reply:
        """``x?`` (or ``?x``), as IPython answers it: the type, the value for a
        tensor, the signature of a callable and its docstring."""
        try:
            obj = eval(name, self.engine.namespace)  # a dotted name, as the pattern allows
        except Exception as exc:
            return Reply([Text(self.msg("help_failed", name=name, error=f"{type(exc).__name__}: {exc}"), "yellow")])
        from gradtutor.snapshot import describe_value  # (torch: loaded by now, the engine runs on it)

        rows: list[tuple[str, str]] = [(self.msg("help_type"), _type_name(obj))]
        if _is_tensor(obj):
            rows.append((self.msg("help_value"), describe_value(obj, self.settings.language)))
        if callable(obj):
            try:
                rows.append((self.msg("help_signature"), f"{name.split('.')[-1]}{inspect.signature(obj)}"))
            except (TypeError, ValueError):
                pass
        out: list[RenderableType] = []
        for label, value in rows:
            line = Text(f"{label} ", "bold")
            line.append(value)
            out.append(line)
        doc = inspect.getdoc(obj) or self.msg("help_no_doc")
        lines = doc.splitlines()
        out.append(Text(self.msg("help_doc"), "bold"))
        out.append(Text("\n".join(lines[:_HELP_LINES])))
        if len(lines) > _HELP_LINES:
            out.append(Text(self.msg("help_cut", count=len(lines) - _HELP_LINES, name=name), "dim"))
        return Reply(out)

    def replay(self, source: str) -> None:
        """Run code without showing anything (rebuilding a resumed lesson's
        names), as a numbered input: pictures name its places In [N]."""
        engine = self.engine
        self.counter += 1
        filename = f"{CELL_PREFIX}{self.counter}]>"
        self._cell_lines[filename] = len(source.strip("\n").split("\n"))
        self.numbered.append((self.counter, source.strip("\n")))
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                engine.run_cell(source, filename)
            except SyntaxError:
                pass

    def pictures_now(self) -> list[str]:
        """The graph of the names as they are, as text, at both levels (for
        checking what a lesson's text says is drawn)."""
        snapshot = self.engine.snapshot_now()
        pictures = []
        for level in (LEVEL_STATEMENTS, LEVEL_OPS):
            if snapshot.graph(level).nodes:
                options = replace(self._options(level), width=200)
                pictures.append(str(graph_drawing(snapshot, options, level)))
        return pictures

    def picture_now(self) -> RenderableType | None:
        """The graph of the names as they are (a resumed lesson's), drawn as
        :graph draws it; None when there is none. Later steps compare with it."""
        level = LEVEL_STATEMENTS
        snapshot = self.engine.snapshot_now()
        if not snapshot.graph(level).nodes:
            return None
        self.narrator.last_drawn = snapshot.graph(self.narrator.options.level)
        return graph_renderable(snapshot, self._options(level), level)

    def run_python(self, source: str, echo: bool = False) -> Reply:
        """Run Python source as one numbered input. ``echo`` shows it after its prompt
        first, as if typed (a lesson's code), and keeps what it prints in the reply,
        in order, instead of printing it as it runs."""
        echoed: list[RenderableType] = []
        if echo:
            lines = source.rstrip("\n").split("\n")
            text = Text(self.prompt, "green")
            text.append(lines[0])
            for more in lines[1:]:
                text.append("\n" + self.continuation, "green")
                text.append(more)
            echoed.append(text)
        engine = self.engine
        engine.capture_output = echo
        try:
            reply = self._run_python(source)
        finally:
            engine.capture_output = False
        reply.renderables[:0] = echoed
        return reply

    def _run_python(self, source: str) -> Reply:
        self.counter += 1
        self.numbered.append((self.counter, source.strip("\n")))
        filename = f"{CELL_PREFIX}{self.counter}]>"
        self._cell_lines[filename] = len(source.strip("\n").split("\n"))
        engine = self.engine
        try:
            with self._headed_output(source, filename):
                result = engine.run_cell(source, filename)
        except SyntaxError as exc:
            text = "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
            return Reply([_verbatim(text, "red")])
        except KeyboardInterrupt:
            return Reply([Text(self.msg("interrupted"), "yellow")])
        if result.exited:
            return Reply(exit_code=result.exit_code, steps=result.steps)
        out: list[RenderableType] = []
        value = _safe_repr(result.value) if result.has_value else None
        if value is not None:
            out.append(Verbatim(value, prefix=f"Out[{self.counter}]: ", prefix_style="bold red"))
        error = None
        if result.exception is not None:
            error = engine_traceback(result.exception).rstrip("\n")
            out.append(_verbatim(error, "red"))
        if result.steps:
            events = [(s.file, e) for s in result.steps for e in s.events]
            if events:
                self.last_events = events
            frame = cell_frame(
                self.narrator, result.steps, number=len(self.transcript.frames) + 1, place=f"In [{self.counter}]",
                file=filename, source=source, value=value, error=error, show_output=True,
            )
            self.transcript.listings.append(Listing(filename, f"In [{self.counter}]", source))
            self.transcript.frames.append(frame)
            out.extend(frame_renderables(frame, ascii=self.settings.ascii))
        for internal in dict.fromkeys(result.internal_errors):
            out.append(Text(self.msg("internal_error", line=internal.line, error=internal.message), "yellow"))
        return Reply(out, steps=result.steps)

    @contextlib.contextmanager
    def _headed_output(self, source: str, filename: str) -> Any:
        """While an input of several statements runs, each statement's output
        comes after a line naming the statement (``── line 2 print(i)``), as in
        ``gradtutor explain``. A statement that prints nothing gets none."""
        if self.print_now is None or self.engine.capture_output or not _several_statements(source):
            yield
            return
        import sys

        show = self.print_now
        engine = self.engine
        pending: list[RenderableType] = []

        def on_begin(start: Any) -> None:
            if start.file == filename or start.function != "<module>":
                pending[:] = [indented(step_header(start, ascii=self.settings.ascii, language=self.settings.language), 0)]

        real = sys.stdout
        proxy = _HeadingBeforeOutput(real, pending, show)
        engine.on_begin = on_begin
        sys.stdout = proxy
        try:
            yield
        finally:
            engine.on_begin = None
            if sys.stdout is proxy:
                sys.stdout = real

    # ---- commands -------------------------------------------------------------
    def command(self, text: str) -> Reply:
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        handlers: dict[str, Callable[[str], Reply]] = {
            ":help": self._cmd_help,
            ":graph": lambda a: self._cmd_graph(a, LEVEL_STATEMENTS),
            ":ops": lambda a: self._cmd_graph(a, LEVEL_OPS),
            ":names": self._cmd_names,
            ":explain": self._cmd_explain,
            ":reset": self._cmd_reset,
            ":history": self._cmd_history,
            ":lang": self._cmd_lang,
            ":lesson": self._cmd_lesson,
            ":export": self._cmd_export,
            ":quit": lambda a: Reply(exit_code=0),
            ":exit": lambda a: Reply(exit_code=0),
        }
        handler = handlers.get(name)
        if handler is None:
            return Reply([Text(self.msg("unknown_command", command=name), "red")])
        if arg and name not in (":lang", ":lesson", ":export"):
            return Reply([Text(self.msg("command_args", command=name), "red")])
        try:
            return handler(arg)
        except GradtutorError as exc:  # a missing lesson, a broken lesson file...
            return Reply([Text(exc.say(self.settings.language), "red")])

    def _cmd_help(self, arg: str) -> Reply:
        table = Table.grid(padding=(0, 2))
        for cmd in ("graph", "ops", "names", "explain", "reset", "history", "lang", "lesson", "export", "help", "quit"):
            table.add_row(Text(f":{cmd}", "bold"), self.msg(f"cmd_{cmd}"))
        return Reply([Text(self.msg("help_title"), "bold"), indented(table, 2), Text(self.msg("keys"), "dim")])

    def _cmd_graph(self, arg: str, level: str) -> Reply:
        snapshot = self.engine.snapshot_now()
        if not snapshot.graph(level).nodes:
            return Reply([Text(self.msg("empty_graph"))])
        return Reply([graph_renderable(snapshot, self._options(level), level)])

    def _cmd_names(self, arg: str) -> Reply:
        snapshot = self.engine.snapshot_now()
        table = Table(box=None, show_header=True, header_style="bold", padding=(0, 1))
        table.add_column(self.msg("names_name"))
        table.add_column("")
        table.add_column(self.msg("names_type"))
        table.add_column(self.msg("names_object"))
        arrow = "->" if self.settings.ascii else "──▶"
        rows = 0
        from gradtutor.snapshot import describe_value  # (torch: loaded by now, the engine runs on it)

        for binding in snapshot.bindings:
            summary = binding.summary
            if binding.name in self.namespace and self.settings.language != "en":
                summary = describe_value(self.namespace[binding.name], self.settings.language)
            table.add_row(binding.name, arrow, binding.type_name, summary)
            rows += 1
        for node in snapshot.ops.nodes:
            if node.former_names and not node.names and not node.dropped:
                label = self.msg("still_in_graph", names=", ".join(node.former_names))
                table.add_row("", "", "", Text(f"{node.label}: {label}", "italic"))
                rows += 1
        if not rows:
            return Reply([Text(self.msg("names_none"))])
        return Reply([indented(table, 0)])

    def _cmd_explain(self, arg: str) -> Reply:
        events = [(f, e) for f, e in self.last_events if not is_routine(e)] or self.last_events
        if not events:
            return Reply([Text(self.msg("nothing_to_explain"))])
        book = book_for(self.settings.language)
        out: list[RenderableType] = []
        for file, event in events:
            explanation = book.explain(event, file=file, locate=self.locate)
            out.append(event_renderable(event, book, ascii=self.settings.ascii, full=False, file=file, locate=self.locate))
            out.append(indented(Group(Wrapped(explanation.text), Text(""), Wrapped(explanation.more, "italic")), 2))
        return Reply(out)

    def _cmd_export(self, arg: str) -> Reply:
        """``:export FILE``: the inputs so far, in the format FILE's ending names."""
        from gradtutor.export import STEP_FORMATS, format_for_path, write_export

        if not arg:
            return Reply([Text(self.msg("export_usage"), "red")])
        path = os.path.expanduser(arg)
        fmt = format_for_path(path)  # a GradtutorError is shown by command()
        write_export(self.transcript, fmt, path)
        if fmt in STEP_FORMATS:
            place = self.transcript.frame(None).place
            return Reply([Text(self.msg("export_graph_done", place=place, path=path, format=fmt))])
        count = len(self.transcript.frames)
        return Reply([Text(self.msg("export_done", count=count, path=path, format=fmt))])

    def own_names(self) -> list[str]:
        """The names the person bound (not torch and F, not dunders or ``_``)."""
        return sorted(n for n in self.namespace if not n.startswith("_") and n not in ("torch", "F"))

    def begin_lesson_namespace(self) -> list[str]:
        """A lesson starts in a fresh namespace; the person's names are put
        aside (not lost) until it ends. Returns those names."""
        names = self.own_names()
        if self._put_aside is None:
            self._put_aside = (dict(self.namespace), self._engine, self._narrator, self.last_events)
        else:
            names = []  # a lesson after a lesson: the person's work is already aside
        # The same dict object: the completer and the engine hold it.
        self._fresh_namespace()
        self._engine = None
        self._narrator = None
        self.last_events = []
        return names

    def end_lesson_namespace(self) -> list[str]:
        """Give the person's names back; returns them."""
        if self._put_aside is None:
            return []
        names, self._engine, self._narrator, self.last_events = self._put_aside
        self._put_aside = None
        self.namespace.clear()
        self.namespace.update(names)
        return self.own_names()

    def reset_namespace(self) -> None:
        self._fresh_namespace()
        self._engine = None
        self._narrator = None
        self.last_events = []
        _ = self.engine  # re-imports torch and F into the new namespace

    def _cmd_reset(self, arg: str) -> Reply:
        self.reset_namespace()
        return Reply([Text(self.msg("reset_done"))])

    @property
    def store(self) -> ProgressStore | None:
        if self._store is None and self.settings.data_dir:
            self._store = ProgressStore(self.settings.data_dir)
        return self._store

    def _cmd_lesson(self, arg: str) -> Reply:
        catalog = Catalog(self.settings.lessons_dirs)
        if not arg:
            return Reply(lesson_listing(catalog, self.store, self.settings.language))
        entry = catalog.find(arg)
        out: list[RenderableType] = []
        store = self.store
        if store is not None and store.notice:
            out.append(Text(store.notice, "yellow"))
            store.notice = None
        self.lesson = LessonRun(entry, self, store)
        out += self.lesson.start()
        return Reply(out)

    def _cmd_history(self, arg: str) -> Reply:
        """The Python inputs by their ``In [N]`` numbers (commands are not
        inputs); a block's further lines indented under its first."""
        if not self.numbered:
            return Reply([Text(self.msg("history_empty"))])
        width = len(str(self.numbered[-1][0]))
        rows = []
        for number, source in self.numbered:
            first, *rest = source.split("\n")
            rows.append(f"In [{number}]: ".rjust(width + 7) + first)
            rows.extend(" " * (width + 7) + line for line in rest)
        return Reply([Text("\n".join(rows))])

    def set_width(self, width: int) -> None:
        """Draw at ``width`` cells from now on (the terminal was resized)."""
        self.settings.width = width
        if self._narrator is not None:
            self._narrator.options = replace(self._narrator.options, width=width)
        self.transcript.options = self._options()

    def _cmd_lang(self, arg: str) -> Reply:
        if arg:
            if arg not in ("en", "zh"):
                return Reply([Text(self.msg("lang_bad", language=arg), "red")])
            self.settings.language = arg
            self._narrator = None
            self.transcript.options = self._options()
        return Reply([Text(self.msg("lang_now", language=self.settings.language))])


def lesson_listing(catalog: Catalog, store: ProgressStore | None, language: str) -> list[RenderableType]:
    """The course in order, each lesson with the learner's progress."""
    table = Table(box=None, show_header=False, padding=(0, 1))
    for entry in catalog.entries:
        lesson = entry.lesson
        total = len(lesson.steps)
        state = message(language, "lesson_state_new")
        if store is not None:
            saved = store.lesson(lesson.id)
            if saved.completed:
                state = message(language, "lesson_state_done")
            elif saved.step > 0:
                state = message(language, "lesson_state_at", n=saved.step + 1, total=total)
        table.add_row(f"{entry.number:>2}", Text(lesson.id, "bold"), lesson.text(lesson.title, language), Text(state, "dim"))
    out: list[RenderableType] = [Text(message(language, "lessons_title"), "bold"), indented(table, 0)]
    for problem in catalog.problems:
        out.append(Text(message(language, "lesson_broken", error=str(problem)), "yellow"))
    return out


def engine_traceback(exc: BaseException) -> str:
    """A short traceback: only the lines the user typed in the shell."""
    from gradtutor.tracebacks import format_user_traceback

    return format_user_traceback(exc, only=lambda filename: filename.startswith(CELL_PREFIX))


# ``x?``, ``torch.ones?``, ``?x`` (and ``??``): help, as IPython gives it.
_HELP_QUERY = re.compile(r"^(\?{1,2})?\s*([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*(\?{1,2})?$")
_HELP_LINES = 40


def _is_tensor(obj: Any) -> bool:
    import torch

    return isinstance(obj, torch.Tensor)


def _type_name(obj: Any) -> str:
    kind = type(obj)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"


def _verbatim(text: str, style: str = "") -> Verbatim:
    return Verbatim(text, style)


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # a broken __repr__ of the user's must not end the session
        return f"<repr failed: {type(exc).__name__}: {exc}>"
