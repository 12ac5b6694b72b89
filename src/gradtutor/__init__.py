"""gradtutor: a terminal tutor that makes PyTorch autograd visible."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gradtutor``: narrate the cells of IPython or a notebook.
    Imported here lazily, so the core never imports IPython."""
    from gradtutor.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from gradtutor.notebook import unload_ipython_extension as unload

    unload(ipython)
