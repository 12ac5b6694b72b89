"""Command line: ``gradtutor`` (the shell), ``gradtutor explain FILE``, ...

Parsing imports nothing heavy, so ``--help`` and ``--version`` answer
without importing torch. Errors of the tutor's own (bad options, a missing
file, a broken data file) become one message and exit status 2; the user's
program decides the rest, as it would under python.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from typing import Any, NoReturn, Sequence

from gradtutor import __version__
from gradtutor.errors import ExitStatus, GradtutorError
from gradtutor.gcpause import settle_startup
from gradtutor.torch_import import import_torch

DESCRIPTION = "A terminal tutor that makes PyTorch autograd visible."
EXPLAIN_FORMATS = ("text", "json", "markdown", "html", "svg", "dot")


# argparse's own error messages, said in Chinese (--help stays in English).
_ARGPARSE_ZH = (
    (re.compile(r"argument (?P<argument>.+?): (?P<rest>.+)", re.S), "参数 {argument}：{rest}"),
    (re.compile(r"invalid (?P<type>\w+) value: (?P<value>.+)"), "无效的 {type} 值：{value}"),
    (re.compile(r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)"), "无效的选择：{value}（可选：{choices}）"),
    (re.compile(r"unrecognized arguments: (?P<args>.+)"), "无法识别的参数：{args}"),
    (re.compile(r"the following arguments are required: (?P<args>.+)"), "缺少必需的参数：{args}"),
    (re.compile(r"expected one argument"), "需要一个值"),
    (re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)"), "有歧义的选项：{option} 可能是 {matches}"),
)


def _argparse_zh(text: str) -> str:
    for pattern, words in _ARGPARSE_ZH:
        match = pattern.fullmatch(text)
        if match:
            return words.format(**{k: _argparse_zh(v) if k == "rest" else v for k, v in match.groupdict().items()})
    return text


class _Parser(argparse.ArgumentParser):
    """Says its errors in the user's language (``language``: set before parsing)."""

    language = "en"

    def error(self, message: str) -> NoReturn:
        from gradtutor.typeset import tidy

        usage = self.format_usage()
        if self.language == "zh":
            # "用法：" is one cell narrower than "usage: ": continuation lines move left by one.
            first, *rest = usage.replace("usage: ", "用法：", 1).split("\n")
            usage = "\n".join([first, *(line[1:] if line.startswith(" ") else line for line in rest)])
            message = tidy(_argparse_zh(message), "zh")
        self._print_message(usage, sys.stderr)
        self.exit(2, f"{self.prog}: {'错误：' if self.language == 'zh' else 'error: '}{message}\n")


def _language_of(argv: Sequence[str]) -> str:
    """The language asked for by ``--lang`` (read before parsing, so that
    parsing errors are said in it), else the environment's."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
    from gradtutor.environment import language_from

    return language_from(os.environ)


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
    parser = _Parser(
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
    arguments = list(sys.argv[1:] if argv is None else argv)
    _Parser.language = language = _language_of(arguments)
    parser = build_parser()
    args = parser.parse_args(arguments)

    def usage_error(key: str, **fields: object) -> NoReturn:
        from gradtutor.messages import message

        parser.error(message(language, key, **fields))

    if args.width is not None and args.width < 20:
        usage_error("usage_width")
    try:
        if args.command in ("explain", "lesson"):
            import_torch()
            settle_startup()
        if args.command == "explain":
            from gradtutor.explain import run_explain

            if args.args and args.args[0] == "--":
                args.args = args.args[1:]
            if args.max_iterations < 0:
                usage_error("usage_max_iterations")
            if args.step is not None and args.format not in ("svg", "dot"):
                usage_error("usage_step_format", format=args.format)
            if args.step is not None and args.step < 1:
                usage_error("usage_step_number")
            if args.output is not None and args.format in ("text", "json"):
                usage_error("usage_output_format", format=args.format)
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
