"""The picture of one step as SVG, for slides: real text, one ``<text>`` a line.

Every styled piece is placed at its own column, so the picture keeps its
shape in any monospace font, and the colours are the terminal's.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from gradtutor import __version__
from gradtutor.export.html_fragments import MONOSPACE, css_of
from gradtutor.render import THEME, Drawing
from gradtutor.render.cells import text_width

FONT_SIZE = 14
CELL = 8.43  # advance of one cell at FONT_SIZE: DejaVu Sans Mono is 0.602 em
LINE = 18
PAD = 12


def render_svg(drawing: Drawing, title: str) -> str:
    """``drawing`` (picture and legend) as a standalone SVG document."""
    columns = max((text_width(line) for line in drawing.lines), default=0)
    width = round(2 * PAD + columns * CELL)
    height = 2 * PAD + LINE * len(drawing.lines)
    styles = "\n".join(f"  .{name} {{ {_svg_css(style)} }}" for name, style in THEME.items())
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" font-family={quoteattr(MONOSPACE)} font-size="{FONT_SIZE}">',
        f"<title>{escape(title)}</title>",
        f"<desc>Drawn by gradtutor {escape(__version__)}</desc>",
        f"<style>\n  text {{ white-space: pre; fill: #1b1b1b; }}\n{styles}\n</style>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for row, (line, spans) in enumerate(zip(drawing.lines, drawing.spans, strict=True)):
        if not line.strip():
            continue
        y = PAD + LINE * row + FONT_SIZE
        pieces = [f'<text x="{PAD}" y="{y}" xml:space="preserve">']
        for start, end, style in _pieces(line, spans):
            x = PAD + text_width(line[:start]) * CELL
            klass = f' class="{style}"' if style else ""
            pieces.append(f'<tspan x="{x:.1f}"{klass}>{escape(line[start:end])}</tspan>')
        pieces.append("</text>")
        out.append("".join(pieces))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _pieces(line: str, spans: tuple[tuple[int, int, str], ...]) -> list[tuple[int, int, str]]:
    """The whole line cut into (start, end, style) pieces, unstyled gaps included,
    so the text of the ``<text>`` element is the line itself."""
    out: list[tuple[int, int, str]] = []
    at = 0
    for start, end, style in sorted(spans):
        if start < at:
            continue
        if start > at:
            out.append((at, start, ""))
        out.append((start, end, style))
        at = end
    if at < len(line.rstrip()):
        out.append((at, len(line.rstrip()), ""))
    return out


def _svg_css(rich_style: str) -> str:
    """CSS for SVG text: ``fill`` instead of ``color``."""
    return css_of(rich_style).replace("color:", "fill:")
