"""Exports of a narrated run: Markdown golden files, SVG and DOT checked by real
parsers, the HTML page's promises, the shell's :export, and clear errors.

Regenerate the golden Markdown after an intended change, then read the diff:

    GRADTUTOR_REGEN=1 .venv/bin/python -m pytest tests/test_exports.py
    git diff tests/golden/
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradtutor.cli import main

PROGRAMS = Path(__file__).parent / "programs"
GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("GRADTUTOR_REGEN") == "1"
SVG = "{http://www.w3.org/2000/svg}"


def export(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["explain", *args])
    return code, out.getvalue(), err.getvalue()


def without_final_traceback(markdown: str) -> str:
    """The document up to python's traceback of the uncaught error, whose
    frames inside torch differ between torch versions and machines."""
    return markdown[: markdown.index("```text\nTraceback (most recent call last):")]


@pytest.mark.parametrize("name, options", [
    ("so_first.md", []),
    ("so_first.zh.ascii.md", ["--lang", "zh", "--ascii"]),
])
def test_markdown_matches_golden_file(name, options):
    import torch

    torch.manual_seed(0)  # the program draws random weights; their gradients are in the document
    code, out, _ = export("--format", "markdown", *options, str(PROGRAMS / "so_first.py"))
    assert code == 1  # the program's own exit status: its second backward raises
    assert out.rstrip().endswith("Specify retain_graph=True if you need to backward through the graph a second time "
                                 "or if you need to access saved tensors after calling backward.\n```")
    path = GOLDEN / name
    if REGENERATE:
        path.write_text(without_final_traceback(out), encoding="utf-8")
    assert without_final_traceback(out) == path.read_text(encoding="utf-8")


def _normal(text: str) -> str:
    return " ".join(text.split())


def _unescape(markdown: str) -> str:
    return re.sub(r"\\([\\\[\]<>#|~`_*])", r"\1", markdown)


def test_markdown_says_exactly_what_the_text_narration_says():
    """Every title, explanation and picture of the Markdown, in order, is in the text
    narration of the same run, and every event title of the narration is in the Markdown."""
    _, text, _ = export("--plain", "--ascii", "--width", "80", str(PROGRAMS / "forum_base.py"))
    _, markdown, _ = export("--format", "markdown", "--ascii", str(PROGRAMS / "forum_base.py"))
    pieces: list[str] = []
    for block in re.findall(r"```text\n(.*?)\n```", markdown, re.S):
        pieces.append("\n".join("   " + line if line else "" for line in block.split("\n")))
    for title, body in re.findall(r"^- \*\*(.*?)\*\*\n\n(?:  (.*)\n)?", markdown, re.M):
        pieces += [_unescape(title)] + ([_unescape(body)] if body else [])
    flat = _normal(text)
    for piece in pieces:
        assert (piece if "\n" in piece else _normal(piece)) in (text if "\n" in piece else flat), piece
    titles = re.findall(r"^   [*] (.*)$", text, re.M)
    assert titles and all(f"- **{t}**" in _unescape(markdown) for t in titles)


def test_svg_is_xml_with_the_pictures_words(tmp_path):
    out = tmp_path / "step.svg"
    code, stdout, err = export("--format", "svg", "--step", "8", "-o", str(out), str(PROGRAMS / "so_first.py"))
    assert code == 1 and stdout == "" and err == ""
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    lines = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    words = [" ".join(line.split()) for line in lines]
    assert "   x ────▶ x @ w + b = z [✗ freed] ──▶ BCE(z, y) = loss [✗ freed]" not in lines  # no indent
    assert "x ────▶ x @ w + b = z [✗ freed] ──▶ BCE(z, y) = loss [✗ freed]" in lines
    assert "b [grad] ───────╮ │" in words
    assert any("freed by the backward at line 10" in w for w in words)
    assert root.find(f"{SVG}title").text == "so_first.py: step 8, line 10"
    # Colours are the terminal's: the freed marker is red, the grad marker green.
    assert any(t.get("class") == "freed" and t.text == "✗ freed" for t in root.iter(f"{SVG}tspan"))


def test_dot_has_the_pictures_names_and_markers(tmp_path):
    code, dot_text, _ = export("--format", "dot", str(PROGRAMS / "so_first.py"))
    assert '"s6" [label="x @ w + b = z [✗ freed]", color="#cd0000"' in dot_text
    assert '"t1" [label="w [grad]"' in dot_text and '"s6" -> "s9";' in dot_text
    code, ops_text, _ = export("--format", "dot", "--level", "ops", "--step", "6", str(PROGRAMS / "so_first.py"))
    assert "AddBackward0 = z" in ops_text and "freed" not in ops_text
    if shutil.which("dot") is None:
        pytest.skip("graphviz's dot is not installed (make system-deps installs it, as root)")
    for text in (dot_text, ops_text):
        done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        root = ET.fromstring(done.stdout)
        drawn = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
        assert ("x @ w + b = z [✗ freed]" in drawn) if text is dot_text else ("AddBackward0 = z" in drawn)


def test_html_page_is_self_contained(tmp_path):
    out = tmp_path / "run.html"
    export("--format", "html", "-o", str(out), str(PROGRAMS / "so_first.py"))
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count('class="gt-frame"') == 10
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing from the network
    assert "@import" not in page and "url(" not in page
    assert '<span class="gt-freed">✗ freed</span>' in page


def test_bad_requests_say_what_is_wrong(tmp_path):
    program = str(PROGRAMS / "so_first.py")
    code, _, err = export("--format", "svg", "--step", "99", program)
    assert (code, err) == (2, "gradtutor: --step 99: the run has steps 1 to 10\n")
    code, _, err = export("--format", "html", "-o", str(tmp_path / "no" / "such" / "x.html"), program)
    assert code == 2 and err == f"gradtutor: cannot write '{tmp_path / 'no' / 'such' / 'x.html'}': folder '{tmp_path / 'no' / 'such'}' does not exist\n"
    code, _, err = export("--format", "markdown", "-o", str(tmp_path), program)
    assert code == 2 and err == f"gradtutor: cannot write '{tmp_path}': Is a directory\n"
    for args, message in [
        (["--format", "markdown", "--step", "2"], "--step picks the step an svg or dot export shows, not a markdown one"),
        (["--format", "svg", "--step", "0"], "--step must be 1 or more"),
        (["--format", "json", "-o", "x.json"], "--output is for exports"),
        (["--format", "pdf"], "invalid choice: 'pdf'"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            export(*args, program)
        assert exit_info.value.code == 2


def test_shell_export_writes_the_session(tmp_path):
    from gradtutor.shell_session import ShellSession, ShellSettings

    session = ShellSession(ShellSettings(width=80))
    for text in ["x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2", "y.backward()", "y.backward()"]:
        session.execute(text)
    reply = session.execute(f":export {tmp_path / 'session.md'}")
    assert str(reply.renderables[0]) == f"Wrote 4 inputs to {tmp_path / 'session.md'} (markdown)."
    markdown = (tmp_path / "session.md").read_text(encoding="utf-8")
    assert "### 4. In \\[4\\]" in markdown and "freed by the backward at In \\[3\\]" in markdown
    assert 'File "<In [4]>", line 1, in <module>' in markdown  # the shell's short traceback
    reply = session.execute(f":export {tmp_path / 'graph.dot'}")
    assert str(reply.renderables[0]).startswith("Wrote the graph after In [4]")
    assert str(session.execute(f":export {tmp_path / 'session.txt'}").renderables[0]).startswith(
        f"'{tmp_path / 'session.txt'}': cannot tell the export format"
    )
    assert str(session.execute(":export").renderables[0]).startswith(":export takes a file name")
