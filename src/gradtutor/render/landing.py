"""Where a bar lands on the label it feeds: on the input's own name when the
label shows it (``w`` drops onto the ``w`` of ``x @ w + b``), else on the
rightmost free character of the expression; never on a marker."""

from __future__ import annotations

import re

from gradtutor.model import Node
from gradtutor.render.cells import char_offset, text_width
from gradtutor.render.graph_index import GraphIndex
from gradtutor.render.node_text import NodeText


def plain_name(node: Node) -> str:
    if node.names:
        return node.names[0]
    if node.former_names:
        return node.former_names[0]
    return node.label


def name_position(label: str, name: str) -> int:
    """Where ``name`` first appears as a word in ``label``; past its end if not at all."""
    if name not in label:  # the cheap answer for most pairs
        return len(label) + 1
    m = re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", label)
    return m.start() if m else len(label) + 1


def first_input(index: GraphIndex, node_id: str, inputs: list[str], length: dict[str, int]) -> str:
    """The input a chain should continue through: the longest path first, then
    the one the label names first (``x`` of ``x @ w + b``), then the oldest."""
    longest = max(length[p] for p in inputs)
    tied = [p for p in inputs if length[p] == longest]
    if len(tied) == 1:
        return tied[0]
    label = index.nodes[node_id].label
    return min(tied, key=lambda p: (name_position(label, plain_name(index.nodes[p])), index.seniority[p]))


def landing_columns(text: NodeText, names: list[str], fallback: bool = True) -> list[int]:
    """For each input name, a cell offset in ``text`` where its bar lands: the
    name itself in the expression when it is there and free, else the
    rightmost free character of the expression, else ``text.width`` (past the
    end: there is no clean landing); ``-1`` when ``fallback`` is off."""
    full = text.text
    expr_end = char_offset(full, text.expr_cells)
    expr = full[:expr_end]
    used: set[int] = set()
    out: list[int] = []
    for name in names:
        found = -1
        for m in re.finditer(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", expr):
            col = text_width(expr[: m.start()])
            if col not in used:
                found = col
                break
        if found >= 0:
            used.add(found)
        out.append(found)
    if not fallback:
        return out
    spots = [text_width(expr[:j]) for j, ch in enumerate(expr) if not ch.isspace()]
    for i, col in enumerate(out):
        if col >= 0:
            continue
        free = [c for c in spots if c not in used]
        # Never on a marker ([✗ freed]) or the names after "=": with no free
        # character of the expression left, past the end, which the caller
        # takes as "no clean picture".
        out[i] = free[-1] if free else text.width
        used.add(out[i])
    return out


