"""``gradtutor`` with no command: the interactive shell, or a piped session.

A thin front end over :class:`~gradtutor.shell_session.ShellSession`: it
reads inputs (prompt_toolkit on a terminal; plain lines from a pipe) and
prints the replies with rich. Torch is imported in the background while the
first prompt is already on the screen.
"""

from __future__ import annotations

import argparse
import os
import re
import builtins
import keyword
import sys
import warnings
from typing import Any, Iterable, Iterator

from rich.console import Console
from rich.text import Text

from gradtutor.environment import Environment
from gradtutor.environment import make_console
from gradtutor.model import LEVEL_OPS, LEVEL_STATEMENTS
from gradtutor.narrate import console_printer
from gradtutor.shell_session import (
    Reply,
    ShellSession,
    ShellSettings,
    TorchLoader,
    is_complete,
    next_indent,
    starts_new_statement,
)


def settings_from(args: argparse.Namespace, env: Environment) -> ShellSettings:
    return ShellSettings(
        language=getattr(args, "lang", None) or env.language,
        level=LEVEL_OPS if getattr(args, "level", None) == "ops" else LEVEL_STATEMENTS,
        show_graph=not getattr(args, "no_graph", False),
        width=getattr(args, "width", None) or env.width,
        ascii=getattr(args, "ascii", False) or not env.unicode,
        data_dir=env.data_dir,
        lessons_dirs=tuple(getattr(args, "lessons_dir", None) or ()) + env.lessons_path,
    )


def run_shell(args: argparse.Namespace, env: Environment | None = None, first_input: str | None = None) -> int:
    """The shell; ``first_input`` runs before the first prompt (``:lesson NAME``)."""
    env = env or Environment.from_process()
    loader = TorchLoader(settle=True)  # (the command's own process: see gcpause.settle_startup)
    settings = settings_from(args, env)
    session = ShellSession(settings, loader)
    console = make_console(env, width=settings.width, plain=getattr(args, "plain", False))
    session.print_now = console_printer(console)
    if env.stdin_isatty and env.stdout_isatty:
        shell = InteractiveShell(session, console, env, first_input)
        shell.fixed_width = bool(getattr(args, "width", None))
        return shell.run()
    loader.start()
    return run_piped(session, console, env.stdin, first_input)


def print_reply(console: Console, reply: Reply) -> None:
    # Not cropped: a long path or traceback line wraps in the terminal
    # instead of losing its end (see console_printer).
    show = console_printer(console)
    for renderable in reply.renderables:
        show(renderable)


def execute_safely(session: ShellSession, console: Console, text: str) -> Reply:
    """Run one input; a bug of the tutor's own is reported in one line, and the
    session goes on with the user's names intact."""
    try:
        reply = session.execute(text)
    except KeyboardInterrupt:  # Ctrl-C outside the user's code, e.g. just before it ran
        reply = Reply([Text(session.msg("interrupted"), "yellow")])
    except Exception as exc:
        reply = Reply([Text(f"gradtutor: internal error: {type(exc).__name__}: {exc} (please report it)", "red")])
    print_reply(console, reply)
    return reply


# ---- piped sessions ------------------------------------------------------------
def piped_inputs(lines: Iterable[str]) -> Iterator[str]:
    """Group lines into inputs as a person would have typed them.

    An input ends at a blank line after a block, or where a new statement
    begins at column 0 after a complete one; commands are one line each. A
    blank line outside a block is an empty input (Enter, in a lesson). A
    blank line inside a block, followed by more of the block (an indented
    line), does not end it: the file is a script, read as python reads one.
    """
    pending = iter(lines)
    buffer: list[str] = []
    for raw in pending:
        line = raw.rstrip("\n").rstrip("\r")
        if buffer:
            text = "\n".join(buffer)
            if starts_new_statement(line) and _compiles(text):
                yield text
                buffer = []
            elif not line.strip():
                blanks = [line]
                following = None
                for more in pending:  # what comes after the blank lines decides
                    more = more.rstrip("\n").rstrip("\r")
                    if more.strip():
                        following = more
                        break
                    blanks.append(more)
                if following is not None and following[:1] in (" ", "\t") and not following.lstrip().startswith("#"):
                    buffer += blanks + [following]  # the block goes on
                    continue
                if _compiles(text):
                    yield text
                    buffer = []
                    yield from [""] * (len(blanks) - 1)
                else:
                    buffer += blanks
                if following is None:
                    break
                line = following
        if not buffer and not line.strip():
            yield ""
            continue
        if not buffer and line.strip().startswith(":"):
            yield line.strip()
            continue
        buffer.append(line)
        if len(buffer) == 1 and is_complete(line) and not line.rstrip().endswith(":"):
            yield line
            buffer = []
    if buffer:
        yield "\n".join(buffer)


