"""The IPython and Jupyter extension: ``%load_ext gradtutor``.

Narration of every following cell, in the notebook's own namespace, with the
engine, events, explanations and pictures of the shell. See
:mod:`gradtutor.notebook.extension` for how a cell is observed and
:mod:`gradtutor.notebook.magic` for ``%gradtutor`` and ``%%gradtutor``.
Needs IPython (``pip install gradtutor[notebook]``); nothing else in
gradtutor imports this package.
"""

from __future__ import annotations

from typing import Any

_KEY = "_gradtutor_narration"


def load_ipython_extension(ipython: Any) -> None:
    from gradtutor.notebook.extension import CellNarration
    from gradtutor.notebook.magic import register_magic

    narration = CellNarration(ipython)
    narration.install()
    setattr(ipython, _KEY, narration)
    register_magic(ipython, narration)


def unload_ipython_extension(ipython: Any) -> None:
    narration = getattr(ipython, _KEY, None)
    if narration is not None:
        narration.uninstall()
        delattr(ipython, _KEY)
