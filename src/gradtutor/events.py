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
from dataclasses import replace
from typing import Any, Callable, Collection, Mapping, NamedTuple

import torch

from gradtutor.model import HIDDEN_GLOBAL, OP, Event, Graph, Snapshot, is_routine  # noqa: F401  (re-exported)
from gradtutor.snapshot import scan_names
from gradtutor.tracebacks import exception_text
from gradtutor.observer import (
    BackwardRecord,
    DetachRecord,
    FailedBackwardRecord,
    GradSetRecord,
    InplaceRecord,
    RequiresGradRecord,
    RetainGradRecord,
    UnfollowedRecord,
    WarningRecord,
    classify_error,
)

class _Bound(NamedTuple):
    """What a name held: its tensor (weakly) and that tensor's node."""

    ref: weakref.ref[torch.Tensor]
    node: str | None


class NameTracker:
    """What each name of one frame referred to after the previous step, and
    after the previous run of each statement (to tell a graph that grows
    from one loop iteration to the next)."""

    def __init__(self) -> None:
        self.bound: dict[str, _Bound] = {}
        self.seen = False  # has a step of the frame been looked at (its names known)?
        # The tensors of the names a function's step sees but does not own (its
        # globals, by their own names: "global x" is x), weakly, as after its
        # last step (see ``outer_after``); None before its first step is
        # looked at (not known then).
        self.outer: dict[str, weakref.ref[torch.Tensor]] | None = None
        # Set while ``outer`` covers only these globals (see ``outer_at_call``):
        # the others held, before the step, what they hold after it.
        self.outer_only: frozenset[str] | None = None
        # Its own names that code run while it was suspended bound to another
        # tensor (a generator's closure variable, by the function it shares
        # it with), as when it resumed: what they held before its next step.
        self.resumed: dict[str, weakref.ref[torch.Tensor]] = {}
        self.after_statement: dict[int, dict[str, str]] = {}  # line -> name -> node
        # Module names: the module (weakly) and its parameters (weakly), as
        # when the name was bound (the module may die while its parameters
        # live on in a graph).
        self.modules: dict[str, tuple[weakref.ref[Any], tuple[weakref.ref[torch.Tensor], ...]]] = {}
        # The parameters of modules a name held before it was bound to
        # another (drawn "model (old)"), while they live: id -> the parameter, weakly.
        self.old_module_params: dict[int, weakref.ref[torch.Tensor]] = {}

    def bind_arguments(self, arguments: list[tuple[str, torch.Tensor, str | None]]) -> None:
        """A function's tensor arguments (name, tensor, node), bound before its first step."""
        self.bound = {name: _Bound(weakref.ref(t), node) for name, t, node in arguments}
        self.seen = True

    def bind_anew(self, line: int, order: list[str], now: Mapping[str, tuple[torch.Tensor, str | None]]) -> None:
        """The names of a step of statement ``line`` that bound the names of
        ``now`` anew (name -> its tensor and node), or gave the tensor a name
        held a node of its own (a const it read), and changed nothing else
        of them, as ``_name_events`` leaves them; ``order``: every name, in
        the frame's order (see ``repeat_steps.rebound_names``)."""
        bound = self.bound
        self.bound = {
            name: _Bound(weakref.ref(now[name][0]), now[name][1]) if name in now else bound[name] for name in order
        }
        after = self.after_statement.setdefault(line, {})
        for name, (_, node) in now.items():
            if node is not None:
                after[name] = node

    def resumed_with(self, names: Mapping[str, Any], shared: tuple[str, ...]) -> None:
        """A suspended frame resumes with ``names``: what its variables
        ``shared`` with other functions hold now, if bound anew meanwhile."""
        for name in shared:
            value = names.get(name)
            old = self.bound.get(name)
            if isinstance(value, torch.Tensor) and (old is None or old.ref() is not value):
                self.resumed[name] = weakref.ref(value)

    def outer_at_call(self, held: Mapping[str, weakref.ref[torch.Tensor] | None]) -> None:
        """Before a function's first step is looked at: what the globals it
        rebinds (``global x``) held when it was called (or after its steps
        let pass), ``held`` (None: no tensor). Only its own steps could have
        bound them to another tensor since: the other globals are taken to
        hold what they held then, as they are on that step when nothing is
        known."""
        if self.outer is None:
            self.outer = {name: ref for name, ref in held.items() if ref is not None}
            self.outer_only = frozenset(held)

    def outer_after(self, names: Mapping[str, Any], everything: bool = False) -> None:
        """The globals (``names``) as now, after code that ran unlooked at.
        ``everything``: other code ran while a generator was suspended. Else
        a step was let pass (no torch call, or a repeat): only the globals
        known to hold a tensor are looked at again, not every global on
        each such step (one it made name a tensor anew is missed: a change
        in place of that tensor would be taken for one the step made)."""
        outer = self.outer
        if outer is None:
            return
        if everything:
            self.outer = {name: weakref.ref(t) for name, t in scan_names(names).tensors}
            self.outer_only = None
            return
        for name, ref in list(outer.items()):
            value = names.get(name)
            if value is not ref():
                if isinstance(value, torch.Tensor):
                    outer[name] = weakref.ref(value)
                else:
                    del outer[name]