def _compiles(text: str) -> bool:
    import codeop

    try:
        return codeop.compile_command(text, "<input>", "exec") is not None
    except (SyntaxError, ValueError, OverflowError):
        return True  # run it, to show the error


def run_piped(session: ShellSession, console: Console, stdin: Any, first_input: str | None = None) -> int:
    """Run inputs from a pipe or file, echoing each after its prompt."""
    console.print(session.welcome())
    if first_input is not None:
        reply = execute_safely(session, console, first_input)
        if reply.exit_code is not None:
            return reply.exit_code
    for text in piped_inputs(stdin):
        if not text and session.lesson is None:
            continue  # a blank line only matters in a lesson (it means "continue")
        first, *rest = text.split("\n")
        echo = Text(session.prompt, "green")
        echo.append(first)
        for more in rest:
            echo.append("\n" + session.continuation, "green")
            echo.append(more)
        console.print(echo)
        sys.stdout.flush()
        reply = execute_safely(session, console, text)
        if reply.exit_code is not None:
            return reply.exit_code
    return 0


# ---- the interactive shell ---------------------------------------------------------
class NamespaceCompleter:
    """Tab completion from the live namespace, attributes included (``x.ret`` -> ``x.retain_grad``).

    Dotted names are resolved with ``getattr`` only (never ``eval``), with
    warnings silenced, and an attribute that raises just ends the lookup.
    """

    _TOKEN = re.compile(r"[A-Za-z_][\w.]*$|$")

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace

    def _resolve(self, dotted: str) -> tuple[bool, Any]:
        first, *rest = dotted.split(".")
        if first in self.namespace:
            obj = self.namespace[first]
        elif hasattr(builtins, first):
            obj = getattr(builtins, first)
        else:
            return False, None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reading .grad of a non-leaf warns
            for part in rest:
                try:
                    obj = getattr(obj, part)
                except Exception:
                    return False, None
        return True, obj

    def matches(self, text_before_cursor: str) -> tuple[str, list[str]]:
        token = self._TOKEN.search(text_before_cursor).group(0)  # type: ignore[union-attr]
        if not token or text_before_cursor.lstrip().startswith(":"):
            return token, []
        base, dot, prefix = token.rpartition(".")
        if dot:
            found, obj = self._resolve(base)
            if not found:
                return token, []
            try:
                names = dir(obj)
            except Exception:
                return token, []
            candidates = {f"{base}.{n}" for n in names if n.startswith(prefix)}
        else:
            pool = set(self.namespace) | set(dir(builtins)) | set(keyword.kwlist)
            candidates = {n for n in pool if n.startswith(prefix)}
        if not prefix.startswith("_"):
            candidates = {c for c in candidates if not c.rsplit(".", 1)[-1].startswith("_")}
        return token, sorted(candidates)


# Python in the prompt, in the terminal's own ANSI colours so that it reads on
# dark and light themes alike; operators, punctuation and plain names in the
# terminal's text colour (pygments' default greys them: 256-colour grey 241).
CODE_COLOURS = {
    "Keyword": "ansimagenta bold",
    "Keyword.Constant": "ansimagenta",
    "Operator.Word": "ansimagenta bold",
    "Name.Builtin": "ansicyan",
    "Name.Builtin.Pseudo": "ansicyan",
    "Name.Function": "ansiblue bold",
    "Name.Class": "ansiblue bold",
    "Name.Decorator": "ansiblue",
    "Name.Namespace": "ansiblue",
    "Literal.String": "ansigreen",
    "Literal.Number": "ansiblue",
    "Comment": "ansicyan italic",
    "Error": "ansired",
}


def code_style() -> Any:
    from prompt_toolkit.styles import style_from_pygments_dict
    from pygments.token import string_to_tokentype

    return style_from_pygments_dict({string_to_tokentype(name): style for name, style in CODE_COLOURS.items()})


