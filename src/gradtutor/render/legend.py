"""The lines under a drawing that explain its markers, and its notes.

Only markers that appear in the drawing get a line, so a legend stays short
and always matches the picture.
"""

from __future__ import annotations

import textwrap

from gradtutor.render.canvas import Span
from gradtutor.render.cells import text_width
from gradtutor.render.charset import Charset
from gradtutor.render.node_text import (
    DROPPED,
    FREED,
    GRAD,
    LEAF_MARK,
    MODIFIED,
    NEW,
    NONE_SAVED,
    OLD,
)

LEGEND_STYLE = "legend"
NOTE_STYLE = "note"


def marker_keys(markers: set[str], charset: Charset, freed_lines: list[int]) -> list[tuple[str, str, str]]:
    """(marker as drawn, its style, what it means) for each marker used, in a fixed order."""
    if len(freed_lines) == 1:
        by = f"the backward on line {freed_lines[0]}"
    elif freed_lines:
        by = "the backwards on lines " + ", ".join(str(n) for n in freed_lines)
    else:
        by = "a backward"
    table = [
        (NEW, "[new]", "new", "created by this step"),
        (LEAF_MARK, "[leaf]", "leaf", "a leaf tensor that requires grad: backward fills its .grad"),
        (GRAD, "[grad]", "grad", "its .grad is set"),
        (FREED, f"[{charset.freed}]", "freed",
         f"its saved tensors were freed by {by}: a second backward through it fails"),
        (NONE_SAVED, "[none saved]", "saved-none", "it saved no tensors: backward can run through it again"),
        (MODIFIED, "[modified]", "modified", "a tensor it saved was changed in place: backward through it fails"),
        (OLD, "(old)", "ghost",
         "the name now means another tensor; this one stays in the graph because a later result uses it"),
        (DROPPED, "(dropped)", "ghost", "nothing uses it any more: shown this once, gone at the next step"),
    ]
    return [(shown, style, text) for key, shown, style, text in table if key in markers]


def legend_lines(
    keys: list[tuple[str, str, str]], notes: list[str], width: int
) -> tuple[list[str], list[list[Span]]]:
    """Keys as ``marker  meaning`` rows (meaning wrapped under itself), then notes."""
    lines: list[str] = []
    spans: list[list[Span]] = []
    pad = max((text_width(k[0]) for k in keys), default=0)
    for shown, style, text in keys:
        indent = pad + 4
        wrapped = textwrap.wrap(text, max(12, width - indent)) or [""]
        first = "  " + shown + " " * (pad - text_width(shown) + 2)
        lines.append(first + wrapped[0])
        spans.append([(2, 2 + len(shown), style), (len(first), len(first) + len(wrapped[0]), LEGEND_STYLE)])
        for more in wrapped[1:]:
            lines.append(" " * indent + more)
            spans.append([(indent, indent + len(more), LEGEND_STYLE)])
    for note in notes:
        for i, part in enumerate(textwrap.wrap(note, max(12, width - 4)) or [""]):
            line = ("  " if i == 0 else "    ") + part
            lines.append(line)
            spans.append([(len(line) - len(part), len(line), NOTE_STYLE)])
    return lines, spans
