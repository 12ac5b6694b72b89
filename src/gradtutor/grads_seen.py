"""What a shown step did to the ``.grad`` of the tensors it names.

A step shows ``w.grad: before → after`` for each gradient it changed.
``before`` is the value the step started from, which is not always the one
shown last: loop steps that are not shown run in between (an optimizer's
``zero_grad``, a backward). So besides its value as last shown, each
gradient's *state* is kept, the ``.grad`` object and its version counter:

- a step not shown that made calls on tensors (the only steps that can
  change a gradient) compares each state: a gradient it set to ``None`` is
  known to be ``None``; one it changed otherwise, or wrote through ``.data``
  (which no version counter sees), has a value not known;
- a shown step reports each gradient whose value differs from the one known
  before it. One whose value before it is not known is not reported: the
  narration of the steps not shown said what they did, and a made-up
  "before" would be false.

Tensors are held by weak reference: following a gradient keeps nothing alive.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

import torch

from gradtutor.observer import InplaceRecord

UNKNOWN = object()  # a value changed by steps not shown


def _grad(tensor: torch.Tensor) -> torch.Tensor | None:
    """Its .grad, read only where reading it does not warn (nor raise: see
    ``autograd_graph.graph_readable``)."""
    try:
        return tensor.grad if tensor.is_leaf or tensor.retains_grad else None
    except RuntimeError:
        return None


def _state(grad: torch.Tensor | None) -> tuple[weakref.ref[torch.Tensor], int] | None:
    return None if grad is None else (weakref.ref(grad), grad._version)


def _same_state(state: tuple[weakref.ref[torch.Tensor], int] | None, grad: torch.Tensor | None) -> bool:
    if grad is None or state is None:
        return grad is None and state is None
    return state[0]() is grad and state[1] == grad._version


class GradsSeen:
    """The gradients of the tensors steps named, by tensor (id)."""

    def __init__(self) -> None:
        # id(tensor) -> [the tensor (weakly), its .grad's value as last known, that .grad's state]
        self._seen: dict[int, list[Any]] = {}

    def shown(
        self, tensors: Iterable[tuple[str, torch.Tensor]], values: dict[str, Any], records: Iterable[Any] = ()
    ) -> list[tuple[str, Any, Any]]:
        """A shown step ended: the gradients it changed, as (name, before,
        after); ``values``: each name's .grad value now (absent: None);
        ``records``: the observer's of the step. A gradient followed that the
        step cannot name is brought up to date as a hidden step's is: its
        change is not this step's to tell when a later step names it
        (``param.grad`` after a backward that ran while ``param`` named
        another tensor)."""
        changes: list[tuple[str, Any, Any]] = []
        seen = self._seen
        named: set[int] = set()
        for name, tensor in tensors:
            named.add(id(tensor))
            if name not in values and not (tensor.is_leaf and tensor.requires_grad or tensor.retains_grad):
                continue
            after = values.get(name)
            grad = _grad(tensor)
            key = id(tensor)
            entry = seen.get(key)
            if entry is None or entry[0]() is not tensor:
                def forget(_ref: object, key: int = key) -> None:
                    current = seen.get(key)
                    if current is not None and current[0]() is None:
                        del seen[key]

                seen[key] = [weakref.ref(tensor, forget), after, _state(grad)]
                continue
            if entry[1] is not UNKNOWN and entry[1] != after:
                changes.append((name, entry[1], after))
            entry[1] = after
            entry[2] = _state(grad)
        self.hidden(records, named)
        return changes

    def hidden(self, records: Iterable[Any], skip: set[int] | frozenset[int] = frozenset()) -> None:
        """A step not shown ended, with the observer's ``records`` of it:
        note which gradients it changed (of the tensors not in ``skip``)."""
        written = {
            id(target) for rec in records
            if isinstance(rec, InplaceRecord) and rec.data_of is not None and (target := rec.data_of()) is not None
        }
        for key, entry in self._seen.items():
            tensor = entry[0]()
            if tensor is None or key in skip:
                continue
            grad = _grad(tensor)
            if not _same_state(entry[2], grad) or id(grad) in written:
                entry[1] = None if grad is None else UNKNOWN
                entry[2] = _state(grad)