def _names_by_id(namespace: Mapping[str, Any]) -> dict[int, list[str]]:
    """``id(tensor)`` -> the names that reach it: the names bound to it, then
    the items of short tuples and lists bound to names (an LSTM's ``hidden[0]``)."""
    scan = scan_names(namespace)
    out: dict[int, list[str]] = {}
    for name, value in scan.tensors:
        out.setdefault(id(value), []).append(name)
    for name, value in scan.sequences:
        for i, v in enumerate(value):
            if isinstance(v, torch.Tensor):
                out.setdefault(id(v), []).append(f"{name}[{i}]")
    return out


def _param_paths(namespace: Mapping[str, Any]) -> dict[int, tuple[str, str]]:
    """``id(param)`` -> (module name, parameter path) for named modules."""
    out: dict[int, tuple[str, str]] = {}
    scan = scan_names(namespace)
    for name, value in scan.modules:
        for p_name, p in scan.parts(value)[0]:
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
    # (what records and an error are told by: a step with neither, most
    # steps of a loop, does not look)
    ids = _names_by_id(namespace) if records or exception is not None else {}
    events: list[Event] = []

    def name_of(ref: weakref.ref[torch.Tensor] | None) -> str | None:
        t = ref() if ref is not None else None
        if t is None:
            return None
        names = ids.get(id(t))
        return names[0] if names else None

    params: dict[int, tuple[str, str]] | None = None
    grad_owners: dict[int, str] | None = None
    buffers: dict[int, str] | None = None
    # Changes made in place are one event per kind, target, how and op: an
    # optimizer step is one event per module with the count of its tensors; a
    # tensor changed again and again by library code is one event with a count.
    # A module's buffers are one event whatever updated them (a BatchNorm's
    # counter by add_, its running statistics by batch_norm): its ops listed.
    changes: dict[tuple[str, str, str, str], tuple[int, bool, set[int], list[int], dict[str, None]]] = {}
    backwards: dict[tuple[Any, ...], tuple[int, int]] = {}
    before_error: list[Event] = []  # what failed backwards filled, told after the error

    def collect(change: tuple[tuple[str, str, str, str], bool, Event], target: Any, op: str) -> None:
        change_key, of_module, event = change
        if change_key not in changes:
            changes[change_key] = (len(events), of_module, set(), [0], {})
            events.append(event)
        changes[change_key][2].add(id(target))
        changes[change_key][3][0] += 1
        changes[change_key][4][op] = None

    for rec in records:
        rec_line = rec.line if rec.line is not None else line
        if isinstance(rec, BackwardRecord):
            root = name_of(rec.roots[0]) if rec.roots else None
            fields: dict[str, Any] = {}
            if rec.api == "autograd.grad":
                named = [n for n in (name_of(r) for r in rec.results) if n is not None]
                fields["result"] = ", ".join(named) if named else None
            if rec.library:
                fields["via"] = rec.library
            key = ("backward", rec.api, root, rec.retain_graph, rec.create_graph, rec.library)
            if key in backwards and not rec.accumulated:
                # The same backward again in one step (a comprehension of
                # autograd.grad calls, gradcheck): one event with a count.
                index, count = backwards[key]
                backwards[key] = (index, count + 1)
                continue
            backwards[key] = (len(events), 1)
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
                events.extend(_grad_events("grad-accumulated", rec.accumulated, rec_line, name_of, params))
        elif isinstance(rec, FailedBackwardRecord):
            if params is None:
                params = _param_paths(namespace)
            for refs, added in ((rec.first_grads, False), (rec.accumulated, True)):
                before_error.extend(_grad_events("grad-before-error", refs, rec_line, name_of, params, added=added))
        elif isinstance(rec, DetachRecord):
            name = name_of(rec.ref)
            detached = rec.ref()
            # (A custom autograd.Function's forward runs without recording,
            # but what it returns is then given the Function's node.)
            if name is not None and detached is not None and detached.grad_fn is None:
                events.append(
                    Event.make("detached", rec_line, name=name, how=rec.how, source=name_of(rec.source))
                )
            elif (
                name is None and rec.how == "detach" and rec.library is None and rec.line is not None
                and (detached is None or detached.grad_fn is None) and (source := _own_name(rec.source, ids, scope))
            ):
                # netD(fake.detach()): a detached copy the line used where it
                # stood, never named. (Not library code's own detach() calls,
                # nor one a call returned: its caller names it, see _hand_to_caller.)
                events.append(Event.make("detached", rec_line, how="detach", source=source))
        elif isinstance(rec, RetainGradRecord):
            events.append(Event.make("retain-grad", rec_line, name=name_of(rec.ref)))
        elif isinstance(rec, UnfollowedRecord):
            events.append(Event.make(
                "function-unfollowed", rec_line, function=rec.function, calls=rec.stepped, repeated=rec.settled
            ))
        elif isinstance(rec, RequiresGradRecord):
            if params is None:
                params = _param_paths(namespace)
            switched = _requires_grad_change(rec, rec_line, name_of, params)
            if switched is not None:
                collect(switched, rec.ref(), "")
        elif isinstance(rec, WarningRecord):
            events.append(Event.make("warning", rec_line, cause=rec.cause, name=name_of(rec.ref)))
        elif isinstance(rec, (InplaceRecord, GradSetRecord)):
            if params is None:
                params = _param_paths(namespace)
            if buffers is None:
                buffers = _module_tensors(namespace)
            holder = None
            if isinstance(rec, InplaceRecord):
                holder = _held_before(rec, ids, tracker, scope, params, buffers)
                if holder == "":
                    if rec.view_of is None:
                        continue  # x = (x * 2).relu_(): the step changed a tensor it made, nothing the user had
                    # v = data[0:1].add_(5): data changed, through a view that only the step named
                    rec, holder = replace(rec, ref=rec.view_of, view_of=None), None
            if grad_owners is None:
                grad_owners = _grad_owners(namespace, params)
            naming = name_of if holder is None else _naming(name_of, rec.ref, holder)
            change = _tensor_change(rec, rec_line, naming, params, grad_owners, buffers)
            if change is not None:
                # (through .data the tensor changed is the one whose data it
                # is: the view, made anew by each p.data, is often gone)
                through = rec.data_of if isinstance(rec, InplaceRecord) else None
                target = (through or rec.ref)()
                collect(change, target if target is not None else rec, getattr(rec, "op", ""))

    for index, times in backwards.values():
        if times > 1:
            events[index] = Event.make("backward", events[index].line, **{**events[index].data, "times": times})
    for index, of_module, targets, counter, ops in changes.values():
        extra: dict[str, Any] = (
            {"parameters": len(targets)} if of_module else ({"times": counter[0]} if counter[0] > 1 else {})
        )
        if of_module and counter[0] > len(targets) and counter[0] % len(targets) == 0:
            # Each tensor changed again and again in one step: LBFGS updates
            # the parameters before each run of the closure after the first.
            extra["times"] = counter[0] // len(targets)
        if len(ops) > 1:
            extra["op"] = ", ".join(ops)
        if extra:
            events[index] = Event.make(events[index].kind, events[index].line, **{**events[index].data, **extra})
    events.extend(_name_events(line, iteration, namespace if scope is None else scope, tracker, snapshot, namespace))
    tracker.resumed.clear()
    if scope is not None and scope is not namespace:
        note_outer(tracker, namespace, scope)

    if exception is not None:
        events.append(_error_event(line, exception, (error_details or {}).get(id(exception), {}), name_of))
    events.extend(before_error)
    return _dedupe(events)


