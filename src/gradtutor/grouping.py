"""The statement view: the op graph regrouped the way users think about it.

Users think in statements, not autograd nodes: ``torch.matmul(x, w)`` with a
1-D ``x`` records Squeeze and Mm nodes, but the user wrote one line. Here
every autograd node created by one execution of one statement becomes one
node labelled with that statement's expression; each parameter of a named
``nn.Module`` folds into one node per module; and the named tensors without
requires_grad that a statement read (the seeds' ``x`` and ``y``) become its
inputs.
"""

from __future__ import annotations

from typing import Any, Mapping

from gradtutor.model import (
    LEAF,
    MODULE,
    OP,
    SAVED_FREED,
    SAVED_MODIFIED,
    SAVED_NONE,
    SAVED_PRESENT,
    STATEMENT,
    Edge,
    Graph,
    Node,
)

# A statement is drawn in the first state one of its nodes is in. Modified
# comes first: "a tensor it saved was changed" is true of a statement with
# one such node, "its saved tensors were freed" is not (a backward that fails
# at a node frees the nodes it ran before, the in-place op's among them).
_SAVED_PRIORITY = (SAVED_MODIFIED, SAVED_FREED, SAVED_PRESENT, SAVED_NONE)


def group_statements(
    ops: Graph,
    *,
    origins: Mapping[int, Any],
    const_nodes: Mapping[int, tuple[Node, ...]],
    module_sizes: Mapping[str, tuple[int, int, bool, int]],
    cache: dict[str, tuple[tuple[tuple[Node, ...], Any], Node]] | None = None,
) -> Graph:
    """Group ``ops`` by statement execution; see the module docstring.

    ``origins`` maps an execution id to its ``Origin`` (line, source, label,
    value);
    ``const_nodes`` the const inputs each execution read; ``module_sizes``
    the size of each named module: its parameters, the values they hold, and
    whether one of them has a .grad. ``cache`` keeps each statement
    node between calls, rebuilt only when one of its op nodes changed (a loop
    that adds a statement each iteration should not rebuild all the others).
    """
    group_of: dict[str, str] = {}
    members: dict[str, list[Node]] = {}
    order: list[str] = []

    def add(group: str, node: Node) -> None:
        group_of[node.id] = group
        if group not in members:
            members[group] = []
            order.append(group)
        members[group].append(node)

    for name in module_sizes:
        members.setdefault(f"m:{name}", [])
        order.append(f"m:{name}")
    inputs: dict[str, list[str]] = {}
    for edge in ops.edges:
        inputs.setdefault(edge.dst, []).append(edge.src)
    parts = _StatementParts(group_of, members, inputs)
    changed: dict[str, list[tuple[str, int]]] = {}
    for node in ops.nodes:
        if node.kind == OP and node.inplace_of is not None and node.inplace_of in group_of:
            # An in-place op changes the tensor an earlier statement made: one
            # node, marked as changed, not a second tensor.
            group = group_of[node.inplace_of]
            add(group, node)
            origin = origins.get(node.step) if node.step is not None else None
            # (A change the statement made to what it made itself, before
            # handing it over, is part of making it: not "changed in place".)
            if node.line is not None and statement_of(group) != statement_group(node.step):
                changed.setdefault(group, []).append((origin.filename if origin else "", node.line))
        elif node.kind == OP:
            add(parts.group(node), node)
        elif node.kind == LEAF and node.detail and not node.names:
            # (a parameter of the module a name held before: "model (old)")
            add(f"o:{node.detail}" if node.former_names else f"m:{node.detail}", node)
        else:
            add(node.id, node)
    first_parts = _split_named_parts(order, members, group_of, inputs, origins)

    nodes: dict[str, Node] = {}
    for group in order:
        if group.startswith(("m:", "o:")):
            # A named module, or one a name held before ("model (old)"):
            # the size of the latter is of its parameters still in the graph.
            name, old = group[2:], group[0] == "o"
            if old:
                size = (len(members[group]), sum(_numel(m.shape) for m in members[group]), False, 0)
            else:
                size = module_sizes.get(name, (0, 0, False, 0))
            nodes[group] = Node(
                id=group,
                kind=MODULE,
                label=name,
                names=() if old else (name,),
                former_names=(name,) if old else (),
                requires_grad=True,
                # (a named module's parameters may all be outside the graph drawn)
                has_grad=size[2] or any(m.has_grad for m in members[group]),
                detail=module_detail(size[0], size[1], size[3], old=old),
            )
        elif group.startswith("s"):
            # The nodes themselves (compared by identity first), and the
            # statement's value: known once it ended.
            step = members[group][0].step
            origin = origins.get(step) if step is not None else None
            key = (tuple(members[group]), origin.value if origin is not None else None)
            cached = cache.get(group) if cache is not None else None
            if cached is not None and cached[0] == key:
                nodes[group] = cached[1]
            else:
                nodes[group] = _statement_node(group, members[group], origins, tuple(changed.get(group, ())))
                if cache is not None:
                    cache[group] = (key, nodes[group])
        else:
            nodes[group] = members[group][0]

    edges: list[Edge] = []
    seen: set[tuple[str, str]] = set()

    def link(src: str, dst: str) -> None:
        if src != dst and (src, dst) not in seen:
            seen.add((src, dst))
            edges.append(Edge(src, dst))

    # Const inputs first, so a statement's inputs are listed in reading order.
    consts: dict[str, Node] = {}
    for exec_id in sorted(const_nodes):
        for const in const_nodes.get(exec_id, ()):
            consts.setdefault(const.id, const)
            group = statement_group(exec_id)
            link(const.id, _const_part(const.id, exec_id, group, origins, group_of, first_parts, parts))
    for edge in ops.edges:
        link(group_of[edge.src], group_of[edge.dst])

    # A tensor read as a const that later became a leaf (requires_grad_())
    # is in the op graph too: drawn once, as what it is now.
    ordered = [c for c in consts.values() if c.id not in nodes] + [nodes[g] for g in order]
    return Graph(tuple(ordered), tuple(edges))


