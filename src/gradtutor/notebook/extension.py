"""Observing the cells IPython runs, and showing their narration.

IPython keeps running every cell itself: its input transformations (``%``
magics, ``!`` lines), its displayhook (``Out[N]``), ``display()``, its
traceback display and history all work as without the extension. gradtutor
only wraps the shell's ``run_ast_nodes`` so that the statements of a
narrated cell run under the engine's observation (``Engine.stepping``), in
the shell's own namespace, and then shows the cell's frame:

- in a notebook (any shell with a kernel: Jupyter, Colab, VS Code), one
  display bundle with ``text/html`` (the picture with its markers coloured)
  and ``text/plain`` (the shell's text, for ``nbconvert --to`` text formats);
- in terminal IPython, the shell's text, printed.

A failure of gradtutor's own turns narration off for that cell with one
line on stderr; the cell itself runs once, and its result is never lost.
"""

from __future__ import annotations

import io
import linecache
import os
import shutil
import sys
from dataclasses import dataclass
from typing import Any, Callable

from gradtutor.environment import language_from
from gradtutor.model import LEVEL_STATEMENTS
from gradtutor.narrate import NarrationOptions, Narrator
from gradtutor.transcript import Frame, Listing, Transcript, cell_frame, cell_place, frame_renderables

# How IPython writes a line that is only ``%gradtutor ...`` or ``%%gradtutor``.
_OWN_MAGIC = ("get_ipython().run_line_magic('gradtutor'", "get_ipython().run_cell_magic('gradtutor'")


@dataclass
class NotebookSettings:
    level: str = LEVEL_STATEMENTS
    language: str = "en"
    width: int = 80
    ascii: bool = False
    show_graph: bool = True
    graph: str = "touched"  # or "full": each step draws the whole graph


