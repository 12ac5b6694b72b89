"""The floor of observing a program as the tutor does, shared by the benches:
an empty torch function mode and the tutor's tracer (gradtutor.tracing)
with trace functions that do nothing, following one file's frames."""

from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def observing_floor(filename: str, mode: bool = True, tracer: bool = True) -> Iterator[None]:
    """While it lasts: every torch call goes through an empty mode, and the
    tracer follows the frames of ``filename`` line by line, doing nothing.
    ``mode`` or ``tracer`` False leaves that part out (the floor's parts)."""
    from torch.overrides import TorchFunctionMode

    from gradtutor.tracing import make_tracer

    class Empty(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            return func(*args, **(kwargs or {}))

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        return local

    def start(frame, event, arg):  # type: ignore[no-untyped-def]
        return local if frame.f_code.co_filename == filename else None

    follower = make_tracer(start, local, {filename}) if tracer else None
    with Empty() if mode else contextlib.nullcontext():
        if follower is not None:
            follower.start()
        try:
            yield
        finally:
            if follower is not None:
                follower.stop()
