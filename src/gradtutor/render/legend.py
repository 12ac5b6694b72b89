"""The lines under a drawing that explain its markers, and its notes.

Only markers that appear in the drawing get a line, so a legend stays short
and always matches the picture.
"""

from __future__ import annotations

from gradtutor.render.canvas import Span
from gradtutor.render.cells import text_width, wrap_cells
from gradtutor.render.charset import Charset
from gradtutor.render.words import marks, say
from gradtutor.render.node_text import (
    DROPPED,
    FREED,
    GRAD,
    LEAF_MARK,
    CHANGED,
    DUAL,
    ELIDED,
    MODIFIED,
    NEW,
    NONE_SAVED,
    OLD,
    OLD_MODULE,
)

LEGEND_STYLE = "legend"
NOTE_STYLE = "note"


def marker_keys(
    markers: set[str], charset: Charset, freed_places: list[str], language: str = "en",
    changed_places: list[str] | None = None,
) -> list[tuple[str, str, str]]:
    """(marker as drawn, its style, what it means) for each marker used, in a fixed order.
    ``freed_places``: where the backwards that freed drawn nodes are ("line 10");
    ``changed_places``: where drawn tensors were changed in place."""
    if len(freed_places) == 1:
        by = say(language, "freed_by_one", place=freed_places[0])
    elif freed_places:
        by = say(language, "freed_by_many", places=say(language, "list_sep").join(freed_places))
    else:
        by = say(language, "freed_by_any")
    words = marks(language)
    changed = say(language, "hidden_sep").join(changed_places or ()) or "?"
    table = [
        (NEW, f"[{words[NEW]}]", "new", say(language, "new")),
        (LEAF_MARK, f"[{words[LEAF_MARK]}]", "leaf", say(language, "leaf")),
        (GRAD, f"[{words[GRAD]}]", "grad", say(language, "grad")),
        (FREED, f"[{charset.cross}{words[FREED]}]", "freed", say(language, "freed", by=by)),
        (NONE_SAVED, f"[{words[NONE_SAVED]}]", "saved-none", say(language, "none_saved")),
        (MODIFIED, f"[{words[MODIFIED]}]", "modified", say(language, "modified")),
        (CHANGED, f"[{words[CHANGED]}]", "modified", say(language, "changed", places=changed)),
        (DUAL, f"[{words[DUAL]}]", "leaf", say(language, "dual")),
        (ELIDED, f"[{words[ELIDED]}]", "legend", say(language, "elided")),
        (OLD, words[OLD].strip(), "ghost", say(language, "old")),
        (OLD_MODULE, words[OLD].strip(), "ghost", say(language, "old_module")),
        (DROPPED, words[DROPPED].strip(), "ghost", say(language, "dropped")),
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
        wrapped = wrap_cells(text, max(12, width - indent)) or [""]
        first = "  " + shown + " " * (pad - text_width(shown) + 2)
        lines.append(first + wrapped[0])
        spans.append([(2, 2 + len(shown), style), (len(first), len(first) + len(wrapped[0]), LEGEND_STYLE)])
        for more in wrapped[1:]:
            lines.append(" " * indent + more)
            spans.append([(indent, indent + len(more), LEGEND_STYLE)])
    for note in notes:
        for i, part in enumerate(wrap_cells(note, max(12, width - 4)) or [""]):
            line = ("  " if i == 0 else "    ") + part
            lines.append(line)
            spans.append([(len(line) - len(part), len(line), NOTE_STYLE)])
    return lines, spans
