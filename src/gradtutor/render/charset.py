"""The characters a drawing is made of, in two sets: Unicode and plain ASCII.

Lines are stored as *arms* (which of the four neighbours a cell connects to)
and turned into a glyph only at the end, so a junction drawn by two different
edges comes out as one correct character in either set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

# Arms of a line cell: the neighbours it connects to.
N, E, S, W = 1, 2, 4, 8
VERTICAL = N | S
HORIZONTAL = E | W

UNICODE = "unicode"
ASCII = "ascii"

_UNICODE_ARMS: Mapping[int, str] = {
    N: "│", S: "│", VERTICAL: "│",
    E: "─", W: "─", HORIZONTAL: "─",
    N | E: "╰", S | E: "╭", S | W: "╮", N | W: "╯",
    VERTICAL | E: "├", VERTICAL | W: "┤", HORIZONTAL | S: "┬", HORIZONTAL | N: "┴",
    VERTICAL | HORIZONTAL: "┼",
}

# The Stack Overflow answer's own characters: "\-->" leaves a node downwards,
# "/-->" upwards; every other bend or junction is a "+".
_ASCII_ARMS: Mapping[int, str] = {
    N: "|", S: "|", VERTICAL: "|",
    E: "-", W: "-", HORIZONTAL: "-",
    N | E: "\\", S | E: "/", S | W: "+", N | W: "+",
    VERTICAL | E: "+", VERTICAL | W: "+", HORIZONTAL | S: "+", HORIZONTAL | N: "+",
    VERTICAL | HORIZONTAL: "+",
}


@dataclass(frozen=True)
class Charset:
    """Glyphs for one character set. ``bar_arrow`` and ``bar_corner`` are the
    answer's ``-->|`` bar ending (ASCII only; Unicode turns the corner with ``╮``)."""

    name: str
    arms: Mapping[int, str]
    crossing: str  # a vertical line passing over a horizontal one
    east: str  # arrowheads
    west: str
    bar_arrow: str | None
    bar_corner: str | None
    down: str  # a line flowing down into what is below (vertical view, merges)
    up: str
    tee: str  # vertical view: a side input joins the chain here
    first_tee: str  # ... the first input of a chain's first node
    spine: str  # vertical view: the chain continues past a side input
    ref: str  # "reads, by name"
    ellipsis: str
    cross: str  # before the freed marker's word: "✗ " ("[✗ freed]")

    def glyph(self, arms: int) -> str:
        return self.arms.get(arms, self.arms[VERTICAL | HORIZONTAL])

    def clean(self, text: str) -> str:
        """User text as this set can show it: our own ellipsis becomes ``...``."""
        return text if self.name == UNICODE else text.replace("…", self.ellipsis)


UNICODE_CHARSET = Charset(
    name=UNICODE,
    arms=_UNICODE_ARMS,
    crossing="│",
    east="▶",
    west="◀",
    bar_arrow=None,
    bar_corner=None,
    down="▼",
    up="▲",
    tee="├─ ",
    first_tee="┌─ ",
    spine="│  ",
    ref="◀",
    ellipsis="…",
    cross="✗ ",
)

ASCII_CHARSET = Charset(
    name=ASCII,
    arms=_ASCII_ARMS,
    crossing="|",
    east=">",
    west="<",
    bar_arrow=">",
    bar_corner="|",
    down="v",
    up="^",
    tee="+- ",
    first_tee="+- ",
    spine="|  ",
    ref="<-",
    ellipsis="...",
    cross="",
)


def get_charset(name: str) -> Charset:
    """``"unicode"`` or ``"ascii"``; anything else is a ValueError."""
    if name == UNICODE:
        return UNICODE_CHARSET
    if name == ASCII:
        return ASCII_CHARSET
    raise ValueError(f"charset must be 'unicode' or 'ascii', not {name!r}")
