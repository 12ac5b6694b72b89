"""Importing torch for a program the tutor follows.

Between two of the program's torch calls the tutor does its own bookkeeping,
in Python, on the program's thread. torch's OpenMP worker threads, which by
default spin for a while after each parallel op waiting for the next one,
would spin through all of it: on two cores, ``gradtutor explain`` of a
transformer training script took twice the CPU of its own run time, and the
spinning thread slowed the program's thread down by a fifth.

So the front ends import torch with OpenMP's standard ``OMP_WAIT_POLICY``
set to ``PASSIVE`` (an idle worker sleeps), unless the user chose a policy.
The variable is set only while torch loads, when the OpenMP runtime reads
it: the program finds ``os.environ`` as it was.
"""

from __future__ import annotations

import os
import sys

_POLICY = "OMP_WAIT_POLICY"


def import_torch() -> None:
    """Import torch (and ``torch.nn.functional``), idle OpenMP workers sleeping."""
    if "torch" in sys.modules or _POLICY in os.environ:
        import torch.nn.functional  # noqa: F401
        return
    os.environ[_POLICY] = "PASSIVE"
    try:
        import torch.nn.functional  # noqa: F401
    finally:
        os.environ.pop(_POLICY, None)
