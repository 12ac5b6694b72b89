"""The shell in-process: prompt_toolkit reads keys from a pipe, output goes to a buffer."""

from __future__ import annotations

import io
import os
import re
import stat

import pytest
import torch
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradtutor.environment import Environment
from gradtutor.environment import make_console
from gradtutor.shell import InteractiveShell, NamespaceCompleter, piped_inputs, run_piped
from gradtutor.shell_session import ShellSession, ShellSettings, is_complete, next_indent

ENTER, CTRL_C, CTRL_D, ALT_ENTER = "\r", "\x03", "\x04", "\x1b\r"


def make_env(tmp_path, stdin=None) -> Environment:
    return Environment(
        stdout=io.StringIO(), stderr=io.StringIO(), stdin=stdin or io.StringIO(),
        width=80, data_dir=str(tmp_path / "data"),
    )


def drive(keys: str, tmp_path, session: ShellSession | None = None):
    """Type ``keys`` into a fresh shell; return (exit code, printed text, session)."""
    env = make_env(tmp_path)
    session = session or ShellSession(ShellSettings(width=80, ascii=False))
    with create_pipe_input() as inp:
        with create_app_session(input=inp, output=DummyOutput()):
            shell = InteractiveShell(session, make_console(env, width=80, plain=True), env)
            inp.send_text(keys)
            inp.close()
            code = shell.run()
    return code, env.stdout.getvalue(), session


def test_statements_run_in_one_namespace_and_ctrl_d_ends(tmp_path):
    code, out, session = drive("x = torch.tensor(2.0, requires_grad=True)" + ENTER + "y = x * 3" + ENTER + CTRL_D, tmp_path)
    assert code == 0
    assert session.namespace["y"].item() == 6.0
    assert "• x names a tensor" in out and "• y names a tensor" in out
    assert "x [leaf] ──▶ x * 3 = y" in out


def test_multi_line_block_runs_after_a_blank_line(tmp_path, capsys):
    keys = "total = 0" + ENTER + "for i in range(3):" + ENTER + "total += i" + ENTER + ENTER + CTRL_D
    code, out, session = drive(keys, tmp_path)
    assert session.namespace["total"] == 3
    assert session.counter == 2  # two inputs: the assignment and the whole loop


def test_alt_enter_adds_a_line_instead_of_running(tmp_path):
    keys = "a = 1" + ALT_ENTER + "b = 2" + ENTER + CTRL_D
    _, _, session = drive(keys, tmp_path)
    assert session.namespace["a"] == 1 and session.namespace["b"] == 2
    assert session.history == ["a = 1\nb = 2"]


def test_expression_value_is_shown_and_bound_to_underscore(tmp_path):
    _, out, session = drive("6 * 7" + ENTER + "_ + 1" + ENTER + CTRL_D, tmp_path)
    assert "Out[1]: 42" in out and "Out[2]: 43" in out


def test_ctrl_c_while_typing_clears_the_line(tmp_path):
    _, _, session = drive("bad = 1" + CTRL_C + "good = 2" + ENTER + CTRL_D, tmp_path)
    assert "bad" not in session.namespace and session.namespace["good"] == 2


def test_error_shows_the_users_lines_then_the_explanation_and_the_shell_goes_on(tmp_path):
    keys = ENTER.join([
        "x = torch.tensor(2.0, requires_grad=True)",
        "y = x ** 2",
        "y.backward()",
        "y.backward()",
        "after = 1",
    ]) + ENTER + CTRL_D
    code, out, session = drive(keys, tmp_path)
    assert code == 0 and session.namespace["after"] == 1
    tb = out[out.index("Traceback"):]
    assert 'File "<In [4]>", line 1, in <module>' in tb
    assert "torch/" not in tb.split("RuntimeError")[0]  # the user's lines only
    assert "created at In [2] (`y = x ** 2`)" in out
    assert "freed by the backward at In [3]" in out


def test_syntax_error_points_at_the_column(tmp_path):
    _, out, _ = drive("x = (1 +" + ALT_ENTER + ")) " + ENTER + CTRL_D, tmp_path)
    assert 'File "<In [1]>", line 2' in out and "^" in out and "SyntaxError" in out


def test_system_exit_ends_the_session_with_its_status(tmp_path):
    code, _, _ = drive("raise SystemExit(4)" + ENTER + "never = 1" + ENTER, tmp_path)
    assert code == 4


@pytest.mark.parametrize("keys", [":quit" + ENTER, "exit()" + ENTER, "quit()" + ENTER])
def test_quitting(tmp_path, keys):
    code, _, _ = drive(keys + "never = 1" + ENTER, tmp_path)
    assert code == 0


