"""The floor of observing a program as the tutor does, shared by the benches:
an empty torch function mode and the tutor's tracer (gradtutor.tracing)
with trace functions that do nothing, following one file's frames."""

from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def observing_floor(filename: str) -> Iterator[None]:
    """While it lasts: every torch call goes through an empty mode, and the
    tracer follows the frames of ``filename`` line by line, doing nothing."""
    from torch.overrides import TorchFunctionMode

    from gradtutor.tracing import make_tracer

    class Empty(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return func(*args, **(kwargs or {}))

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        return local

    def start(frame, event, arg):  # type: ignore[no-untyped-def]
        return local if frame.f_code.co_filename == filename else None

    tracer = make_tracer(start, local, {filename})
    with Empty():
        tracer.start()
        try:
            yield
        finally:
            tracer.stop()
