"""Importing torch for a program the tutor follows.

Between two of the program's torch calls the tutor does its own bookkeeping,
in Python, on the program's thread. torch's OpenMP worker threads (GNU
OpenMP in torch's Linux wheels) spin for a while after each parallel op,
waiting for the next one: 300,000 rounds by default, longer than the tutor's
bookkeeping between two steps, so they spun through all of it. Explaining
nanogpt took 12 s of CPU in 8 s.

So the front ends import torch with ``GOMP_SPINCOUNT=3000``: a worker spins
briefly and sleeps through the tutor's bookkeeping, between the ops of one
statement too, where the tutor tags each op's new nodes. Waking it costs
time: the ``linear`` calls of bench_loops' training loop took 300 µs at the
median (33 µs at the 10th percentile) against 48 µs with torch's default
spin, timed inside the tutor. It is a trade, measured on two cores. On the
corpus programs that run parallel ops (nanogpt, makemore, mnist, dcgan, the
word model, time_sequence; medians of three runs) it took 10.5 s of CPU in
9.3 s; with 30,000 rounds 13.0 s in 8.9 s, with 100,000 14.1 s in 8.9 s. A
loop of back-to-back matrix products waits more on waking workers:
bench_loops' training loop was 3.75x python per iteration against 3.42x with
30,000 rounds, and 4.34x against 3.12x with 100,000 (``--against``, six
alternating runs each). And when another process keeps the other core busy,
a woken worker waits for it: a plain torch backward of that loop took 2.5 ms
with 3,000 rounds against 0.33 ms with torch's default.
``OMP_WAIT_POLICY=PASSIVE`` (no spinning at all) saved the CPU too but made
the training loop 60% slower, when this was chosen. Not when the user chose
a policy or a spin count. The variable is set only while torch loads, when
the OpenMP runtime reads it: the program finds ``os.environ`` as the user
left it.

Measured again on a later version, with the spin count set for python and
the tutor alike (one run each): on the whole corpus (``bench_corpus``) the
tutor took 20.7 s and 19.4 s of CPU with 3,000 rounds, 23.6 s with 30,000,
28.4 s with 100,000 and 26.7 s with 300,000; the training loop took 2.97
and 2.85 ms an iteration with 3,000, 2.46 and 2.23 ms with 30,000, and
2.21 ms with 300,000. The trade stands. ``bench_loops`` prints the loop
both ways in each run.
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
