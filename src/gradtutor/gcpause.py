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
