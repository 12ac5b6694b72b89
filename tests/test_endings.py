"""However the program ends, the tutor ends it as python does and its output
stays whole: one valid JSON document, the same output and exit status, no
failure of the tutor's own. Each program runs as a real process, under
``python FILE`` and under ``gradtutor explain``, because these endings are
the process's: atexit handlers, threads left running, os._exit, Ctrl-C."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import jsonschema
import pytest

from gradtutor.jsondoc import schema

pytestmark = pytest.mark.processes

PROGRAMS = {
    "atexit": """
        import atexit
        import torch
        atexit.register(lambda: print("bye from atexit"))
        x = torch.ones(2, requires_grad=True)
        print("main done")
    """,
    "thread": """
        import threading
        import torch
        ready = threading.Event()
        def late():
            ready.wait()
            print("the thread speaks after the last line")
        threading.Thread(target=late).start()
        x = torch.ones(2, requires_grad=True)
        print("main done")
        ready.set()
    """,
    "keyboard_interrupt": """
        import torch
        x = torch.ones(2, requires_grad=True)
        print("before")
        raise KeyboardInterrupt
    """,
    "os_exit": """
        import os
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        print("before exit", flush=True)
        try:
            os._exit(4)
        finally:
            print("a finally block does not run")
    """,
    "stdout_closed": """
        import sys
        import torch
        x = torch.ones(2, requires_grad=True)
        print("closing")
        sys.stdout.close()
        y = x * 2
    """,
    "exit_in_atexit_order": """
        import atexit
        import sys
        atexit.register(lambda: print("second"))
        atexit.register(lambda: print("first"))
        print("main")
        sys.exit(3)
    """,
}


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_program_ends_as_under_python_and_the_document_stays_valid(name, tmp_path):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(PROGRAMS[name]).lstrip())
    python = _run(str(path))
    tutor = _run("-m", "gradtutor", "explain", "--format", "json", str(path))
    doc = json.loads(tutor.stdout)  # one valid document, nothing after it
    jsonschema.validate(doc, schema())
    assert doc["internal_errors"] == [] and "gradtutor:" not in tutor.stderr, tutor.stderr
    assert tutor.returncode == doc["exit_code"] == (python.returncode if python.returncode >= 0 else 128 - python.returncode)
    printed = "".join(step["output"] for step in doc["steps"]) + doc.get("exit_output", "")
    assert printed == python.stdout
    if "Traceback" in python.stderr:
        assert doc["exception"]["type"] == python.stderr.strip().splitlines()[-1].split(":")[0]
    else:
        assert doc["exception"] is None
    assert ("ended_by" in doc) == (name == "os_exit")
    text = _run("-m", "gradtutor", "explain", "--plain", str(path))
    assert text.returncode == tutor.returncode and "gradtutor:" not in text.stderr, text.stderr
    assert python.stdout.splitlines()[-1] in text.stdout


def test_in_process_the_ending_touches_only_what_the_program_started(tmp_path, capsys):
    """Run from a host process (a test, a notebook), the tutor runs the
    program's atexit handlers and waits for its threads, never the host's."""
    import atexit
    import threading

    from gradtutor.cli import main

    real_register = atexit.register
    host_calls: list[str] = []
    release = threading.Event()
    host_thread = threading.Thread(target=release.wait)
    host_thread.start()
    atexit.register(host_calls.append, "host handler ran")
    try:
        path = tmp_path / "prog.py"
        path.write_text(textwrap.dedent(PROGRAMS["exit_in_atexit_order"]).lstrip())
        assert main(["explain", "--format", "json", str(path)]) == 3
        doc = json.loads(capsys.readouterr().out)
        assert doc["exit_output"] == "first\nsecond\n"
        assert host_calls == [] and host_thread.is_alive()
        assert atexit.register is real_register  # put back after the run
    finally:
        release.set()
        host_thread.join()
        atexit.unregister(host_calls.append)
