"""Reads YAML data files safely, remembering the line of every mapping key.

PyYAML's SafeLoader builds only plain data (``!!python/object`` tags are
refused). The line map lets validation errors name the exact line of the
field that is wrong.
"""

from __future__ import annotations

from typing import Any

import yaml

from gradtutor.errors import DataFileError

Path = tuple[Any, ...]


def load_yaml(path: str, text: str | None = None) -> tuple[Any, dict[Path, int]]:
    """Return ``(data, lines)``; ``lines[("a", 0, "b")]`` is the 1-based line of that key.

    Raises DataFileError for unreadable files, YAML syntax errors and unsafe tags.
    """
    if text is None:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataFileError(path, None, f"cannot read: {exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.load(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or str(exc)
        raise DataFileError(path, line, f"YAML error: {problem}") from None
    except yaml.YAMLError as exc:
        raise DataFileError(path, None, f"YAML error: {exc}") from None
    lines: dict[Path, int] = {}
    if node is not None:
        _collect(node, (), lines)
    return data, lines


def _collect(node: yaml.Node, path: Path, lines: dict[Path, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            sub = path + (key.value,)
            lines[sub] = key.start_mark.line + 1
            _collect(value, sub, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _collect(item, path + (i,), lines)


def line_of(lines: dict[Path, int], path: Path) -> int | None:
    """The line of ``path``, or of its nearest enclosing key."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())
