"""Capturing what a program prints, so each step can say what it printed.

When the process has a standard output file descriptor, the capture works
at that level: fd 1 points at a temporary file while the program runs, so
``print``, ``sys.stdout.buffer.write``, ``sys.__stdout__``, C extensions and
child processes (``os.system``) all land in it, and the JSON document the
tutor writes afterwards stays valid. ``sys.stdout`` is a real text stream on
that descriptor (it has ``.buffer`` and ``.fileno()``). Without a usable fd 1
(tests that replace ``sys.stdout``), it falls back to an in-memory stream.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from typing import IO, Any


class OutputCapture:
    """Use as ``start()`` ... ``take()`` (what was printed since the last take) ... ``stop()``."""

    def __init__(self) -> None:
        self._old_stdout: IO[str] | None = None
        self._old_fd: int | None = None
        self._file: IO[bytes] | None = None
        self._memory: io.StringIO | None = None
        self._pos = 0

    def start(self) -> None:
        self._old_stdout = sys.stdout
        self._pos = 0
        fd = self._stdout_fd()
        if fd is None:
            self._memory = io.StringIO()
            sys.stdout = self._memory
            return
        self._old_stdout.flush()
        self._file = tempfile.TemporaryFile()
        self._old_fd = os.dup(fd)
        os.dup2(self._file.fileno(), fd)
        encoding = getattr(self._old_stdout, "encoding", None) or "utf-8"
        sys.stdout = io.TextIOWrapper(
            io.FileIO(fd, "w", closefd=False), encoding=encoding, errors="backslashreplace", write_through=True
        )

    def _stdout_fd(self) -> int | None:
        stream: Any = sys.stdout
        if stream is None or id(stream) != id(sys.__stdout__):
            return None  # someone (a test, a notebook) redirected sys.stdout: keep to Python level
        try:
            fd = stream.fileno()
            os.fstat(fd)
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            return None
        return fd

    def take(self) -> str:
        memory = self._memory
        if memory is not None:
            if memory.closed:  # the program closed sys.stdout: what it held is gone, as it would be
                return ""
            # Only what is new is read: a copy of all the program printed, at
            # every step, would make a long run that prints quadratic.
            at = memory.tell()  # where the program writes next
            if at == self._pos:
                return ""
            memory.seek(self._pos)
            chunk = memory.read()
            self._pos = memory.tell()
            memory.seek(at)
            return chunk
        if self._file is None:
            return ""
        _flush(sys.stdout)  # the program's stream, if it put its own there; ours writes through
        # The file's end is where fd 1 writes next (they share one offset):
        # nothing new is one cheap system call, not a seek and a read.
        if os.lseek(self._file.fileno(), 0, os.SEEK_END) == self._pos:
            return ""
        self._file.seek(self._pos)
        data = self._file.read()
        self._pos += len(data)
        return data.decode("utf-8", errors="replace")

    def write_through(self, text: str) -> None:
        """Write ``text`` where the program's output would go without the
        capture (the terminal): the narration of a text-mode run."""
        if self._old_fd is not None:
            encoding = getattr(self._old_stdout, "encoding", None) or "utf-8"
            data = text.encode(encoding, errors="replace")
            while data:
                written = os.write(self._old_fd, data)
                data = data[written:]
        elif self._old_stdout is not None:
            self._old_stdout.write(text)
            self._old_stdout.flush()

    def stop(self) -> None:
        if self._old_stdout is None:
            return
        if self._file is not None and self._old_fd is not None:
            _flush(sys.stdout)
            os.dup2(self._old_fd, self._old_stdout.fileno())
            os.close(self._old_fd)
            self._file.close()
        sys.stdout = self._old_stdout
        self._old_stdout = self._old_fd = self._file = self._memory = None


def _flush(stream: Any) -> None:
    """Flush a stream the program may have closed (``sys.stdout.close()``) or
    replaced with anything at all."""
    try:
        stream.flush()
    except Exception:  # closed, or not a stream: nothing of ours to flush
        pass
