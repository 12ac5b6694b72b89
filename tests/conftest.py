"""Shared helpers: run the tutor on a program in-process and read its JSON."""

from __future__ import annotations

import contextlib
import io
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gradtutor.cli import main
from gradtutor.jsondoc import graphs, schema
from gradtutor.plain_calls import PlainCalls

SCHEMA = schema()

PROGRAMS = Path(__file__).parent / "programs"


def explain_json(path: str | os.PathLike[str], *args: str, options: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run ``gradtutor explain --format json OPTIONS PATH ARGS`` in-process;
    return the document, each step with its whole graph rebuilt as ``graph``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        argv = ["explain", "--format", "json", *options, str(path)]
        code = main(argv + (["--", *args] if args else []))
    return checked_document(json.loads(out.getvalue()), code)


def checked_document(doc: dict[str, Any], code: int | None = None) -> dict[str, Any]:
    """``doc`` checked (schema, no internal error) with every step's graph rebuilt."""
    if code is not None:
        assert doc["exit_code"] == code
    # Every test run doubles as a check that the tutor followed every step,
    # that the document is valid against its schema, and that each step's
    # graph rebuilds from the graphs and deltas the document carries.
    assert doc["internal_errors"] == [], doc["internal_errors"]
    jsonschema.validate(doc, SCHEMA)
    for step, graph in zip(doc["steps"], graphs(doc), strict=True):
        step["graph"] = graph
    return doc


def events(doc: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    """Every event of a run, in order, optionally only of one kind."""
    found = [e for step in doc["steps"] for e in step["events"]]
    return [e for e in found if kind is None or e["kind"] == kind]


def step_at(doc: dict[str, Any], line: int, nth: int = 0) -> dict[str, Any]:
    matches = [s for s in doc["steps"] if s["line"] == line]
    return matches[nth]


def in_main(source: str) -> str:
    """The same program with its body moved into a main() function."""
    lines = source.splitlines()
    imports = [l for l in lines if l.startswith("import ") or l.startswith("from ")]
    body = [l for l in lines if l not in imports]
    return "\n".join(imports) + "\n\n\ndef main():\n" + textwrap.indent("\n".join(body), "    ") + (
        "\n\n\nif __name__ == \"__main__\":\n    main()\n"
    )


@pytest.fixture
def every_call_stepped(monkeypatch):
    """A function whose calls settle is stepped on every call all the same
    (see plain_calls): for tests of how its steps repeat from call to call.
    Functions that touch no tensor are still left after their first calls."""
    real = PlainCalls.ended
    monkeypatch.setattr(
        PlainCalls, "ended", lambda self, code, plain, running, settled=False: real(self, code, plain, running)
    )


@pytest.fixture
def program(tmp_path: Path):
    """Write a program to a file: ``program("x = 1")`` -> its path."""

    def write(source: str, name: str = "prog.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
        return path

    return write
