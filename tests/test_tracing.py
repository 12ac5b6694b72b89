"""How the engine hears of the program's frames (gradtutor.tracing): the
tracer each Python gets, what library code costs it, threads, and what it
leaves behind."""

from __future__ import annotations

import sys
import textwrap

import pytest

from gradtutor.engine import Engine
from gradtutor.tracing import MonitoringTracer, SettraceTracer

MONITORING = sys.version_info >= (3, 12)


def run_source(source: str, engine: Engine | None = None):
    engine = engine or Engine(capture_output=True)
    source = textwrap.dedent(source).lstrip("\n")
    engine.add_source("<test>", source)
    return engine, engine.run_code(compile(source, "<test>", "exec"))


def test_each_python_gets_its_tracer():
    tracer = Engine().tracer
    assert isinstance(tracer, MonitoringTracer if MONITORING else SettraceTracer)


@pytest.mark.skipif(not MONITORING, reason="sys.monitoring is Python 3.12's")
def test_library_code_is_heard_of_once_per_code_object():
    import textwrap as library

    asked: dict[str, int] = {}

    class CountedFiles(dict):
        """The engine's user files, counting what the tracer asks of them."""

        def __contains__(self, filename: object) -> bool:
            asked[str(filename)] = asked.get(str(filename), 0) + 1
            return dict.__contains__(self, filename)

    engine = Engine(capture_output=True)
    source = textwrap.dedent(
        """
        import torch, textwrap
        def double(t):
            return t * 2
        x = torch.ones(2, requires_grad=True)
        for i in range(300):
            y = double(x)
            text = textwrap.dedent("  a")
        """
    ).lstrip("\n")
    engine.add_source("<test>", source)
    engine.tracer.user_files = CountedFiles(engine._indexes)
    result = engine.run_code(compile(source, "<test>", "exec"))
    assert result.exception is None
    assert asked[library.__file__] == 1  # told off at its first start, never heard of again
    assert asked["<test>"] >= 301  # the program and each call of its function
    assert [s.line for s in result.steps if s.function == "double"] == [3, 3, 3]


@pytest.mark.skipif(not MONITORING, reason="sys.monitoring is Python 3.12's")
def test_the_tool_id_is_given_back_after_a_run():
    import sys as _sys

    before = [_sys.monitoring.get_tool(t) for t in range(6)]
    engine, result = run_source("import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n")
    assert result.exception is None and len(result.steps) == 3
    assert [_sys.monitoring.get_tool(t) for t in range(6)] == before
    # and the next run of the same engine hears everything again
    engine.add_source("<test2>", "z = y + 1\n")
    again = engine.run_code(compile("z = y + 1\n", "<test2>", "exec"))
    assert [s.line for s in again.steps] == [1]


def test_a_user_function_run_in_another_thread_is_not_narrated():
    _, result = run_source(
        """
        import threading, torch
        out = []
        def work():
            t = torch.ones(2, requires_grad=True)
            out.append(float((t * 3).sum().detach()))
        th = threading.Thread(target=work)
        th.start()
        th.join()
        total = out[0]
        """
    )
    assert result.exception is None
    assert [s.function for s in result.steps] == ["<module>"] * 7
    assert result.steps[-1].snapshot is not None


def test_the_tracer_follows_an_exception_through_a_function_and_a_generator():
    _, result = run_source(
        """
        import torch
        def gen():
            yield torch.ones(1, requires_grad=True)
            raise ValueError("stop")
        g = gen()
        a = next(g)
        try:
            next(g)
        except ValueError:
            b = a * 2
        """
    )
    assert result.exception is None
    lines = [(s.function, s.line) for s in result.steps]
    assert ("gen", 3) in lines and ("gen", 4) in lines
    assert ("<module>", 10) in lines
    error_steps = [s for s in result.steps if s.function == "gen" and s.line == 4]
    assert [e.kind for e in error_steps[0].events if e.kind == "error"] == ["error"]