def _const_part(
    const: str, exec_id: int, group: str, origins: Mapping[int, Any], group_of: Mapping[str, str],
    first_parts: Mapping[str, str], parts: _StatementParts,
) -> str:
    """The node of statement execution ``exec_id`` (``group``, or one of its
    parts) that the const ``const`` went into: the part of the first op
    that took it, as the observer noted (``Origin.const_into``); else the
    part holding what the statement made before a name held it (see
    ``_split_named_parts``); else its last part, the only one computed
    from all the others. (In ``loss = ((layer(data) - target) **
    2).mean()``, where a parametrization's forward that the tutor no longer
    follows made the first part from the weight alone, data and target went
    into the last one; in ``model(x)`` on a Sequential with a module of the
    user's in the middle, x into the first.)"""
    origin = origins.get(exec_id)
    into = origin.const_into.get(const) if origin is not None else None
    if into is not None:
        part = group_of.get(into)
        if part is not None and (part == group or part.startswith(group + "~")):
            return part
    return first_parts.get(group) or parts.current.get(exec_id, group)


def statement_group(step: Any) -> str:
    """The id of the node of statement execution ``step`` (of its first part)."""
    return f"s{step}"


def statement_of(node_id: str) -> str:
    """The statement node a part belongs to: ``s15~2`` -> ``s15``."""
    return node_id.split("~", 1)[0]


class _StatementParts:
    """Which group an op of a statement joins. Usually the statement's; but a
    statement can run another while it runs: ``model(x)`` on an
    ``nn.Sequential`` holding a module of the user's runs its ``forward``,
    whose lines make ops of their own between the statement's. When such a
    statement used what this one made so far, the ops this one makes after
    it are a new part of it (``s15~2``): one node would be both before and
    after the other, and its picture would draw an edge backwards
    (``loss ──▶ self.lin(x)``)."""

    def __init__(self, group_of: Mapping[str, str], members: Mapping[str, list[Node]], inputs: Mapping[str, list[str]]) -> None:
        self.group_of = group_of
        self.members = members
        self.inputs = inputs
        self.current: dict[Any, str] = {}  # statement execution -> the group its ops join now
        self.count: dict[Any, int] = {}
        self.started: dict[str, int] = {}  # group -> when its first op came
        self.last: str | None = None  # the group of the op before this one

    def group(self, node: Node) -> str:
        step = node.step
        group = self.current.get(step)
        if group is None:
            group = self.current[step] = statement_group(step)
            self.started[group] = len(self.started)
        else:
            last = self.last
            if (
                last is not None and last != group and self.started.get(last, -1) > self.started[group]
                and self._fed_by(last, group)
            ):
                count = self.count[step] = self.count.get(step, 1) + 1
                group = self.current[step] = f"{statement_group(step)}~{count}"
                self.started[group] = len(self.started)
        self.last = group
        return group

    def _fed_by(self, group: str, source: str) -> bool:
        """Does ``group`` (a statement's part) use what ``source`` made, directly
        or through other statements' parts?"""
        seen = {group}
        todo = [group]
        while todo:
            for node in self.members.get(todo.pop(), ()):
                for src in self.inputs.get(node.id, ()):
                    feeder = self.group_of.get(src)
                    if feeder == source:
                        return True
                    if feeder is not None and feeder[:1] == "s" and feeder not in seen:
                        seen.add(feeder)
                        todo.append(feeder)
        return False


