"""Reads YAML data files safely, remembering the line of every field.

PyYAML's safe loader (libyaml's when available) builds only plain data
(``!!python/object`` tags are refused); each file is parsed once. Alongside the data this returns where each mapping key stands and
where each scalar value starts (and whether it is a ``|``/``>`` block), so
validation errors can name the exact line, even inside a block of code.
A key given twice is an error here, not a silently lost value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from gradtutor.errors import DataFileError

Path = tuple[Any, ...]

# libyaml's parser when PyYAML was built with it (about twice as fast); a
# file it refuses is read again by PyYAML's own, whose errors name the
# mistake and its line better. Both are safe: plain data only.
_FAST: Any = getattr(yaml, "CSafeLoader", None)


@dataclass
class Lines:
    """``keys[path]``: the line of the key at ``path``; ``values[path]``: (line, style)
    of a scalar value there. Lines count from 1."""

    keys: dict[Path, int] = field(default_factory=dict)
    values: dict[Path, tuple[int, str | None]] = field(default_factory=dict)

    def __contains__(self, path: Path) -> bool:
        return path in self.keys

    def __getitem__(self, path: Path) -> int:
        return self.keys[path]

    def get(self, path: Path, default: int | None = None) -> int | None:
        return self.keys.get(path, default)

    def value_start(self, path: Path) -> tuple[int, bool] | None:
        """Where the text of a scalar value begins, and whether it is a block scalar."""
        found = self.values.get(path)
        if found is None:
            return None
        line, style = found
        block = style in ("|", ">")
        return (line + 1 if block else line), block


def load_yaml(path: str, text: str | None = None) -> tuple[Any, Lines]:
    """Return ``(data, lines)``. Raises DataFileError for unreadable files, YAML
    syntax errors, unsafe tags, duplicate keys and runaway nesting."""
    if text is None:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataFileError(path, None, f"cannot read: {exc}") from None
    last_line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    if _FAST is not None:
        try:
            return _parse(_FAST, text, path)
        except DataFileError:
            raise  # a duplicate field: found the same way by both parsers
        except Exception:  # noqa: BLE001 - libyaml's words for a mistake: ask PyYAML's, which name it better
            pass
    try:
        return _parse(yaml.SafeLoader, text, path)
    except yaml.MarkedYAMLError as exc:
        raise DataFileError(path, _error_line(exc, last_line), f"YAML error: {_error_text(exc)}") from None
    except yaml.YAMLError as exc:
        raise DataFileError(path, None, f"YAML error: {exc}") from None
    except RecursionError:
        raise DataFileError(path, None, "YAML error: nested too deep, or an alias that contains itself") from None


def _parse(loader_class: Any, text: str, path: str) -> tuple[Any, Lines]:
    """Parsed once: the nodes give the lines, then the data is built from them."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        lines = Lines()
        if node is not None:
            _collect(node, (), lines, path, set())
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, lines


def _error_line(exc: yaml.MarkedYAMLError, last_line: int) -> int | None:
    problem, context = exc.problem_mark, exc.context_mark
    # An unclosed bracket or quote is noticed lines later, where the parser
    # gives up; the mistake is where it was opened (the context mark).
    use = problem
    opened = any(word in (exc.context or "") for word in ("flow", "quoted"))
    if context is not None and opened and (problem is None or context.line < problem.line):
        use = context
    if use is None:
        return None
    return min(use.line + 1, last_line)


def _error_text(exc: yaml.MarkedYAMLError) -> str:
    problem = exc.problem or str(exc)
    if exc.context and exc.context.startswith("expected"):
        return f"{exc.context}, {problem}"  # "expected a single document..., but found another"
    return problem


def _collect(node: yaml.Node, path: Path, lines: Lines, filename: str, seen: set[int]) -> None:
    if id(node) in seen:  # an alias: walked once, so "billion laughs" stays small
        return
    seen.add(id(node))
    lines.keys.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        keys: set[Any] = set()
        for key, value in node.value:
            if key.value in keys:
                raise DataFileError(filename, key.start_mark.line + 1, f"duplicate field '{key.value}'")
            keys.add(key.value)
            sub = path + (key.value,)
            lines.keys[sub] = key.start_mark.line + 1
            _collect(value, sub, lines, filename, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _collect(item, path + (i,), lines, filename, seen)
    elif isinstance(node, yaml.ScalarNode):
        lines.values[path] = (node.start_mark.line + 1, node.style or None)  # libyaml says "" for plain


def line_of(lines: Lines, path: Path) -> int | None:
    """The line of ``path``, or of its nearest enclosing key."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())
