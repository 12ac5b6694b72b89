"""Loop steps that repeat a hidden step exactly, told without detecting again.

Past its first iterations a loop step is hidden unless it says something new
(``Engine._seen_before``). Finding that out takes a snapshot and the whole
detection of events, which for a step like ``opt.step()`` or
``loss.backward()`` costs many times the step itself. Yet such a step, run
again with every name bound as before, makes the same calls on the same
tensors and so the same events: what it says was already found hidden.

A step is a *repeat* of an earlier run of its statement in the same frame
when:

- that run was hidden, and
- neither it nor this run changed what any tracked name of the frame holds
  (the same tensor, in the same autograd node: see ``names_as_bound``), and
- the observer recorded the same calls, told apart by what decides their
  events' kinds and names (``fingerprint``): the API and options of a
  backward, the op and library function of an in-place change, and each
  tensor by the name it has, or, when it has none (a module's parameter, a
  gradient), by its identity, checked through weak references.

The runs kept are the last one of each fingerprint (up to ``KEPT`` per
statement): ``p.grad = None`` in ``for p in parameters`` makes a different
call at each parameter, and repeats the one it made a loop earlier.

A repeat is hidden with the events of the run it repeats (the same
signatures, counted again in the hidden steps' note); nothing else is
looked at. Any other step is detected in full.

A step that only binds names anew (``y = y * 2``, ``loss = criterion(out,
t)``), or reads a tensor without a graph (which tags it as its input), is a
repeat of a hidden run of its statement that did so when it binds the
same names anew, and, for each, what it held is still in the graph or not,
and its graph grew or not, as then, and the observer recorded calls of the
same fingerprint, naming the same objects, or none as then
(``Rebinding``; ``h = model(x)`` under no_grad records a result made
without a graph): the only questions its events are told by. The last run
of each such answer is kept (up to ``KEPT`` per statement). What the full
detection would leave behind (what each name holds now, the names nodes
lost) is left the same way.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

import torch

from gradtutor import autograd_graph as ag
from gradtutor.events import NameTracker
from gradtutor.model import Event
from gradtutor.observer import (
    BackwardRecord,
    DetachRecord,
    GradSetRecord,
    InplaceRecord,
    RequiresGradRecord,
    RetainGradRecord,
    WarningRecord,
)
from gradtutor.snapshot import scan_names

# The kinds of events a rebinding is told by (see RebindingKey.told_by).
_NAME_KINDS = frozenset({"name-bound", "name-rebound", "graph-growth"})
# Hidden runs in a row that bound a name anew, after which a statement is
# not looked at as a possible repeat any more (only a cost: never a result).
REBINDS = 3
# Hidden runs kept per statement, one per fingerprint (the oldest go first).
KEPT = 64


@dataclass
class HiddenRun:
    """A hidden run of one statement, kept to recognise its repeats."""

    fingerprint: tuple[Any, ...]
    # The objects the fingerprint names by identity, weakly: a repeat must
    # meet these very objects again, alive.
    objects: tuple[weakref.ref[Any], ...]
    # What the run said that a note counts again: (signature, event) of each
    # of its events worth repeating (see ``Engine._count_hidden``).
    repeats: tuple[tuple[tuple[Any, ...], Event], ...]

    def repeated_by(self, fingerprint: tuple[Any, ...], objects: list[Any]) -> bool:
        return (
            fingerprint == self.fingerprint
            and len(objects) == len(self.objects)
            and all(ref() is obj for ref, obj in zip(self.objects, objects))
        )


@dataclass
class Rebinding:
    """A hidden run of a statement that changed nothing of its frame's names
    but binding some anew (``y = y * 2``, ``loss = ...``): which names, and
    of each, whether what it held is still in the graph and whether the
    graph it holds grew from the last run's (``found``); the fingerprint of
    the calls the observer recorded (``k = self.key(x)`` under no_grad:
    a result made without a graph), None when it recorded none; what the
    run said that a note counts again."""

    names: tuple[str, ...]
    found: tuple[tuple[bool | None, bool], ...]  # (None, False): a name bound for the first time
    repeats: tuple[tuple[tuple[Any, ...], Event], ...]  # as HiddenRun's
    calls: HiddenRun | None = None  # (its repeats unused: the run's are above)

    def repeated_by(
        self, names: tuple[str, ...], found: tuple[tuple[bool | None, bool], ...],
        calls: tuple[tuple[Any, ...], list[Any]] | None,
    ) -> bool:
        if names != self.names or found != self.found or (calls is None) != (self.calls is None):
            return False
        return calls is None or self.calls is not None and self.calls.repeated_by(*calls)


@dataclass(frozen=True)
class RebindingKey:
    """What a rebinding run found (see ``Rebinding``): kept with its events
    should the step be hidden."""

    names: tuple[str, ...]
    found: tuple[tuple[bool | None, bool], ...]
    calls: tuple[tuple[Any, ...], list[Any]] | None = None  # the fingerprint of its records

    def key(self) -> tuple[Any, ...]:
        """What its run is kept by (the objects its calls name, by id:
        whether they are those very objects, alive, ``repeated_by`` checks)."""
        return self.names, self.found, _key(self.calls) if self.calls is not None else None

    def told_by(self, events: list[Event]) -> bool:
        """Do ``events`` say exactly what was found: each name bound anew,
        still in the graph or not, its graph grown or not, each name bound
        for the first time, and nothing else? (Besides what the records
        told, when there were any: what their fingerprint decides.)"""
        if self.calls is not None:
            events = [e for e in events if e.kind in _NAME_KINDS]
        expected: list[tuple[Any, ...]] = []
        for name, (in_graph, grew) in zip(self.names, self.found):
            if in_graph is None:
                expected.append(("name-bound", name, None))
                continue
            expected.append(("name-rebound", name, in_graph))
            if grew:
                expected.append(("graph-growth", name, None))
        return [
            (e.kind, e.get("name"), e.get("old_in_graph") if e.kind == "name-rebound" else None) for e in events
        ] == expected


class FrameRuns:
    """One frame's hidden runs, per statement, and which statements are not
    worth looking at as repeats of the kind that binds no name: after
    ``REBINDS`` hidden runs in a row that bound a name anew (``loss = ...``
    never is one), the looking costs more than it saves (it never changes a
    result); such a statement is looked at as a rebinding first, and as the
    other kind only when it turns out to bind no name."""

    def __init__(self) -> None:
        self._runs: dict[Any, dict[Any, HiddenRun]] = {}
        self._rebinds: dict[Any, int] = {}
        # The hidden rebinding runs of each statement, the last one of each
        # key (``RebindingKey.key``): a head's ``k = self.key(x)`` under
        # no_grad names its own module, and a model of eight heads calls
        # each in turn.
        self._rebindings: dict[Any, dict[Any, Rebinding]] = {}

    def rebinding(self, where: Any, found: RebindingKey) -> Rebinding | None:
        """The run of the statement at ``where`` kept for what this run found, if any."""
        runs = self._rebindings.get(where)
        return runs.get(found.key()) if runs is not None else None

    def keep_rebinding(self, where: Any, found: RebindingKey, run: Rebinding) -> None:
        _keep_last(self._rebindings.setdefault(where, {}), found.key(), run)

    def worth_looking(self, where: Any) -> bool:
        return self._rebinds.get(where, 0) < REBINDS

    def rebound(self, where: Any) -> None:
        self._rebinds[where] = self._rebinds.get(where, 0) + 1

    def kept(self, where: Any, fingerprinted: tuple[tuple[Any, ...], list[Any]]) -> HiddenRun | None:
        """The run of the statement at ``where`` kept for this fingerprint, if any."""
        runs = self._runs.get(where)
        return runs.get(_key(fingerprinted)) if runs is not None else None

    def keep(self, where: Any, fingerprinted: tuple[tuple[Any, ...], list[Any]], run: HiddenRun) -> None:
        _keep_last(self._runs.setdefault(where, {}), _key(fingerprinted), run)
        self._rebinds.pop(where, None)


def _keep_last(runs: dict[Any, Any], key: Any, run: Any) -> None:
    """Keep ``run`` as the last of its key, the oldest key going past ``KEPT``."""
    runs.pop(key, None)
    runs[key] = run
    if len(runs) > KEPT:
        del runs[next(iter(runs))]


def _key(fingerprinted: tuple[tuple[Any, ...], list[Any]]) -> tuple[Any, ...]:
    """A fingerprint and the ids of the objects it names by identity (whether
    they are those very objects, alive, ``HiddenRun.repeated_by`` checks)."""
    found, objects = fingerprinted
    return found, tuple(map(id, objects))


def names_as_bound(
    tracker: NameTracker | None, scope: Mapping[str, Any], registry: ag.TagRegistry,
) -> list[tuple[str, torch.Tensor, Any]] | None:
    """Does every tracked tensor name of ``scope`` hold what ``tracker`` says it
    held after the frame's last step (the same tensor, in the same node), with
    no name added or gone? If so, (name, tensor, tag) of each, as
    ``TagRegistry.known_tags`` gives them; None if not."""
    if tracker is None:
        return None
    bound = tracker.bound
    tensors = scan_names(scope).tensors
    if len(tensors) != len(bound):
        return None
    for name, t in tensors:  # (the same tensors first: what a step usually changes)
        old = bound.get(name)
        if old is None or old.ref() is not t:
            return None
    tagged = registry.known_tags(tensors)
    for name, _, tag in tagged:
        if (tag.node_id if tag is not None else None) != bound[name].node:
            return None
    return tagged if modules_as_bound(tracker, scope) else None


class Rebound(NamedTuple):
    """What ``rebound_names`` found of a step's tensor names."""

    # (name, tensor, what it held, the tensor's tag) of each name bound anew;
    # what it held is None for a name bound for the first time
    rebound: list[tuple[str, torch.Tensor, Any, Any]]
    order: list[str]  # every tensor name, in the frame's order
    roots: dict[str, Any]  # node id -> tag, of each tensor that requires grad (a Reach's roots)
    named: set[str]  # the node ids names hold
    names_of: dict[int, tuple[str, ...]]  # tag serial -> the names that hold it
    # (name, tensor, tag) of each name that holds the tensor it held, which
    # had no node then and has one now: a tensor without a graph that this
    # statement read, tagged as its input (no event: the detection binds
    # the name to its node)
    tagged: list[tuple[str, torch.Tensor, Any]]