def test_completion_from_the_live_namespace_includes_attributes():
    import torch

    completer = NamespaceCompleter({"x": torch.ones(2, requires_grad=True), "xyz": 1})
    token, found = completer.matches("y = x.ret")
    assert token == "x.ret" and "x.retain_grad" in found
    token, found = completer.matches("xy")
    assert found == ["xyz"]
    assert completer.matches("x.")[1] and all(not m.split(".")[1].startswith("_") for m in completer.matches("x.")[1])


def test_tab_completes_in_the_prompt(tmp_path):
    _, _, session = drive("value_one = 5" + ENTER + "copy = value_o\t" + ENTER + ENTER + CTRL_D, tmp_path)
    assert session.namespace["copy"] == 5


def test_history_is_saved_privately_in_the_data_directory(tmp_path):
    drive("kept = 1" + ENTER + CTRL_D, tmp_path)
    folder = tmp_path / "data"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    history = folder / "history"
    assert stat.S_IMODE(os.stat(history).st_mode) == 0o600
    assert "kept = 1" in history.read_text()
    # The next session recalls it with the Up arrow.
    _, _, session = drive("\x1b[A" + ENTER + CTRL_D, tmp_path)
    assert session.namespace["kept"] == 1


def test_commands(tmp_path):
    keys = ENTER.join([
        ":help", "x = torch.tensor(42., requires_grad=True)", "x = x ** 2", ":graph", ":ops", ":names",
        ":explain", ":history", ":lang zh", ":lang", ":lang fr", ":nope", ":graph extra", ":reset", "print('x' in dir())",
    ]) + ENTER + CTRL_D
    code, out, session = drive(keys, tmp_path)
    assert ":names" in out and "(also Ctrl-D, exit())" in out  # :help
    assert "x (old) [leaf] ──▶ x ** 2 = x" in out  # :graph
    assert "PowBackward0" in out  # :ops
    assert "no name, still in the graph (was x)" in out  # :names shows the ghost
    assert "moved on, but the old tensor is still in the graph" in out  # :explain
    assert "In [1]: x = torch.tensor(42., requires_grad=True)\nIn [2]: x = x ** 2\n" in out  # :history
    assert "In [3]:" not in out.split("In [2]: x = x ** 2")[1].split("语言")[0]  # commands are not inputs
    assert "语言：zh" in out and "unknown language 'fr'" not in out  # messages now in Chinese
    assert "未知语言 'fr'" in out
    assert "未知命令 ':nope'" in out and ":graph 不接受参数" in out
    assert "命名空间已重置" in out
    assert "x" not in session.namespace and "torch" in session.namespace


def test_is_complete_and_indent_rules():
    assert is_complete("x = 1")
    assert not is_complete("for i in range(3):")
    assert not is_complete("for i in range(3):\n    y = i")
    assert is_complete("for i in range(3):\n    y = i\n    ")
    assert is_complete("x = )")  # run it to show the syntax error
    assert not is_complete("x = (1,")
    assert is_complete(":graph")
    assert next_indent("for i in x:") == "    " and next_indent("    y = 1") == "    "


def test_piped_inputs_group_lines_as_a_person_types_them():
    text = "import torch\nfor i in range(2):\n    y = i\nz = 3\n:names\nif z:\n    a = 1\nelse:\n    a = 2\n\nprint(a)\n"
    assert [i for i in piped_inputs(io.StringIO(text)) if i] == [
        "import torch", "for i in range(2):\n    y = i", "z = 3", ":names",
        "if z:\n    a = 1\nelse:\n    a = 2", "print(a)",
    ]


def test_piped_session_prints_prompts_and_replies(tmp_path, capsys):
    env = make_env(tmp_path, io.StringIO("x = torch.ones(2, requires_grad=True)\nprint('hi')\n"))
    session = ShellSession(ShellSettings(width=80))
    code = run_piped(session, make_console(env, width=80, plain=True), env.stdin)
    out = env.stdout.getvalue()
    assert code == 0
    assert "In [1]: x = torch.ones(2, requires_grad=True)\n   • x names a tensor" in out
    assert "In [2]: print('hi')" in out
    assert capsys.readouterr().out == "hi\n"


def test_each_marker_is_explained_the_first_time_it_is_drawn(tmp_path):
    keys = ENTER.join(["a = torch.ones(2, requires_grad=True)", "b = torch.ones(2, requires_grad=True)", ":graph"])
    _, out, _ = drive(keys + ENTER + CTRL_D, tmp_path)
    leaf_meaning = "a leaf tensor that requires grad: backward fills its .grad"
    assert out.count(leaf_meaning) == 2  # In [1]'s drawing, then :graph (which always explains everything)


