"""Events: what a step did, from the calls it made and the names it changed.

``detect_events`` combines three sources, in this order:

1. the records the observer made of the step's autograd calls (backward,
   detach, retain_grad, ``.grad`` reads, in-place ops);
2. the difference between the names the frame had before and after the step
   (a name bound, rebound, or bound to a bigger graph that contains its old one);
3. the exception the step raised, if any, classified by cause.

Event kinds and their fields are listed in ``EVENT_KINDS``; each has an
explanation in every language under ``lessons/explanations/``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Mapping

import torch

from gradtutor.model import OP, Event, Graph, Snapshot, is_routine  # noqa: F401  (re-exported)
from gradtutor.snapshot import is_tracked_name
from gradtutor.observer import (
    BackwardRecord,
    DetachRecord,
    GradSetRecord,
    InplaceRecord,
    RetainGradRecord,
    WarningRecord,
    classify_error,
)

@dataclass(frozen=True)
class _Bound:
    ref: weakref.ref[torch.Tensor]
    node: str | None


class NameTracker:
    """What each name of one frame referred to after the previous step, and
    after the previous run of each statement (to tell a graph that grows
    from one loop iteration to the next)."""

    def __init__(self) -> None:
        self.bound: dict[str, _Bound] = {}
        self.after_statement: dict[int, dict[str, str]] = {}  # line -> name -> node


def _names_by_id(namespace: Mapping[str, Any]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, value in namespace.items():
        if isinstance(value, torch.Tensor) and is_tracked_name(name):
            out.setdefault(id(value), []).append(name)
    return out


def _param_paths(namespace: Mapping[str, Any]) -> dict[int, tuple[str, str]]:
    """``id(param)`` -> (module name, parameter path) for named modules."""
    out: dict[int, tuple[str, str]] = {}
    for name, value in namespace.items():
        if isinstance(value, torch.nn.Module) and is_tracked_name(name):
            for p_name, p in value.named_parameters():
                out.setdefault(id(p), (name, f"{name}.{p_name}"))
    return out


def detect_events(
    *,
    line: int,
    iteration: int,
    namespace: Mapping[str, Any],
    scope: Mapping[str, Any] | None = None,
    tracker: NameTracker,
    snapshot: Snapshot,
    records: list[Any],
    exception: BaseException | None = None,
    error_details: Mapping[int, Mapping[str, Any]] | None = None,
) -> list[Event]:
    """All events of one step; updates ``tracker`` to the names after it.

    ``namespace`` is every name the step can see (to name tensors in events);
    ``scope`` the names it owns (a function's locals), whose binding and
    rebinding are reported. By default the two are the same."""
    ids = _names_by_id(namespace)
    events: list[Event] = []

    def name_of(ref: weakref.ref[torch.Tensor] | None) -> str | None:
        t = ref() if ref is not None else None
        if t is None:
            return None
        names = ids.get(id(t))
        return names[0] if names else None

    params: dict[int, tuple[str, str]] | None = None
    grad_owners: dict[int, str] | None = None
    # Changes to a module's parameters or their gradients (an optimizer step,
    # zero_grad) are one event per module: (kind, module, how, op) -> [index, count].
    per_module: dict[tuple[str, str, str, str], list[int]] = {}
    for rec in records:
        rec_line = rec.line if rec.line is not None else line
        if isinstance(rec, BackwardRecord):
            root = name_of(rec.roots[0]) if rec.roots else None
            fields: dict[str, Any] = {}
            if rec.api == "autograd.grad":
                named = [n for n in (name_of(r) for r in rec.results) if n is not None]
                fields["result"] = ", ".join(named) if named else None
            events.append(
                Event.make(
                    "backward",
                    rec_line,
                    api=rec.api,
                    root=root,
                    retain_graph=rec.retain_graph,
                    create_graph=rec.create_graph,
                    freed=rec.freed,
                    **fields,
                )
            )
            if rec.accumulated:
                if params is None:
                    params = _param_paths(namespace)
                events.extend(_accumulated_events(rec, rec_line, name_of, params))
        elif isinstance(rec, DetachRecord):
            name = name_of(rec.ref)
            if name is not None:
                events.append(
                    Event.make("detached", rec_line, name=name, how=rec.how, source=name_of(rec.source))
                )
        elif isinstance(rec, RetainGradRecord):
            events.append(Event.make("retain-grad", rec_line, name=name_of(rec.ref)))
        elif isinstance(rec, WarningRecord):
            events.append(Event.make("warning", rec_line, cause=rec.cause, name=name_of(rec.ref)))
        elif isinstance(rec, (InplaceRecord, GradSetRecord)):
            if params is None:
                params = _param_paths(namespace)
            if grad_owners is None:
                grad_owners = _grad_owners(namespace, params)
            change = _tensor_change(rec, rec_line, name_of, params, grad_owners)
            if change is None:
                continue
            key, event = change
            if key is None:
                events.append(event)
            elif key in per_module:
                per_module[key][1] += 1
            else:
                per_module[key] = [len(events), 1]
                events.append(event)

    for (kind, module, how, op), (index, count) in per_module.items():
        events[index] = Event.make(kind, events[index].line, **{**events[index].data, "parameters": count})
    events.extend(_name_events(line, iteration, namespace if scope is None else scope, tracker, snapshot))

    if exception is not None:
        events.append(_error_event(line, exception, (error_details or {}).get(id(exception), {}), name_of))
    return _dedupe(events)


def _grad_owners(namespace: Mapping[str, Any], params: Mapping[int, tuple[str, str]]) -> dict[int, str]:
    """``id(t.grad)`` -> ``t``'s name, for named tensors; ``m:<module>`` for
    the parameters of named modules."""
    owners: dict[int, str] = {}
    for name, value in namespace.items():
        if isinstance(value, torch.Tensor) and is_tracked_name(name) and (value.is_leaf or value.retains_grad):
            g = value.grad
            if g is not None:
                owners.setdefault(id(g), name)
        elif isinstance(value, torch.nn.Module) and is_tracked_name(name):
            for p in value.parameters():
                g = p.grad
                if g is not None:
                    owners.setdefault(id(g), "m:" + params.get(id(p), (name, ""))[0])
    return owners


def _tensor_change(
    rec: InplaceRecord | GradSetRecord,
    line: int,
    name_of: Any,
    params: Mapping[int, tuple[str, str]],
    grad_owners: Mapping[int, str],
) -> tuple[tuple[str, str, str, str] | None, Event] | None:
    """The event for one in-place change, and its per-module key when it
    changed a parameter (or a parameter's gradient) of a named module."""
    target = rec.ref()
    if isinstance(rec, GradSetRecord):
        how = "none" if rec.cleared else "set"
        name = name_of(rec.ref)
        if name is None and target is not None and id(target) in params:
            module = params[id(target)][0]
            return ("grad-reset", module, how, ""), Event.make("grad-reset", line, name=module, how=how)
        return (None, Event.make("grad-reset", line, name=name, how=how)) if name is not None else None
    if rec.data_of is not None:
        # Through .data: autograd neither records it nor bumps the version.
        source = rec.data_of()
        name = name_of(rec.data_of)
        if name is None and source is not None and id(source) in params:
            module = params[id(source)][0]
            return ("inplace", module, "data", rec.op), Event.make("inplace", line, name=module, op=rec.op, how="data")
        return None if name is None else (None, Event.make("inplace", line, name=name, op=rec.op, how="data"))
    name = name_of(rec.ref)
    if name is not None:
        return None, Event.make("inplace", line, name=name, op=rec.op, version=rec.version)
    if target is None:
        return None
    owner = grad_owners.get(id(target))
    if owner is not None:
        # A gradient changed in place: x.grad.zero_(), or zero_grad(set_to_none=False).
        how = "zeroed" if rec.op == "zero_" else "changed"
        if owner.startswith("m:"):
            module = owner[2:]
            return ("grad-reset", module, how, rec.op), Event.make("grad-reset", line, name=module, how=how, op=rec.op)
        return None, Event.make("grad-reset", line, name=owner, how=how, op=rec.op)
    if id(target) in params:
        # An optimizer step changes every parameter: one event per module.
        module = params[id(target)][0]
        return ("inplace", module, "", rec.op), Event.make("inplace", line, name=module, op=rec.op)
    return None, Event.make("inplace", line, name=None, op=rec.op, version=rec.version)


def _accumulated_events(
    rec: BackwardRecord,
    line: int,
    name_of: Any,
    params: dict[int, tuple[str, str]],
) -> list[Event]:
    events: list[Event] = []
    by_module: dict[str, int] = {}
    for ref in rec.accumulated:
        name = name_of(ref)
        if name is not None:
            events.append(Event.make("grad-accumulated", line, name=name))
            continue
        leaf = ref()
        if leaf is not None and id(leaf) in params:
            module = params[id(leaf)][0]
            by_module[module] = by_module.get(module, 0) + 1
    for module, count in by_module.items():
        events.append(Event.make("grad-accumulated", line, name=module, parameters=count))
    return events


def _name_events(
    line: int, iteration: int, namespace: Mapping[str, Any], tracker: NameTracker, snapshot: Snapshot
) -> list[Event]:
    events: list[Event] = []
    ops = snapshot.ops
    node_of = {b.name: b.node for b in snapshot.bindings}
    live: set[str] | None = None
    current: dict[str, _Bound] = {}
    previous_run = tracker.after_statement.get(line, {})
    for name, value in namespace.items():
        if not isinstance(value, torch.Tensor) or not is_tracked_name(name):
            continue
        node = node_of.get(name)
        current[name] = _Bound(weakref.ref(value), node)
        old = tracker.bound.get(name)
        if old is None:
            events.append(Event.make("name-bound", line, name=name, node=node))
            continue
        old_value = old.ref()
        if old_value is not value:
            if live is None:
                live = {n.id for n in ops.nodes if not n.dropped}
            old_in_graph = old.node is not None and old.node in live
            events.append(
                Event.make("name-rebound", line, name=name, old_in_graph=old_in_graph, old_node=old.node, node=node)
            )
        if node is None or node == old.node:
            continue
        # Growth: the graph this statement gives the name now contains the one
        # it gave it on the previous iteration. (A name built up over several
        # statements of one iteration, x = conv(x); x = relu(x), is not growth.)
        before = previous_run.get(name)
        if iteration > 1 and before is not None and before != node:
            ancestors = _ancestors(ops, node)
            if before in ancestors:
                nodes = sum(1 for n in ops.nodes if n.id in ancestors and n.kind == OP)
                events.append(Event.make("graph-growth", line, name=name, nodes=nodes))
    after = tracker.after_statement.setdefault(line, {})
    for name, bound in current.items():
        old = tracker.bound.get(name)
        if bound.node is not None and (old is None or old.node != bound.node or old.ref() is not bound.ref()):
            after[name] = bound.node
    tracker.bound = current
    return events


def _ancestors(ops: Graph, node_id: str) -> set[str]:
    """``node_id`` and every node it was computed from."""
    inputs: dict[str, list[str]] = {}
    for e in ops.edges:
        inputs.setdefault(e.dst, []).append(e.src)
    seen = {node_id}
    stack = [node_id]
    while stack:
        for src in inputs.get(stack.pop(), ()):
            if src not in seen:
                seen.add(src)
                stack.append(src)
    return seen


def _error_event(
    line: int, exc: BaseException, details: Mapping[str, Any], name_of: Any
) -> Event:
    cause = classify_error(exc)
    fields: dict[str, Any] = {
        "cause": cause,
        "exception": type(exc).__name__,
        "message": str(exc),
    }
    for key, value in details.items():
        if key == "tensor_ref":
            fields["name"] = name_of(value)
        else:
            fields[key] = value
    return Event.make("error", line, **fields)


def _dedupe(events: list[Event]) -> list[Event]:
    seen: set[Event] = set()
    out: list[Event] = []
    for e in events:
        try:
            if e in seen:
                continue
            seen.add(e)
        except TypeError:  # an unhashable field value; keep it
            pass
        out.append(e)
    return out
