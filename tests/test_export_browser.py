"""The step-through HTML page in a real headless Chromium (Debian's package), driven by Playwright.

Skipped, with the reason, only where Chromium or Playwright's Python package
is not installed (``make system-deps`` installs Chromium as root; the test
extra installs Playwright, which drives the system's Chromium: no browser download).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from gradtutor.cli import main

PROGRAMS = Path(__file__).parent / "programs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The network is closed here: Chromium must not try to reach it.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]

if CHROMIUM is None:
    pytest.skip("Chromium is not installed: `make system-deps` (as root) installs Debian's chromium",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is in the test extra")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    html = tmp_path_factory.mktemp("html") / "so_first.html"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["explain", "--format", "html", "-o", str(html), str(PROGRAMS / "so_first.py")])
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(html.as_uri())
            yield page
        finally:
            browser.close()


def at_step(page, n: int) -> None:
    """Wait until the page shows step ``n``: polls the page's state, no fixed sleep."""
    page.wait_for_function(f"document.body.dataset.step === '{n}'", timeout=10_000)


def state(page) -> dict:
    return page.evaluate("""() => {
        const visible = [...document.querySelectorAll('.gt-frame')].filter(f => !f.hidden);
        return {
            lines: [...document.querySelectorAll('.gt-line.gt-current')].map(l => l.id),
            frames: visible.map(f => f.id),
            picture: visible.length ? visible[0].querySelector('.gt-picture').innerText : '',
            counter: document.getElementById('gt-counter').textContent,
        };
    }""")


def test_arrow_keys_step_through_the_run(page):
    at_step(page, 1)
    first = state(page)
    assert first["frames"] == ["step-1"] and first["lines"] == ["L0-1"] and first["counter"] == "Step 1 of 10"
    page.keyboard.press("End")
    at_step(page, 10)
    last = state(page)
    assert last["lines"] == ["L0-13"] and "BCE(z, y) = loss [✗ freed]" in last["picture"]
    page.keyboard.press("ArrowLeft")
    at_step(page, 9)
    before = state(page)
    assert before["lines"] == ["L0-12"] and "(dropped)" in before["picture"]
    assert before["picture"] != last["picture"]
    page.keyboard.press("ArrowRight")
    at_step(page, 10)
    assert state(page) == last


def test_buttons_and_slider(page):
    page.keyboard.press("Home")
    at_step(page, 1)
    page.click("#gt-next")
    at_step(page, 2)
    assert state(page)["lines"] == ["L0-3"]
    page.focus("#gt-slider")
    page.keyboard.press("ArrowRight")  # the slider moves itself by one, and the page follows it once
    at_step(page, 3)
    assert state(page)["lines"] == ["L0-4"]
    page.click("#gt-prev")
    at_step(page, 2)


def test_screenshot_of_one_step_shows_the_coloured_markers(page, tmp_path):
    page.keyboard.press("Home")
    page.evaluate("document.activeElement.blur()")
    for _ in range(7):
        page.keyboard.press("ArrowRight")
    at_step(page, 8)  # loss.backward(): both statements freed, w and b have grads
    picture = page.locator("#step-8 .gt-picture")
    png = picture.screenshot(path=str(tmp_path / "step8.png"))
    width, height, pixels = decode_png(png)
    box = picture.bounding_box()
    assert abs(width - round(box["width"])) <= 1 and abs(height - round(box["height"])) <= 1
    colours = set(pixels)
    near = lambda target: any(sum(abs(a - b) for a, b in zip(c, target)) < 60 for c in colours)  # noqa: E731
    assert near((0x80, 0x00, 0x00))  # "✗ freed" in red, as the terminal shows it
    assert near((0x00, 0x80, 0x00))  # "grad" in green
    assert near((0xFF, 0xFF, 0xFF))  # on white


def decode_png(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = row[i - bpp] if i >= bpp else 0
            up, corner = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(row)
        prev = row
    pixels = [tuple(row[x * bpp:x * bpp + 3]) for row in rows for x in range(width)]
    return width, height, pixels  # type: ignore[return-value]