def test_ctrl_r_searches_history_and_suggestions_come_from_history(tmp_path):
    drive("searched_name = 41" + ENTER + CTRL_D, tmp_path)
    # Ctrl-R, type part of an old line, Enter ends the search, Enter runs the line found.
    _, _, session = drive("\x12" + "searched" + ENTER + ENTER + CTRL_D, tmp_path)
    assert session.history == ["searched_name = 41"] and session.namespace["searched_name"] == 41
    # Suggestions come from the same history (prompt_toolkit computes them in the
    # background, so the test asks the suggester directly rather than racing it).
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.document import Document

    env = make_env(tmp_path)
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        prompt, _ = InteractiveShell(session, make_console(env, width=80, plain=True), env)._prompt_session()
    assert isinstance(prompt.auto_suggest, AutoSuggestFromHistory)
    import asyncio

    async def load() -> None:
        async for _ in prompt.history.load():
            pass

    asyncio.run(load())
    buffer = Buffer(history=prompt.history)
    suggestion = prompt.auto_suggest.get_suggestion(buffer, Document("searched_n"))
    assert suggestion is not None and suggestion.text == "ame = 41"


def test_only_a_final_expression_shows_its_value(tmp_path):
    _, out, session = drive("1 + 1" + ALT_ENTER + "x = 5" + ALT_ENTER + "x * 2" + ENTER + CTRL_D, tmp_path)
    assert "Out[1]: 10" in out and "Out[1]: 2" not in out


def test_the_same_lines_typed_in_two_inputs_are_not_a_loop_running_again(tmp_path):
    # Code objects compare equal across files: the engine must not count
    # In [2]'s line 1 as a second run of In [1]'s.
    block = "if True:\n    x = torch.ones(2, requires_grad=True)\n    y = x * 2\n"
    env = make_env(tmp_path, io.StringIO(block + "\n" + block + "\n"))
    session = ShellSession(ShellSettings(width=80))
    run_piped(session, make_console(env, width=80, plain=True), env.stdin)
    out = env.stdout.getvalue()
    assert out.count("── line 2 x = torch.ones(2, requires_grad=True)") == 2, out
    assert "run 2" not in out


def _said(reply, width=100) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None)
    for renderable in reply.renderables:
        console.print(renderable)
    return buf.getvalue()


def test_a_question_mark_asks_for_help_as_in_ipython():
    session = ShellSession(ShellSettings(width=100, ascii=False))
    session.execute("x = torch.ones(2, requires_grad=True)")
    count = session.counter
    tensor = _said(session.execute("x?"))
    assert "Type: torch.Tensor" in tensor and "Value: tensor 2 float32 requires_grad" in tensor
    function = _said(session.execute("?F.relu"))
    assert "Signature: relu(input: torch.Tensor, inplace: bool = False) -> torch.Tensor" in function
    assert "Applies the rectified linear unit function element-wise" in function
    short_doc = _said(session.execute("torch.ones??"))
    assert "Returns a tensor filled with the scalar value `1`" in short_doc and "shows them all" not in short_doc
    long_doc = _said(session.execute("torch.autograd.grad?"))
    assert "Signature: grad(outputs" in long_doc and "help(torch.autograd.grad) shows them all" in long_doc
    missing = _said(session.execute("nope?"))
    assert "No help for nope: NameError: name 'nope' is not defined" in missing
    assert session.counter == count  # a question is not an input of the program
    assert "SyntaxError" not in tensor + function + short_doc + long_doc + missing


def test_an_ipython_magic_gets_a_clear_answer_not_a_syntax_error():
    session = ShellSession(ShellSettings(width=100, ascii=False))
    said = _said(session.execute("%timeit x * 2"))
    assert "%timeit is a magic of IPython, not Python" in said and "timeit.timeit(" in said
    assert "SyntaxError" not in said
    session.execute(":lang zh")
    zh = _said(session.execute("%%time"))
    assert "%%time 是 IPython 的魔法命令" in zh


