"""``gradtutor explain`` in text: each step under its heading, in the order it ran.

The heading of a statement is printed when it starts (unless it is a loop
step that may well be hidden), so that what it prints, and the steps of the
functions it calls, come under it. What the program prints is captured and
printed under the heading of the statement that printed it. When other
steps came between a heading and the end of its statement (a call into the
user's own function), the statement's events come under a short
"(continued)" heading, so nothing reads as belonging to the step above it.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.console import Group, RenderableType

from gradtutor.model import Step
from gradtutor.narrate import (
    Narrator, Verbatim, changed_names, event_names, hidden_note, old_names, step_frame_key, step_header, step_where,
)
from gradtutor.render.words import say


class NarrationStream:
    """The file the narration's console writes to: the terminal, past the
    capture of the program's own output while a run is going on."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.write_through: Callable[[str], bool] | None = None  # the engine's, once it runs

    def write(self, text: str) -> int:
        if self.write_through is None or not self.write_through(text):
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty()) if isatty is not None else False

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"


class StepPrinter:
    """Prints steps as ``Engine`` announces and finishes them."""

    def __init__(self, narrator: Narrator, show: Callable[[RenderableType], None]) -> None:
        self.narrator = narrator
        self.show = show
        self.headed: set[int] = set()  # steps whose heading is printed
        # Of the steps hidden since the last step finished, those the notes
        # of headings printed since told of (their count, and each repeated
        # event's): the engine counts them until a step is shown, the next
        # note tells only the rest.
        self._told: tuple[int, dict[int, int]] = (0, {})
        self.last: int | None = None  # the step printed to last
        # A note held back: a step that said nothing else would have printed
        # it under its heading, right above the next step's note, as if they
        # were two runs of hidden steps. The next note tells them with its own.
        self._held: tuple[int, list[tuple[str, int]]] = (0, [])

    def begin(self, start: Any) -> None:
        """``start``: an ``engine.StepStart``."""
        if start.pending_output:
            self._flush_held()
            self._output(start.pending_output)  # the statement further up printed it
        if not start.shown:
            return
        options = self.narrator.options
        header = step_header(start, ascii=options.ascii, language=options.language)
        note = self._render_note(self._note(start.hidden, start.repeated, start.file))
        self._show_all([note, header] if note is not None else [header])
        self.headed.add(start.index)
        self._told = (start.hidden, {id(e): n for e, n in start.repeated})
        self.last = start.index

    def finish(self, step: Step) -> None:
        narrator = self.narrator
        counted = self._note(step.extra.get("hidden", 0), step.extra.get("repeated", ()), step.file)
        self._told = (0, {})
        body: list[RenderableType] = [_verbatim(step.output)] if step.output else []
        body.extend(narrator.events(step))
        body.extend(narrator.grad_changes(step))
        body.extend(narrator.graph_if_changed(
            step.snapshot, step_frame_key(step), event_names([step]), changed_names([step]), old_names([step])
        ))
        headed = step.index in self.headed
        self.headed.discard(step.index)
        if headed and counted is not None and not body:
            self._held = counted  # (told by the next note: see _held)
            return
        shown: list[RenderableType] = []
        note = self._render_note(counted)
        if note is not None:
            shown.append(note)
        if headed:
            if note is not None:
                self.last = None  # what the step says next needs its heading again
            if self.last != step.index and body:
                language = narrator.options.language
                where = step_where(step, language) + say(language, "continued")
                shown.append(step_header(step, ascii=narrator.options.ascii, where=where))
        else:
            shown.append(step_header(step, ascii=narrator.options.ascii, language=narrator.options.language))
        self._show_all(shown + body)
        self.last = step.index

    def _note(self, hidden: int, repeated: Any, file: str) -> tuple[int, list[tuple[str, int]]] | None:
        """The steps hidden since the last step finished (``hidden``,
        ``repeated``: the engine's count) that no note printed since told
        of, with a note held back: their count, and (title, count) of what
        they did again; None when there are none."""
        told, told_repeated = self._told
        held, self._held = self._held, (0, [])
        count = max(hidden - told, 0) + held[0]
        if not count:
            return None
        rest = [(e, n - told_repeated.get(id(e), 0)) for e, n in repeated] if hidden > told else []
        titles = dict(held[1])
        for title, n in self.narrator.repeated([(e, n) for e, n in rest if n > 0], file):
            titles[title] = titles.get(title, 0) + n
        return count, list(titles.items())

    def _render_note(self, counted: tuple[int, list[tuple[str, int]]] | None) -> RenderableType | None:
        if counted is None:
            return None
        options = self.narrator.options
        return hidden_note(counted[0], counted[1], options.ascii, options.language)

    def _flush_held(self) -> None:
        """Print a held note now: something else is printed next."""
        if self._held[0]:
            note = self._render_note(self._note(0, (), ""))
            if note is not None:
                self.show(note)

    def _show_all(self, renderables: list[RenderableType]) -> None:
        """One print for all (each print costs the console a setting up)."""
        if len(renderables) == 1:
            self.show(renderables[0])
        elif renderables:
            self.show(Group(*renderables))

    def late_output(self, text: str) -> None:
        """What the program printed after the last step was narrated (its
        tracing may have stopped): shown, never lost."""
        self._flush_held()
        if text:
            self._output(text)

    def _output(self, text: str) -> None:
        self.show(_verbatim(text))


def _verbatim(text: str) -> Verbatim:
    # As the program printed it; a last line without a newline is ended
    # here, so the next heading starts on a line of its own.
    return Verbatim(text[:-1] if text.endswith("\n") else text)