class InteractiveShell:
    def __init__(self, session: ShellSession, console: Console, env: Environment, first_input: str | None = None) -> None:
        self.session = session
        self.console = console
        self.env = env
        self.first_input = first_input
        self.fixed_width = False  # --width was given: the terminal's width is not followed

    def _prompt_session(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.filters import is_searching
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.lexers import PygmentsLexer
        from pygments.lexers.python import PythonLexer

        session = self.session
        names = NamespaceCompleter(session.namespace)

        class _Completer(Completer):
            def get_completions(self, document: Any, complete_event: Any) -> Iterator[Any]:
                token, found = names.matches(document.text_before_cursor)
                for match in found:
                    yield Completion(match, start_position=-len(token))

        keys = KeyBindings()
        editing = ~is_searching  # during Ctrl-R, Enter and Tab keep their search meaning

        # Ctrl-J too: an Enter typed ahead, while the terminal was not yet in
        # raw mode, arrives as a newline character.
        @keys.add("enter", filter=editing)
        @keys.add("c-j", filter=editing)
        def _enter(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.complete_state is not None and buffer.complete_state.current_completion:
                buffer.apply_completion(buffer.complete_state.current_completion)
                return
            if is_complete(buffer.text):
                buffer.validate_and_handle()
            else:
                buffer.insert_text("\n" + next_indent(buffer.document.text_before_cursor))

        @keys.add("tab", filter=editing)
        def _tab(event: Any) -> None:
            # Completes at once when the answer is clear (one match, or a longer
            # common prefix); otherwise opens the menu. At the start of a
            # line, Tab indents.
            buffer = event.current_buffer
            document = buffer.document
            if not document.current_line_before_cursor.strip():
                buffer.insert_text("    ")
                return
            token, found = names.matches(document.text_before_cursor)
            common = os.path.commonprefix(found) if found else ""
            if len(common) > len(token):
                buffer.delete_before_cursor(len(token))
                buffer.insert_text(common)
            elif len(found) > 1:
                buffer.start_completion(select_first=False)

        @keys.add("escape", "enter", filter=editing)
        def _newline(event: Any) -> None:
            buffer = event.current_buffer
            buffer.insert_text("\n" + next_indent(buffer.document.text_before_cursor))

        history: Any
        path = history_path(self.env.data_dir)
        history = FileHistory(path) if path else InMemoryHistory()
        def start_torch_import(app: Any) -> None:
            # Once the first prompt is on the screen: importing torch in the
            # background before then would compete with drawing it.
            session.loader.start()

        return PromptSession(
            lexer=PygmentsLexer(PythonLexer),
            completer=_Completer(),
            complete_while_typing=False,
            auto_suggest=AutoSuggestFromHistory(),
            history=history,
            enable_history_search=False,
            key_bindings=keys,
            multiline=True,
            prompt_continuation=lambda width, line_number, wrap_count: session.continuation,
            include_default_pygments_style=False,
            style=code_style(),
        ), start_torch_import

    def run(self) -> int:
        prompt, on_first_render = self._prompt_session()
        prompt.app.after_render += on_first_render
        self.console.print(self.session.welcome())
        if self.first_input is not None:
            reply = execute_safely(self.session, self.console, self.first_input)
            if reply.exit_code is not None:
                return reply.exit_code
        while True:
            try:
                text = prompt.prompt(self.session.prompt)
            except KeyboardInterrupt:
                continue  # Ctrl-C while typing: a fresh prompt
            except EOFError:
                return 0
            self.follow_terminal_width()
            reply = execute_safely(self.session, self.console, text)
            if reply.exit_code is not None:
                return reply.exit_code

    def follow_terminal_width(self) -> None:
        """Draw for the terminal as it is now: a window resized since the
        last input gets pictures of its new width (unless --width fixed it)."""
        if self.fixed_width:
            return
        try:
            width = max(20, os.get_terminal_size(self.env.stdout.fileno()).columns)
        except (OSError, ValueError, AttributeError):
            return
        if width != self.session.settings.width:
            self.console.width = width
            self.session.set_width(width)


def history_path(data_dir: str) -> str | None:
    """The history file in the user's data directory (created private), or None if unusable."""
    if not data_dir:
        return None
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
        os.chmod(data_dir, 0o700)
        path = os.path.join(data_dir, "history")
        fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
        os.close(fd)
        os.chmod(path, 0o600)
        return path
    except OSError:
        return None