class CellNarration:
    """The extension's state in one IPython shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.terminal = type(shell).__name__ == "TerminalInteractiveShell"
        width = shutil.get_terminal_size((80, 24)).columns if self.terminal else 80
        self.settings = NotebookSettings(language=language_from(os.environ), width=max(40, width))
        self.enabled = True  # every cell is narrated (``%gradtutor off`` stops it)
        self.next_cell_only = False  # ``%%gradtutor``: the cell it runs is narrated
        self.transcript = Transcript("gradtutor notebook", self.options())
        self._engine: Any = None
        self._narrator: Narrator | None = None
        self._cells: dict[str, tuple[int, int]] = {}  # cell file -> (In number, lines)
        self._depth = 0
        self._running: list[str] = []  # cells being run, outermost first
        self._original: Callable[..., Any] | None = None
        self._original_showtraceback: Callable[..., Any] = shell.showtraceback

    # ---- settings ---------------------------------------------------------------
    def options(self) -> NarrationOptions:
        s = self.settings
        return NarrationOptions(
            level=s.level, width=s.width, ascii=s.ascii, show_graph=s.show_graph, language=s.language,
            locate=self.locate, graph=s.graph, full_graph_hint="%gradtutor --graph full",
        )

    def settings_changed(self) -> None:
        """A new narrator: the next picture is drawn in full with the new options."""
        self._narrator = None
        self.transcript.options = self.options()

    def locate(self, file: str, line: int) -> str:
        """Places in the notebook, as IPython numbers its cells: "In [3]", "In [3] line 2"."""
        number, lines = self._cells.get(file, (0, 1))
        if not number:
            return f"{os.path.basename(file)} line {line}"
        return cell_place(number, line, lines, self.settings.language)

    @property
    def narrator(self) -> Narrator:
        if self._narrator is None:
            from gradtutor.explanations import book_for

            self._narrator = Narrator(book_for(self.settings.language), self.options(), self.locate)
        return self._narrator

    @property
    def engine(self) -> Any:
        if self._engine is None:
            from gradtutor.engine import Engine

            self._engine = Engine(self.shell.user_ns, max_iterations=3)
        return self._engine

    # ---- the hook -----------------------------------------------------------------
    def install(self) -> None:
        self._original = self.shell.run_ast_nodes
        self._original_showtraceback = self.shell.showtraceback
        self.shell.run_ast_nodes = self._run_ast_nodes
        self.shell.showtraceback = self._showtraceback

    def uninstall(self) -> None:
        for name, ours in (("run_ast_nodes", self._run_ast_nodes), ("showtraceback", self._showtraceback)):
            if self.shell.__dict__.get(name) == ours:
                delattr(self.shell, name)  # the class's method again
        self._original = None

    def _showtraceback(self, exc_tuple: Any = None, *args: Any, **kwargs: Any) -> Any:
        """IPython's traceback of an error in a narrated cell, without the frames
        the observer adds between the user's call and torch: as without gradtutor."""
        if self._depth:
            try:
                exc_tuple = _without_tutor_frames(exc_tuple or sys.exc_info())
            except Exception:  # showing the error matters more than cleaning it
                pass
        return self._original_showtraceback(exc_tuple, *args, **kwargs)

    async def _run_ast_nodes(self, nodelist: Any, cell_name: str, *args: Any, **kwargs: Any) -> Any:
        self._running.append(cell_name)
        try:
            return await self._run_cell_code(nodelist, cell_name, *args, **kwargs)
        finally:
            self._running.pop()

    async def _run_cell_code(self, nodelist: Any, cell_name: str, *args: Any, **kwargs: Any) -> Any:
        assert self._original is not None
        original = self._original
        source = "".join(linecache.getlines(cell_name))
        if self._depth:  # a cell run from inside a narrated cell: its steps join the outer cell's
            try:
                cell_name = self._add_cell(cell_name, source)
            except Exception as exc:
                self._narration_off(exc)
            return await original(nodelist, cell_name, *args, **kwargs)
        if not (self.enabled or self.next_cell_only) or _only_own_magic(source):
            return await original(nodelist, cell_name, *args, **kwargs)
        self.next_cell_only = False
        try:
            engine = self.engine
            engine.catch_up()  # cells run while narration was off, or before it was loaded
            name = self._add_cell(cell_name, source)
            stepping = engine.stepping()
            steps = stepping.__enter__()
        except Exception as exc:
            self._narration_off(exc)
            return await original(nodelist, cell_name, *args, **kwargs)
        self._depth += 1
        try:
            return await original(nodelist, name, *args, **kwargs)
        finally:
            self._depth -= 1
            try:
                stepping.__exit__(None, None, None)
                self._show(name, source, list(steps))
            except Exception as exc:
                self._narration_off(exc)

    def _add_cell(self, cell_name: str, source: str) -> str:
        """Make the cell steppable, numbered as IPython numbers the cell the
        user ran (a ``%%gradtutor`` cell runs its body as a cell of its own).
        Returns the file name to compile it under: IPython's, unless a cell
        narrated before had the same one (ipykernel names a cell by a hash of
        its text, and ``loss.backward()`` run twice must be two places)."""
        numbers = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
        known = numbers if isinstance(numbers, dict) else {}
        outer = self._running[0] if self._running else cell_name
        number = known.get(outer) or known.get(cell_name) or self.shell.execution_count
        name = cell_name
        if name in self._cells and self._cells[name][0] != number:
            name = f"{cell_name} (In [{number}])"
            entry = linecache.cache.get(cell_name)
            if entry is not None:
                linecache.cache[name] = entry  # tracebacks read the lines from here
            if isinstance(numbers, dict):
                numbers[name] = number  # and IPython calls it "Cell In[N]"
        self._cells[name] = (number, max(1, len(source.strip("\n").split("\n"))))
        self.engine.add_source(name, source)
        return name

    def _narration_off(self, exc: BaseException) -> None:
        print(
            f"gradtutor: narration is off for this cell (internal error: {type(exc).__name__}: {exc})",
            file=sys.stderr,
        )

    # ---- showing ------------------------------------------------------------------
    def _show(self, cell_name: str, source: str, steps: list[Any]) -> None:
        if not steps:
            return
        number = self._cells.get(cell_name, (0, 1))[0]
        frame = cell_frame(
            self.narrator, steps, number=len(self.transcript.frames) + 1, place=f"In [{number}]",
            file=cell_name, source=source,
        )
        self.transcript.listings.append(Listing(cell_name, f"In [{number}]", source))
        self.transcript.frames.append(frame)
        if not frame.notes and frame.drawing is None and not any(p.grad_lines for p in frame.parts):
            return
        if self.terminal:
            self._print(frame)
        else:
            from IPython.display import display

            display(self.bundle(frame), raw=True)

    def text(self, frame: Frame, *, color: bool = False, file: Any = None) -> str:
        """The frame as the shell prints it (no colour unless asked)."""
        from rich.console import Console

        out = file or io.StringIO()
        console = Console(
            file=out, width=self.settings.width, color_system="auto" if color else None, force_terminal=color or None,
            no_color=not color, highlight=False, emoji=False, soft_wrap=False,
            force_jupyter=False,  # rich would display to the notebook itself, not write to ``out``
        )
        for renderable in frame_renderables(frame, ascii=self.settings.ascii):
            console.print(renderable, crop=False)
        return out.getvalue() if file is None else ""

    def bundle(self, frame: Frame) -> dict[str, str]:
        """The display bundle of a frame: HTML, and the shell's text as the fallback."""
        from gradtutor.export.html_fragments import frame_html

        html = frame_html(frame, inline=True, outputs=False)
        return {
            "text/plain": self.text(frame).rstrip("\n"),
            "text/html": f'<div class="gradtutor" style="margin: 0.3em 0">{html}</div>',
        }

    def _print(self, frame: Frame) -> None:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        self.text(frame, color=color, file=sys.stdout)
        sys.stdout.flush()


def _without_tutor_frames(exc_tuple: Any) -> Any:
    from gradtutor.tracebacks import user_traceback_object

    etype, value, tb = exc_tuple
    if value is None or tb is None:
        return exc_tuple
    seen: set[int] = set()
    todo = [value]
    while todo:  # the error and those chained to it
        exc = todo.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        if exc is not value:
            exc.__traceback__ = user_traceback_object(exc.__traceback__)
        todo += [exc.__cause__, exc.__context__]
    tb = user_traceback_object(tb)
    return etype, value.with_traceback(tb), tb


def _only_own_magic(source: str) -> bool:
    """Is the cell nothing but ``%gradtutor ...`` lines or a ``%%gradtutor`` cell?"""
    lines = [line.strip() for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return True
    if lines[0].startswith(_OWN_MAGIC[1]):
        return True
    return all(line.startswith(_OWN_MAGIC[0]) for line in lines)
