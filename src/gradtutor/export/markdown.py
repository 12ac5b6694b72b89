"""A narrated run as Markdown, ready to paste into a forum answer or an issue.

Each frame: a heading with its place, the code in a ``python`` block, any
output, value or traceback in ``text`` blocks, the events as a list (title in
bold, explanation after it) and, where the narration draws one, the picture
with its legend in a ``text`` block. Renders as intended on GitHub.
"""

from __future__ import annotations

import re

from gradtutor.narrate import hidden_text
from gradtutor.render.words import say
from gradtutor.transcript import Frame, Transcript

# Characters that Markdown may read as formatting outside code spans; ``_``
# and ``*`` inside a word (``retain_graph``) are left alone, as GitHub does.
_SPECIAL = re.compile(r"([\\\[\]<>#|~`]|(?<!\w)[_*]|[_*](?!\w))")


def escape(text: str) -> str:
    """Prose with its `code spans` kept and everything else escaped."""
    pieces = re.split(r"(`[^`\n]+`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else _SPECIAL.sub(r"\\\1", p) for p in pieces)


def fenced(text: str, language: str = "text") -> str:
    """A fenced block longer than any run of backticks inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def render_markdown(transcript: Transcript) -> str:
    out = [f"# {escape(transcript.title)}", ""]
    for frame in transcript.frames:
        out += _frame(frame)
    for line in transcript.epilogue:
        out += [fenced(line) if "\n" in line else f"*{escape(line)}*", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _frame(frame: Frame) -> list[str]:
    out: list[str] = []
    if frame.hidden:
        out += [f"*{escape(hidden_text(frame.hidden, frame.hidden_repeated, language=frame.language))}*", ""]
    out += [f"### {frame.number}. {escape(frame.place)}", "", fenced(frame.source, "python"), ""]
    if frame.value is not None:
        out += [fenced(f"Out: {frame.value}"), ""]
    if frame.error:
        out += [fenced(frame.error), ""]
    for part in frame.parts:
        if part.show_output and part.step.output:
            out += [say(frame.language, "output"), "", fenced(part.step.output), ""]
        if part.show_header and part.notes:
            out += [f"{escape(part.where)}: `{part.step.source.splitlines()[0]}`", ""]
        for note in part.notes:
            out += [f"- **{escape(note.title)}**", ""]
            if note.text:
                out += [f"  {escape(note.text)}", ""]
        for line in part.grad_lines:
            out += [f"- `{line}`", ""]
    if frame.drawing is not None:
        out += [fenced("\n".join(frame.drawing.lines)), ""]
    return out
