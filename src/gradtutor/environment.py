"""Everything the tutor reads from its surroundings, in one object.

Front ends build one :class:`Environment` from the real process
(:meth:`Environment.from_process`); tests pass a fake one. Nothing below
the front ends reads ``os.environ`` or the real streams.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Mapping


@dataclass
class Environment:
    stdout: IO[str]
    stderr: IO[str]
    stdin: IO[str]
    stdout_isatty: bool = False
    stdin_isatty: bool = False
    width: int = 80
    color: bool = False
    unicode: bool = True
    language: str = "en"
    data_dir: str = ""
    lessons_path: tuple[str, ...] = ()
    variables: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_process(cls, environ: Mapping[str, str] | None = None) -> Environment:
        env = dict(os.environ if environ is None else environ)
        out_tty = _isatty(sys.stdout)
        try:
            width = os.get_terminal_size(sys.stdout.fileno()).columns if out_tty else 80
        except (OSError, ValueError, AttributeError):
            width = 80
        if env.get("COLUMNS", "").isdigit():
            width = int(env["COLUMNS"])
        encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
        data_home = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        lessons = tuple(p for p in env.get("GRADTUTOR_LESSONS", "").split(os.pathsep) if p)
        return cls(
            stdout=sys.stdout,
            stderr=sys.stderr,
            stdin=sys.stdin,
            stdout_isatty=out_tty,
            stdin_isatty=_isatty(sys.stdin),
            width=max(20, width),
            color=out_tty and "NO_COLOR" not in env and env.get("TERM") != "dumb",
            unicode="utf" in encoding,
            language=language_from(env),
            data_dir=os.path.join(data_home, "gradtutor"),
            lessons_path=lessons,
            variables=env,
        )


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def language_from(env: Mapping[str, str]) -> str:
    """``zh`` when the locale asks for Chinese, else ``en`` (LC_ALL, then LANG)."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def make_console(env: Environment, *, width: int, plain: bool, file: Any = None) -> Any:
    """The rich console front ends print to: colour only on a terminal, never
    with --plain or NO_COLOR. ``file``: where it writes, standard output by default."""
    from rich.console import Console

    color = env.color and not plain
    return Console(
        file=file if file is not None else env.stdout,
        width=width,
        # Nothing the tutor prints fills the screen's height. Given one, rich
        # no longer asks the terminal and os.environ for the console's size
        # each time it reads it (three times a print).
        height=25,
        color_system="auto" if color else None,
        force_terminal=color or None,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,  # the tutor prints words and code ("[i] = ...", "x[0]"), never rich markup
        soft_wrap=False,
    )
