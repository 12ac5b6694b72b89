"""Pieces of HTML shared by the step-through page and the notebook extension.

A drawing becomes a ``<pre>`` whose styled spans carry the colours the
terminal shows (the renderer's ``THEME``, turned into CSS by rich); events
become a list of titles and explanations. ``inline=True`` puts every style
in a ``style`` attribute, for notebook front ends that drop ``<style>``
elements; otherwise elements get classes that :data:`STYLESHEET` styles.
"""

from __future__ import annotations

import html
from functools import lru_cache

from rich.style import Style

from gradtutor.narrate import EventNote
from gradtutor.render import THEME, Drawing
from gradtutor.narrate import hidden_text
from gradtutor.transcript import Frame

MONOSPACE = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace"
PICTURE_STYLE = f"font-family: {MONOSPACE}; font-size: 13px; line-height: 1.17; margin: 0.4em 0; white-space: pre"


@lru_cache(maxsize=None)
def css_of(rich_style: str) -> str:
    """A rich style ("bold green") as CSS declarations."""
    css = Style.parse(rich_style).get_html_style()
    return "; ".join(d for d in css.split("; ") if not d.startswith("text-decoration-color"))


def _class(style_name: str) -> str:
    return "gt-" + style_name.replace(" ", "-")


def _span(text: str, style_name: str | None, inline: bool, rich_style: str | None = None) -> str:
    body = html.escape(text)
    if not style_name:
        return body
    if inline:
        css = css_of(rich_style if rich_style is not None else THEME.get(style_name, ""))
        return f'<span style="{css}">{body}</span>' if css else body
    return f'<span class="{_class(style_name)}">{body}</span>'


def drawing_html(drawing: Drawing, *, inline: bool = False) -> str:
    """The drawing's lines in a ``<pre>``, markers and lines coloured as in a terminal."""
    rows = []
    for line, spans in zip(drawing.lines, drawing.spans, strict=True):
        row, at = [], 0
        for start, end, style in sorted(spans):
            if start < at:  # overlapping spans: the first one wins
                continue
            row.append(html.escape(line[at:start]))
            row.append(_span(line[start:end], style, inline))
            at = end
        row.append(html.escape(line[at:]))
        rows.append("".join(row))
    attrs = f' style="{PICTURE_STYLE}"' if inline else ""
    return f'<pre class="gt-picture"{attrs}>' + "\n".join(rows) + "</pre>"


def note_html(note: EventNote) -> str:
    """An event: its title in the colour the terminal gives it, then its explanation."""
    title = f'<strong style="{css_of(note.style)}">{html.escape(note.title)}</strong>'
    text = f"<p>{_code_spans(note.text)}</p>" if note.text else ""
    return f"<li>{title}{text}</li>"


def _code_spans(text: str) -> str:
    """Explanations quote code in backticks: shown as ``<code>``."""
    parts = html.escape(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: leave the text as it is
        return html.escape(text)
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def pre_html(text: str, css_class: str, *, inline: bool = False, color: str = "") -> str:
    style = f' style="font-family: {MONOSPACE}; white-space: pre-wrap; margin: 0.4em 0;{" color: " + color + ";" if color else ""}"'
    return f'<pre class="{css_class}"{style if inline else ""}>{html.escape(text)}</pre>'


def frame_html(frame: Frame, *, inline: bool = False, drawing: Drawing | None = None, outputs: bool = True) -> str:
    """A frame's narration: hidden-steps note, output, headers, events, picture.
    ``drawing`` replaces the frame's own (the step-through page shows the
    graph at every step); ``outputs`` False leaves out value and traceback
    (a notebook shows them itself)."""
    out: list[str] = []
    if frame.hidden:
        hidden = hidden_text(frame.hidden, frame.hidden_repeated, language=frame.language)
        out.append(f'<p class="gt-hidden"><em>{html.escape(hidden)}</em></p>')
    if outputs and frame.value is not None:
        out.append(pre_html(f"Out: {frame.value}", "gt-value", inline=inline))
    if outputs and frame.error:
        out.append(pre_html(frame.error, "gt-error", inline=inline, color="#b00000"))
    for part in frame.parts:
        if outputs and part.show_output and part.step.output:
            out.append(pre_html(part.step.output, "gt-output", inline=inline))
        if part.show_header and part.notes:
            source = part.step.source.splitlines()[0]
            out.append(f'<p class="gt-where"><b>{html.escape(part.where)}</b> <code>{html.escape(source)}</code></p>')
        if part.notes:
            style = ' style="margin: 0.3em 0; padding-left: 1.4em"' if inline else ""
            out.append(f'<ul class="gt-events"{style}>' + "".join(note_html(n) for n in part.notes) + "</ul>")
        for line in part.grad_lines:
            out.append(f'<p class="gt-grad-change"><code>{html.escape(line)}</code></p>')
    picture = drawing if drawing is not None else frame.drawing
    if picture is not None:
        out.append(drawing_html(picture, inline=inline))
    return "\n".join(out)


def theme_stylesheet() -> str:
    """CSS for the classes :func:`drawing_html` uses."""
    return "\n".join(f".{_class(name)} {{ {css_of(style)} }}" for name, style in THEME.items())
