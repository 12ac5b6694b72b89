"""The lesson file format: a typed model and the validator that builds it.

A lesson is one YAML file (read with a safe loader). ``load_lesson`` returns
a frozen :class:`Lesson` or raises :class:`LessonError` naming the file, the
line and the field of the first mistake. The format, field by field:

    id: kebab-case                 title/summary: {en: ..., zh: ...}
    level: beginner | intermediate | advanced
    concepts: [kebab-case, ...]
    steps: a list, each one mapping with exactly one of
      text:    {en, zh}
      run:     {code, expect_events?: [event matcher], note?: {en, zh}}
      predict: {question, code, choices, expect_events?}
      quiz:    {question, code?, choices} choices: 2-4 of {text, correct?, explain}
                                         (code: shown with the question, not run)
      task:    {prompt, hints: 1-3 x {en, zh, check?}, solution: code, check: [check]}
               (a hint's check: the number of the check it helps with, from 1;
               once that check passes, the hint is not given)
    check: exactly one of
      event:    an event matcher: {kind: ..., field: value, ...}
      no_event: an event matcher that must match no event of the task
      expect:   a Python expression, true in the learner's namespace
      tensor:   {name, leaf?, requires_grad?, grad?, retains_grad?, grad_fn?}
      no_error: true

Every text is given in every language of ``LANGUAGES``. Checks are data:
an ``expect`` expression is parsed here and evaluated only when the lesson
runs, in the learner's own namespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from gradtutor.errors import LessonError
from gradtutor.explanations import LANGUAGES
from gradtutor.model import ERROR_CAUSES, EVENT_KINDS, WARNING_CAUSES
from gradtutor.yamlfile import Lines, Path, line_of, load_yaml

LEVELS = ("beginner", "intermediate", "advanced")
STEP_KINDS = ("text", "run", "predict", "quiz", "task")
CHECK_KINDS = ("event", "no_event", "expect", "tensor", "no_error")
TENSOR_PROPERTIES = ("leaf", "requires_grad", "grad", "retains_grad", "grad_fn")
_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# The fields an event matcher may name, per event kind (see gradtutor.events).
EVENT_FIELDS: Mapping[str, tuple[str, ...]] = {
    "name-bound": ("name",),
    "name-rebound": ("name", "old_in_graph"),
    "backward": ("root", "retain_graph", "create_graph", "freed", "api"),
    "grad-accumulated": ("name", "parameters"),
    "grad-before-error": ("name", "parameters", "added"),
    "detached": ("name", "how", "source"),
    "retain-grad": ("name",),
    "inplace": ("name", "op", "version", "parameters", "how", "through"),
    "grad-reset": ("name", "how", "op", "parameters"),
    "graph-growth": ("name", "nodes"),
    "warning": ("cause", "name"),
    "error": ("cause", "exception", "name", "node_op", "node_line", "freed_by_line", "modified_at_line", "modified_op"),
}
_CAUSES = {"error": ERROR_CAUSES, "warning": WARNING_CAUSES}
# (a lesson's code is stepped on every call: no function of it is left unfollowed)
_MATCHED_KINDS = tuple(kind for kind in EVENT_KINDS if kind != "function-unfollowed")
_BOOL_FIELDS = {"old_in_graph", "retain_graph", "create_graph", "added"}
_INT_FIELDS = {"freed", "nodes", "version", "parameters", "node_line", "freed_by_line", "modified_at_line"}

Text = Mapping[str, str]  # language -> text


@dataclass(frozen=True)
class Choice:
    text: Text
    explain: Text
    correct: bool


@dataclass(frozen=True)
class Check:
    kind: str  # one of CHECK_KINDS
    value: Any  # the matcher mapping, the expression, the tensor properties, or True
    line: int | None = None


@dataclass(frozen=True)
class Step:
    kind: str  # one of STEP_KINDS
    line: int | None
    text: Text | None = None  # text steps; a task's prompt; a quiz's or predict's question
    code: str | None = None  # run and predict code; a task's solution
    code_line: int | None = None  # the file line the code starts on
    note: Text | None = None
    choices: tuple[Choice, ...] = ()
    hints: tuple[Text, ...] = ()
    hint_checks: tuple[int | None, ...] = ()  # per hint: the index of the check it is about
    checks: tuple[Check, ...] = ()
    expect_events: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Lesson:
    id: str
    title: Text
    summary: Text
    level: str
    concepts: tuple[str, ...]
    steps: tuple[Step, ...]
    path: str

    def text(self, field: Text | None, language: str) -> str:
        if not field:
            return ""
        return field.get(language) or field.get("en") or ""


class _Reader:
    """Validates one parsed file; every error names the line of the field."""

    def __init__(self, path: str, lines: Lines) -> None:
        self.path = path
        self.lines = lines

    def fail(self, where: Path, message: str) -> LessonError:
        return LessonError(self.path, line_of(self.lines, where), message)

    def mapping(self, value: Any, where: Path, what: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"{what}: expected a mapping")
        for key in value:
            if key not in allowed:
                raise self.fail(where + (key,), f"{what}: unknown field '{key}' (allowed: {', '.join(allowed)})")
        for key in required:
            if key not in value:
                raise self.fail(where, f"{what}: missing field '{key}'")
        return value

    def text(self, value: Any, where: Path, what: str) -> Text:
        if isinstance(value, str):
            raise self.fail(where, f"field '{what}': give the text per language ({', '.join(LANGUAGES)})")
        if not isinstance(value, dict):
            raise self.fail(where, f"field '{what}': expected a mapping of language to text")
        for lang in value:
            if lang not in LANGUAGES:
                raise self.fail(where + (lang,), f"field '{what}': unknown language '{lang}'")
        for lang in LANGUAGES:
            text = value.get(lang)
            if lang in value and text is not None and not isinstance(text, str):
                raise self.fail(
                    where + (lang,),
                    f"field '{what}': the '{lang}' text is not text (YAML reads an unquoted "
                    f"{text!r} as {type(text).__name__}: put it in quotes)",
                )
            if not isinstance(text, str) or not text.strip():
                raise self.fail(where, f"field '{what}': missing '{lang}' text")
        return {lang: value[lang].strip() for lang in LANGUAGES}

    def code(self, value: Any, where: Path, what: str, mode: str = "exec") -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"field '{what}': expected Python code as text")
        try:
            # Compiled, not only parsed: some mistakes ('return' outside a
            # function) and depth limits are found by the compiler, and
            # where each limit lies differs between Python versions.
            compile(value, "<lesson>", mode, dont_inherit=True)
        except SyntaxError as exc:
            raise LessonError(self.path, self._code_line(where, exc.lineno), f"field '{what}': code does not parse: {exc.msg}") from None
        except (ValueError, UnicodeError, RecursionError, MemoryError) as exc:
            reason = "nested too deeply" if isinstance(exc, (RecursionError, MemoryError)) else str(exc)
            raise LessonError(self.path, self._code_line(where, None), f"field '{what}': code does not parse: {reason}") from None
        return value

    def _code_line(self, where: Path, lineno: int | None) -> int | None:
        """The file line of line ``lineno`` of the code at ``where``: exact inside a
        ``|`` block; the start of the value for a quoted or plain one."""
        start = self.lines.value_start(where)
        if start is None:
            return line_of(self.lines, where)
        first, block = start
        return first + (lineno or 1) - 1 if block else first

    def boolean(self, value: Any, where: Path, what: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"field '{what}': expected true or false")
        return value

    def matcher(self, value: Any, where: Path) -> dict[str, Any]:
        if not isinstance(value, dict) or "kind" not in value:
            raise self.fail(where, "event matcher: expected a mapping with a 'kind'")
        kind = value["kind"]
        if kind not in _MATCHED_KINDS:
            raise self.fail(
                where + ("kind",), f"event matcher: unknown event kind '{kind}' (known: {', '.join(_MATCHED_KINDS)})"
            )
        for key in value:
            if key != "kind" and key not in EVENT_FIELDS[kind]:
                raise self.fail(where + (key,), f"event matcher: '{kind}' events have no field '{key}'")
        cause = value.get("cause")
        if cause is not None and kind in _CAUSES and cause not in _CAUSES[kind]:
            raise self.fail(
                where + ("cause",), f"event matcher: unknown {kind} cause '{cause}' (known: {', '.join(_CAUSES[kind])})"
            )
        for key, field_value in value.items():
            if key in _BOOL_FIELDS and not isinstance(field_value, bool):
                raise self.fail(where + (key,), f"event matcher: field '{key}': expected true or false")
            if key in _INT_FIELDS and (isinstance(field_value, bool) or not isinstance(field_value, int)):
                raise self.fail(where + (key,), f"event matcher: field '{key}': expected a whole number")
            if key not in _BOOL_FIELDS | _INT_FIELDS | {"kind"} and not isinstance(field_value, str):
                raise self.fail(where + (key,), f"event matcher: field '{key}': expected text")
        return dict(value)

    def matchers(self, value: Any, where: Path) -> tuple[dict[str, Any], ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(where, "field 'expect_events': expected a list of event matchers")
        return tuple(self.matcher(item, where + (i,)) for i, item in enumerate(value))

    def choices(self, value: Any, where: Path) -> tuple[Choice, ...]:
        if not isinstance(value, list) or not 2 <= len(value) <= 4:
            raise self.fail(where, "field 'choices': expected a list of 2 to 4 choices")
        out = []
        for i, item in enumerate(value):
            at = where + (i,)
            item = self.mapping(item, at, "choice", ("text", "explain", "correct"), ("text", "explain"))
            correct = self.boolean(item.get("correct", False), at + ("correct",), "correct")
            out.append(Choice(self.text(item["text"], at + ("text",), "text"), self.text(item["explain"], at + ("explain",), "explain"), correct))
        if sum(c.correct for c in out) != 1:
            raise self.fail(where, "field 'choices': exactly one choice must have 'correct: true'")
        return tuple(out)

    def check(self, value: Any, where: Path) -> Check:
        if not isinstance(value, dict) or len(value) != 1:
            raise self.fail(where, f"check: expected a mapping with exactly one of {', '.join(CHECK_KINDS)}")
        (kind, body), = value.items()
        line = line_of(self.lines, where + (kind,))
        if kind in ("event", "no_event"):
            return Check(kind, self.matcher(body, where + (kind,)), line)
        if kind == "expect":
            return Check(kind, self.code(body, where + (kind,), "expect", mode="eval").strip(), line)
        if kind == "tensor":
            props = self.mapping(body, where + (kind,), "tensor check", ("name",) + TENSOR_PROPERTIES, ("name",))
            if not isinstance(props["name"], str) or not props["name"].isidentifier():
                raise self.fail(where + (kind, "name"), "tensor check: 'name' must be a Python name")
            for prop in ("leaf", "requires_grad", "retains_grad", "grad_fn"):
                if prop in props:
                    self.boolean(props[prop], where + (kind, prop), prop)
            if "grad" in props and not _is_values(props["grad"], allow_none=True):
                raise self.fail(where + (kind, "grad"), "tensor check: 'grad' must be null, a number or a list of numbers")
            return Check(kind, dict(props), line)
        if kind == "no_error":
            if body is not True:
                raise self.fail(where + (kind,), "check 'no_error': the only value is true")
            return Check(kind, True, line)
        raise self.fail(where + (kind,), f"unknown check '{kind}' (known: {', '.join(CHECK_KINDS)})")

    def step(self, value: Any, where: Path) -> Step:
        if not isinstance(value, dict) or len(value) != 1:
            raise self.fail(where, f"step: expected a mapping with exactly one step kind ({', '.join(STEP_KINDS)})")
        (kind, body), = value.items()
        at = where + (kind,)
        line = line_of(self.lines, at)
        if kind == "text":
            return Step(kind, line, text=self.text(body, at, "text"))
        if kind == "run":
            body = self.mapping(body, at, "run step", ("code", "expect_events", "note"), ("code",))
            note = self.text(body["note"], at + ("note",), "note") if "note" in body else None
            return Step(kind, line, code=self.code(body["code"], at + ("code",), "code"),
                        code_line=line_of(self.lines, at + ("code",)), note=note,
                        expect_events=self.matchers(body.get("expect_events"), at + ("expect_events",)))
        if kind == "predict":
            body = self.mapping(body, at, "predict step", ("question", "code", "choices", "expect_events"), ("question", "code", "choices"))
            return Step(kind, line, text=self.text(body["question"], at + ("question",), "question"),
                        code=self.code(body["code"], at + ("code",), "code"), code_line=line_of(self.lines, at + ("code",)),
                        choices=self.choices(body["choices"], at + ("choices",)),
                        expect_events=self.matchers(body.get("expect_events"), at + ("expect_events",)))
        if kind == "quiz":
            body = self.mapping(body, at, "quiz step", ("question", "code", "choices"), ("question", "choices"))
            code = self.code(body["code"], at + ("code",), "code") if "code" in body else None
            return Step(kind, line, text=self.text(body["question"], at + ("question",), "question"), code=code,
                        code_line=line_of(self.lines, at + ("code",)) if code else None,
                        choices=self.choices(body["choices"], at + ("choices",)))
        if kind == "task":
            body = self.mapping(body, at, "task step", ("prompt", "hints", "solution", "check"), ("prompt", "solution", "check"))
            hints = body.get("hints", [])
            if not isinstance(hints, list) or len(hints) > 3:
                raise self.fail(at + ("hints",), "field 'hints': expected a list of at most 3 hints")
            checks = body["check"]
            if not isinstance(checks, list) or not checks:
                raise self.fail(at + ("check",), "field 'check': expected a non-empty list of checks")
            about: list[int | None] = []
            for i, hint in enumerate(hints):
                number = hint.get("check") if isinstance(hint, dict) else None
                if number is not None and (type(number) is not int or not 1 <= number <= len(checks)):
                    raise self.fail(at + ("hints", i, "check"),
                                    f"hint: 'check' is the number of one of the task's {len(checks)} checks, from 1")
                about.append(None if number is None else number - 1)
            return Step(kind, line, text=self.text(body["prompt"], at + ("prompt",), "prompt"),
                        code=self.code(body["solution"], at + ("solution",), "solution"),
                        code_line=line_of(self.lines, at + ("solution",)),
                        hints=tuple(self.text({k: v for k, v in h.items() if k != "check"} if isinstance(h, dict) else h,
                                              at + ("hints", i), "hint") for i, h in enumerate(hints)),
                        hint_checks=tuple(about),
                        checks=tuple(self.check(c, at + ("check", i)) for i, c in enumerate(checks)))
        raise self.fail(at, f"unknown step kind '{kind}' (known: {', '.join(STEP_KINDS)})")

    def lesson(self, data: Any) -> Lesson:
        top = self.mapping(data, (), "lesson", ("id", "title", "summary", "level", "concepts", "steps"),
                           ("id", "title", "summary", "level", "steps"))
        # Every mistake of the file is found in one reading (the first of each
        # field or step): the error raised carries them all in ``all``.
        errors: list[LessonError] = []

        def attempt(read: Any) -> Any:
            try:
                return read()
            except LessonError as exc:
                errors.append(exc)
                return None

        lesson_id = top["id"]
        if not isinstance(lesson_id, str) or not _KEBAB.match(lesson_id):
            errors.append(self.fail(("id",), "field 'id': expected kebab-case, like backward-frees"))
        if top["level"] not in LEVELS:
            errors.append(self.fail(("level",), f"field 'level': expected one of {', '.join(LEVELS)}"))
        concepts = top.get("concepts", [])
        if not isinstance(concepts, list) or not all(isinstance(c, str) and _KEBAB.match(c) for c in concepts):
            errors.append(self.fail(("concepts",), "field 'concepts': expected a list of kebab-case tags"))
        title = attempt(lambda: self.text(top["title"], ("title",), "title"))
        summary = attempt(lambda: self.text(top["summary"], ("summary",), "summary"))
        steps = top["steps"]
        read_steps: list[Step] = []
        if not isinstance(steps, list) or not steps:
            errors.append(self.fail(("steps",), "field 'steps': expected a non-empty list of steps"))
        else:
            read_steps = [attempt(lambda s=s, i=i: self.step(s, ("steps", i))) for i, s in enumerate(steps)]
        if errors:
            first = errors[0]
            first.all = tuple(errors)
            raise first
        return Lesson(
            id=lesson_id,
            title=title,
            summary=summary,
            level=top["level"],
            concepts=tuple(concepts),
            steps=tuple(read_steps),
            path=self.path,
        )


def _is_values(value: Any, allow_none: bool = False) -> bool:
    if value is None:
        return allow_none
    if isinstance(value, list):
        return bool(value) and all(_is_values(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def load_lesson(path: str, text: str | None = None) -> Lesson:
    """Read and validate one lesson file. Raises LessonError (file, line, field)."""
    try:
        data, lines = load_yaml(path, text)
    except LessonError:
        raise
    except Exception as exc:  # DataFileError from the YAML reader
        line = getattr(exc, "line", None)
        raise LessonError(path, line, getattr(exc, "message", str(exc))) from None
    if data is None:
        raise LessonError(path, 1, "the file is empty")
    return _Reader(path, lines).lesson(data)