def note_outer(tracker: NameTracker, namespace: Mapping[str, Any], scope: Mapping[str, Any]) -> None:
    """After a function's step: the tensors of the names it sees that are
    not its own (its globals), as ``tracker.outer``."""
    tracker.outer = {
        name.removeprefix(HIDDEN_GLOBAL): weakref.ref(t) for name, t in scan_names(namespace).tensors
        if name not in scope
    }
    tracker.outer_only = None


def _own_name(
    ref: weakref.ref[torch.Tensor] | None, ids: Mapping[int, list[str]], scope: Mapping[str, Any] | None
) -> str | None:
    """The name of ``ref``'s tensor, one of the frame's own first (``h`` of
    ``def repack(h): return h.detach()``, not the global it was called with)."""
    t = ref() if ref is not None else None
    names = ids.get(id(t)) if t is not None else None
    if not names:
        return None
    return next((name for name in names if scope is None or name in scope), names[0])


def _held_before(
    rec: InplaceRecord, ids: Mapping[int, list[str]], tracker: NameTracker, scope: Mapping[str, Any] | None,
    params: Mapping[int, tuple[str, str]], buffers: Mapping[int, str],
) -> str | None:
    """The name to tell an in-place change by, when the names the step bound
    would tell it wrong: one that reached the tensor before the step (``w =
    zs[0].mul_(2)`` changed ``zs[0]``; ``a, b = b, a.add_(1)`` changed
    ``a``, whose tensor b names now), or "" when none did: ``x = (x *
    2).relu_()`` changed a tensor the step made (x named another one then),
    and ``v = data[0:1].add_(5)`` changed ``data`` through a view only the
    step named. The names are all those the step sees: a function's own
    (``scope``), and its globals (a global ``w`` a function changes in
    place is ``w`` changed). None when the usual naming holds: not asked
    of a module's tensor, a change through ``.data``, nor of names not
    looked at before (a module's first step; on a function's first step,
    the globals it does not rebind, which hold what they held before)."""
    if rec.data_of is not None:
        return None
    t = rec.ref()
    if t is None or id(t) in params or id(t) in buffers:
        return None
    names = ids.get(id(t))
    if not names:
        return None
    before = [name for name in names if "[" in name or _held(tracker, scope, name, t)]
    if not before:
        return _held_by(tracker, scope, t)
    return before[0] if before[0] != names[0] else None