def rebound_names(tracker: NameTracker | None, scope: Mapping[str, Any], registry: ag.TagRegistry) -> Rebound | None:
    """The tensor names of ``scope`` bound anew (or for the first time) since
    the frame's last step, and those holding a tensor without a graph that
    the step read (tagged since), when nothing else of its names changed:
    no name gone, each other one holding the same tensor in the same node,
    the same modules. None otherwise, or when a tensor that requires grad
    has no tag yet (a snapshot would tag it)."""
    if tracker is None or not tracker.seen or tracker.resumed:
        return None
    bound = tracker.bound
    tensors = scan_names(scope).tensors
    if len(tensors) < len(bound):
        return None
    found = Rebound([], [], {}, set(), {}, [])
    rebound, roots, named, names_of = found.rebound, found.roots, found.named, found.names_of
    added = 0
    for name, t, tag in registry.known_tags(tensors):
        old = bound.get(name)
        added += old is None
        if tag is None:
            if t.requires_grad:
                return None
            node = None
        else:
            node = tag.node_id
            named.add(node)
            if t.requires_grad:
                roots[node] = tag
            names_of[tag.serial] = names_of.get(tag.serial, ()) + (name,)
        found.order.append(name)
        if old is not None and old.ref() is t:
            if node != old.node:
                if old.node is not None or t.requires_grad:
                    return None  # (changed in place: a node of its own)
                found.tagged.append((name, t, tag))
        else:
            rebound.append((name, t, old, tag))
    if not (rebound or found.tagged) or len(tensors) - added != len(bound) or not modules_as_bound(tracker, scope):
        return None  # (nothing bound anew or read; a name gone; a module changed)
    return found


