"""Functions of the program's own run without stepping once their calls
repeat themselves.

A program such as micrograd calls small Python functions of its own
(``Value.__add__``) hundreds of thousands of times; a model's ``forward``
runs once a batch, an RNN's once a character. Stepping each of their lines
costs the tutor far more than the lines cost python, and past the first
calls tells the learner nothing: every such step is hidden anyway.

A call is *plain* when, from its start to its return, no torch function was
called (by it or by anything it called), no exception was raised in it, no
step of it had an event (so no tensor was ever among its names; a tensor
among its arguments makes a call not plain), and what it returned holds no
tensor. A function whose first ``after`` calls were all plain is *quiet*:
its later calls run as library code runs, without stepping; what they do
(were one to touch torch after all) is seen from the step of the user's
line that called them. A function with one call that was not plain is
never made quiet for being plain.

A call that touches tensors is *settled* when, from its start to its
return, no step was shown (its own or any other: each step was hidden, for
all it did had been told before: its backwards, changes in place and
names bound anew included), no exception was raised in it and the tutor
did not fail. A function whose last ``after`` calls were all settled is
quiet too, and is said to be (see ``Engine._end_call``): from then on the
nodes it makes are tagged with the line that called it, as a library
module's are, and what the observer records in it (a backward, an
optimizer's step) is told at that line. Its local names are no longer
looked at, and its steps are not counted among the repeated steps.
Functions that rebind globals, hooks and custom Functions' methods called
by autograd, and saved-tensor hooks are never made quiet that way.
Generators, coroutines and module code are never made quiet.
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
    touched_tensors: bool = False  # quiet for its settled calls, not its plain ones

    def to_json(self) -> dict[str, Any]:
        return {"function": self.name, "file": self.file, "line": self.line,
                "stepped_calls": self.stepped, "unstepped_calls": self.unstepped,
                "touched_tensors": self.touched_tensors}


class PlainCalls:
    """Counts plain and settled calls per code object and says which
    functions are quiet."""

    def __init__(self, after: int) -> None:
        self.after = after
        self._plain: dict[CodeType, int] = {}  # plain calls so far, or _NEVER
        self._settled: dict[CodeType, int] = {}  # settled calls in a row, the last ones
        self._stepped: dict[CodeType, int] = {}  # calls followed line by line
        self._touched: set[CodeType] = set()  # quiet for settled calls
        self.quiet: set[CodeType] = set()
        self._unstepped: dict[CodeType, int] = {}

    def ended(self, code: CodeType, plain: bool, running: Callable[[], bool], settled: bool = False) -> bool:
        """A stepped call of ``code`` returned; ``plain`` and ``settled`` as
        the module docstring says; ``running()``: is another call of it
        still being stepped (recursion)? Asked only when it decides. True
        when ``code`` is quiet from now on."""
        stepped = self._stepped[code] = self._stepped.get(code, 0) + 1
        count = self._plain.get(code, 0)
        if count != _NEVER and plain:
            count = self._plain[code] = count + 1
            return count >= self.after and self._make_quiet(code, running)
        self._plain[code] = _NEVER
        if not settled:
            self._settled[code] = 0
            return False
        count = self._settled[code] = self._settled.get(code, 0) + 1
        if count >= self.after and stepped > count and self._make_quiet(code, running):
            self._touched.add(code)
            return True
        return False

    def _make_quiet(self, code: CodeType, running: Callable[[], bool]) -> bool:
        if running():
            return False
        self.quiet.add(code)
        self._unstepped[code] = 0
        return True

    def stepped_calls(self, code: CodeType) -> int:
        return self._stepped.get(code, 0)

    def unstepped_call(self, code: CodeType) -> None:
        self._unstepped[code] += 1

    def summary(self) -> list[QuietFunction]:
        """The quiet functions that ran unstepped, most calls first."""
        out = [
            QuietFunction(function_name(code), code.co_filename, code.co_firstlineno, self._stepped[code], n,
                          code in self._touched)
            for code, n in self._unstepped.items() if n
        ]
        return sorted(out, key=lambda f: (-f.unstepped, f.file, f.line))


def function_name(code: CodeType) -> str:
    """A function's name as the notes give it: qualified, a nested one as
    "Value.__add__._backward"."""
    return getattr(code, "co_qualname", code.co_name).replace(".<locals>.", ".")


def carries_tensors(value: Any) -> bool:
    """Is ``value`` a tensor, or a tuple or list holding one (what a caller's
    step would name)?"""
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, torch.Tensor) for v in value)
    return False
