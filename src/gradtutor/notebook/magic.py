"""``%gradtutor`` and ``%%gradtutor``: narration on and off, options, exports.

    %gradtutor                  say whether narration is on, and its options
    %gradtutor on | off         narrate every following cell, or none
    %gradtutor --level ops --lang zh --width 100 --ascii --no-graph --graph
                                options, as in the command line (turns it on);
                                --graph full draws the whole graph at each
                                step, --graph touched (the default) what the
                                step touched
    %gradtutor export FILE [--step N]
                                the narrated cells so far as Markdown, HTML,
                                SVG or DOT, by FILE's ending
    %%gradtutor [options]       narrate this cell only, with these options
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from gradtutor.errors import GradtutorError
from gradtutor.model import LEVEL_OPS, LEVEL_STATEMENTS
from gradtutor.notebook.extension import CellNarration


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise GradtutorError(message)


def _parser() -> _Parser:
    p = _Parser(prog="%gradtutor", add_help=False)
    p.add_argument("words", nargs="*")
    p.add_argument("--level", choices=("statements", "ops"))
    p.add_argument("--lang", choices=("en", "zh"))
    p.add_argument("--width", type=int)
    p.add_argument("--ascii", action="store_true", default=None)
    p.add_argument("--unicode", dest="ascii", action="store_false")
    p.add_argument("--no-graph", dest="graph", action="store_false", default=None)
    p.add_argument("--graph", dest="graph", nargs="?", const="on", choices=("on", "full", "touched"))
    p.add_argument("--step", type=int)
    return p


def apply_options(narration: CellNarration, args: argparse.Namespace) -> None:
    s = narration.settings
    if args.width is not None and args.width < 20:
        raise GradtutorError("--width must be at least 20")
    if args.level:
        s.level = LEVEL_OPS if args.level == "ops" else LEVEL_STATEMENTS
    if args.lang:
        s.language = args.lang
    if args.width:
        s.width = args.width
    if args.ascii is not None:
        s.ascii = args.ascii
    if args.graph is not None:
        s.show_graph = args.graph is not False
        if args.graph in ("full", "touched"):
            s.graph = args.graph
    narration.settings_changed()


def gradtutor_magic(narration: CellNarration, line: str, cell: str | None = None) -> None:
    from IPython.core.error import UsageError

    try:
        args = _parser().parse_args(shlex.split(line))
        if cell is not None:
            _one_cell(narration, args, cell, line)
            return
        _line(narration, args)
    except (GradtutorError, ValueError) as exc:  # shlex: "No closing quotation"
        raise UsageError(f"%gradtutor: {exc}") from None


def _line(narration: CellNarration, args: argparse.Namespace) -> None:
    words = args.words
    if words[:1] == ["export"]:
        if len(words) != 2:
            raise GradtutorError("export takes one file name: %gradtutor export FILE")
        _export(narration, words[1], args.step)
        return
    if args.step is not None:
        raise GradtutorError("--step goes with export")
    if words not in ([], ["on"], ["off"]):
        raise GradtutorError(f"unknown word '{' '.join(words)}': use on, off, export FILE, or options")
    changes = any(getattr(args, name) is not None for name in ("level", "lang", "width", "ascii", "graph"))
    if changes:
        apply_options(narration, args)
    if words == ["off"]:
        narration.enabled = False
    elif words == ["on"] or changes:
        narration.enabled = True
    s = narration.settings
    state = "on" if narration.enabled else "off"
    print(
        f"gradtutor narration is {state} (level {s.level}, language {s.language}, width {s.width}"
        f"{', ascii' if s.ascii else ''}{', no graph' if not s.show_graph else ''}{', whole graph' if s.show_graph and s.graph == 'full' else ''})"
    )


def _one_cell(narration: CellNarration, args: argparse.Namespace, cell: str, line: str) -> None:
    if args.words or args.step is not None:
        raise GradtutorError("%%gradtutor takes only options (--level, --lang, --width, --ascii, --no-graph, --graph)")
    saved = (narration.settings.level, narration.settings.language, narration.settings.width,
             narration.settings.ascii, narration.settings.show_graph, narration.settings.graph)
    apply_options(narration, args)
    narration.next_cell_only = True
    try:
        # The magic's own line is line 1 of the cell the user sees: as a
        # comment, it keeps the body's line numbers (and tracebacks) the same.
        narration.shell.run_cell(f"# %%gradtutor {line}\n{cell}".replace(" \n", "\n", 1))
    finally:
        narration.next_cell_only = False
        s = narration.settings
        s.level, s.language, s.width, s.ascii, s.show_graph, s.graph = saved
        narration.settings_changed()


def _export(narration: CellNarration, path: str, step: int | None) -> None:
    from gradtutor.export import format_for_path, write_export

    if step is not None and step < 1:
        raise GradtutorError("--step must be 1 or more (steps are numbered from 1)")
    fmt = format_for_path(path)
    write_export(narration.transcript, fmt, path, step)
    count = len(narration.transcript.frames)
    print(f"gradtutor: wrote {count} narrated cell{'s' if count != 1 else ''} to {path} ({fmt})")


def register_magic(shell: Any, narration: CellNarration) -> None:
    def gradtutor(line: str, cell: str | None = None) -> None:
        gradtutor_magic(narration, line, cell)

    gradtutor.__doc__ = __doc__
    shell.register_magic_function(gradtutor, magic_kind="line_cell", magic_name="gradtutor")
