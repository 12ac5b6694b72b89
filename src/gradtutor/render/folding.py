"""Op view: each parameter (and its transpose) is drawn inside the op using it.

An ``nn.Linear`` records ``AddmmBackward0(bias, input, TBackward0(weight))``;
drawn as four boxes per layer, a small MLP is mostly parameters. Folded, each
layer is one box listing ``model.0.weight.T`` and ``model.0.bias``, and a note
says how many nodes went inside other boxes.
"""

from __future__ import annotations

from gradtutor.render.words import plural

from gradtutor.model import LEAF, OP, Edge, Graph
from gradtutor.render.graph_index import GraphIndex, index_graph
from gradtutor.render.scene import Param, Scene


def is_parameter(index: GraphIndex, node_id: str) -> bool:
    """A module's parameter: a leaf with no name of its own and a parameter path
    (``model.0.weight``) or its module in ``detail``. A user's own ``w`` stays a box."""
    node = index.nodes[node_id]
    return node.kind == LEAF and not node.names and not node.former_names and (
        bool(node.detail) or "." in node.label
    )


def fold_parameters(scene: Scene) -> None:
    """Fold every parameter used by exactly one op into that op; update ``scene``.

    Cases: ``param -> op`` folds the param; ``param -> TBackward0 -> op`` (the
    transpose used by nothing else) folds both, drawn as ``param.T``. A
    parameter used twice (tied weights) stays a box of its own.
    """
    index = scene.index
    removed: set[str] = set()
    for node_id in index.order:
        if not is_parameter(index, node_id) or index.preds[node_id] or len(index.succs[node_id]) != 1:
            continue
        user = index.succs[node_id][0]
        transpose = None
        if _is_lone_transpose(index, user, node_id):
            transpose, user = user, index.succs[user][0]
        if index.nodes[user].kind != OP or user in removed:
            continue
        scene.params.setdefault(user, []).append(Param(node_id, transpose))
        removed.add(node_id)
        if transpose is not None:
            removed.add(transpose)
            scene.folded_edges += [(node_id, transpose), (transpose, user)]
        else:
            scene.folded_edges.append((node_id, user))
    if not removed:
        return
    kept = tuple(n for n in scene.graph.nodes if n.id not in removed)
    edges = tuple(Edge(s, d) for s, d in index.edges if s not in removed and d not in removed)
    scene.index = index_graph(Graph(kept, edges))
    params = sum(len(p) for p in scene.params.values())
    transposes = sum(1 for ps in scene.params.values() for p in ps if p.transpose_id)
    extra = scene.say("folded_transposes", n=transposes, s=plural(transposes)) if transposes else ""
    scene.standing_note(scene.say("folded", params=params, s=plural(params), transposes=extra))


def _is_lone_transpose(index: GraphIndex, node_id: str, param_id: str) -> bool:
    node = index.nodes[node_id]
    return (
        node.kind == OP
        and node.label.startswith("TBackward")
        and index.preds[node_id] == [param_id]
        and len(index.succs[node_id]) == 1
    )
