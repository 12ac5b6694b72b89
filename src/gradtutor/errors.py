"""The tutor's own errors. Front ends map them to messages and exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    ERROR = 1  # the user's program raised (as python exits)
    USAGE = 2  # gradtutor was called wrongly: bad option, missing file, bad data file


class GradtutorError(Exception):
    """An error with a message meant for the user, never shown as a traceback.
    Made with :meth:`said`, it can be said in the user's language."""

    exit_status = ExitStatus.USAGE
    key: str | None = None  # the message's key (gradtutor.messages), when it has one
    fields: dict[str, object] = {}

    @classmethod
    def said(cls, key: str, **fields: object) -> GradtutorError:
        """The error whose message is ``key`` of the messages table; ``str()`` is its English."""
        from gradtutor.messages import message

        error = cls(message("en", key, **fields))
        error.key, error.fields = key, fields
        return error

    def say(self, language: str) -> str:
        """The message in ``language``."""
        if self.key is None:
            return str(self)
        from gradtutor.messages import message

        return message(language, self.key, **self.fields)


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
