"""A narrated run as plain data: what the text narration shows, frame by frame.

A :class:`Frame` is what the narration shows together: one step of
``gradtutor explain``, or one input (cell) of the shell or a notebook. It is
built by the same :class:`~gradtutor.narrate.Narrator` the text front ends
use, so its events, explanations and drawings are the ones they print. The
shell and the notebook extension print frames with :func:`frame_renderables`;
the exporters (``gradtutor.export``) turn a :class:`Transcript` into
Markdown, HTML, SVG or DOT. Nothing here walks the autograd graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from rich.console import RenderableType
from rich.text import Text

from gradtutor.explanations import line_locator
from gradtutor.model import Step
from gradtutor.narrate import (
    GRAD_CHANGE_STYLE,
    EventNote,
    GraphView,
    NarrationOptions,
    Narrator,
    Verbatim,
    changed_names,
    event_names,
    four_digits,
    graph_drawing,
    indented,
    note_renderable,
    old_names,
    step_frame_key,
    step_header,
    step_where,
)
from gradtutor.render import Drawing


@dataclass(frozen=True)
class Part:
    """One step of a frame: its events as the narration words them.
    ``show_header``: the narration puts the step's header line before them."""

    step: Step
    notes: tuple[EventNote, ...]
    show_header: bool
    show_output: bool  # the step's captured output is shown where it was printed
    grad_lines: tuple[str, ...] = ()  # "x.grad: [4.] → [8.]": the gradients it changed
    language: str = "en"  # of the notes, and of the header

    @property
    def where(self) -> str:
        return step_where(self.step, self.language)


@dataclass(frozen=True)
class Frame:
    """What the narration shows together, and where in the code it ran.

    ``file`` and ``first_line``..``last_line``: the lines to highlight.
    ``drawing``: the picture the narration draws here (None when the graph
    did not change); ``value``: the shell's ``Out[N]`` text; ``error``: the
    traceback shown for it."""

    number: int  # 1-based position in the transcript
    place: str  # "line 7 in f()", "In [3]"
    file: str
    first_line: int
    last_line: int
    source: str
    parts: tuple[Part, ...]
    drawing: Drawing | None
    hidden: int = 0  # loop steps not shown before this frame
    hidden_repeated: tuple[tuple[str, int], ...] = ()  # (title, count): what they did again
    value: str | None = None
    error: str | None = None
    language: str = "en"  # the narration's

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(p.step for p in self.parts)

    @property
    def last_step(self) -> Step:
        return self.parts[-1].step

    @property
    def notes(self) -> tuple[EventNote, ...]:
        return tuple(n for p in self.parts for n in p.notes)


@dataclass(frozen=True)
class Listing:
    """A source the frames point into: a script, or one input of a session."""

    file: str
    title: str  # "so_first.py", "In [3]"
    text: str


@dataclass
class Transcript:
    """A narrated run: its sources, its frames, and the options it was narrated with."""

    title: str
    options: NarrationOptions
    listings: list[Listing] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    epilogue: list[str] = field(default_factory=list)  # closing lines: hidden steps, the final traceback

    def frame(self, number: int | None) -> Frame:
        """Frame ``number`` (1-based), the last one when None. Raises
        :class:`~gradtutor.errors.UsageError` naming the valid range."""
        from gradtutor.errors import UsageError

        if not self.frames:
            raise UsageError.said("error_no_steps")
        if number is None:
            return self.frames[-1]
        if not 1 <= number <= len(self.frames):
            raise UsageError.said("error_step_range", number=number, count=len(self.frames))
        return self.frames[number - 1]

    def picture(self, frame: Frame) -> Drawing:
        """The graph after ``frame`` as the narration draws it, every marker
        of it explained (a reader may jump to any frame)."""
        return graph_drawing(frame.last_step.snapshot, self.options)

    def listing(self, file: str) -> Listing | None:
        for listing in self.listings:
            if listing.file == file:
                return listing
        return None