def _held(tracker: NameTracker, scope: Mapping[str, Any] | None, name: str, t: torch.Tensor) -> bool:
    """Did ``name`` hold ``t`` before the step? Yes when not known."""
    if scope is None or name in scope:
        resumed = tracker.resumed.get(name)
        if resumed is not None:
            return resumed() is t
        old = tracker.bound.get(name)
        return not tracker.seen or old is not None and old.ref() is t
    if tracker.outer is None:
        return True
    bare = name.removeprefix(HIDDEN_GLOBAL)
    if tracker.outer_only is not None and bare not in tracker.outer_only:
        return True  # (a global the function does not rebind)
    ref = tracker.outer.get(bare)
    return ref is not None and ref() is t


def _held_by(tracker: NameTracker, scope: Mapping[str, Any] | None, t: torch.Tensor) -> str:
    """The name that held ``t`` before the step, when none of those that
    hold it now did; "" when none did."""
    for name, old in tracker.bound.items():
        if old.ref() is t and name not in tracker.resumed:
            return name
    for name, ref in tracker.resumed.items():
        if ref() is t:
            return name
    for name, ref in (tracker.outer or {}).items():
        if ref() is t:
            return HIDDEN_GLOBAL + name if scope is not None and name in scope else name
    return ""


def _naming(name_of: Any, ref: Any, name: str) -> Any:
    """``name_of``, with ``name`` for the tensor of ``ref``."""
    return lambda other: name if other is ref else name_of(other)


