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
