"""The lesson file validator: the bundled course loads, and every mistake is one precise line.

Each malformed case below is a small lesson file that differs from a valid
one in one place. The test writes it to disk, loads it, and checks the
LessonError: the file it names, the line, and the message.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradtutor.errors import LessonError
from gradtutor.explanations import LANGUAGES
from gradtutor.lesson_format import Lesson, Text, load_lesson

COURSE = Path(__file__).resolve().parent.parent / "lessons" / "course"


# -- the bundled course ---------------------------------------------------------


def _texts(lesson: Lesson) -> list[tuple[str, Text]]:
    """Every text of a lesson, with where it is, for the error message."""
    out: list[tuple[str, Text]] = [("title", lesson.title), ("summary", lesson.summary)]
    for i, step in enumerate(lesson.steps):
        at = f"steps[{i}] ({step.kind}, line {step.line})"
        if step.text is not None:
            out.append((f"{at} text", step.text))
        if step.note is not None:
            out.append((f"{at} note", step.note))
        for j, choice in enumerate(step.choices):
            out += [(f"{at} choices[{j}].text", choice.text), (f"{at} choices[{j}].explain", choice.explain)]
        out += [(f"{at} hints[{j}]", hint) for j, hint in enumerate(step.hints)]
    return out


def test_bundled_course_loads_in_every_language_with_unique_ids() -> None:
    files = sorted(COURSE.glob("*.yaml"))
    assert files, f"no lessons in {COURSE}"
    ids: dict[str, str] = {}
    for path in files:
        lesson = load_lesson(str(path))
        assert lesson.path == str(path)
        assert lesson.steps
        for where, text in _texts(lesson):
            assert set(text) == set(LANGUAGES) == {"en", "zh"}, f"{path.name}: {where}"
            assert all(isinstance(t, str) and t.strip() for t in text.values()), f"{path.name}: {where}"
        assert lesson.id not in ids, f"{path.name} reuses the id of {ids.get(lesson.id)}"
        ids[lesson.id] = path.name


# -- building small lesson files ------------------------------------------------

HEADER = {
    "id": "demo-lesson",
    "title": "{en: Demo, zh: 演示}",
    "summary": "{en: A small lesson., zh: 一节小课。}",
    "level": "beginner",
    "concepts": "[computation-graph]",
}
TEXT_STEP = "- text: {en: Hello., zh: 你好。}"


def lesson(steps: str | None = TEXT_STEP, **fields: str | None) -> str:
    """A minimal valid lesson with one header field per line, so that line numbers are fixed:

        1 id, 2 title, 3 summary, 4 level, 5 concepts, 6 ``steps:``, 7 the first step.

    A keyword gives the raw YAML value of that header field; None leaves the field
    out (a comment keeps its line). Other keywords add header lines after concepts,
    which moves ``steps:`` down. ``steps`` is a block of steps (starting with
    ``-``), put under ``steps:`` from line 7; a one-line value such as ``[]``; or
    None, for no steps field.
    """
    lines = []
    for key, default in HEADER.items():
        value = fields.pop(key, default)
        lines.append(f"# no {key}" if value is None else f"{key}: {value}")
    lines += [f"{key}: {value}" for key, value in fields.items()]
    if steps is None:
        lines.append("# no steps")
    elif steps.lstrip().startswith("-"):
        lines.append("steps:")
        lines.append(textwrap.indent(textwrap.dedent(steps).strip("\n"), "  "))
    else:
        lines.append(f"steps: {steps}")
    return "\n".join(lines) + "\n"


RIGHT = "{text: {en: A graph, zh: 一个图}, correct: true, explain: {en: Right., zh: 对。}}"
WRONG = "{text: {en: A number, zh: 一个数}, explain: {en: Not quite., zh: 不完全对。}}"


def quiz(*choices: str) -> str:
    """A quiz step: ``- quiz:`` on line 7, ``choices:`` on line 9, one choice a line from line 10."""
    return "\n".join(
        ["- quiz:", "    question: {en: 'What does y hold?', zh: y 里是什么？}", "    choices:"]
        + [f"      - {choice}" for choice in choices]
    )


def task(*checks: str) -> str:
    """A task step: ``- task:`` on line 7, ``check:`` on line 10, one check a line from line 11."""
    return "\n".join(
        ["- task:", "    prompt: {en: Make y., zh: 造出 y。}", "    solution: y = x * 2", "    check:"]
        + [f"      - {check}" for check in checks]
    )


def run(*expect_events: str) -> str:
    """A run step: ``- run:`` on line 7, ``expect_events:`` on line 9, one matcher a line from line 10."""
    return "\n".join(["- run:", "    code: y = x * 2", "    expect_events:"] + [f"      - {m}" for m in expect_events])


def test_the_builders_make_valid_lessons(tmp_path: Path) -> None:
    """The base of every malformed case is itself valid, so each case tests one mistake."""
    for steps in (TEXT_STEP, quiz(RIGHT, WRONG), task("no_error: true"), run("{kind: name-bound, name: y}")):
        path = tmp_path / "ok.yaml"
        path.write_text(lesson(steps), encoding="utf-8")
        loaded = load_lesson(str(path))
        assert loaded.id == "demo-lesson"
        assert loaded.steps[0].line == 7


# -- the malformed files: (file text, line, message) ------------------------------
# A message ending in "..." is a prefix (the rest is Python's or PyYAML's wording).

CASES = [
    # YAML itself
    pytest.param(lesson(concepts="[computation-graph, backward"), 5, "YAML error: expected ',' or ']', but got ':'",
                 id="yaml-unclosed-bracket"),
    pytest.param(lesson("- text: {en: Hello., zh: 你好。"), 7, "YAML error: expected ',' or '}', but got '<stream end>'",
                 id="yaml-unclosed-brace-at-end"),
    pytest.param(lesson(title='"Demo'), 2, "YAML error: found unexpected end of stream",
                 id="yaml-unclosed-quote"),
    pytest.param(lesson("""
                     - text:
                         en: Hello.
                        zh: 你好。
                 """), 9, "YAML error: expected <block end>, but found '<block mapping start>'", id="yaml-bad-indent-less"),
    pytest.param(lesson("""
                     - text:
                         en: Hello.
                           zh: 你好。
                 """), 9, "YAML error: mapping values are not allowed here", id="yaml-bad-indent-more"),
    pytest.param(lesson("- text:\n\ten: Hello.\n\tzh: 你好。"), 8,
                 "YAML error: found character '\\t' that cannot start any token", id="yaml-tab-indent"),
    pytest.param(lesson(id="!!python/object/apply:os.system ['echo hacked']"), 1,
                 "YAML error: could not determine a constructor for the tag "
                 "'tag:yaml.org,2002:python/object/apply:os.system'", id="yaml-unsafe-tag"),
    pytest.param(lesson() + "---\nid: another-lesson\n", 8,
                 "YAML error: expected a single document in the stream, but found another document",
                 id="yaml-two-documents"),
    pytest.param(lesson(level="beginner\nlevel: advanced"), 5, "duplicate field 'level'", id="yaml-duplicate-key"),
    pytest.param(lesson(steps="&steps [*steps]"), 6, 'step: expected a mapping with exactly one step kind (text, run, predict, quiz, task)', id="yaml-recursive-alias"),
    pytest.param(lesson(concepts="[" * 3000 + "]" * 3000), None, 'YAML error: nested too deep, or an alias that contains itself', id="yaml-nested-too-deeply"),
    pytest.param(b"id: demo-lesson\ntitle: \xff\n", None,
                 "cannot read: 'utf-8' codec can't decode byte 0xff in position 23: invalid start byte",
                 id="file-not-utf8"),
    # the file as a whole
    pytest.param("", 1, "the file is empty", id="empty-file"),
    pytest.param("# a lesson, one day\n", 1, "the file is empty", id="only-a-comment"),
    pytest.param("- id: demo-lesson\n- title: Demo\n", 1, "lesson: expected a mapping", id="top-level-list"),
    pytest.param("A lesson about graphs.\n", 1, "lesson: expected a mapping", id="top-level-string"),
    pytest.param(lesson(author="Ada"), 6,
                 "lesson: unknown field 'author' (allowed: id, title, summary, level, concepts, steps)",
                 id="unknown-top-level-field"),
    # the header
    pytest.param(lesson(id=None), 2, "lesson: missing field 'id'", id="missing-id"),  # the mapping starts on line 2
    pytest.param(lesson(title=None), 1, "lesson: missing field 'title'", id="missing-title"),
    pytest.param(lesson(summary=None), 1, "lesson: missing field 'summary'", id="missing-summary"),
    pytest.param(lesson(level=None), 1, "lesson: missing field 'level'", id="missing-level"),
    pytest.param(lesson(steps=None), 1, "lesson: missing field 'steps'", id="missing-steps"),
    pytest.param(lesson(id="Backward_Frees"), 1, "field 'id': expected kebab-case, like backward-frees",
                 id="id-not-kebab"),
    pytest.param(lesson(id="42"), 1, "field 'id': expected kebab-case, like backward-frees", id="id-a-number"),
    pytest.param(lesson(level="expert"), 4, "field 'level': expected one of beginner, intermediate, advanced",
                 id="bad-level"),
    pytest.param(lesson(concepts="computation-graph"), 5, "field 'concepts': expected a list of kebab-case tags",
                 id="concepts-not-a-list"),
    pytest.param(lesson(concepts="[Computation Graph]"), 5, "field 'concepts': expected a list of kebab-case tags",
                 id="concepts-not-kebab"),
    pytest.param(lesson(steps="[]"), 6, "field 'steps': expected a non-empty list of steps", id="steps-empty"),
    pytest.param(lesson(steps="{text: {en: Hello., zh: 你好。}}"), 6,
                 "field 'steps': expected a non-empty list of steps", id="steps-not-a-list"),
    # texts
    pytest.param(lesson(title="Demo"), 2, "field 'title': give the text per language (en, zh)",
                 id="title-plain-string"),
    pytest.param(lesson(summary="{en: A small lesson.}"), 3, "field 'summary': missing 'zh' text",
                 id="summary-missing-zh"),
    pytest.param(lesson("- text: Hello."), 7, "field 'text': give the text per language (en, zh)",
                 id="text-plain-string"),
    pytest.param(lesson("- text: [Hello., 你好。]"), 7, "field 'text': expected a mapping of language to text",
                 id="text-a-list"),
    pytest.param(lesson("- text: {en: Hello.}"), 7, "field 'text': missing 'zh' text", id="text-missing-zh"),
    pytest.param(lesson("- text: {en: '  ', zh: 你好。}"), 7, "field 'text': missing 'en' text", id="text-empty-en"),
    pytest.param(lesson("""
                     - text:
                         en: Hello.
                         zh: 你好。
                         fr: Bonjour.
                 """), 10, "field 'text': unknown language 'fr'", id="text-unknown-language"),
    pytest.param(lesson("- text: {en: Yes, zh: 是}"), 7, "field 'text': the 'en' text is not text (YAML reads an unquoted True as bool: put it in quotes)", id="text-read-as-bool"),
    # steps
    pytest.param(lesson("- Hello."), 7,
                 "step: expected a mapping with exactly one step kind (text, run, predict, quiz, task)",
                 id="step-not-a-mapping"),
    pytest.param(lesson("""
                     - text: {en: Hello., zh: 你好。}
                       run: {code: x = 1}
                 """), 7, "step: expected a mapping with exactly one step kind (text, run, predict, quiz, task)",
                 id="step-two-kinds"),
    pytest.param(lesson("- video: {url: intro.mp4}"), 7,
                 "unknown step kind 'video' (known: text, run, predict, quiz, task)", id="unknown-step-kind"),
    # run steps
    pytest.param(lesson("- run: {note: {en: Look., zh: 看。}}"), 7, "run step: missing field 'code'",
                 id="run-without-code"),
    pytest.param(lesson("- run: print(x)"), 7, "run step: expected a mapping", id="run-not-a-mapping"),
    pytest.param(lesson("- run: {code: 42}"), 7, "field 'code': expected Python code as text", id="run-code-a-number"),
    pytest.param(lesson("""
                     - run:
                         code: |
                           x = torch.ones(3, requires_grad=True)
                           y = (x * 2
                           z = y.sum()
                 """), 10, "field 'code': code does not parse: '(' was never closed", id="run-code-unclosed-paren"),
    pytest.param(lesson("""
                     - run:
                         code: |
                           x = 1
                           y = 2

                           z = = 3
                 """), 12, "field 'code': code does not parse: invalid syntax", id="run-code-bad-line-4"),
    pytest.param(lesson("- run: {code: 'y = = 2'}"), 7, "field 'code': code does not parse: invalid syntax",
                 id="run-code-one-line"),
    pytest.param(lesson("""
                     - run:
                         code: |-
                           y = = 2
                 """), 9, "field 'code': code does not parse: invalid syntax", id="run-code-strip-block-one-line"),
    pytest.param(lesson('- run: {code: "x = 1\\ny = = 2"}'), 7, "field 'code': code does not parse: invalid syntax",
                 id="run-code-quoted-with-newlines"),
    pytest.param(lesson("""
                     - run:
                         code: x = 1
                         expect: x == 1
                 """), 9, "run step: unknown field 'expect' (allowed: code, expect_events, note)",
                 id="run-unknown-field"),
    pytest.param(lesson("""
                     - run:
                         code: y = x * 2
                         expect_events: {kind: name-bound, name: y}
                 """), 9, "field 'expect_events': expected a list of event matchers", id="expect-events-not-a-list"),
    pytest.param(lesson("""
                     - run:
                         code: y = x * 2
                         note: Look at y.
                 """), 9, "field 'note': give the text per language (en, zh)", id="run-note-plain-string"),
    pytest.param(lesson('- run: {code: "s = \'\\ud800\'"}'), 7, "field 'code': code does not parse...",
                 id="run-code-lone-surrogate"),
    # Deep enough for the parser or the compiler of every supported Python to give up.
    pytest.param(lesson("- run: {code: '" + "-" * 100000 + "1'}"), 7, "field 'code': code does not parse: nested too deeply",
                 id="run-code-nested-too-deeply"),
    pytest.param(lesson("- run: {code: 'return 1'}"), 7, "field 'code': code does not parse: 'return' outside function",
                 id="run-code-compile-error"),
    # event matchers
    pytest.param(lesson(run("{name: y}")), 10, "event matcher: expected a mapping with a 'kind'",
                 id="matcher-without-kind"),
    pytest.param(lesson(run("{kind: bound, name: y}")), 10,
                 "event matcher: unknown event kind 'bound' (known: name-bound, name-rebound, backward, "
                 "grad-accumulated, grad-before-error, detached, retain-grad, requires-grad, inplace, grad-reset, graph-growth, warning, error)",
                 id="matcher-unknown-kind"),
    pytest.param(lesson(run("{kind: name-bound, name: y}", "{kind: backward, loss: y}")), 11,
                 "event matcher: 'backward' events have no field 'loss'", id="matcher-field-kind-lacks"),
    pytest.param(lesson(run("{kind: error, cause: double-backward}")), 10, "event matcher: unknown error cause 'double-backward' (known: second-backward, freed-saved-read, inplace-modified, leaf-inplace, no-grad-fn, non-scalar-backward, out-requires-grad, other)", id="matcher-unknown-error-cause"),
    pytest.param(lesson(run("{kind: warning, cause: second-backward}")), 10, "event matcher: unknown warning cause 'second-backward' (known: non-leaf-grad)", id="matcher-error-cause-on-warning"),
    pytest.param(lesson(run("{kind: backward, retain_graph: maybe}")), 10,
                 "event matcher: field 'retain_graph': expected true or false", id="matcher-value-wrong-type"),
    # predict and quiz steps
    pytest.param(lesson("""
                     - predict:
                         question: {en: "What happens?", zh: 会发生什么？}
                         code: y.backward()
                 """), 7, "predict step: missing field 'choices'", id="predict-missing-choices"),
    pytest.param(lesson(quiz(RIGHT)), 9, "field 'choices': expected a list of 2 to 4 choices", id="quiz-one-choice"),
    pytest.param(lesson(quiz(RIGHT, WRONG, WRONG, WRONG, WRONG)), 9,
                 "field 'choices': expected a list of 2 to 4 choices", id="quiz-five-choices"),
    pytest.param(lesson(quiz(WRONG, WRONG)), 9, "field 'choices': exactly one choice must have 'correct: true'",
                 id="quiz-no-correct-choice"),
    pytest.param(lesson(quiz(RIGHT, WRONG, RIGHT)), 9,
                 "field 'choices': exactly one choice must have 'correct: true'", id="quiz-two-correct-choices"),
    pytest.param(lesson(quiz(RIGHT, "{text: {en: A number, zh: 一个数}}")), 11, "choice: missing field 'explain'",
                 id="choice-missing-explain"),
    pytest.param(lesson(quiz(RIGHT, "A number")), 11, "choice: expected a mapping", id="choice-a-string"),
    pytest.param(lesson(quiz(RIGHT.replace("true", '"yes"'), WRONG)), 10, "field 'correct': expected true or false",
                 id="choice-correct-a-string"),
    pytest.param(lesson(quiz(RIGHT, WRONG.replace("}}", "}, hint: {en: Think., zh: 想想。}}"))), 11,
                 "choice: unknown field 'hint' (allowed: text, explain, correct)", id="choice-unknown-field"),
    # task steps
    pytest.param(lesson("""
                     - task:
                         prompt: {en: Make y., zh: 造出 y。}
                         solution: y = x * 2
                 """), 7, "task step: missing field 'check'", id="task-without-check"),
    pytest.param(lesson("""
                     - task:
                         prompt: {en: Make y., zh: 造出 y。}
                         solution: y = x * 2
                         check: []
                 """), 10, "field 'check': expected a non-empty list of checks", id="task-empty-check-list"),
    pytest.param(lesson("""
                     - task:
                         prompt: {en: Make y., zh: 造出 y。}
                         solution: y = x * 2
                         check: {no_error: true}
                 """), 10, "field 'check': expected a non-empty list of checks", id="task-check-not-a-list"),
    pytest.param(lesson(task("no_error: true") + """
    hints:
      - {en: One., zh: 一。}
      - {en: Two., zh: 二。}
      - {en: Three., zh: 三。}
      - {en: Four., zh: 四。}
"""), 12, "field 'hints': expected a list of at most 3 hints", id="task-four-hints"),
    pytest.param(lesson(task("no_error: true") + "\n    hints: [Use a multiplication.]"), 12,
                 "field 'hint': give the text per language (en, zh)", id="task-hint-plain-string"),
    pytest.param(lesson("""
                     - task:
                         prompt: {en: Make y., zh: 造出 y。}
                         solution: |
                           y = x *
                         check:
                           - no_error: true
                 """), 10, "field 'solution': code does not parse: invalid syntax", id="task-solution-does-not-parse"),
    # checks
    pytest.param(lesson(task("{no_error: true, expect: y is not None}")), 11,
                 "check: expected a mapping with exactly one of event, no_event, expect, tensor, no_error",
                 id="check-two-kinds"),
    pytest.param(lesson(task("no_error")), 11,
                 "check: expected a mapping with exactly one of event, no_event, expect, tensor, no_error",
                 id="check-a-string"),
    pytest.param(lesson(task("output: '4.0'")), 11, "unknown check 'output' (known: event, no_event, expect, tensor, no_error)",
                 id="unknown-check-kind"),
    pytest.param(lesson(task("event: {kind: backward, root: y, graph: freed}")), 11,
                 "event matcher: 'backward' events have no field 'graph'", id="check-event-field-kind-lacks"),
    pytest.param(lesson(task("expect: y = 1")), 11, "field 'expect': code does not parse: invalid syntax...",
                 id="expect-a-statement"),
    pytest.param(lesson(task("expect: true")), 11, "field 'expect': expected Python code as text",
                 id="expect-a-yaml-bool"),
    pytest.param(lesson(task("tensor: {leaf: true}")), 11, "tensor check: missing field 'name'",
                 id="tensor-without-name"),
    pytest.param(lesson(task("tensor: {name: y.grad}")), 11, "tensor check: 'name' must be a Python name",
                 id="tensor-name-not-a-name"),
    pytest.param(lesson(task("tensor: {name: y, is_leaf: false}")), 11,
                 "tensor check: unknown field 'is_leaf' (allowed: name, leaf, requires_grad, grad, retains_grad, "
                 "grad_fn)", id="tensor-unknown-property"),
    pytest.param(lesson(task("tensor: {name: y, leaf: maybe}")), 11, "field 'leaf': expected true or false",
                 id="tensor-leaf-maybe"),
    pytest.param(lesson(task("tensor: {name: x, grad: twos}")), 11,
                 "tensor check: 'grad' must be null, a number or a list of numbers", id="tensor-grad-not-numbers"),
    pytest.param(lesson(task("no_error: false")), 11, "check 'no_error': the only value is true", id="no-error-false"),
]


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "lesson.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, line, message", CASES)
def test_malformed_lesson_names_file_line_and_mistake(tmp_path: Path, text: str | bytes, line: int | None,
                                                      message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(LessonError) as info:
        load_lesson(str(path))
    error = info.value
    assert (error.path, error.line) == (str(path), line), str(error)
    if message.endswith("..."):
        assert error.message.startswith(message[:-3]), str(error)
    else:
        assert error.message == message, str(error)
    where = str(path) if line is None else f"{path}:{line}"
    assert str(error) == f"{where}: {error.message}"
    assert "\n" not in str(error)


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 35
    assert len({case.id for case in CASES}) == len(CASES)


def test_malformed_lessons_raise_nothing_but_lesson_error(tmp_path: Path) -> None:
    """Whatever is wrong with a file, its author gets a LessonError, never a traceback."""
    crashes: dict[str, str] = {}
    for case in CASES:
        text = case.values[0]
        path = _write(tmp_path, text)  # type: ignore[arg-type]
        try:
            load_lesson(str(path))
        except LessonError:
            pass
        except Exception as exc:  # noqa: BLE001 - this is what the test looks for
            crashes[case.id] = f"{type(exc).__name__}: {str(exc)[:120]}"
    assert crashes == {}



def test_libyaml_and_pyyaml_read_every_course_file_the_same(monkeypatch):
    # gradtutor reads with libyaml's parser when PyYAML has it: the data and
    # every field's line must be what PyYAML's own parser gives.
    import glob
    import yaml
    from gradtutor import yamlfile

    if getattr(yaml, "CSafeLoader", None) is None:
        pytest.skip("this PyYAML was built without libyaml: there is one parser only")
    root = Path(__file__).parent.parent / "lessons"
    files = sorted(glob.glob(str(root / "**" / "*.yaml"), recursive=True))
    assert len(files) >= 10
    for path in files:
        fast = yamlfile.load_yaml(path)
        monkeypatch.setattr(yamlfile, "_FAST", None)
        slow = yamlfile.load_yaml(path)
        monkeypatch.undo()
        assert fast[0] == slow[0] and fast[1].keys == slow[1].keys and fast[1].values == slow[1].values, path
