"""Explanations of events, read from ``lessons/explanations/<lang>.yaml``.

An event is explained by the entry for its most specific key (see
:func:`explanation_key`), filled in from the event's fields. A field the
event lacks makes the entry use its ``fallback`` text, so a learner never
sees a raw ``{placeholder}``.
"""

from __future__ import annotations

import os
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping

from gradtutor.errors import DataFileError
from gradtutor.plurals import CountingFormatter
from gradtutor.model import ERROR_CAUSES, EVENT_KINDS, WARNING_CAUSES
from gradtutor.model import Event
from gradtutor.render.words import shown_name
from gradtutor.typeset import tidy
from gradtutor.yamlfile import line_of, load_yaml

LANGUAGES = ("en", "zh")
GRAD_RESETS = ("zeroed", "none", "set", "changed")  # what happened to a .grad
# Where a tensor a node saved was changed in place, when one statement made
# the node and changed it: that statement, or the backward's own statement;
# or a later run of that statement (in a loop).
INPLACE_CHANGED_IN = ("same-statement", "backward-statement", "later-run")
REQUIRED_FIELDS = ("title", "text", "more")
OPTIONAL_FIELDS = ("fallback", "title_fallback")

#: Every key an event can map to; each language must explain all of them.
EXPLANATION_KEYS: tuple[str, ...] = (
    *(k for k in EVENT_KINDS if k not in ("error", "warning", "grad-reset", "requires-grad")),
    "name-rebound/old-in-graph",
    "name-rebound/old-result-in-graph",
    "name-rebound/module-old-in-graph",
    "name-rebound/module",
    "backward/retain-graph",
    "backward/nothing-saved",
    "grad-accumulated/parameters",
    "grad-accumulated/unnamed",
    "grad-before-error/added",
    "grad-before-error/parameters",
    "grad-before-error/parameters-added",
    "backward/grad",
    "backward/grad-retain-graph",
    "backward/grad-create-graph",
    "detached/no_grad",
    "detached/data",
    "detached/inline",
    "requires-grad/on",
    "requires-grad/off",
    "requires-grad/parameters-on",
    "requires-grad/parameters-off",
    "inplace/through",
    "inplace/parameters",
    "inplace/parameters-other",
    "inplace/buffers",
    "inplace/buffers-other",
    "inplace/data",
    "inplace/parameters-data",
    *(f"grad-reset/{scope}{how}" for scope in ("", "parameters-") for how in GRAD_RESETS),
    *(f"error/{c}" for c in ERROR_CAUSES),
    "error/second-backward-again",
    "error/leaf-inplace-view",
    *(f"error/inplace-modified-{where}" for where in INPLACE_CHANGED_IN),
    *(f"warning/{c}" for c in WARNING_CAUSES),
)


