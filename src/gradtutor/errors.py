"""The tutor's own errors. Front ends map them to messages and exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    ERROR = 1  # the user's program raised (as python exits)
    USAGE = 2  # gradtutor was called wrongly: bad option, missing file, bad data file


class GradtutorError(Exception):
    """An error with a message meant for the user, never shown as a traceback."""

    exit_status = ExitStatus.USAGE


class UsageError(GradtutorError):
    pass


class DataFileError(GradtutorError):
    """A problem in a data file (lesson, explanations): names the file, line and field."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class LessonError(DataFileError):
    """``all``: every mistake found in the file, this one first."""

    all: tuple[LessonError, ...] = ()