def _split_named_parts(
    order: list[str], members: dict[str, list[Node]], group_of: dict[str, str], inputs: Mapping[str, list[str]],
    origins: Mapping[int, Any],
) -> dict[str, str]:
    """A statement that ended is named by its value only. A tensor it made on
    the way there that a name holds now (in a custom Function's backward,
    ``input`` holds the ``c + d * x`` of ``a + b * P3(c + d * x)``) is drawn
    as a part of its own, with what the statement made it from: ``s15~n7``,
    "inside" the statement, before it. (Not one computed from the value
    itself: the two parts would each be drawn before the other. Its name is
    left out.) Returns the first part of each statement split so."""
    first: dict[str, str] = {}
    for group in [g for g in order if g[:1] == "s"]:
        own = members[group]
        if len(own) < 2 or not any(m.names or m.former_names for m in own):
            continue  # (nothing to split off: the usual case, asked cheaply of each of a loop's many statements)
        origin = origins.get(own[0].step) if own[0].step is not None else None
        if origin is None or origin.value is None:
            continue
        held = {m.id for m in _holding_value(own, origin.value)}
        if not held:
            continue  # (a part without the value is drawn inside the statement whole)
        parts = []
        shares = False
        for m in own:
            if m.id in held or not (m.names or m.former_names) or group_of[m.id] != group:
                continue
            part = f"{group}~{m.id}"
            claimed: list[str] = []
            todo = [m.id]
            while todo:
                node_id = todo.pop()
                if node_id in held:
                    break
                if group_of.get(node_id) == group and node_id not in claimed:
                    claimed.append(node_id)
                    todo.extend(inputs.get(node_id, ()))
            else:
                shared = _shared_with_the_rest(own, group, claimed, group_of, inputs)
                if shared and m.id not in shared:
                    # What the rest of the statement was computed from too (a
                    # Linear's weight.t(), that its addmm and the forward-mode
                    # tangent of its result both used): a part of its own,
                    # before both, so neither is drawn computed from the other.
                    shares = True
                    shared_part = f"{group}~{shared[0]}"
                    for node_id in shared:
                        group_of[node_id] = shared_part
                    parts.append(shared_part)
                for node_id in claimed:
                    if group_of[node_id] == group:
                        group_of[node_id] = part
                parts.append(part)
        if parts:
            at = order.index(group)
            order[at:at] = parts
            for part in (*parts, group):
                members[part] = [m for m in own if group_of[m.id] == part]
            if not shares:
                # (its consts into its first part: what the statement read
                # went into what it made on the way to its value; not when a
                # part beside the value was split off, whose ops may not have
                # read them, while the value's did)
                first[group] = parts[0]
    return first


def _shared_with_the_rest(
    own: list[Node], group: str, claimed: list[str], group_of: Mapping[str, str], inputs: Mapping[str, list[str]],
) -> list[str]:
    """The nodes of ``claimed``, a part to split off statement ``group``,
    that the rest of the statement was computed from too, in ``own``'s order."""
    inside = set(claimed)
    found: set[str] = set()
    todo = [
        src for m in own if m.id not in inside and group_of[m.id] == group
        for src in inputs.get(m.id, ()) if src in inside
    ]
    while todo:
        node_id = todo.pop()
        if node_id not in found:
            found.add(node_id)
            todo.extend(src for src in inputs.get(node_id, ()) if src in inside)
    return [m.id for m in own if m.id in found]


