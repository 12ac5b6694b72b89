"""``gradtutor lessons`` and ``gradtutor lesson NAME [--script] | --check PATH...``."""

from __future__ import annotations

import argparse
import contextlib
import io

from rich.text import Text

from gradtutor.environment import Environment
from gradtutor.errors import ExitStatus, LessonError, UsageError
from gradtutor.environment import make_console
from gradtutor.explanations import LANGUAGES


def _extra_dirs(args: argparse.Namespace, env: Environment) -> tuple[str, ...]:
    return tuple(getattr(args, "lessons_dir", None) or ()) + env.lessons_path


def run_lessons(args: argparse.Namespace, env: Environment | None = None) -> int:
    from gradtutor.lesson_catalog import Catalog
    from gradtutor.progress import ProgressStore
    from gradtutor.shell_session import lesson_listing

    env = env or Environment.from_process()
    console = make_console(env, width=getattr(args, "width", None) or env.width, plain=getattr(args, "plain", False))
    store = ProgressStore(env.data_dir) if env.data_dir else None
    if store is not None and store.notice:
        console.print(Text(store.notice, "yellow"))
    for item in lesson_listing(Catalog(_extra_dirs(args, env)), store, args.lang or env.language):
        console.print(item)
    return 0


def run_lesson(args: argparse.Namespace, env: Environment | None = None) -> int:
    env = env or Environment.from_process()
    if args.check:
        return check_lessons(args, env)
    if len(args.names) != 1:
        raise UsageError.said("error_one_lesson")
    from gradtutor.lesson_catalog import Catalog
    from gradtutor.shell import run_shell, settings_from
    from gradtutor.shell_session import ShellSession

    catalog = Catalog(_extra_dirs(args, env))
    entry = catalog.find(args.names[0])
    if args.script:
        from gradtutor.lesson_runner import run_script

        settings = settings_from(args, env)
        console = make_console(env, width=settings.width, plain=args.plain)
        problems = run_script(entry, ShellSession(settings), console)
        for problem in problems:
            console.print(Text(problem, "red"))
        return int(ExitStatus.ERROR) if problems else 0
    return run_shell(args, env, first_input=f":lesson {entry.lesson.id}")


def check_lessons(args: argparse.Namespace, env: Environment) -> int:
    """Validate lesson files and run them in every language; one line per lesson."""
    from gradtutor.lesson_catalog import Entry, bundled_course_dir, lesson_files
    from gradtutor.lesson_format import load_lesson
    from gradtutor.lesson_runner import run_script
    from gradtutor.shell_session import ShellSession, ShellSettings

    paths: list[str] = []
    for target in args.names or [bundled_course_dir()]:
        paths += lesson_files(target)
    if not paths:
        raise UsageError.said("error_no_lesson_files")
    failed = 0
    seen: dict[str, str] = {}
    for number, path in enumerate(paths, 1):
        try:
            lesson = load_lesson(path)
            if lesson.id in seen:
                raise LessonError(path, 1, f"lesson id '{lesson.id}' is also used by {seen[lesson.id]}")
            seen[lesson.id] = path
        except LessonError as exc:
            for mistake in exc.all or (exc,):
                env.stdout.write(f"FAIL {mistake}\n")
            failed += 1
            continue
        problems: list[str] = []
        for language in LANGUAGES:
            session = ShellSession(ShellSettings(language=language, width=100))
            # The lesson code's own prints and warnings are not the report.
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                found = run_script(Entry(lesson, bundled=True, number=number), session, None)
            problems += [f"[{language}] {p}" for p in found]
        if problems:
            failed += 1
            for problem in problems:
                env.stdout.write(f"FAIL {problem}\n")
        else:
            env.stdout.write(f"ok   {path} ({lesson.id}, {len(lesson.steps)} steps, {', '.join(LANGUAGES)})\n")
    env.stdout.write(f"{len(paths) - failed} passed, {failed} failed\n")
    return int(ExitStatus.ERROR) if failed else 0
