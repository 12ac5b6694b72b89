"""A step's scan of its names (gradtutor.snapshot.NameScan) made from the
layout of the frame's last scan must be the very scan made afresh."""

from __future__ import annotations

import torch

from gradtutor import autograd_graph as ag
from gradtutor.snapshot import NameScan, ScanLayouts, StepNames


def _fields(scan: NameScan) -> tuple:
    def ids(pairs):
        return [(name, id(value)) for name, value in pairs]

    return ids(scan.tensors), ids(scan.modules), ids(scan.sequences), ids(scan.tensors_and_modules)


def _unreadable_view() -> torch.Tensor:
    """A view made under no_grad whose base then changed in place with grad on."""
    base = torch.randn(3, requires_grad=True).clone()
    with torch.no_grad():
        view = base[:2]
    base.mul_(2)
    assert not ag.graph_readable(view)
    return view


def test_a_scan_from_the_last_layout_is_the_scan_made_afresh():
    layouts = ScanLayouts()
    w = torch.randn(2, requires_grad=True)
    steps = [
        # (the same names with values of the same types, changing in what each value decides)
        {"__name__": "__main__", "_": 1, "_9": 2, "_x": w, "w": w, "y": w * 2, "model": torch.nn.Linear(2, 2),
         "hs": [w], "n": 3},
        {"__name__": "__main__", "_": 1, "_9": 2, "_x": w, "w": w, "y": _unreadable_view(),
         "model": torch.nn.Linear(2, 2), "hs": [w] * 9, "n": 4},
        {"__name__": "__main__", "_": 1, "_9": 2, "_x": w, "w": w, "y": w * 3, "model": torch.nn.Linear(2, 2),
         "hs": [w, w], "n": 5},
        # (another type for a name, a name more, a name gone: scanned afresh)
        {"__name__": "__main__", "_": 1, "_9": 2, "_x": w, "w": 1.0, "y": w * 3, "model": torch.nn.Linear(2, 2),
         "hs": (w,), "n": 5},
        {"__name__": "__main__", "_": 1, "_9": 2, "_x": w, "w": w, "z": w, "y": w, "model": torch.nn.ReLU(),
         "hs": (w,), "n": 5},
        {"__name__": "__main__", "w": w, "model": torch.nn.ReLU()},
    ]
    reused = []
    for names in steps:
        before = layouts._layouts.get("frame")
        step = StepNames(names, layouts, "frame")
        assert _fields(step.scan()) == _fields(NameScan(names))
        reused.append(before is not None and step.scan().layout is before[1])
    # The three steps of the same names and types reuse the layout; the others do not.
    assert reused == [False, True, True, False, False, False]


def test_a_layout_is_kept_per_frame_and_forgotten_with_it():
    layouts = ScanLayouts()
    t = torch.ones(1)
    first = StepNames({"a": t}, layouts, 1).scan()
    assert StepNames({"a": t}, layouts, 1).scan().layout is first.layout
    assert StepNames({"a": 1}, layouts, 2).scan().tensors == []
    layouts.forget(1)
    assert StepNames({"a": t}, layouts, 1).scan().layout is not first.layout


FUNCTION_IN_A_LOOP = '''
import torch
w = torch.ones(3, requires_grad=True)
h = torch.zeros(3)


def step(x, i):
    h = x * w
    if i == 1:
        h = [h, h * 2]  # (another type at the same line: a list, then a module)
    elif i == 2:
        h = torch.nn.Linear(3, 3)
    y = w * 2 if i > 3 else None
    return h


for i in range({calls}):
    out = step(torch.ones(3) * i, i)
'''


def test_a_function_s_layouts_are_kept_by_line_across_its_calls(tmp_path, monkeypatch):
    """A function called again and again scans its names afresh when a line
    finds them of other types than in the last call (not in every call),
    and what each step tells is what a fresh scan of every step tells."""
    import gradtutor.snapshot as snapshot
    from conftest import explain_json

    fresh = [0]
    made = NameScan.__init__

    def counting(self, namespace, layout=None):  # type: ignore[no-untyped-def]
        fresh[0] += layout is None
        made(self, namespace, layout)

    monkeypatch.setattr(NameScan, "__init__", counting)
    scans = {}
    for calls in (6, 30):
        path = tmp_path / f"calls{calls}.py"
        path.write_text(FUNCTION_IN_A_LOOP.format(calls=calls))
        fresh[0] = 0
        explain_json(path, options=("--graph", "full"))
        scans[calls] = fresh[0]
    assert scans[30] == scans[6]  # (five times the calls: not one scan afresh more)

    kept = explain_json(tmp_path / "calls30.py", options=("--graph", "full"))
    monkeypatch.setattr(snapshot.ScanLayouts, "scan", lambda self, names, key: NameScan(names.names))
    afresh = explain_json(tmp_path / "calls30.py", options=("--graph", "full"))
    assert kept == afresh