def names_seen(
    namespace: Mapping[str, Any], registry: ag.TagRegistry,
) -> tuple[dict[str, Any], set[str], dict[int, tuple[str, ...]]] | None:
    """What a lite snapshot of ``namespace`` (every name a function's step
    sees, its globals' included) finds of its tensor names: the roots of a
    ``Reach``, the node ids names hold, each tag's names (serial -> names).
    None when a tensor that requires grad has no tag yet (a snapshot would
    tag it)."""
    roots: dict[str, Any] = {}
    named: set[str] = set()
    names_of: dict[int, tuple[str, ...]] = {}
    for name, t, tag in registry.known_tags(scan_names(namespace).tensors):
        if tag is None:
            if t.requires_grad:
                return None
            continue
        named.add(tag.node_id)
        if t.requires_grad:
            roots[tag.node_id] = tag
        names_of[tag.serial] = names_of.get(tag.serial, ()) + (name,)
    return roots, named, names_of


def modules_as_bound(tracker: NameTracker | None, scope: Mapping[str, Any]) -> bool:
    """Does every module name of ``scope`` hold the module ``tracker`` says it
    held, with no module name added or gone?"""
    modules = scan_names(scope).modules
    known = tracker.modules if tracker is not None else {}
    if len(modules) != len(known):
        return False
    for name, module in modules:
        old = known.get(name)
        if old is None or old[0]() is not module:
            return False
    return True


