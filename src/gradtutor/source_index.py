"""Maps line numbers of a source file to the statements users think in.

Python reports "line" events per physical line, and a statement that spans
several lines may report several of them. The stepper asks this index which
statement a line belongs to, so that one statement is one step, and where a
statement's label comes from (``z = torch.matmul(x, w)+b`` -> ``x @ w + b``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from gradtutor.labels import shorten_expression


@dataclass(frozen=True)
class StatementInfo:
    start: int
    end: int
    text: str  # the statement (a compound statement's header only)
    label: str  # what a drawing shows for the value it computes
    targets: tuple[str, ...]  # names it assigns
    reads: tuple[str, ...]  # names it reads


class SourceIndex:
    """Statements of one source text, found by any of their line numbers."""

    def __init__(self, source: str, tree: ast.Module | None = None) -> None:
        self.lines = source.splitlines()
        self._by_line: dict[int, StatementInfo] = {}
        if tree is None:
            try:
                tree = ast.parse(source)
            except SyntaxError:
                return
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                self._add(node, source)

    def _add(self, node: ast.stmt, source: str) -> None:
        start = node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            # A compound statement's own lines are its header: up to its body.
            header_end = max(start, body[0].lineno - 1)
            decorators = getattr(node, "decorator_list", [])
            if decorators:
                start = min(d.lineno for d in decorators)
            end = header_end
            while end > start and not self._line(end).strip():
                end -= 1
            text = "\n".join(self._line(i) for i in range(start, end + 1)).strip()
            info = StatementInfo(start, end, _strip_comment(text), _label(node, source, text), _targets(node), _reads(node, header_only=True))
        else:
            end = node.end_lineno or start
            text = ast.get_source_segment(source, node) or self._line(start).strip()
            info = StatementInfo(start, end, text, _label(node, source, text), _targets(node), _reads(node))
        for line in range(info.start, info.end + 1):
            # Inner statements win over the compound statements that hold them.
            existing = self._by_line.get(line)
            if existing is None or existing.start <= info.start:
                self._by_line[line] = info

    def _line(self, lineno: int) -> str:
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""

    def statement(self, line: int) -> StatementInfo:
        info = self._by_line.get(line)
        if info is None:
            text = self._line(line).strip()
            info = StatementInfo(line, line, text, shorten_expression(text), (), ())
        return info


def _strip_comment(text: str) -> str:
    # Good enough for headers: a "#" inside a string in a header is rare.
    return text.split("  #")[0].rstrip()


def _value_node(node: ast.stmt) -> ast.expr | None:
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)):
        return node.value
    return None


def _label(node: ast.stmt, source: str, text: str) -> str:
    if isinstance(node, ast.AugAssign):
        target = ast.unparse(node.target)
        op = _BINOPS.get(type(node.op), "?")
        operand = ast.get_source_segment(source, node.value) or ast.unparse(node.value)
        return shorten_expression(f"{target} {op} ({operand})" if " " in operand.strip() else f"{target} {op} {operand}")
    value = _value_node(node)
    if value is not None:
        segment = ast.get_source_segment(source, value) or ast.unparse(value)
        return shorten_expression(segment)
    return shorten_expression(text.rstrip(":"))


def _targets(node: ast.stmt) -> tuple[str, ...]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    names: list[str] = []
    for t in targets:
        for sub in ast.walk(t):
            if isinstance(sub, ast.Name) and sub.id not in names:
                names.append(sub.id)
    return tuple(names)


def _reads(node: ast.stmt, header_only: bool = False) -> tuple[str, ...]:
    if header_only:
        parts: list[ast.AST] = [
            getattr(node, f) for f in ("test", "iter", "items") if getattr(node, f, None) is not None
        ]
    else:
        parts = [node]
    names: list[str] = []
    for part in parts:
        items = part if isinstance(part, list) else [part]
        for item in items:
            for sub in ast.walk(item):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in names:
                    names.append(sub.id)
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        if node.target.id not in names:
            names.insert(0, node.target.id)
    return tuple(names)


_BINOPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.MatMult: "@",
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}
