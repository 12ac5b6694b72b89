"""Attributes set for the length of a block and put back after it: the
library functions the tutor answers in the program's place while it runs
(``sys.settrace``, ``sys.getrecursionlimit``, ``atexit.register``, ``os._exit``)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator


@contextmanager
def swapped(target: Any, **values: Any) -> Iterator[dict[str, Any]]:
    """Set ``target``'s attributes to ``values`` in the block; yield the
    originals (by name), which are put back however the block ends."""
    originals = {name: getattr(target, name) for name in values}
    for name, value in values.items():
        setattr(target, name, value)
    try:
        yield originals
    finally:
        for name, value in originals.items():
            setattr(target, name, value)