def fingerprint(records: list[Any], namespace: Mapping[str, Any]) -> tuple[tuple[Any, ...], list[Any]] | None:
    """What decides the kinds and names of the events of ``records`` (see the
    module's docstring), and the objects it names by identity; None for
    records it cannot vouch for (an unknown kind)."""
    scan = scan_names(namespace)
    names: dict[int, str] = {}
    for name, value in scan.tensors:
        names.setdefault(id(value), name)
    for name, value in scan.sequences:
        for i, item in enumerate(value):
            if isinstance(item, torch.Tensor) and id(item) not in names:
                names[id(item)] = f"{name}[{i}]"
    objects: list[Any] = [module for _, module in scan.modules]
    parts: list[Any] = [tuple(name for name, _ in scan.modules)]

    def known(ref: weakref.ref[Any] | None) -> Any:
        """The tensor's name; failing that, the tensor, named by identity."""
        obj = ref() if ref is not None else None
        if obj is None:
            return None
        name = names.get(id(obj))
        if name is not None:
            return name
        objects.append(obj)
        return len(objects)  # its place in ``objects``

    def identity(ref: weakref.ref[Any]) -> Any:
        obj = ref()
        if obj is None:
            return None
        objects.append(obj)
        return len(objects)

    def name_only(ref: weakref.ref[Any] | None) -> str | None:
        obj = ref() if ref is not None else None
        return names.get(id(obj)) if obj is not None else None

    for rec in records:
        kind = type(rec)
        if kind is BackwardRecord:
            parts.append((
                # (freed: a graph of another shape frees another count of nodes)
                "backward", rec.api, rec.retain_graph, rec.create_graph, rec.library, rec.freed,
                name_only(rec.roots[0]) if rec.roots else None,
                tuple(name_only(r) for r in rec.results),
                # (by identity: a module's parameter is told with its module, whatever its name)
                tuple(identity(r) for r in rec.accumulated),
            ))
        elif kind is InplaceRecord:
            if rec.data_of is not None:
                # Through ``.data``: the event names the tensor whose data it
                # was (the view itself is made anew by every ``p.data``).
                parts.append(("inplace-data", rec.op, rec.library, rec.library_kind, known(rec.data_of)))
            else:
                parts.append(("inplace", rec.op, rec.library, rec.library_kind, known(rec.ref),
                              known(rec.view_of) if rec.view_of is not None else None))
        elif kind is GradSetRecord:
            parts.append(("grad-set", rec.cleared, rec.library, known(rec.ref)))
        elif kind is DetachRecord:
            # (who called detach(), and whether a call's step handed it over, decide whether an unnamed one is told)
            parts.append(("detach", rec.how, rec.library, rec.line is None, name_only(rec.ref), name_only(rec.source)))
        elif kind is RetainGradRecord:
            parts.append(("retain-grad", name_only(rec.ref)))
        elif kind is RequiresGradRecord:
            parts.append(("requires-grad", rec.on, rec.library, known(rec.ref)))
        elif kind is WarningRecord:
            parts.append(("warning", rec.cause, name_only(rec.ref)))
        else:
            return None
    return tuple(parts), objects


def remember(
    fingerprinted: tuple[tuple[Any, ...], list[Any]], repeats: tuple[tuple[tuple[Any, ...], Event], ...]
) -> HiddenRun:
    found, objects = fingerprinted
    return HiddenRun(found, tuple(weakref.ref(obj) for obj in objects), repeats)