def _grad_owners(namespace: Mapping[str, Any], params: Mapping[int, tuple[str, str]]) -> dict[int, str]:
    """``id(t.grad)`` -> ``t``'s name, for named tensors; ``m:<module>`` for
    the parameters of named modules."""
    owners: dict[int, str] = {}
    scan = scan_names(namespace)
    for name, value in scan.tensors_and_modules:
        if isinstance(value, torch.Tensor):
            if value.is_leaf or value.retains_grad:
                g = value.grad
                if g is not None:
                    owners.setdefault(id(g), name)
        else:
            for _, p in scan.parts(value)[0]:
                g = p.grad
                if g is not None:
                    owners.setdefault(id(g), "m:" + params.get(id(p), (name, ""))[0])
    return owners


def _module_tensors(namespace: Mapping[str, Any]) -> dict[int, str]:
    """``id(buffer)`` -> module name, for the buffers (running statistics...) of named modules."""
    out: dict[int, str] = {}
    scan = scan_names(namespace)
    for name, value in scan.modules:
        for b in scan.parts(value)[1]:
            out.setdefault(id(b), name)
    return out


def _tensor_change(
    rec: InplaceRecord | GradSetRecord,
    line: int,
    name_of: Any,
    params: Mapping[int, tuple[str, str]],
    grad_owners: Mapping[int, str],
    buffers: Mapping[int, str],
) -> tuple[tuple[str, str, str, str], bool, Event] | None:
    """The event for one in-place change, its key (kind, target, how, op) for
    collapsing repeats within a step, and whether its target is a module (then
    the count is of its tensors). None when there is nothing to say:
    library code setting a module up (constructors, ``.to()``), or changing
    tensors of its own (an optimizer's moment estimates)."""
    target = rec.ref()
    library = getattr(rec, "library", None)
    via = {"via": library} if library else {}
    through: str | None = None  # the name of the tensor the change went through, when it is told as another's
    # A parameter of a named module that library code changed (zero_grad, an
    # optimizer step) is told as part of its module, whatever other name it
    # has (the loop variable of an earlier ``for p in model.parameters()``).
    of_module = target is not None and id(target) in params and bool(library)
    if isinstance(rec, GradSetRecord):
        how = "none" if rec.cleared else "set"
        name = None if of_module else name_of(rec.ref)
        if name is None and target is not None and id(target) in params:
            module = params[id(target)][0]
            return ("grad-reset", module, how, ""), True, Event.make("grad-reset", line, name=module, how=how)
        return (("grad-reset", name, how, ""), False, Event.make("grad-reset", line, name=name, how=how)) if name else None
    if rec.library_kind == "setup":
        return None  # a module initialising or converting its own tensors
    if rec.data_of is not None:
        # Through .data: autograd neither records it nor bumps the version.
        source = rec.data_of()
        name = name_of(rec.data_of)
        if name is None and source is not None and id(source) in params:
            module = params[id(source)][0]
            return ("inplace", module, "data", rec.op), True, Event.make("inplace", line, name=module, op=rec.op, how="data", **via)
        if name is None and source is not None and id(source) in grad_owners:
            target = source  # w.grad.data.zero_(): a gradient changed, as w.grad.zero_() would
        elif name is None:
            return None
        else:
            # d = c.data; d += 1: told as c's change, through d
            through = name_of(rec.ref)
            named = {"through": through} if through is not None and through != name else {}
            return (
                ("inplace", name, "data" + (f" through {through}" if named else ""), rec.op), False,
                Event.make("inplace", line, name=name, op=rec.op, how="data", **named, **via),
            )
    else:
        name = None if of_module else name_of(rec.ref)
        # (a module's buffer may itself be what detach() gave: it is the module's)
        held = target is not None and (id(target) in params or id(target) in buffers)
        if not of_module and not held and rec.view_of is not None:
            base = rec.view_of()
            base_name = name_of(rec.view_of)
            if name is None:
                # A view changed (u[0][1] = 1): the tensor it is a view of changed.
                name = base_name
                if name is None and base is not None:
                    target = base
            elif base_name is None and base is not None and (id(base) in params or id(base) in buffers):
                # ema_v.lerp_(...), ema_v a value of ema.state_dict(): what
                # changed is the module's parameter or buffer it shares its
                # memory with, which no name holds: told as the module's, as
                # a change made to it directly is.
                target, through, name = base, name, None
            elif base_name is not None and base_name != name:
                # d += 1, d a view of c or what c.detach() gave: they share
                # memory and version counter, so c changed too: told as c's
                # change, through d, as a module's through ema_v is.
                through, name = name, base_name
        if name is not None:
            named = {"through": through} if through else {}
            return (
                ("inplace", name, f"through {through}" if through else "", rec.op), False,
                Event.make("inplace", line, name=name, op=rec.op, version=rec.version, **named, **via),
            )
    if target is None:
        return None
    owner = grad_owners.get(id(target))
    if owner is not None:
        # A gradient changed in place: x.grad.zero_(), zero_grad(set_to_none=False), clipping.
        how = "zeroed" if rec.op == "zero_" else "changed"
        if owner.startswith("m:"):
            module = owner[2:]
            return ("grad-reset", module, how, rec.op), True, Event.make("grad-reset", line, name=module, how=how, op=rec.op, **via)
        return ("grad-reset", owner, how, rec.op), False, Event.make("grad-reset", line, name=owner, how=how, op=rec.op, **via)
    named = {"through": through} if through else {}
    if id(target) in params:
        module = params[id(target)][0]
        how = "optimizer" if rec.library_kind == "optimizer" else ""
        key = how + (f" through {through}" if through else "")
        return ("inplace", module, key, rec.op), True, Event.make("inplace", line, name=module, op=rec.op, how=how, **named, **via)
    if id(target) in buffers:
        # BatchNorm's running statistics and the like: not parameters, not in
        # any graph. Updated by the module's own code as it runs ("buffers":
        # a forward the line called), or else by the program's, by other
        # library code (load_state_dict), or through another tensor.
        module = buffers[id(target)]
        ran = library is not None and library.endswith(".forward") and through is None and target is rec.ref()
        how = "buffers" if ran else "buffers-other"
        key = how + (f" through {through}" if through else "")
        return ("inplace", module, key, ""), True, Event.make("inplace", line, name=module, op=rec.op, how=how, **named, **via)
    if library:
        return None  # library code changing a tensor of its own
    return ("inplace", "", "", rec.op), False, Event.make("inplace", line, name=None, op=rec.op, version=rec.version)


