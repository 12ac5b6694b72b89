"""The JSON document ``gradtutor explain --format json`` writes, and how to
read its graphs back.

A step carries its graph only when the graph changed since the step before
it: as ``graph`` (the whole graph) or, when that is shorter, as
``graph_delta`` (nodes added or changed, node ids removed, edges added and
removed, and the order of the nodes when added nodes do not come last). A step with neither has the graph of the step before it; before the
first step the graph is empty. ``graphs(doc)`` rebuilds every step's graph.
``explain.schema.json`` beside this module is the document's JSON Schema.
"""

from __future__ import annotations

import json
import os
from typing import Any

from gradtutor.model import Step
from gradtutor.tracebacks import exception_text

# The document's format. 1 was the first (a whole graph in every step, no
# "version"); 2 carries a graph only when it changed.
FORMAT_VERSION = 2
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "explain.schema.json")

_EMPTY: dict[str, list[Any]] = {"nodes": [], "edges": []}


def document(result: Any, file: str, level: str) -> dict[str, Any]:
    """The document for ``result`` (an ``engine.RunResult``) of ``file``."""
    doc: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "file": file,
        "level": level,
        "steps": steps_json(result.steps, level),
        "hidden_steps": result.hidden_steps,
        "hidden_repeated": [{**e.to_json(), "count": n} for e, n in result.hidden_repeated],
        "exit_code": result.exit_code,
        "exception": None,
        "internal_errors": [e.to_json() for e in result.internal_errors],
    }
    if result.quiet_functions:
        doc["quiet_functions"] = [f.to_json() for f in result.quiet_functions]
    if result.exit_output:
        doc["exit_output"] = result.exit_output
    if result.ended_by:
        doc["ended_by"] = result.ended_by
    if result.exception is not None:
        doc["exception"] = {
            "type": type(result.exception).__name__,
            "message": exception_text(result.exception),
            "traceback": result.traceback,
        }
    return doc


def steps_json(steps: list[Step], level: str) -> list[dict[str, Any]]:
    """Each step's JSON, with its graph only where it changed (whole or as a delta)."""
    out = []
    previous: dict[str, Any] = _EMPTY
    for step in steps:
        item = step.to_json(level)
        graph = step.snapshot.graph(level).to_json()
        if graph != previous:
            delta = graph_delta(previous, graph)
            if delta is not None and _size(delta) < _size(graph):
                item["graph_delta"] = delta
            else:
                item["graph"] = graph
        previous = graph
        out.append(item)
    return out


def graph_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
    """What turns graph ``before`` into ``after`` (both as JSON), or None when
    ``apply_delta`` would not give ``after``'s nodes in their order. The order
    of edges carries no meaning."""
    old = {n["id"]: n for n in before["nodes"]}
    new_ids = {n["id"] for n in after["nodes"]}
    old_edges = {tuple(e) for e in before["edges"]}
    new_edges = {tuple(e) for e in after["edges"]}
    delta = {
        "nodes": [n for n in after["nodes"] if old.get(n["id"]) != n],
        "removed": [i for i in old if i not in new_ids],
        "edges_added": [e for e in after["edges"] if tuple(e) not in old_edges],
        "edges_removed": [e for e in before["edges"] if tuple(e) not in new_edges],
    }
    rebuilt = apply_delta(before, delta)
    if [n["id"] for n in rebuilt["nodes"]] != [n["id"] for n in after["nodes"]]:
        # A tensor made long ago can join the graph now: its place in the
        # creation order is not the end.
        delta["order"] = [n["id"] for n in after["nodes"]]
        rebuilt = apply_delta(before, delta)
    same = rebuilt["nodes"] == after["nodes"] and {tuple(e) for e in rebuilt["edges"]} == new_edges
    return delta if same else None


def apply_delta(graph: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """``graph`` changed by ``delta``: removed nodes and edges go; a node of the
    delta replaces the node of its id where it stands, or else comes last, in
    the delta's order; then, if the delta has an ``order`` (every node id),
    nodes are put in that order. Added edges come last."""
    removed = set(delta["removed"])
    changed = {n["id"]: n for n in delta["nodes"]}
    nodes = [changed.pop(n["id"], n) for n in graph["nodes"] if n["id"] not in removed]
    nodes += [n for n in delta["nodes"] if n["id"] in changed]
    if "order" in delta:
        place = {node_id: i for i, node_id in enumerate(delta["order"])}
        nodes.sort(key=lambda n: place[n["id"]])
    gone = {tuple(e) for e in delta["edges_removed"]}
    edges = [e for e in graph["edges"] if tuple(e) not in gone] + list(delta["edges_added"])
    return {"nodes": nodes, "edges": edges}


def graphs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole graph of each step of ``doc``, in order."""
    out = []
    graph: dict[str, Any] = _EMPTY
    for step in doc["steps"]:
        if "graph" in step:
            graph = step["graph"]
        elif "graph_delta" in step:
            graph = apply_delta(graph, step["graph_delta"])
        out.append(graph)
    return out


def dumps(doc: dict[str, Any], default: Any = repr) -> str:
    """``doc`` as text: one key of the document per line and one step per
    line of ``steps``, each written compactly. Small, and still read by eye
    (and by grep) a step at a time; ``python -m json.tool`` indents it all."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=default)

    lines = []
    for key, value in doc.items():
        if key == "steps" and value:
            items = ",\n".join("  " + compact(step) for step in value)
            lines.append(f"{compact(key)}: [\n{items}\n ]")
        else:
            lines.append(f"{compact(key)}: {compact(value)}")
    return "{\n " + ",\n ".join(lines) + "\n}\n"


def schema() -> dict[str, Any]:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr))


__all__ = ["FORMAT_VERSION", "document", "dumps", "steps_json", "graph_delta", "apply_delta", "graphs", "schema"]
