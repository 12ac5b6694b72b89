"""Functions of the program's own that never touch torch, run without stepping.

A program such as micrograd calls small Python functions of its own
(``Value.__add__``) hundreds of thousands of times. Stepping each of their
lines costs the tutor far more than the lines cost python, and tells the
learner nothing: past the first calls, every such step is hidden anyway.

A call is *plain* when, from its start to its return, no torch function was
called (by it or by anything it called), no exception was raised in it, no
step of it had an event (so no tensor was ever among its names; a tensor
among its arguments makes a call not plain), and what it returned holds no
tensor. A function whose first ``after`` calls were all
plain is *quiet*: its later calls run as library code runs, without
stepping; what they do (were one to touch torch after all) is seen from the
step of the user's line that called them. A function with one call that was
not plain is never made quiet. Generators, coroutines and module code are
never made quiet.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType
from typing import Any, Callable

import torch

_NEVER = -1


@dataclass(frozen=True)
class QuietFunction:
    """A function run without stepping after its first ``stepped`` calls."""

    name: str  # its qualified name, a nested one as "Value.__add__._backward"
    file: str
    line: int  # where it is defined
    stepped: int  # calls followed line by line
    unstepped: int  # calls run without stepping

    def to_json(self) -> dict[str, Any]:
        return {"function": self.name, "file": self.file, "line": self.line,
                "stepped_calls": self.stepped, "unstepped_calls": self.unstepped}


class PlainCalls:
    """Counts plain calls per code object and says which functions are quiet."""

    def __init__(self, after: int) -> None:
        self.after = after
        self._plain: dict[CodeType, int] = {}  # plain calls so far, or _NEVER
        self.quiet: set[CodeType] = set()
        self._unstepped: dict[CodeType, int] = {}

    def ended(self, code: CodeType, plain: bool, running: Callable[[], bool]) -> bool:
        """A stepped call of ``code`` returned; ``plain`` as the module
        docstring says; ``running()``: is another call of it still being
        stepped (recursion)? Asked only when it decides. True when ``code``
        is quiet from now on."""
        count = self._plain.get(code, 0)
        if count == _NEVER:
            return False
        if not plain:
            self._plain[code] = _NEVER
            return False
        count = self._plain[code] = count + 1
        if count >= self.after and not running():
            self.quiet.add(code)
            self._unstepped[code] = 0
            return True
        return False

    def unstepped_call(self, code: CodeType) -> None:
        self._unstepped[code] += 1

    def summary(self) -> list[QuietFunction]:
        """The quiet functions that ran unstepped, most calls first."""
        out = [
            QuietFunction(getattr(code, "co_qualname", code.co_name).replace(".<locals>.", "."), code.co_filename,
                          code.co_firstlineno, self._plain[code], n)
            for code, n in self._unstepped.items() if n
        ]
        return sorted(out, key=lambda f: (-f.unstepped, f.file, f.line))


def carries_tensors(value: Any) -> bool:
    """Is ``value`` a tensor, or a tuple or list holding one (what a caller's
    step would name)?"""
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, torch.Tensor) for v in value)
    return False