def _requires_grad_change(
    rec: RequiresGradRecord, line: int, name_of: Any, params: Mapping[int, tuple[str, str]]
) -> tuple[tuple[str, str, str, str], bool, Event] | None:
    """The event for a tensor's requires_grad switched on or off, and its key
    for collapsing repeats within a step. A parameter switched by library
    code (``model.requires_grad_(False)``) or by no name of the step is told
    with its module, counted."""
    target = rec.ref()
    if target is None:
        return None
    name = name_of(rec.ref)
    how = "on" if rec.on else "off"
    if id(target) in params and (name is None or rec.library):
        module = params[id(target)][0]
        return ("requires-grad", module, how, ""), True, Event.make("requires-grad", line, name=module, on=rec.on)
    if name is None:
        return None
    return ("requires-grad", name, how, ""), False, Event.make("requires-grad", line, name=name, on=rec.on)


def _grad_events(
    kind: str,
    refs: list[weakref.ref[torch.Tensor]],
    line: int,
    name_of: Any,
    params: dict[int, tuple[str, str]],
    **fields: Any,
) -> list[Event]:
    """Events of ``kind`` for the leaves of ``refs`` whose .grad a backward
    changed: one per named tensor, one per module for its parameters; for a
    gradient added to, one more for the leaves no name holds (a leaf an
    expression kept alive, ``torch.tensor(X, requires_grad=True).float()``'s,
    whose .grad nothing clears), with their count."""
    events: list[Event] = []
    by_module: dict[str, int] = {}
    unnamed = 0
    for ref in refs:
        leaf = ref()
        if leaf is not None and id(leaf) in params:
            # (a parameter is counted with its module, whatever other name
            # it has: "netD's gradients ... (8 parameters)", not 7 and "p")
            module = params[id(leaf)][0]
            by_module[module] = by_module.get(module, 0) + 1
            continue
        name = name_of(ref)
        if name is not None:
            events.append(Event.make(kind, line, name=name, **fields))
        elif leaf is not None:
            unnamed += 1
    for module, count in by_module.items():
        events.append(Event.make(kind, line, name=module, parameters=count, **fields))
    if unnamed and kind == "grad-accumulated":
        events.append(Event.make(kind, line, leaves=unnamed, **fields))
    return events


