"""Plain data shared by every stage after the autograd walk.

Nothing here imports torch. Snapshots, graphs, events and steps are frozen
dataclasses, so tests compare them with ``==`` and every front end (text,
JSON, the shell, exporters) reads the same values.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Iterator, Mapping, TypeVar

_Frozen = TypeVar("_Frozen", bound=type)


def one_step_init(cls: _Frozen) -> _Frozen:
    """Give the frozen dataclass ``cls`` an ``__init__`` that sets all its
    fields at once. The one ``dataclass`` writes sets each field through
    ``object.__setattr__`` (to get past the frozen guard), which takes half
    of a snapshot's time on a big graph: one ``Node`` per autograd node.
    Same parameters, defaults and resulting object; for classes with plain
    defaults only, no ``__post_init__`` and no slots."""
    names = [f.name for f in fields(cls)]
    scope: dict[str, Any] = {"_set": object.__setattr__}
    params = []
    for f in fields(cls):
        if f.default_factory is not MISSING or not f.init or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
            raise TypeError(f"one_step_init cannot build {cls.__name__}.__init__ ({f.name})")
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    values = ", ".join(f"{name!r}: {name}" for name in names)
    exec(f"def __init__(self, {', '.join(params)}):\n    _set(self, '__dict__', {{{values}}})\n", scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", init)
    return cls

# Node kinds.
OP = "op"  # one autograd node (op view)
LEAF = "leaf"  # a tensor with requires_grad and no grad_fn
CONST = "const"  # a named tensor without requires_grad that a statement read
MODULE = "module"  # the parameters of one named nn.Module (statement view)
STATEMENT = "statement"  # the autograd nodes one step created (statement view)

# What a node's saved tensors are doing.
SAVED_PRESENT = "present"  # saved tensors are held: backward can run through it
SAVED_FREED = "freed"  # a backward without retain_graph released them
SAVED_NONE = "none"  # it saved no tensors: it can be traversed again
SAVED_MODIFIED = "modified"  # a saved tensor was changed in place since it was saved

# Event kinds and causes. Each has an explanation in every language.
EVENT_KINDS = (
    "name-bound",
    "name-rebound",
    "backward",
    "grad-accumulated",
    "grad-before-error",
    "detached",
    "retain-grad",
    "requires-grad",
    "inplace",
    "grad-reset",
    "graph-growth",
    "function-unfollowed",
    "warning",
    "error",
)
ERROR_CAUSES = (
    "second-backward",
    "freed-saved-read",
    "inplace-modified",
    "leaf-inplace",
    "no-grad-fn",
    "non-scalar-backward",
    "out-requires-grad",
    "other",
)
WARNING_CAUSES = ("non-leaf-grad",)

# Events that happen on every iteration of an ordinary loop. A loop
# iteration past the first few is shown only when something else happens.
ROUTINE = {"name-bound", "backward", "detached", "retain-grad", "requires-grad", "inplace", "grad-reset"}


def is_routine(event: Event) -> bool:
    if event.kind == "name-rebound":
        return not event.get("old_in_graph")
    return event.kind in ROUTINE


# A function's local hides a global of the same name: a global tensor or
# module so hidden is still named, "global x" (see Engine._namespace_of). That
# is a key of the names like any other; only where a name is shown is it
# said in the narration's language (render.words.shown_name: "全局 x").
HIDDEN_GLOBAL = "global "

# Graph levels.
LEVEL_STATEMENTS = "statements"
LEVEL_OPS = "ops"


@one_step_init
@dataclass(frozen=True)
class Node:
    """One box of a drawing.

    ``id`` is stable across snapshots for as long as the underlying tensor or
    autograd node lives ("n<serial>" for autograd nodes, "t<serial>" for
    tensors, "s<step>" for statement groups, "m<serial>" for modules).
    """

    id: str
    kind: str
    label: str
    names: tuple[str, ...] = ()
    former_names: tuple[str, ...] = ()
    line: int | None = None
    source: str | None = None
    step: int | None = None
    requires_grad: bool = True
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    saved: str = SAVED_NONE
    freed_by_line: int | None = None
    freed_by_file: str | None = None
    has_grad: bool = False
    retains_grad: bool = False
    ops: tuple[str, ...] = ()
    detail: str = ""
    dropped: bool = False
    # In-place changes. Op view: the node of the same tensor that this
    # in-place op replaced. Statement view: where the tensor was changed in
    # place after its statement made it, as (file, line), in order.
    inplace_of: str | None = None
    changed_at: tuple[tuple[str, int], ...] = ()
    # A statement node whose names belong to different tensors (h, c =
    # lstm(...)): drawn "h, c", not "h = c", which would read as one tensor.
    several_tensors: bool = False
    # The step that made it, when that is not ``step`` (each statement of a
    # line like ``u = x ** 2; v = u * 3`` is a node of its own, the line one step).
    made_in: int | None = None
    # It carries a forward-mode tangent (torch.autograd.forward_ad): a dual
    # tensor. The drawing is of the backward graph; the tangent is not in it.
    dual: bool = False
    # Drawn in a step's picture only as the input of what the step touched:
    # its own inputs are left out of that picture.
    inputs_hidden: bool = False
    # A statement node of a line still running: the step drawn is in a call
    # that line made (a function of the program's, or one library code
    # called: hessian(f, x) calls f on a tensor it made). Its tensors are
    # intermediate results of the line, not its value: drawn "inside ...".
    running: bool = False
    # A tensor without a node (a const input, a leaf) that no name holds now,
    # which a function's statement read by a name of its own (``combined`` in
    # ``self.i2o(combined)`` of ``forward``): ``label`` is that name,
    # ``local_of`` the function's, and it is drawn "combined (in forward)".
    # Empty otherwise.
    local_of: str = ""
    # A statement node of a line that ended, holding what it made on the way
    # to its value, not its value: what it handed to a function of the
    # program's (``self.ln2(x)`` of ``x + self.ffwd(self.ln2(x))``), or a
    # tensor of it a name holds now (a custom Function's ``input``). Drawn
    # "inside ..." too.
    inside: bool = False

    @property
    def is_ghost(self) -> bool:
        """Drawn dimmed: dropped this step, or lost its name but still in the graph."""
        return self.dropped or (not self.names and bool(self.former_names))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "names": list(self.names),
            "line": self.line,
            "requires_grad": self.requires_grad,
            "saved": self.saved,
        }
        if self.former_names:
            out["former_names"] = list(self.former_names)
        if self.local_of:
            out["local_of"] = self.local_of
        if self.source is not None:
            out["source"] = self.source
        if self.shape is not None:
            out["shape"] = list(self.shape)
        if self.dtype is not None:
            out["dtype"] = self.dtype
        if self.freed_by_line is not None:
            out["freed_by_line"] = self.freed_by_line
        if self.kind in (LEAF, MODULE):
            out["has_grad"] = self.has_grad
        if self.retains_grad:
            out["retains_grad"] = True
        if self.ops:
            out["ops"] = list(self.ops)
        if self.detail:
            out["detail"] = self.detail
        if self.dropped:
            out["dropped"] = True
        if self.inplace_of is not None:
            out["inplace_of"] = self.inplace_of
        if self.changed_at:
            out["changed_at"] = [line for _, line in self.changed_at]
        if self.dual:
            out["dual"] = True
        if self.running:
            out["running"] = True
        if self.inside:
            out["inside"] = True
        return out


@one_step_init
@dataclass(frozen=True)
class Edge:
    """Data flows from ``src`` into ``dst`` (``dst`` used ``src`` as its input)."""

    src: str
    dst: str

    def to_json(self) -> list[str]:
        return [self.src, self.dst]


@dataclass(frozen=True)
class Graph:
    """Nodes in creation order (inputs before the nodes that use them) and edges."""

    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def by_name(self, name: str) -> Node | None:
        for n in self.nodes:
            if name in n.names:
                return n
        return None

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
        }


@dataclass(frozen=True)
class Binding:
    """A name in the frame being observed and what it refers to."""

    name: str
    type_name: str  # "Tensor", "Linear", "int", ...
    node: str | None = None  # op-view node id of the tensor, when it is in a graph
    summary: str = ""  # short description: "tensor(42., requires_grad=True)"


@one_step_init
@dataclass(frozen=True)
class Snapshot:
    """The autograd state after one step, as seen from one frame."""

    step: int
    line: int | None
    ops: Graph
    statements: Graph
    bindings: tuple[Binding, ...] = ()
    grads: tuple[tuple[str, Any], ...] = ()
    # What events ask of the graph (``autograd_graph.Reach``), answered by
    # walking only as far as needed; a lite snapshot (a loop step likely
    # hidden) has no graphs besides.
    reach: Any = field(default=None, compare=False, repr=False)
    # A lite snapshot's names: tensor name -> its node (no bindings are made).
    named_nodes: Any = field(default=None, compare=False, repr=False)

    def nodes_by_name(self) -> Mapping[str, str | None]:
        """Each name's node id (None: a tensor not in any graph, or not a tensor)."""
        if self.named_nodes is not None:
            return self.named_nodes
        return {b.name: b.node for b in self.bindings}

    def graph(self, level: str = LEVEL_STATEMENTS) -> Graph:
        return self.ops if level == LEVEL_OPS else self.statements

    def grad(self, name: str) -> Any:
        for n, value in self.grads:
            if n == name:
                return value
        raise KeyError(name)