def step_frame(narrator: Narrator, step: Step, number: int) -> Frame:
    """One step of ``explain``, as ``Narrator.step`` narrates it."""
    lines = max(1, len(step.source.splitlines()))
    return Frame(
        number=number,
        place=step_where(step, narrator.options.language),
        file=step.file,
        first_line=step.line,
        last_line=step.line + lines - 1,
        source=step.source,
        parts=(Part(step, tuple(narrator.notes(step)), show_header=False, show_output=True,  # its heading names it
                    grad_lines=tuple(narrator.grad_change_lines(step)), language=narrator.options.language),),
        drawing=narrator.drawing_if_changed(
            step.snapshot, step_frame_key(step), event_names([step]), changed_names([step]), old_names([step])
        ),
        hidden=int(step.extra.get("hidden", 0)),
        hidden_repeated=tuple(narrator.repeated(step.extra.get("repeated", ()), step.file)),
        language=narrator.options.language,
    )


def cell_frame(
    narrator: Narrator,
    steps: Sequence[Step],
    *,
    number: int,
    place: str,
    file: str,
    source: str,
    value: str | None = None,
    error: str | None = None,
    show_output: bool = False,
) -> Frame:
    """One input of the shell or a notebook: the events of all its steps, then
    the graph after its last step. Steps get their header line when events
    come from more than one statement."""
    with_events = [s for s in steps if s.events]
    many = len(with_events) > 1 and len({(s.line, s.function) for s in with_events}) > 1
    # An explanation is given once per input: a loop that adds to two
    # gradients four times says why once; later notes keep their title.
    explained: set[str] = set()

    def once(notes: Sequence[EventNote]) -> tuple[EventNote, ...]:
        out = []
        for note in notes:
            if note.text and note.key in explained:
                note = replace(note, text="")
            elif note.text:
                explained.add(note.key)
            out.append(note)
        return tuple(out)

    parts = tuple(
        Part(step, once(narrator.notes(step)), show_header=many and bool(step.events), show_output=show_output,
             grad_lines=tuple(narrator.grad_change_lines(step)), language=narrator.options.language)
        for step in steps
    )
    drawing = narrator.drawing_if_changed(
        steps[-1].snapshot, step_frame_key(steps[-1]), event_names(steps), changed_names(steps), old_names(steps)
    ) if steps else None
    return Frame(
        number=number,
        place=place,
        file=file,
        first_line=1,
        last_line=max(1, len(source.strip("\n").split("\n"))),
        source=source,
        parts=parts,
        drawing=drawing,
        value=value,
        error=error,
        language=narrator.options.language,
    )


def frame_renderables(frame: Frame, *, ascii: bool) -> list[RenderableType]:
    """The narration of a frame for a terminal, as the shell prints it after
    an input's value and traceback: output, headers, events, the graph."""
    out: list[RenderableType] = []
    for part in frame.parts:
        if part.show_output and part.step.output:
            out.append(Verbatim(part.step.output.rstrip("\n")))
        if part.show_header:
            out.append(indented(step_header(part.step, ascii=ascii, language=part.language), 0))
        out.extend(indented(note_renderable(n, ascii=ascii)) for n in part.notes)
        out.extend(indented(Text(line, GRAD_CHANGE_STYLE)) for line in part.grad_lines)
    if frame.drawing is not None:
        out.append(indented(GraphView(frame.drawing)))
    return out


def cell_place(number: int, line: int, cell_lines: int, language: str) -> str:
    """A place in a session's input: "In [3]", or "In [3] line 2" when the input has several lines."""
    if cell_lines <= 1:
        return f"In [{number}]"
    return f"In [{number}] " + line_locator(language)("", line)




def format_grad(value: Any) -> str:
    """A gradient as the exports show it: numbers to 4 significant digits,
    nested lists as lists, a summary of a large tensor as its fields."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_grad(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_grad(v) for v in value) + "]"
    if isinstance(value, float):
        return four_digits(value)
    return str(value)