def _name_events(
    line: int, iteration: int, namespace: Mapping[str, Any], tracker: NameTracker, snapshot: Snapshot,
    visible: Mapping[str, Any] | None = None,
) -> list[Event]:
    """Names of ``namespace`` (the frame's own) bound, rebound, or bound to a
    graph that grew; ``visible``: every name the step sees (for modules)."""
    events: list[Event] = []
    node_of = snapshot.nodes_by_name()
    named = {n for n in node_of.values() if n is not None}
    reach = snapshot.reach
    params_of = params_once(visible if visible is not None else namespace)
    current: dict[str, _Bound] = {}
    previous_run = tracker.after_statement.get(line, {})
    for name, value in scan_names(namespace).tensors:
        node = node_of.get(name)
        old = tracker.bound.get(name)
        if old is None:
            current[name] = _Bound(weakref.ref(value), node)
            events.append(Event.make("name-bound", line, name=name, node=node))
            continue
        old_value = old.ref()
        current[name] = old if old_value is value and old.node == node else _Bound(weakref.ref(value), node)
        if old_value is not value:
            old_in_graph = old_still_in_graph(old, named, reach, tracker, params_of)
            events.append(
                Event.make("name-rebound", line, name=name, old_in_graph=old_in_graph, old_node=old.node, node=node)
            )
        if node is None or node == old.node:
            continue
        if grew(name, node, iteration, previous_run, reach):
            if snapshot.ops.nodes:
                events.append(Event.make("graph-growth", line, name=name, nodes=_graph_size(snapshot.ops, node)))
            else:
                events.append(Event.make("graph-growth", line, name=name))
    events.extend(_module_events(line, namespace, tracker, reach, visible if visible is not None else namespace))
    after = tracker.after_statement.setdefault(line, {})
    for name, bound in current.items():
        old = tracker.bound.get(name)
        if bound.node is not None and (old is None or old.node != bound.node or old.ref() is not bound.ref()):
            after[name] = bound.node
    tracker.bound = current
    tracker.seen = True
    return events


def old_still_in_graph(
    old: _Bound, named: Collection[str], reach: Any, tracker: NameTracker,
    params_of: Callable[[], Mapping[int, tuple[str, str]]],
) -> bool:
    """Is what a name held before it was bound anew (``old``) still in the
    graph: an input of a tensor a name holds, and not itself named (it is
    drawn under that name then), nor a module's parameter (drawn as the
    module, "model" or "model (old)")? ``named``: the nodes names hold;
    ``params_of()``: the named modules' parameters, by id (asked only then)."""
    if old.node is None or old.node in named or not reach.in_graph(old.node):
        return False
    old_value = old.ref()
    if old_value is None:
        return True
    key = id(old_value)
    return key not in params_of() and not (
        key in tracker.old_module_params and tracker.old_module_params[key]() is old_value
    )


def params_once(namespace: Mapping[str, Any]) -> Callable[[], Mapping[int, tuple[str, str]]]:
    """``_param_paths(namespace)``, found when first asked."""
    found: list[Mapping[int, tuple[str, str]]] = []

    def params_of() -> Mapping[int, tuple[str, str]]:
        if not found:
            found.append(_param_paths(namespace))
        return found[0]

    return params_of