@one_step_init
@dataclass(frozen=True)
class Event:
    """Something the learner should know happened. ``fields`` depend on ``kind``."""

    kind: str
    line: int
    fields: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def make(cls, kind: str, line: int, **fields: Any) -> Event:
        return cls(kind, line, tuple(fields.items()))

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.fields:
            if k == key:
                return v
        return default

    def __getitem__(self, key: str) -> Any:
        for k, v in self.fields:
            if k == key:
                return v
        raise KeyError(key)

    @property
    def data(self) -> Mapping[str, Any]:
        return dict(self.fields)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "line": self.line, **dict(self.fields)}


@dataclass(frozen=True)
class Step:
    """One executed line (or one shell input) and what it did."""

    index: int
    line: int
    source: str
    snapshot: Snapshot
    events: tuple[Event, ...] = ()
    output: str = ""
    function: str = "<module>"
    file: str = ""
    iteration: int = 1
    value: str | None = None  # repr of an expression statement's value (shell only)
    traceback: str | None = None  # the user's own traceback, when the step raised
    extra: Mapping[str, Any] = field(default_factory=dict)
    # The .grad values this step changed: (name, before, after), each a value
    # as in ``Snapshot.grads`` or None (no .grad), for the same tensor.
    grad_changes: tuple[tuple[str, Any, Any], ...] = ()
    leaving: bool = False  # the end of a with block (its __exit__ ran), not the with statement again
    # The line the function's code starts at (its def): two functions of one
    # name (two classes' forward) are two sets of names. 0 when not known.
    function_line: int = 0
    # Which call of its function the step ran in (a count over the run; 0
    # for a module's code): the names of one call are not the next call's.
    call: int = 0

    def to_json(self, level: str = LEVEL_STATEMENTS) -> dict[str, Any]:
        """The step without its graph (``jsondoc.steps_json`` adds it where it changed)."""
        out: dict[str, Any] = {
            "line": self.line,
            "source": self.source,
            "function": self.function,
            "iteration": self.iteration,
            "events": [e.to_json() for e in self.events],
            "grads": dict(self.snapshot.grads),
            "output": self.output,
        }
        if self.leaving:
            out["leaving_block"] = True
        if self.extra.get("hidden"):
            out["hidden_before"] = {
                "steps": self.extra["hidden"],
                "repeated": [{**e.to_json(), "count": n} for e, n in self.extra.get("repeated", ())],
            }
        if self.grad_changes:
            out["grad_changes"] = [{"name": n, "before": b, "after": a} for n, b, a in self.grad_changes]
        if self.traceback is not None:
            out["traceback"] = self.traceback
        return out
