"""Turns steps into rich renderables for people: header, events, graph.

Shared by ``gradtutor explain`` and the shell. Nothing here prints: the
front ends print what these functions return.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text


from gradtutor.explanations import ExplanationBook, Locate
from gradtutor.model import LEAF, LEVEL_OPS, LEVEL_STATEMENTS, MODULE, Event, Graph, Snapshot, Step, is_routine
from gradtutor.render import LAYERED_LIMIT, Drawing, GraphView, render_graph
from gradtutor.render.vertical_view import VERTICAL
from gradtutor.render.focus import Focus, touched_part
from gradtutor.render.repeats import fold_repeats
from gradtutor.render.words import say, shown_name
from gradtutor.render.cells import text_width, wrap_cells

_SEVERITY_STYLE = {
    "error": "bold red",
    "warning": "bold yellow",
    "graph-growth": "bold yellow",
    "grad-accumulated": "bold magenta",
    "grad-before-error": "bold magenta",
    "name-rebound": "bold cyan",
    "backward": "bold green",
}
INDENT = 3
GRAD_CHANGE_STYLE = "magenta"


# A step's picture aims at one screen: past this many lines, loops fold further.
MAX_PICTURE_LINES = 40


@dataclass
class NarrationOptions:
    level: str = LEVEL_STATEMENTS
    width: int = 80
    ascii: bool = False
    show_graph: bool = True
    language: str = "en"
    locate: Locate | None = None
    # "touched": a step draws what it changed and the inputs of that; "full":
    # the whole graph. ``full_graph_hint`` says how to see it all.
    graph: str = "touched"
    full_graph_hint: str = "--graph full"


class Indented:
    """A renderable shifted right by ``by`` cells, with no padding on the right
    (rich's Padding pads every line to the full width)."""

    def __init__(self, renderable: RenderableType, by: int = INDENT) -> None:
        self.renderable = renderable
        self.by = by

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        inner = options.update(width=max(1, options.max_width - self.by))
        lines = console.render_lines(self.renderable, inner, pad=False)
        margin = Segment(" " * self.by)
        newline = Segment.line()
        for line in lines:
            while line and not line[-1].text.strip() and not line[-1].control:
                line = line[:-1]  # trailing blanks
            if line:
                last = line[-1]
                line = [*line[:-1], Segment(last.text.rstrip(), last.style, last.control)]
                yield margin
                yield from line
            yield newline


class Verbatim:
    """Text printed line by line as it is: rich neither wraps nor crops it (a
    traceback, a program's output, code); a long line wraps in the terminal.
    ``prefix`` is put before the first line in its own style (``Out[3]: ``)."""

    def __init__(self, text: str, style: str = "", prefix: str = "", prefix_style: str = "") -> None:
        self.text = text
        self.style = style
        self.prefix = prefix
        self.prefix_style = prefix_style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        style = console.get_style(self.style) if self.style else None
        if self.prefix:
            yield Segment(self.prefix, console.get_style(self.prefix_style) if self.prefix_style else None)
        for line in self.text.split("\n"):
            yield Segment(line, style)
            yield Segment.line()


class Wrapped:
    """Prose wrapped to the width it is given, CJK included."""

    def __init__(self, text: str, style: str = "") -> None:
        self.text = text
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Verbatim("\n".join(wrap_cells(self.text, max(10, options.max_width))), self.style)


def indented(renderable: RenderableType, by: int = INDENT) -> Indented:
    return Indented(renderable, by)


def plain_lines(renderable: RenderableType, width: int, ascii_only: bool = False) -> list[str] | None:
    """The lines a console without colour prints for ``renderable`` at
    ``width`` cells (``print(renderable, crop=False)``), made here for the
    tutor's own renderables, which are lines of plain text already (rich
    would cut each into segments, crop and join them again). None for any
    other renderable, and where rich would wrap, cut or fold a line: rich
    prints those."""
    lines: list[str] = []
    return lines if _plain_into(lines, renderable, width, None, ascii_only) else None


def console_printer(console: Console) -> Callable[[RenderableType], None]:
    """How a front end prints a renderable: ``console.print(renderable,
    crop=False)``; on a console without colour, the lines ``plain_lines``
    makes, printed as they are (the same text, without rich's splitting)."""
    if console.color_system is not None or console.is_jupyter:
        return lambda renderable: console.print(renderable, crop=False)

    ascii_only = console.options.ascii_only

    def show(renderable: RenderableType) -> None:
        lines = plain_lines(renderable, console.width, ascii_only)
        if lines is None:
            console.print(renderable, crop=False)
        elif lines:
            if console.record or console.quiet:
                console.print(Verbatim("\n".join(lines)), crop=False)
                return
            # Written as rich would write them (its print costs 30 µs a
            # call in its machinery alone): to the console's file, flushed,
            # a closed pipe handled by rich.
            try:
                console.file.write("\n".join(lines) + "\n")
                console.file.flush()
            except BrokenPipeError:
                console.on_broken_pipe()

    return show


def _plain_into(lines: list[str], renderable: Any, width: int, crop: int | None, ascii_only: bool) -> bool:
    """``plain_lines``' work: ``renderable``'s lines appended to ``lines``;
    ``crop``: the cells rich crops its lines to (inside an ``Indented``), None
    at the top (not cropped). False: not one to print without rich."""
    kind = type(renderable)
    if kind is Group:
        return all(_plain_into(lines, item, width, crop, ascii_only) for item in renderable.renderables)
    if kind is Indented:
        inner_width = max(1, width - renderable.by)
        inner: list[str] = []
        if not _plain_into(inner, renderable.renderable, inner_width, inner_width, ascii_only):
            return False
        margin = " " * renderable.by
        lines.extend(margin + line if line else "" for line in (line.rstrip() for line in inner))
        return True
    if kind is Verbatim:
        own = renderable.text.split("\n")
        own[0] = renderable.prefix + own[0]
    elif kind is Wrapped:
        own = wrap_cells(renderable.text, max(10, width))
    elif kind is Bulleted:
        lead = renderable.bullet + " "
        own = [
            (lead if i == 0 else " " * len(lead)) + line
            for i, line in enumerate(wrap_cells(renderable.text, max(10, width - len(lead))))
        ]
    elif kind is OneLine:
        plain = renderable.text.plain
        if text_width(plain) > width:
            plain = renderable.fitted(width).plain
        if "\n" in plain:
            return False
        own = [plain]
    elif kind is Text:
        plain = renderable.plain
        if (
            "\n" in plain or "\t" in plain or text_width(plain) > width
            or renderable.end != "\n" or renderable.justify not in (None, "default", "left")
        ):
            return False  # (rich wraps, cuts or aligns it)
        own = [plain]
    elif kind is GraphView:
        own = renderable.drawing(width, ascii_only).lines
        if any(text_width(line) > width for line in own):
            return False
    else:
        return False
    if crop is not None and any(text_width(line) > crop for line in own):
        return False
    lines.extend(own)
    return True


@dataclass(frozen=True)
class EventNote:
    """What the narration says of one event, as plain data (exporters read it):
    its title and, unless the event is routine, its explanation (else "")."""

    kind: str
    title: str
    text: str
    style: str  # rich style of the bullet and title
    key: str = ""  # the explanation's key ("backward", "error/second-backward")


def event_note(
    event: Event,
    book: ExplanationBook,
    *,
    full: bool = True,
    file: str = "",
    locate: Locate | None = None,
    ascii: bool = False,
) -> EventNote:
    explanation = book.explain(event, file=file, locate=locate)
    style = _SEVERITY_STYLE.get(event.kind, "bold")
    if event.kind == "name-rebound" and not event.get("old_in_graph"):
        style = "bold"
    text = "" if not full or is_routine(event) else explanation.text
    title = explanation.title
    times = event.get("times")
    if isinstance(times, int) and times > 1:
        title += say(book.language, "repeats", times=_times(ascii), count=times)
    return EventNote(event.kind, title, text, style, explanation.key)


class Bulleted:
    """A title after a bullet; a long one wraps under its own first word."""

    def __init__(self, bullet: str, text: str, style: str = "") -> None:
        self.bullet = bullet
        self.text = text
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        style = console.get_style(self.style) if self.style else None
        lead = self.bullet + " "
        for i, line in enumerate(wrap_cells(self.text, max(10, options.max_width - len(lead)))):
            yield Segment((lead if i == 0 else " " * len(lead)) + line, style)
            yield Segment.line()


def note_renderable(note: EventNote, *, ascii: bool) -> RenderableType:
    """One event: a bullet with its title and, unless routine, its explanation."""
    bullet = "*" if ascii else "•"
    title = Bulleted(bullet, note.title, note.style)
    if not note.text:
        return title
    return Group(title, indented(Wrapped(note.text), 2))


def event_renderable(
    event: Event,
    book: ExplanationBook,
    *,
    ascii: bool,
    full: bool = True,
    file: str = "",
    locate: Locate | None = None,
) -> RenderableType:
    """One event: a bullet with its title and, unless routine, its explanation."""
    return note_renderable(event_note(event, book, full=full, file=file, locate=locate, ascii=ascii), ascii=ascii)


def graph_renderable(
    snapshot: Snapshot, options: NarrationOptions, level: str | None = None, explained: set[str] | None = None
) -> RenderableType:
    """The graph drawing. ``explained``: legend keys shown before, left out this
    time (a marker is explained the first time it appears); updated."""
    return indented(GraphView(graph_drawing(snapshot, options, level, explained)))


def graph_drawing(
    snapshot: Snapshot,
    options: NarrationOptions,
    level: str | None = None,
    explained: set[str] | None = None,
    graph: Graph | None = None,
    notes: tuple[str, ...] = (),
    view: str | None = None,
) -> Drawing:
    """The drawing ``graph_renderable`` shows, as data: of the snapshot's
    graph, or of ``graph`` (a part of it) with ``notes`` under it."""
    level = level or options.level
    drawing = render_graph(
        snapshot.graph(level) if graph is None else graph,
        width=max(20, options.width - INDENT),
        charset="ascii" if options.ascii else "unicode",
        current_step=snapshot.step,
        level=level,
        language=options.language,
        locate=options.locate,
        omit_keys=frozenset(explained or ()),
        notes=notes,
        view=view,
    )
    if explained is not None:
        explained.update(drawing.keys)
    return drawing


def _least_entries(graph: Graph) -> int:
    """How many entries the list of ``graph`` has at least. The op view lists
    a module's parameter inside the op that uses it, with the transpose
    between them (``model.0.weight.T``): each leaf that may be a parameter
    takes itself and at most one more node out of the list."""
    leaves = sum(1 for n in graph.nodes if n.kind == LEAF)
    return max(0, len(graph.nodes) - 2 * leaves)


def step_frame_key(step: Any) -> tuple[Any, int]:
    """Whose names a step's snapshot has, as (whose, which call): the
    module's (every shell input shares them), or one call of a function
    (not another function of the same name: ``forward`` of two classes)."""
    if step.function == "<module>":
        return ("<module>",), 0
    return (step.file, step.function, step.function_line), step.call


def step_where(step: Any, language: str = "en") -> str:
    """Where a step ran, as its header says: "line 7 in f(), run 2" ("第 7 行，
    f() 中，第 2 次"). ``step``: a Step, or anything with its ``line``,
    ``function`` and ``iteration``."""
    where = say(language, "step_line", line=step.line)
    if step.function != "<module>":
        where += say(language, "step_in", function=step.function)
    if step.iteration > 1:
        where += say(language, "step_run", n=step.iteration)
    if getattr(step, "leaving", False):
        where += say(language, "step_leave")
    return where


class OneLine:
    """Text kept on one line, cut with "…" at the width it is given (rich's
    ``no_wrap`` still breaks a Text at its spaces when printed on its own)."""

    def __init__(self, text: Text, ascii: bool = False) -> None:
        self.text = text
        self.ascii = ascii

    @property
    def plain(self) -> str:
        return self.text.plain

    def fitted(self, width: int) -> Text:
        """The line as printed at ``width`` cells."""
        line = self.text.copy()
        if self.ascii:
            if line.cell_len > width:
                line.truncate(max(1, width - 3))
                line.append("...")
        else:
            line.truncate(max(1, width), overflow="ellipsis")
        return line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.fitted(options.max_width).render(console)
        yield Segment.line()


def step_header(step: Any, *, ascii: bool, where: str | None = None, language: str = "en") -> OneLine:
    """``── line 7 in f() z = x @ w + b``: a step's heading, on one line, its
    statement's first line (``…`` when it has more). ``where`` overrides the place."""
    first, *rest = step.source.splitlines() or [""]
    rule = "--" if ascii else "──"
    place = where if where is not None else step_where(step, language)
    more = (" ..." if ascii else " …") if rest else ""
    return OneLine(Text.assemble((f"{rule} {place} ", "bold blue"), (first.strip() + more, "bold")), ascii)


_GRAD_TEXT_LIMIT = 60


def _times(ascii: bool) -> str:
    return "x" if ascii else "×"


def format_grad(value: Any, ascii: bool = False, language: str = "en") -> str:
    """A gradient as ``Snapshot.grads`` holds it, in a few characters: the
    values while they fit (``[4.0, 8.0]``), else a summary in ``language``."""
    if value is None:
        return "None"
    if isinstance(value, dict):  # summarised by the snapshot: too many elements
        shape = _times(ascii).join(str(s) for s in value.get("shape", ()))
        if "mean" not in value:
            return f"<{shape}>"
        return say(language, "grad_shape", shape=shape, mean=f"{value['mean']:.4g}", norm=f"{value['norm']:.4g}")
    text = _format_values(value)
    if len(text) <= _GRAD_TEXT_LIMIT:
        return text
    flat = list(_flatten(value))
    mean = sum(flat) / len(flat) if flat else 0.0
    return say(language, "grad_values", count=len(flat), mean=f"{mean:.4g}")


def four_digits(value: float) -> str:
    """``value`` to 4 significant digits. One that only rounds to a whole
    number keeps its zeros, so 1.0004 does not read as exactly 1: "1.000"."""
    text = f"{value:.4g}"
    return text if any(c in text for c in ".en") or float(text) == value else f"{value:#.4g}"


def _format_values(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_format_values(v) for v in value) + "]"
    if isinstance(value, float):
        text = four_digits(value)
        return text if any(c in text for c in ".en") else text + "."  # (a whole number as torch prints one: "1.")
    return str(value)


def _flatten(value: Any) -> Iterator[float]:
    if isinstance(value, list):
        for v in value:
            yield from _flatten(v)
    elif isinstance(value, (int, float)):
        yield float(value)


def event_names(steps: Iterable[Step]) -> frozenset[str]:
    """The names the steps' events are about: bound, rebound, grown, and the
    tensor a backward went through (kept by retain_graph, its graph is
    drawn all the same)."""
    return frozenset(
        name for step in steps for e in step.events
        if (name := e.get("root") if e.kind == "backward" else e.get("name") if e.kind in (
            "name-bound", "name-rebound", "graph-growth") else None)
    )


def old_names(steps: Iterable[Step]) -> frozenset[str]:
    """The names the steps' events said moved on while what they held stays
    in the graph: the explanation says it is drawn as ``x (old)``."""
    return frozenset(
        e.get("name") for step in steps for e in step.events
        if e.kind == "name-rebound" and e.get("old_in_graph") and e.get("name")
    )


def tells_a_change(event: Event) -> bool:
    """Does ``event`` tell that a named tensor or module changed in place, or
    its gradients did? Changed outside autograd (an optimizer step, an EMA of
    a model's weights under no_grad), it gets no new node: it is drawn as
    before, and only these words say that it changed."""
    return event.kind in ("inplace", "grad-reset") and bool(event.get("name"))


def changed_names(steps: Iterable[Step]) -> frozenset[str]:
    """The names the steps' events told changed (``tells_a_change``; with the
    name a change went through: ``d`` of "c was changed in place through d"),
    those of the loop steps hidden before them included (and of the hidden
    last steps of calls that returned, told with the caller's step: their
    names are looked up in its frame)."""
    return frozenset(
        name for step in steps
        for e in (*step.events, *(event for event, _ in step.extra.get("repeated", ())))
        if tells_a_change(e)
        for name in (e["name"], e.get("through")) if name
    )


def hidden_text(
    count: int, repeated: Sequence[tuple[str, int]] = (), *, more: bool = True, ascii: bool = False, language: str = "en"
) -> str:
    """What a note about hidden loop steps says: that they said nothing new,
    and, when they had events, which ones happened again and how often.
    ``more``: since the last shown step; else the run's total, which counts
    the steps of every note before it again ("in all")."""
    s = "s" if count != 1 else ""
    what = (say(language, "hidden_what", count=count, more=say(language, "hidden_more"), s=s) if more
            else say(language, "hidden_all", count=count, s=s))
    if not repeated:
        return say(language, "hidden_quiet", what=what)
    again = say(language, "hidden_sep").join(
        title + say(language, "again_times", times=_times(ascii), count=n) if n > 1 else title for title, n in repeated
    )
    return say(language, "hidden_again", what=what, again=again)


def quiet_text(functions: list[Any], language: str, shown: int = 4) -> str:
    """The closing note on functions run without stepping (see plain_calls),
    beside ``hidden_text``'s on loop steps not shown, for functions all quiet
    for one reason (plain calls, or settled ones: ``touched_tensors``):
    how many calls, of which functions (the ``shown`` most called by name)."""
    count = sum(f.unstepped for f in functions)
    sep = say(language, "list_sep")
    names = sep.join(f.name for f in functions[:shown])
    if len(functions) > shown:
        names += say(language, "quiet_more", count=len(functions) - shown)
    stepped = min(f.stepped for f in functions)
    kind = "settled" if functions[0].touched_tensors else "quiet"
    key = f"{kind}_function" if len(functions) == 1 else f"{kind}_functions"
    return say(language, key, count=count, s="s" if count != 1 else "", names=names, stepped=stepped)


def quiet_texts(functions: list[Any], language: str) -> list[str]:
    """``quiet_text``'s notes on all the functions run without stepping: one
    on those that touched no tensor, one on those whose calls settled."""
    groups = ([f for f in functions if not f.touched_tensors], [f for f in functions if f.touched_tensors])
    return [quiet_text(group, language) for group in groups if group]


def hidden_note(
    count: int, repeated: Sequence[tuple[str, int]] = (), ascii: bool = False, language: str = "en"
) -> RenderableType:
    return indented(Wrapped(hidden_text(count, repeated, ascii=ascii, language=language), "dim"))


class Narrator:
    """Makes the renderables for a sequence of steps; draws a graph only when it changed."""

    def __init__(self, book: ExplanationBook, options: NarrationOptions, locate: Locate | None = None) -> None:
        self.book = book
        self.options = options
        self.locate = locate
        self.last_drawn: Graph | None = None
        self.last_frame: Any = None  # the frame whose names the last drawing had
        # The graph last seen from each function (or the module), and from
        # which of its calls: whose -> (frame, graph) (see step_frame_key).
        self.last_in_frame: dict[Any, tuple[Any, Graph]] = {}
        self.explained: set[str] = set()  # legend keys shown already
        self.told: set[str] = set()  # the explanations of events given already, word for word
        # The nodes changed since the last picture that look as they did (told
        # changed in place: ``changed_names``), and the modules made or changed
        # with no picture drawn: the next picture draws them, never "unchanged
        # since the last picture". By id: a name may mean another tensor in the
        # frame of the next picture.
        self.unseen_changes: set[str] = set()
        self.last_picture: tuple[str, ...] | None = None  # the lines of the last picture shown

    def repeated(self, events: Sequence[tuple[Event, int]], file: str = "") -> list[tuple[str, int]]:
        """(title, count) of the events hidden loop steps repeated."""
        return [(self.book.explain(e, file=file, locate=self.locate).title, n) for e, n in events]

    def notes(self, step: Step) -> list[EventNote]:
        """What the narration says of the step's events. An error the tutor
        has nothing to add to (a NameError, a shape mismatch) is left to the
        traceback, which already says it: repeating its last line helps no one."""
        return [
            event_note(e, self.book, file=step.file, locate=self.locate, ascii=self.options.ascii)
            for e in step.events
            if not (e.kind == "error" and e.get("cause") == "other")
        ]

    def events(self, step: Step) -> list[RenderableType]:
        """The step's events, each with its explanation the first time those
        words would be said (a loop's second and third rounds tell the same
        accumulation at the same line: its title says it again, not its
        paragraph); other words (another line, another backward) are said."""
        out: list[RenderableType] = []
        for note in self.notes(step):
            if note.text in self.told:
                note = replace(note, text="")
            elif note.text:
                self.told.add(note.text)
            out.append(indented(note_renderable(note, ascii=self.options.ascii)))
        return out

    def grad_change_lines(self, step: Step) -> list[str]:
        """``x.grad: [4.] → [8.]``, one line per gradient the step changed."""
        arrow = "->" if self.options.ascii else "→"
        ascii, language = self.options.ascii, self.options.language
        return [
            f"{shown_name(name, language)}.grad: {format_grad(before, ascii, language)} {arrow} "
            f"{format_grad(after, ascii, language)}"
            for name, before, after in step.grad_changes
        ]

    def grad_changes(self, step: Step) -> list[RenderableType]:
        return [indented(Text(line, GRAD_CHANGE_STYLE)) for line in self.grad_change_lines(step)]

    def drawing_if_changed(
        self, snapshot: Snapshot, frame: Any = None, names: Collection[str] = (), changed: Collection[str] = (),
        old: Collection[str] = (),
    ) -> Drawing | None:
        """The drawing to show after ``snapshot``: None when the graph is the one
        drawn last (or empty, or drawings are off). ``frame``: which function's
        names the snapshot has (``step_frame_key``); ``names``: the
        ones the step's events are about (``event_names``), drawn whatever
        else changed; ``changed``: the ones they told changed in place
        (``changed_names``), whose nodes are drawn by the next picture there
        is, this one or a later one; ``old``: the ones they told moved on
        from a tensor still in the graph (``old_names``), drawn as ``x (old)``."""
        graph = snapshot.graph(self.options.level)
        if changed:
            told = frozenset(changed)
            self.unseen_changes.update(n.id for n in graph.nodes if n.names and not told.isdisjoint(n.names))
        previous = self.last_drawn
        whose = frame[0] if frame is not None else None
        seen = self.last_in_frame.get(whose)
        # (a call's first picture: its names are not the last call's, none compared)
        named_previous = previous if frame == self.last_frame else seen[1] if seen is not None and seen[0] == frame else None
        differs = graph != previous
        self.last_drawn, self.last_frame, self.last_in_frame[whose] = graph, frame, (frame, graph)
        if not (self.options.show_graph and graph.nodes and differs):
            return None
        if self.options.graph == "full":
            self.unseen_changes.clear()
            return graph_drawing(snapshot, self.options, explained=self.explained)
        part, focus = touched_part(graph, previous, named_previous, names, old_names=old)
        if not part.edges and all(n.kind == MODULE for n in part.nodes):
            # Only a module's parameters, used by no graph yet (its __init__):
            # no autograd to see. Made or changed since the last picture, it
            # is drawn by the next one, not left out of it as unchanged.
            self.unseen_changes.update(n.id for n in part.nodes)
            return None
        if self.unseen_changes:
            part, focus = touched_part(graph, previous, named_previous, names, self.unseen_changes, old)
            self.unseen_changes.clear()
        notes = (self.focus_note(focus),) if focus.omitted else ()
        drawing = self.bounded_drawing(snapshot, part, notes)
        self.explained.update(drawing.keys)
        return drawing

    def bounded_drawing(self, snapshot: Snapshot, part: Graph, notes: tuple[str, ...]) -> Drawing:
        """``part`` drawn in about one screen: loops folded to their first and
        last two rounds, then to one, each as the picture and as the list;
        then the last ``MAX_PICTURE_LINES`` lines of the list, with a note
        saying how to see all."""
        hint = self.options.full_graph_hint
        dots, times = ("...", "x") if self.options.ascii else ("…", "×")
        listed: Drawing | None = None  # the most folded list, once drawn
        for keep in (2, 1):
            folded_part, folded = fold_repeats(part, keep=keep, ascii=self.options.ascii)
            fold_notes = (self.say("fold", nodes=folded.nodes, hint=hint, dots=dots, times=times),) if folded.nodes else ()
            entries = _least_entries(folded_part)
            for view in (None, VERTICAL):
                # The list has a line per entry at least: past the bound it
                # cannot fit, and is not drawn only to be measured.
                as_list = view == VERTICAL or self.options.level == LEVEL_OPS and entries > LAYERED_LIMIT
                if as_list and entries > MAX_PICTURE_LINES:
                    continue
                drawing = graph_drawing(
                    snapshot, self.options, explained=set(self.explained), graph=folded_part,
                    notes=notes + fold_notes, view=view,
                )
                if len(drawing.picture) <= MAX_PICTURE_LINES:
                    return drawing
                listed = drawing if keep == 1 and view == VERTICAL else None
        # Still too long: the most folded list, its last lines. The list gives
        # inputs before what uses them, so what the step made is at its end.
        if listed is None:
            listed = graph_drawing(
                snapshot, self.options, explained=set(self.explained), graph=folded_part,
                notes=notes + fold_notes, view=VERTICAL,
            )
        gone = listed.rows_to_cut(MAX_PICTURE_LINES)
        cut_note = self.say("cut", lines=gone, hint=hint)
        drawing = graph_drawing(
            snapshot, self.options, explained=set(self.explained), graph=folded_part,
            notes=notes + fold_notes + (cut_note,), view=VERTICAL,
        )
        return drawing.last(len(drawing.picture) - gone)

    def say(self, key: str, **fields: object) -> str:
        return say(self.options.language, key, **fields)

    def focus_note(self, focus: Focus) -> str:
        """"not drawn, unchanged since the last picture: w, b and 14 more nodes (--graph full shows all)"."""
        language, shown = self.options.language, focus.names[:3]
        if shown:
            rest = focus.omitted - len(shown)
            names = say(language, "list_sep").join(shown_name(name, language) for name in shown)
            more = say(language, "focus_more", count=rest) if rest else ""
        else:
            names, more = say(language, "focus_only", count=focus.omitted), ""
        return say(language, "focus", names=names, more=more, hint=self.options.full_graph_hint)

    def graph_if_changed(
        self, snapshot: Snapshot, frame: Any = None, names: Collection[str] = (), changed: Collection[str] = (),
        old: Collection[str] = (),
    ) -> list[RenderableType]:
        drawing = self.drawing_if_changed(snapshot, frame, names, changed, old)
        if drawing is None:
            return []
        if drawing.picture == self.last_picture:
            # A graph made anew that looks as the one just drawn (a loop's
            # next round, after steps not shown): said in a line, not drawn again.
            return [indented(Wrapped(self.say("same_picture"), "dim"))]
        self.last_picture = drawing.picture
        return [indented(GraphView(drawing))]

    def step(self, step: Step) -> list[RenderableType]:
        """Everything ``explain`` shows for one step."""
        out: list[RenderableType] = []
        hidden = step.extra.get("hidden", 0)
        if hidden:
            out.append(hidden_note(hidden, self.repeated(step.extra.get("repeated", ()), step.file), self.options.ascii,
                                   self.options.language))
        out.append(step_header(step, ascii=self.options.ascii, language=self.options.language))
        out.extend(self.events(step))
        out.extend(self.grad_changes(step))
        out.extend(self.graph_if_changed(
            step.snapshot, step_frame_key(step), event_names([step]), changed_names([step]), old_names([step])
        ))
        return out
