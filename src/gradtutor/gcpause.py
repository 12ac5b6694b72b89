"""Holding off Python's cycle collector while the tutor builds a picture.

Snapshots and drawings make many small objects and no reference cycles;
refcounting frees them. The cycle collector, triggered by the allocations,
would walk every live object of the process again and again (a big graph's
tags among them) for nothing. It is held off while such work runs and then
left as it was: enabled again only if it was enabled.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_settled = False


def settle_startup() -> None:
    """Once per process, before the program the tutor follows starts: move
    every object that exists now (the interpreter's, torch's and the
    tutor's own, made by importing) out of the cycle collector's reach
    (``gc.freeze``). They live as long as the process, yet each full
    collection during the run would walk all of them again: over
    100,000 objects, most of a full collection's time while a program like
    nanogpt runs. The program's own objects, made after this, are collected
    as under python. (Only where the process is the tutor's command: in a
    notebook's kernel the learner's objects already exist, and frozen ones
    that later become garbage in a cycle would never be freed.)"""
    global _settled
    if not _settled:
        _settled = True
        gc.freeze()
