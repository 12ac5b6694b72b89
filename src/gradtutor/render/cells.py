"""Display width of text in terminal cells (a CJK character takes two).

``rich.cells.cell_len`` answers this; plain ASCII, most of what is drawn,
is answered by ``len`` without its per-string cache, which big graphs overflow.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rich.cells import cell_len


# Characters that take exactly one cell, looked up by nobody: printable
# ASCII, U+00A0..U+02FF (Latin letters and signs), and the signs drawings are
# made of: dashes and quotes with "…", arrows, box drawing, blocks and
# shapes up to U+25FC, and "✓ ✗". (A test checks every one against rich.)
ONE_CELL_RANGES = "\x20-\x7e\xa0-\u02ff\u2010-\u2027\u2190-\u21ff\u2500-\u25fc\u2713-\u2717"
_NOT_ONE_CELL = re.compile(f"[^{ONE_CELL_RANGES}]")


def text_width(text: str) -> int:
    if text.isascii():
        return len(text)
    # Per character, and only for the few that may differ (box drawing,
    # arrows, CJK): lines of a big graph are mostly distinct strings.
    odd = _NOT_ONE_CELL.findall(text)
    return len(text) + sum([_char_width(ch) - 1 for ch in odd]) if odd else len(text)


@lru_cache(maxsize=4096)
def _char_width(ch: str) -> int:
    return int(cell_len(ch))


def char_offset(line: str, col: int) -> int:
    """The character index of display column ``col`` in ``line``."""
    if line.isascii():
        return min(col, len(line))
    used = 0
    for i, ch in enumerate(line):
        if used >= col:
            return i
        used += cell_len(ch)
    return len(line)


def cut_cells(text: str, max_cells: int, ellipsis: str) -> str:
    """``text`` cut to ``max_cells`` display cells, ending in ``ellipsis`` when cut."""
    if text_width(text) <= max_cells:
        return text
    room = max(0, max_cells - text_width(ellipsis))
    out: list[str] = []
    used = 0
    for ch in text:
        w = cell_len(ch)
        if used + w > room:
            break
        out.append(ch)
        used += w
    return ("".join(out) + ellipsis) if max_cells >= text_width(ellipsis) else "".join(out)[:max_cells]


# What a line may break between: a CJK character or a run of other non-space
# characters, each with the opening punctuation before it and the closing
# punctuation after it (a line never starts with "）" nor ends with "（");
# or spaces.
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef"
_TOKEN = re.compile(f"[（《「『“(\\[]*(?:[{_CJK}]|[^\\s{_CJK}]+)[，。、；：！？）》」』”)\\]]*|\\s+")


def wrap_cells(text: str, width: int) -> list[str]:
    """Greedy wrapping to ``width`` display cells that breaks at spaces and also
    between CJK characters (Chinese has no spaces to break at). A word longer
    than the width stays whole on its own line."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for token in _TOKEN.findall(paragraph):
            if token.isspace():
                if line:
                    line += " "
                continue
            if line and text_width(line) + text_width(token) > width:
                lines.append(line.rstrip())
                line = ""
            line += token
        lines.append(line.rstrip())
    return lines
