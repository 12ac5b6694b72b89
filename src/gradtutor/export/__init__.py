"""Exports of a narrated run: Markdown, a step-through HTML page, SVG, DOT.

Every exporter reads a :class:`~gradtutor.transcript.Transcript`, the frames
the text narration shows; none of them looks at autograd itself.

    export_document(transcript, "markdown") -> str
    write_export(transcript, "html", "run.html")
    format_for_path("slide.svg") -> "svg"
"""

from __future__ import annotations

import os

from gradtutor.errors import UsageError
from gradtutor.transcript import Transcript

FORMATS = ("markdown", "html", "svg", "dot")
SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
            ".svg": "svg", ".dot": "dot", ".gv": "dot"}
STEP_FORMATS = ("svg", "dot")  # they show one step (--step N, default the last)


def format_for_path(path: str) -> str:
    """The format a file name asks for by its ending; UsageError when it asks for none."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in SUFFIXES:
        endings = ", ".join(SUFFIXES)
        raise UsageError.said("error_export_ending", path=path, endings=endings)
    return SUFFIXES[suffix]


def export_document(transcript: Transcript, fmt: str, step: int | None = None) -> str:
    """The document in ``fmt``. ``step`` (1-based) picks the step an SVG or DOT
    shows; the last by default. UsageError for an unknown format or step."""
    if fmt not in FORMATS:
        raise UsageError.said("error_export_format", format=fmt, formats=", ".join(FORMATS))
    if step is not None and fmt not in STEP_FORMATS:
        raise UsageError.said("error_export_step", format=fmt)
    if fmt == "markdown":
        from gradtutor.export.markdown import render_markdown

        return render_markdown(transcript)
    if fmt == "html":
        from gradtutor.export.html_page import render_html

        return render_html(transcript)
    frame = transcript.frame(step)
    title = f"{transcript.title}: step {frame.number}, {frame.place}"
    if fmt == "svg":
        from gradtutor.export.svg import render_svg

        return render_svg(transcript.picture(frame), title)
    from gradtutor.export.dot import render_dot

    options = transcript.options
    snapshot = frame.last_step.snapshot
    return render_dot(
        snapshot.graph(options.level), title=title, current_step=snapshot.step,
        charset="ascii" if options.ascii else "unicode", language=options.language, locate=options.locate,
    )


def write_export(transcript: Transcript, fmt: str, path: str, step: int | None = None) -> None:
    """Write the document to ``path`` (UTF-8). UsageError naming the path when it cannot."""
    document = export_document(transcript, fmt, step)
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(document)
    except OSError as exc:
        raise UsageError.said("error_cannot_write", path=path, reason=exc.strerror or exc) from None


__all__ = ["FORMATS", "export_document", "format_for_path", "write_export"]