def test_code_in_the_prompt_is_coloured_in_the_terminals_own_colours():
    """Readable on dark and light themes: every token of Python the prompt
    shows is in an ANSI colour (the terminal's theme decides how it looks)
    or the text colour; none is a fixed grey such as pygments' #666666."""
    from pygments.lexers.python import PythonLexer

    from gradtutor.render.view import THEME
    from gradtutor.shell import code_style

    style = code_style()
    source = "import torch\nx = torch.ones(2, requires_grad=True)  # leaf\nif not x.is_leaf or 3.5 > 2: print(f'{x!r}', None)\n"
    for token, _ in PythonLexer().get_tokens(source):
        name = "pygments." + ".".join(part.lower() for part in token)
        attrs = style.get_attrs_for_style_str(f"class:{name}")
        assert attrs.color in ("", None) or attrs.color.startswith("ansi"), (token, attrs.color)
        assert not attrs.dim
    operator = style.get_attrs_for_style_str("class:pygments.operator")
    number = style.get_attrs_for_style_str("class:pygments.literal.number.integer")
    assert operator.color in ("", None) and number.color.startswith("ansi")
    assert "dim" not in THEME["legend"] and "dim" not in THEME["note"]


def test_history_numbers_are_the_input_numbers():
    import rich.console

    session = ShellSession(ShellSettings(width=80, ascii=False))
    inputs = [":help", "a = 1"] + [f"b{i} = {i}" for i in range(8)] + [":graph", "for i in range(2):\n    c = i\n"]
    for text in inputs:
        session.execute(text)
    buf = io.StringIO()
    console = rich.console.Console(file=buf, width=80, color_system=None)
    for renderable in session.execute(":history").renderables:
        console.print(renderable)
    lines = buf.getvalue().splitlines()
    assert lines[0] == " In [1]: a = 1" and lines[8] == " In [9]: b7 = 7"
    assert lines[9:] == ["In [10]: for i in range(2):", "             c = i"]
    assert not [line for line in lines if ":help" in line or ":graph" in line]


def test_names_show_types_and_what_each_is_without_internal_ids():
    session = ShellSession(ShellSettings(width=100, ascii=False))
    for text in ["model = torch.nn.Linear(3, 2)", "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
                 "w = torch.ones(3, requires_grad=True)", "y = (torch.ones(4, 3) @ w).sum()", "y = y * 2"]:
        session.execute(text)
    said = _said(session.execute(":names"))
    assert re.search(r"opt\s+──▶\s+SGD\s+SGD over 2 tensors \(8 values\), lr=0\.1", said)
    # A parameter is a tensor here as in the events ("6 parameters were
    # cleared"); the values are the numbers they hold.
    assert re.search(r"model\s+──▶\s+Linear\s+Linear \(2 parameters, 8 values\)", said)
    assert re.search(r"w\s+──▶\s+Tensor\s+tensor 3 float32 requires_grad", said)
    assert "SumBackward0: no name, still in the graph (was y)" in said
    assert not re.search(r"\b[tn]\d+\b", said)  # no node ids (t1, n5)


def test_explain_explains_the_last_event_worth_explaining_however_long_ago():
    session = ShellSession(ShellSettings(width=100, ascii=False))
    assert "Nothing to explain yet" in _said(session.execute(":explain"))
    session.execute("x = torch.ones(2, requires_grad=True)")
    assert "x names a tensor" in _said(session.execute(":explain"))  # only routine events so far
    session.execute("y = (x * 2).sum()")
    session.execute("y.backward()")
    session.execute("a = 1")
    session.execute("print(a)")
    assert "backward through y" in _said(session.execute(":explain"))  # inputs with no events leave it
    session.execute("b = torch.ones(3)")
    said = _said(session.execute(":explain"))
    assert "b names a tensor" in said and "backward through y" not in said


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_banner_wraps_cleanly_at_any_width(language):
    """No hard line breaks inside its sentences: the terminal's width decides
    where a line ends, and the code lines stay whole."""
    from rich.cells import cell_len
    from rich.console import Console

    for width in (50, 60, 80, 120):
        session = ShellSession(ShellSettings(width=width, ascii=False, language=language))
        buf = io.StringIO()
        Console(file=buf, width=width, color_system=None).print(session.welcome())
        lines = buf.getvalue().rstrip("\n").split("\n")
        assert all(cell_len(line) <= width for line in lines)
        assert "    x = torch.tensor(42., requires_grad=True)" in lines
        if width == 120:  # the paragraph is one line where it fits
            assert len(lines) == 7, lines


