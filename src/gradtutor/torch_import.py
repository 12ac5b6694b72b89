"""Importing torch for a program the tutor follows.

Between two of the program's torch calls the tutor does its own bookkeeping,
in Python, on the program's thread. torch's OpenMP worker threads (GNU
OpenMP in torch's Linux wheels) spin for a while after each parallel op,
waiting for the next one: 300,000 rounds by default, longer than the tutor's
bookkeeping between two steps, so they spun through all of it. Explaining
nanogpt took 12 s of CPU in 8 s.

So the front ends import torch with ``GOMP_SPINCOUNT=3000``: a worker still
waits, spinning, through the short gaps between the ops of one statement,
and sleeps through the tutor's longer ones between statements. Measured on
two cores: CPU down to the run's own time, and a training loop's
iterations as fast as with the default (``OMP_WAIT_POLICY=PASSIVE``, no
spinning at all, saved the CPU too but made them 60% slower). Not when the
user chose a policy or a spin count. The variable is set only while torch
loads, when the OpenMP runtime reads it: the program finds ``os.environ``
as the user left it.
"""

from __future__ import annotations

import os
import sys

_SPIN = "GOMP_SPINCOUNT"
_CHOSEN = ("OMP_WAIT_POLICY", _SPIN)  # the user's choice, kept
SPIN_ROUNDS = "3000"


def import_torch() -> None:
    """Import torch (and ``torch.nn.functional``), idle OpenMP workers spinning briefly."""
    if "torch" in sys.modules or any(name in os.environ for name in _CHOSEN):
        import torch.nn.functional  # noqa: F401
        return
    os.environ[_SPIN] = SPIN_ROUNDS
    try:
        import torch.nn.functional  # noqa: F401
    finally:
        os.environ.pop(_SPIN, None)