def module_detail(parameters: int, values: int, trainable: int | None = None, *, old: bool = False) -> str:
    """A module node's size as the graph stores it, "6 parameters, 723
    values": a parameter is a tensor, as ``model.parameters()`` and the
    events count them; the values are the numbers they hold, the size a
    paper quotes. A module some of whose parameters are frozen says how many
    require grad, "11 parameters (2 requiring grad), 1461 values"; one a
    name held before counts only its parameters still in the graph drawn,
    "1 parameter in the graph, 9 values". (Pictures say it in their
    language; see render.scene.)"""
    counted = f"{parameters} parameter{'' if parameters == 1 else 's'}"
    if old:
        counted += " in the graph"
    elif trainable is not None and trainable < parameters:
        counted += f" ({trainable} requiring grad)"
    return f"{counted}, {values} value{'' if values == 1 else 's'}"


def _numel(shape: tuple[int, ...] | None) -> int:
    count = 1
    for size in shape or ():
        count *= size
    return count


def _statement_node(
    group: str, members: list[Node], origins: Mapping[int, Any], changed_at: tuple[tuple[str, int], ...] = ()
) -> Node:
    info = origins.get(members[0].step) if members[0].step is not None else None
    # Only the names of the statement's value name it: not those a function it
    # called gave a tensor it made on the way (``input`` in a custom
    # Function's backward, for ``c + d * x`` of ``a + b * P3(c + d * x)``).
    value = info.value if info is not None else None
    held = _holding_value(members, value)
    # A part of an ended statement that does not hold its value: what the
    # statement made on the way (drawn "inside" it), named by what names it.
    inside = value is not None and not held
    if inside:
        held = members
    named = [m for m in held if m.names]
    # The statement's output: the node its targets are bound to, else the newest.
    output = named[-1] if named else members[-1]
    first = members[0]
    names: list[str] = []
    former: list[str] = []
    for m in held:
        if m.names:
            names.extend(n for n in m.names if n not in names)
    for m in held:
        # A tensor of this statement that lost its name to a rebinding: drawn
        # "x (old)" beside the names the others still have.
        if m.former_names and not m.names:
            former.extend(n for n in m.former_names if n not in former and n not in names)
    targets = info.targets if info is not None else ()
    if len(names) + len(former) > 1 and targets:
        # In the order the line assigns them (h_t, c_t = ...), not the order
        # their nodes were made in.
        place = {name: i for i, name in enumerate(targets)}
        names.sort(key=lambda name: place.get(name, len(place)))
        former.sort(key=lambda name: place.get(name, len(place)))
    states = {m.saved for m in members}
    saved = next((state for state in _SAVED_PRIORITY if state in states), SAVED_NONE)
    freeing = next((m for m in members if m.freed_by_line is not None), None) if saved == SAVED_FREED else None
    return Node(
        id=group,
        kind=STATEMENT,
        label=info.label if info else output.label,
        names=tuple(names),
        former_names=tuple(former),
        line=info.line if info else first.line,
        source=info.source if info else first.source,
        step=first.step,
        requires_grad=True,
        shape=output.shape,
        dtype=output.dtype,
        saved=saved,
        freed_by_line=freeing.freed_by_line if freeing else None,
        freed_by_file=freeing.freed_by_file if freeing else None,
        has_grad=any(m.has_grad for m in members),
        retains_grad=any(m.retains_grad for m in members),
        ops=tuple([m.label for m in members]),
        changed_at=changed_at,
        several_tensors=sum(1 for m in held if m.names or m.former_names) > 1,
        made_in=first.made_in,
        dual=any(m.dual for m in held if m.names),
        inside=inside,
    )


def _holding_value(members: list[Node], value: tuple[str, ...] | None) -> list[Node]:
    """The members holding the statement's value (what its targets were
    bound to, or it returned, and what changed that in place since); all of
    them while that is not known (it runs still, or bound no tensor)."""
    if value is None:
        return members
    holding = set(value)
    kept = []
    for m in members:
        if m.id in holding or m.inplace_of in holding:
            holding.add(m.id)
            kept.append(m)
    return kept