def test_an_explanation_is_given_once_per_input():
    """A loop adding to two gradients three times: each addition is reported,
    the reason it happens is said once in the input."""
    session = ShellSession(ShellSettings(width=100, ascii=False))
    session.execute("w = torch.ones(2, requires_grad=True)")
    session.execute("b = torch.ones(2, requires_grad=True)")
    said = _said(session.execute("for i in range(4):\n    loss = (w * 3 + b).sum()\n    loss.backward()\n"))
    assert said.count("w.grad was added to, not replaced") >= 2  # each time it happens
    assert said.count("so the new gradient was added") == 1  # why: once
    again = _said(session.execute("loss = (w * 3 + b).sum()\nloss.backward()\n"))
    assert again.count("so the new gradient was added") == 1  # a new input explains again


def test_an_error_in_one_input_pins_no_tensor_for_the_rest_of_the_session():
    """What the shell keeps of an input's exception (its traceback, the
    explanation, :explain's event) holds none of the tensors the input made."""
    import gc
    import weakref

    session = ShellSession(ShellSettings(width=80))
    session.execute("import weakref")
    session.execute("w = torch.randn(100, 100, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()")
    session.execute("refs = [weakref.ref(w), weakref.ref(loss)]")
    def said(text: str) -> str:
        from rich.console import Console

        console = Console(file=io.StringIO(), width=100, color_system=None)
        console.print(*session.execute(text).renderables)
        return console.file.getvalue()

    assert "ValueError: bad" in said("def check(t):\n    raise ValueError('bad')\ncheck(w)")  # its frame held w
    assert "Trying to backward through the graph a second time" in said("loss.backward()")
    assert "Backward through a graph whose saved tensors were freed" in said(":explain")
    refs = session.namespace["refs"]
    session.execute("del w, loss")
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_a_blank_line_inside_a_block_of_a_piped_script_does_not_end_it():
    script = ("import torch\n\ndef f(x):\n    y = x * 2\n\n    return y + 1\n\n\n"
              "for i in range(2):\n    a = i\n\n    b = a\nprint(f(torch.ones(1)), b)\n")
    assert [i for i in piped_inputs(io.StringIO(script))] == [
        "import torch", "", "def f(x):\n    y = x * 2\n\n    return y + 1", "",
        "for i in range(2):\n    a = i\n\n    b = a", "print(f(torch.ones(1)), b)",
    ]
    session = ShellSession(ShellSettings(width=80))
    for text in piped_inputs(io.StringIO(script)):
        session.execute(text)
    assert session.namespace["b"] == 1 and session.namespace["f"](session.namespace["torch"].ones(1)).item() == 3


def test_anomaly_modes_forward_trace_shows_the_inputs_frames_only():
    import warnings

    session = ShellSession(ShellSettings(width=80))
    session.execute("torch.autograd.set_detect_anomaly(True)")
    try:
        session.execute("x = torch.tensor([1.0], requires_grad=True)")
        session.execute("def f(t):\n    return (t * 0).sqrt().div(t * 0)\ny = f(x)")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            session.execute("y.backward()")
    finally:
        session.execute("torch.autograd.set_detect_anomaly(False)")
    trace = next(str(w.message) for w in caught if "Traceback of forward call" in str(w.message))
    files = re.findall(r'File "([^"]+)"', trace)
    assert files == ["<In [3]>", "<In [3]>"], trace


def test_a_mode_the_learner_left_on_stays_on_and_sees_only_their_calls():
    # As under python: a torch function mode entered without a with block
    # stays on across inputs and sees the learner's torch calls, not the
    # tutor's (its observer's reads while it handles a call, its commands').
    session = ShellSession(ShellSettings(width=80))
    session.execute(
        "from torch.overrides import TorchFunctionMode\nseen = []\n"
        "class Log(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        seen.append(getattr(func, '__name__', str(func)))\n"
        "        return func(*args, **(kwargs or {}))"
    )
    session.execute("x = torch.ones(3, requires_grad=True)\ny = (x * 2).sum()")
    session.execute("log = Log()\nlog.__enter__()\nz = y * 3")
    try:
        for command in (":graph", ":ops", ":names"):
            session.execute(command)
        session.execute("w = z * 3")
        calls = list(session.namespace["seen"])
        on = torch._C._len_torch_function_stack()
    finally:
        session.execute("log.__exit__(None, None, None)")
        left = torch._C._len_torch_function_stack()
        while torch._C._len_torch_function_stack():  # (what a failure left on is not the next tests')
            torch._C._pop_torch_function_stack()
    plain: list[str] = []
    log = session.namespace["Log"]()
    session.namespace["seen"] = plain
    with log:
        z = session.namespace["y"] * 3
        z * 3
    assert calls == plain and len(plain) == 2, (calls, plain)
    assert on == 1  # (the learner's mode, between inputs: the tutor's is off)
    assert left == 0