def grew(name: str, node: str, iteration: int, previous_run: Mapping[str, str], reach: Any) -> bool:
    """Growth: the graph this statement gives ``name`` now (``node``, another
    than it held) contains the one it gave it on the previous iteration. (A
    name built up over several statements of one iteration, x = conv(x); x
    = relu(x), is not growth.) Walked only until the previous value is met;
    the size is counted on the whole graph, now if the snapshot has it,
    else once the step is shown (``with_growth_sizes``)."""
    before = previous_run.get(name)
    return iteration > 1 and before is not None and before != node and reach.grew_from(node, before)


def _module_events(
    line: int, namespace: Mapping[str, Any], tracker: NameTracker, reach: Any, visible: Mapping[str, Any]
) -> list[Event]:
    """A module name bound to another module while
    parameters of the module it held are still in the graph of a named
    tensor (``model = Net()`` again after a forward): told, as a tensor name
    that moved on is. A module rebound with none of its parameters in a
    graph, or whose parameters the new one holds too, is not."""
    events: list[Event] = []
    scan = scan_names(namespace)
    before = tracker.modules
    now: dict[str, tuple[weakref.ref[Any], tuple[weakref.ref[torch.Tensor], ...]]] = {}
    for name, module in scan.modules:
        old = before.get(name)
        if old is not None and old[0]() is module:
            now[name] = old
        else:
            now[name] = (weakref.ref(module), tuple(weakref.ref(p) for _, p in scan.parts(module)[0]))
    for name, (ref, params) in before.items():
        if name not in now or now[name][0] is ref:
            continue  # the same module, a name deleted, or one that holds no module now
        kept = set(_param_paths(visible)) if params else set()
        left = {id(t): r for t, r in ((r(), r) for r in params) if t is not None and id(t) not in kept}
        if left:
            olds = tracker.old_module_params
            for key in [key for key, r in olds.items() if r() is None]:
                del olds[key]
            olds.update(left)
            if reach.reaches_tensor(set(left)):
                events.append(Event.make("name-rebound", line, name=name, old_in_graph=True, module=True))
            elif reach.reaches_tensor(set(left), live=False):
                # In a graph a backward freed: drawn "(old)", told as moved on.
                events.append(Event.make("name-rebound", line, name=name, old_in_graph=False, module=True))
    tracker.modules = now
    return events


def with_growth_sizes(events: list[Event], snapshot: Snapshot) -> list[Event]:
    """``events`` with the size of each growing graph a lite snapshot left
    out, counted on ``snapshot`` (the whole one of the same step)."""
    if not any(e.kind == "graph-growth" and e.get("nodes") is None for e in events):
        return events
    node_of = snapshot.nodes_by_name()
    out = []
    for event in events:
        node = node_of.get(event.get("name")) if event.kind == "graph-growth" and event.get("nodes") is None else None
        if node is not None:
            event = Event.make("graph-growth", event.line, name=event.get("name"), nodes=_graph_size(snapshot.ops, node))
        out.append(event)
    return out


def _graph_size(ops: Graph, node_id: str) -> int:
    """The autograd nodes ``node_id`` was computed from, itself included."""
    ancestors = _ancestors(ops, node_id)
    return sum(1 for n in ops.nodes if n.id in ancestors and n.kind == OP)


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
    if cause == "second-backward" and not details.get("during"):
        cause = "freed-saved-read"  # raised by reading a node's saved tensor, not by a backward
    message = exception_text(exc)
    fields: dict[str, Any] = {"cause": cause, "exception": type(exc).__name__, "message": message}
    if cause == "leaf-inplace" and "a view of a leaf Variable" in message:
        fields["view"] = True  # (c[:, 0] += 1: a slice of the leaf was changed, which changes the leaf)
    for key, value in details.items():
        if key == "tensor_ref":
            fields["name"] = name_of(value)
        elif key == "during" or key == "again" and not value:
            continue
        else:
            fields[key] = value
    return Event.make("error", line, **fields)


def _dedupe(events: list[Event]) -> list[Event]:
    if len(events) < 2:
        return events
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