def lessons_dir() -> str:
    """The bundled lessons: inside the package when installed as a wheel,
    else the ``lessons/`` folder of the source checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (
        os.path.join(here, "lessons"),
        os.path.join(os.path.dirname(os.path.dirname(here)), "lessons"),
    ):
        if os.path.isdir(candidate):
            return candidate
    raise DataFileError(os.path.join(here, "lessons"), None, "bundled lessons folder is missing")


def explanation_key(event: Event) -> str:
    """The most specific explanation key for ``event``."""
    if event.kind == "error" and event.get("cause") == "second-backward" and event.get("again"):
        return "error/second-backward-again"
    if event.kind == "error" and event.get("cause") == "leaf-inplace" and event.get("view"):
        return "error/leaf-inplace-view"
    if event.kind == "error" and event.get("cause") == "inplace-modified" and event.get("changed_in") in INPLACE_CHANGED_IN:
        return f"error/inplace-modified-{event.get('changed_in')}"
    if event.kind in ("error", "warning"):
        return f"{event.kind}/{event.get('cause', 'other')}"
    if event.kind == "name-rebound" and event.get("module"):
        return "name-rebound/module-old-in-graph" if event.get("old_in_graph") else "name-rebound/module"
    if event.kind == "name-rebound" and event.get("old_in_graph"):
        # (not a leaf, whose id is "t…", but a node's, "n…": see
        # autograd_graph's LeafTag and NodeTag. What stays in the graph is
        # the node that computed it; the tensor is freed unless an op saved it.)
        old = event.get("old_node")
        return "name-rebound/old-result-in-graph" if isinstance(old, str) and old[:1] == "n" else "name-rebound/old-in-graph"
    if event.kind == "backward" and event.get("api") == "autograd.grad":
        if event.get("create_graph"):
            return "backward/grad-create-graph"
        return "backward/grad-retain-graph" if event.get("retain_graph") else "backward/grad"
    if event.kind == "backward" and event.get("retain_graph"):
        return "backward/retain-graph"
    if event.kind == "backward" and event.get("freed") == 0:
        return "backward/nothing-saved"
    if event.kind == "grad-accumulated" and event.get("parameters"):
        return "grad-accumulated/parameters"
    if event.kind == "grad-accumulated" and event.get("leaves"):
        return "grad-accumulated/unnamed"
    if event.kind == "grad-before-error" and event.get("parameters"):
        return "grad-before-error/parameters-added" if event.get("added") else "grad-before-error/parameters"
    if event.kind == "grad-before-error" and event.get("added"):
        return "grad-before-error/added"
    if event.kind == "inplace" and event.get("how") == "data":
        return "inplace/parameters-data" if event.get("parameters") else "inplace/data"
    if event.kind == "inplace" and event.get("how") in ("buffers", "buffers-other"):
        return f"inplace/{event.get('how')}"
    if event.kind == "inplace" and event.get("parameters"):
        return "inplace/parameters" if event.get("how") == "optimizer" else "inplace/parameters-other"
    if event.kind == "inplace" and event.get("through"):
        return "inplace/through"
    if event.kind == "requires-grad":
        return f"requires-grad/{'parameters-' if event.get('parameters') else ''}{'on' if event.get('on') else 'off'}"
    if event.kind == "grad-reset":
        return f"grad-reset/{'parameters-' if event.get('parameters') else ''}{event.get('how', 'changed')}"
    if event.kind == "detached" and event.get("how") in ("no_grad", "data"):
        return f"detached/{event.get('how')}"
    if event.kind == "detached" and event.get("name") is None:
        return "detached/inline"
    return event.kind


Locate = Callable[[str, int], str]

# The fields that name tensors or modules of the program (``result``: several,
# joined by ", "): a global a local hides, ``global x``, is said in the
# book's language (``shown_name``).
_NAME_FIELDS = ("name", "root", "source", "result", "through")

_LINE_WORDS = {"en": "line {line}", "zh": "第 {line} 行"}

# The tensor a node saved that was changed in place, as torch's error names
# it ("output 0 of Sigmoid"), or a tensor when it names none (a leaf).
_SAVED_WORDS = {
    "en": ("the output of {op}", "output {n} of {op}", "a tensor"),
    "zh": ("`{op}` 的输出", "`{op}` 的输出 {n}", "一个张量"),
}


def _inplace_fields(event: Event, language: str) -> dict[str, Any]:
    """The fields an explanation of a changed saved tensor words: ``saved``
    (what was changed) and ``modified_with`` (the library module that did
    it, else the op)."""
    first, nth, unknown = _SAVED_WORDS.get(language, _SAVED_WORDS["en"])
    op, n = event.get("saved_output_of"), event.get("saved_output_nr")
    saved = unknown if not op else (first if not n else nth).format(op=op, n=n)
    return {"saved": saved, "modified_with": event.get("modified_by") or event.get("modified_op")}


def line_locator(language: str) -> Locate:
    """Places in a script: "line 7" ("第 7 行")."""
    words = _LINE_WORDS.get(language, _LINE_WORDS["en"])
    return lambda file, line: words.format(line=line)


QUOTE_LIMIT = 60  # characters of a statement an explanation quotes


def quoted_statement(source: str) -> str:
    """A statement as an explanation quotes it: on one line, its lines joined
    (``z = (a * 2 + a.exp()).sum()``), cut with "…" past ``QUOTE_LIMIT``."""
    text = " ".join(line.strip() for line in source.strip().splitlines() if line.strip())
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1].rstrip() + "…"


@dataclass(frozen=True)
class Explanation:
    key: str
    title: str
    text: str
    more: str


class _Strict(CountingFormatter):
    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        value = kwargs[key]  # KeyError: the fallback text is used
        if value is None:
            raise KeyError(key)
        return value


_FORMATTER = _Strict()


def _fill(template: str, fields: Mapping[str, Any]) -> str:
    return _FORMATTER.vformat(template, (), fields).strip()


@dataclass(frozen=True)
class ExplanationBook:
    """All explanations of one language."""

    language: str
    entries: Mapping[str, Mapping[str, str]]
    path: str

    def explain(self, event: Event, *, file: str = "", locate: Locate | None = None) -> Explanation:
        """The explanation of ``event``, which happened in ``file``.

        ``locate(file, line)`` words a place ("line 7"; the shell says
        "In [3]"); it fills ``{at}``/``{At}`` and, for each ``X_line`` field,
        ``{X_at}``.
        """
        key = explanation_key(event)
        entry = self.entries.get(key) or self.entries.get(key.split("/")[0])
        if entry is None:
            entry = self.entries["error/other"]
        locate = locate or line_locator(self.language)
        fields: dict[str, Any] = {"line": event.line, **event.data}
        for name in ("retain_graph", "create_graph"):
            fields.pop(name, None)
        for name in _NAME_FIELDS:
            value = fields.get(name)
            if isinstance(value, str):
                fields[name] = ", ".join(shown_name(one, self.language) for one in value.split(", "))
        at = locate(file, event.line)
        fields["at"], fields["At"] = at, at[:1].upper() + at[1:]
        if key.startswith("error/inplace-modified"):
            fields.update(_inplace_fields(event, self.language))
        for name, value in event.data.items():
            if name.endswith("_source") and isinstance(value, str):
                fields[name] = quoted_statement(value)
            if name.endswith("_line") and isinstance(value, int):
                stem = name[: -len("_line")]
                fields[stem if stem.endswith("_at") else f"{stem}_at"] = locate(event.get(f"{stem}_file", file), value)
        return Explanation(
            key=key,
            title=tidy(self._render(entry, "title", fields), self.language),
            text=tidy(self._render(entry, "text", fields), self.language),
            more=tidy(self._render(entry, "more", fields), self.language),
        )

    @staticmethod
    def _render(entry: Mapping[str, str], part: str, fields: Mapping[str, Any]) -> str:
        try:
            return _fill(entry[part], fields)
        except (KeyError, IndexError, ValueError):
            pass
        fallback = {"text": "fallback", "title": "title_fallback"}.get(part, part)
        if fallback in entry:
            try:
                return _fill(entry[fallback], fields)
            except (KeyError, IndexError, ValueError):
                pass
        # Last resort: mark unknown fields rather than show braces.
        safe = {k: v for k, v in fields.items() if v is not None}
        return _FORMATTER.vformat(entry.get(fallback, entry[part]), (), _Defaulting(safe)).strip()


class _Defaulting(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def load_book(path: str) -> ExplanationBook:
    """Load and validate one explanations file. Raises DataFileError naming line and field."""
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise DataFileError(path, 1, "expected a mapping with 'language' and 'explanations'")
    language = data.get("language")
    if language not in LANGUAGES:
        raise DataFileError(
            path, line_of(lines, ("language",)), f"field 'language': expected one of {', '.join(LANGUAGES)}"
        )
    entries = data.get("explanations")
    if not isinstance(entries, dict):
        raise DataFileError(path, line_of(lines, ("explanations",)), "field 'explanations': expected a mapping")
    for key, entry in entries.items():
        where = line_of(lines, ("explanations", key))
        if key not in EXPLANATION_KEYS:
            raise DataFileError(path, where, f"unknown explanation key '{key}'")
        if not isinstance(entry, dict):
            raise DataFileError(path, where, f"explanation '{key}': expected a mapping")
        for field in REQUIRED_FIELDS:
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise DataFileError(path, where, f"explanation '{key}': missing text field '{field}'")
        for field in entry:
            if field not in REQUIRED_FIELDS + OPTIONAL_FIELDS:
                raise DataFileError(
                    path, line_of(lines, ("explanations", key, field)), f"explanation '{key}': unknown field '{field}'"
                )
            try:
                list(string.Formatter().parse(entry[field]))
            except ValueError as exc:
                raise DataFileError(
                    path, line_of(lines, ("explanations", key, field)), f"explanation '{key}', field '{field}': {exc}"
                ) from None
    missing = [k for k in EXPLANATION_KEYS if k not in entries]
    if missing:
        raise DataFileError(path, line_of(lines, ("explanations",)), f"missing explanations: {', '.join(missing)}")
    return ExplanationBook(language, entries, path)


@lru_cache(maxsize=None)
def book_for(language: str) -> ExplanationBook:
    """The bundled explanations for ``language`` (English when it has none)."""
    folder = os.path.join(lessons_dir(), "explanations")
    path = os.path.join(folder, f"{language}.yaml")
    if not os.path.exists(path):
        path = os.path.join(folder, "en.yaml")
    return load_book(path)
