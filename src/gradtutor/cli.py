"""Command line: ``gradtutor`` (the shell), ``gradtutor explain FILE``, ...

Parsing imports nothing heavy, so ``--help`` and ``--version`` answer
without importing torch. Errors of the tutor's own (bad options, a missing
file, a broken data file) become one message and exit status 2; the user's
program decides the rest, as it would under python.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Any, Sequence

from gradtutor import __version__
from gradtutor.errors import ExitStatus, GradtutorError

DESCRIPTION = "A terminal tutor that makes PyTorch autograd visible."
EXPLAIN_FORMATS = ("text", "json", "markdown", "html", "svg", "dot")


def _add_display_options(p: argparse.ArgumentParser, *, command: bool = False) -> None:
    """The options every command shares. They may come before the command
    (``gradtutor --lang zh lessons``) or after it (``gradtutor lessons --lang
    zh``): a command's own copy sets a value only when given, so it never
    resets one given before the command to the default."""
    unset: dict[str, Any] = {"default": argparse.SUPPRESS} if command else {}
    p.add_argument("--level", choices=("statements", "ops"), **(unset or {"default": "statements"}),
                   help="draw one node per statement (default) or every autograd node")
    p.add_argument("--width", type=int, metavar="N", help="drawing width (default: the terminal's)", **unset)
    p.add_argument("--plain", action="store_true", help="no colour or styles (also: NO_COLOR)", **unset)
    p.add_argument("--ascii", action="store_true", help="only ASCII characters in drawings", **unset)
    p.add_argument("--lang", choices=("en", "zh"), help="language of explanations (default: from LANG)", **unset)
    p.add_argument("--traceback", action="store_true", help="show gradtutor's own traceback on internal errors",
                   **unset)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradtutor",
        description=DESCRIPTION,
        epilog="Run without a command to start the interactive shell.",
    )
    parser.add_argument("--version", action="version", version=f"gradtutor {__version__}")
    _add_display_options(parser)
    parser.add_argument("--no-graph", action="store_true", help="shell: do not draw the graph after each step")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    explain = sub.add_parser(
        "explain",
        help="run a script step by step and narrate what autograd does",
        description="Run FILE like `python FILE ARGS` would, narrating every executed line.",
    )
    explain.add_argument("file", metavar="FILE", help="the Python script to run (-: read it from standard input)")
    explain.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                         help="arguments for the script (after --)")
    explain.add_argument("--format", choices=EXPLAIN_FORMATS, default="text",
                         help="text for people (default), one JSON document for tools, or an export: "
                         "markdown (for forum answers and issues), html (a page that steps through the run), "
                         "svg (the picture of one step, for slides), dot (the graph of one step, for Graphviz)")
    explain.add_argument("--graph", choices=("touched", "full"), default="touched",
                         help="what a step draws: the part of the graph it touched (default) or all of it")
    explain.add_argument("--step", type=int, metavar="N",
                         help="svg and dot: the step to show (default: the last)")
    explain.add_argument("-o", "--output", metavar="PATH",
                         help="exports: write to PATH instead of standard output")
    explain.add_argument("--max-iterations", type=int, default=3, metavar="N",
                         help="loop iterations shown in full (default 3); later ones only when an event happens")
    _add_display_options(explain, command=True)

    lessons = sub.add_parser("lessons", help="list the course, with your progress")
    lessons.add_argument("--lessons-dir", action="append", metavar="PATH",
                         help="also list the lessons in this folder (also: GRADTUTOR_LESSONS)")
    _add_display_options(lessons, command=True)

    lesson = sub.add_parser(
        "lesson",
        help="take a lesson in the shell; it resumes where you left off",
        description="Take lesson NAME (its id, number or file name) in the interactive shell, "
        "play it without a person (--script), or validate and run lesson files (--check).",
    )
    lesson.add_argument("names", nargs="*", metavar="NAME|PATH",
                        help="the lesson to take; with --check, lesson files or folders (default: the course)")
    lesson.add_argument("--script", action="store_true",
                        help="run every step without a person (tasks take their solution) and print it all")
    lesson.add_argument("--check", action="store_true",
                        help="validate lesson files and run them in every language; for lesson authors and CI")
    lesson.add_argument("--lessons-dir", action="append", metavar="PATH",
                        help="also look for lessons in this folder (also: GRADTUTOR_LESSONS)")
    lesson.add_argument("--no-graph", action="store_true", default=argparse.SUPPRESS,
                        help="do not draw the graph after each step")
    _add_display_options(lesson, command=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.width is not None and args.width < 20:
        parser.error("--width must be at least 20")
    try:
        if args.command == "explain":
            from gradtutor.explain import run_explain

            if args.args and args.args[0] == "--":
                args.args = args.args[1:]
            if args.max_iterations < 0:
                parser.error("--max-iterations must be 0 or more")
            if args.step is not None and args.format not in ("svg", "dot"):
                parser.error(f"--step picks the step an svg or dot export shows, not a {args.format} one")
            if args.step is not None and args.step < 1:
                parser.error("--step must be 1 or more (steps are numbered from 1)")
            if args.output is not None and args.format in ("text", "json"):
                parser.error(f"--output is for exports (markdown, html, svg, dot), not {args.format}")
            return run_explain(args)
        if args.command == "lessons":
            from gradtutor.lesson_cli import run_lessons

            return run_lessons(args)
        if args.command == "lesson":
            from gradtutor.lesson_cli import run_lesson

            return run_lesson(args)
        from gradtutor.shell import run_shell

        return run_shell(args)
    except GradtutorError as exc:
        if getattr(args, "traceback", False):
            traceback.print_exc()
        from gradtutor.environment import language_from

        language = getattr(args, "lang", None) or language_from(os.environ)
        print(f"gradtutor: {exc.say(language)}", file=sys.stderr)
        return int(exc.exit_status)
    except KeyboardInterrupt:
        print("gradtutor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`gradtutor explain f.py | head`): stop quietly,
        # and keep Python from complaining when it flushes stdout at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return int(ExitStatus.ERROR)
    except Exception as exc:  # a bug of ours: say so briefly, unless asked for the traceback
        if getattr(args, "traceback", False):
            traceback.print_exc()
        else:
            print(
                f"gradtutor: internal error: {type(exc).__name__}: {exc}\n"
                "Run again with --traceback to see where, and please report it.",
                file=sys.stderr,
            )
        return int(ExitStatus.USAGE)


if __name__ == "__main__":
    raise SystemExit(main())
