"""A sparse grid of terminal cells that text and lines are drawn on.

Text may hold wide (CJK) characters: one takes two cells, the second kept as a
placeholder so columns stay in display cells while the output is a string.
Line cells keep their arms per owner (the node an edge comes from), so the
final glyph can tell a junction of one edge from two edges crossing.

A *strict* canvas refuses any overlap (the statement view: a layout that needs
one is abandoned for another); a lenient one lets lines of different owners
cross (the layered view).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.cells import cell_len

from gradtutor.render.charset import HORIZONTAL, VERTICAL, Charset

Span = tuple[int, int, str]

_TEXT, _RESERVED, _LINE, _TAIL = range(4)
EDGE_STYLE = "edge"


class LayoutConflict(Exception):
    """Two things were drawn on one cell of a strict canvas."""


@dataclass(slots=True)
class _Cell:
    kind: int
    char: str = " "
    style: str | None = None
    owners: dict[str, int] = field(default_factory=dict)
    explicit: str | None = None  # a fixed glyph, valid while the arms are unchanged
    explicit_arms: int = 0

    @property
    def arms(self) -> int:
        out = 0
        for arms in self.owners.values():
            out |= arms
        return out


class Canvas:
    """Cells addressed by (row, column); rows may be negative while drawing."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        self._cells: dict[tuple[int, int], _Cell] = {}

    # -- queries ---------------------------------------------------------
    def is_free(self, row: int, col: int) -> bool:
        return (row, col) not in self._cells

    def is_line(self, row: int, col: int) -> bool:
        cell = self._cells.get((row, col))
        return cell is not None and cell.kind == _LINE

    def line_owners(self, row: int, col: int) -> dict[str, int]:
        cell = self._cells.get((row, col))
        return dict(cell.owners) if cell is not None and cell.kind == _LINE else {}

    def bounds(self) -> tuple[int, int, int]:
        """(first row, last row, width in cells); (0, -1, 0) when empty."""
        if not self._cells:
            return 0, -1, 0
        rows = [r for r, _ in self._cells]
        return min(rows), max(rows), max(c for _, c in self._cells) + 1

    # -- drawing ---------------------------------------------------------
    def put_text(self, row: int, col: int, text: str, style: str | None = None) -> int:
        """Write ``text`` from ``col``; return the column after it."""
        if text.isascii():
            for ch in text:
                self._claim(row, col, _Cell(_TEXT, ch, style))
                col += 1
            return col
        last: _Cell | None = None
        for ch in text:
            width = cell_len(ch)
            if width == 0 and last is not None:
                last.char += ch  # a combining mark joins the character before it
                continue
            cell = _Cell(_TEXT, ch, style)
            self._claim(row, col, cell)
            last = cell
            if width == 2:
                self._claim(row, col + 1, _Cell(_TAIL, "", style))
            col += max(width, 1)
        return col

    def reserve(self, row: int, col: int) -> None:
        """Keep a cell blank: the space between a label and its arrow."""
        cell = self._cells.get((row, col))
        if cell is not None and cell.kind == _RESERVED:
            return
        self._claim(row, col, _Cell(_RESERVED))

    def add_arms(self, row: int, col: int, arms: int, owner: str, glyph: str | None = None) -> None:
        """Add line arms for ``owner``; ``glyph`` fixes the character (an arrowhead)."""
        cell = self._cells.get((row, col))
        if cell is None:
            cell = _Cell(_LINE, style=EDGE_STYLE)
            self._cells[(row, col)] = cell
        elif cell.kind != _LINE:
            raise LayoutConflict(f"line over text at {row},{col}")
        elif self.strict and any(o != owner for o in cell.owners):
            raise LayoutConflict(f"two lines meet at {row},{col}")
        cell.owners[owner] = cell.owners.get(owner, 0) | arms
        if glyph is not None:
            cell.explicit, cell.explicit_arms = glyph, cell.arms

    def set_style(self, row: int, col: int, style: str) -> None:
        cell = self._cells.get((row, col))
        if cell is not None:
            cell.style = style

    def _claim(self, row: int, col: int, cell: _Cell) -> None:
        if (row, col) in self._cells:
            raise LayoutConflict(f"cell {row},{col} drawn twice")
        self._cells[(row, col)] = cell

    # -- output ----------------------------------------------------------
    def render(self, charset: Charset) -> tuple[list[str], list[list[Span]]]:
        """Rows from the first used one to the last, right-trimmed, with style spans
        in character offsets."""
        first, last, width = self.bounds()
        lines: list[str] = []
        spans: list[list[Span]] = []
        for row in range(first, last + 1):
            text, row_spans = self._render_row(row, width, charset)
            lines.append(text)
            spans.append(row_spans)
        return lines, spans

    def _render_row(self, row: int, width: int, charset: Charset) -> tuple[str, list[Span]]:
        chars: list[str] = []
        styles: list[str | None] = []
        for col in range(width):
            cell = self._cells.get((row, col))
            if cell is None:
                chars.append(" ")
                styles.append(None)
            elif cell.kind == _TAIL:
                continue
            elif cell.kind == _LINE:
                chars.append(_line_glyph(cell, charset))
                styles.append(cell.style)
            else:
                chars.append(cell.char)
                styles.append(cell.style)
        while chars and chars[-1] == " " and styles[-1] is None:
            chars.pop()
            styles.pop()
        return "".join(chars), runs_to_spans(chars, styles)


def _line_glyph(cell: _Cell, charset: Charset) -> str:
    arms = cell.arms
    if cell.explicit is not None and arms == cell.explicit_arms:
        return cell.explicit
    if len(cell.owners) > 1 and _is_crossing(cell.owners):
        return charset.crossing
    return charset.glyph(arms)


def _is_crossing(owners: dict[str, int]) -> bool:
    """Lines of different owners that only pass straight through each other."""
    straight = [a for a in owners.values() if a & ~VERTICAL == 0 or a & ~HORIZONTAL == 0]
    if len(straight) != len(owners):
        return False
    return any(a & VERTICAL for a in straight) and any(a & HORIZONTAL for a in straight)


def runs_to_spans(chars: list[str], styles: list[str | None]) -> list[Span]:
    """Merge equal neighbouring styles into (start, end, style) character spans."""
    spans: list[Span] = []
    offset = 0
    start = 0
    current: str | None = None
    for ch, style in zip(chars, styles, strict=True):
        if style != current:
            if current is not None:
                spans.append((start, offset, current))
            start, current = offset, style
        offset += len(ch)
    if current is not None and offset > start:
        spans.append((start, offset, current))
    return spans
