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

import codecs
import io
import os
import sys
import tempfile
from collections import deque
from typing import IO, Any


class OutputCapture:
    """Use as ``start()`` ... ``take()`` (what was printed since the last take) ... ``stop()``."""

    def __init__(self) -> None:
        self._old_stdout: IO[str] | None = None
        self._old_fd: int | None = None
        self._file: IO[bytes] | None = None
        self._memory: _MemoryStdout | None = None
        self._pos = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def start(self) -> None:
        self._old_stdout = sys.stdout
        self._pos = 0
        self._decoder.reset()
        fd = self._stdout_fd()
        if fd is None:
            self._memory = _MemoryStdout()
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
            return memory.take_new()
        if self._file is None:
            return ""
        _flush(sys.stdout)  # the program's stream, if it put its own there; ours writes through
        # fd 1 and our file share one offset, which the program's threads may
        # be writing at this moment: moving it (a seek back to read) would let
        # their next write land over what is not read yet. pread reads at an
        # offset of its own and leaves the shared one where the writers are.
        fileno = self._file.fileno()
        # Where the writers are: the shared offset, which only writes move
        # (asked without moving it; cheaper than the file's size from fstat).
        end = os.lseek(fileno, 0, os.SEEK_CUR)
        if end == self._pos:
            return ""  # nothing new: one cheap system call
        parts = []
        while self._pos < end:
            data = os.pread(fileno, end - self._pos, self._pos)
            if not data:
                break
            parts.append(data)
            self._pos += len(data)
        # A thread may be halfway through writing a character: its first
        # bytes wait for the rest in the decoder, not turned into "?".
        return self._decoder.decode(b"".join(parts))

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


class _MemoryStdout(io.StringIO):
    """The program's ``sys.stdout`` when there is no fd 1 to capture: a
    StringIO that also keeps what was written since the last take, so a step
    reads only what is new (a copy of all the program printed, at every step,
    would make a long run that prints quadratic). A deque, because the
    program's threads may write while a step takes: its append and popleft
    are atomic, where seeking the stream back to read is not."""

    def __init__(self) -> None:
        super().__init__()
        self._new: deque[str] = deque()

    def write(self, text: str) -> int:
        written = super().write(text)
        self._new.append(text)
        return written

    def take_new(self) -> str:
        new = self._new
        if not new:
            return ""
        return "".join(new.popleft() for _ in range(len(new)))


def _flush(stream: Any) -> None:
    """Flush a stream the program may have closed (``sys.stdout.close()``) or
    replaced with anything at all."""
    try:
        stream.flush()
    except Exception:  # closed, or not a stream: nothing of ours to flush
        pass
