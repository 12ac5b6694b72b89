"""Maps line numbers of a source file to the statements users think in.

Python reports "line" events per physical line, and a statement that spans
several lines may report several of them. The stepper asks this index which
statement a line belongs to, so that one statement is one step, and where a
statement's label comes from (``z = torch.matmul(x, w)+b`` -> ``x @ w + b``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from gradtutor.labels import shorten_expression


@dataclass(frozen=True)
class StatementInfo:
    start: int
    end: int
    text: str  # the statement (a compound statement's header only)
    # What a drawing shows for the value it computes (``label``): a string,
    # or how to make it, made when first asked for (most statements never
    # make a node that is drawn).
    label_of: str | Callable[[], str] = field(compare=False)
    targets: tuple[str, ...]  # names it assigns
    reads: tuple[str, ...]  # names it reads
    # Where its list, set and dict comprehensions are, as (line, column,
    # end line, end column) in the compiler's UTF-8 columns. From Python 3.12
    # they run inside the statement's own frame (PEP 709), so a jump back
    # into one is the comprehension looping, not the statement running again.
    comprehensions: tuple[tuple[int, int, int, int], ...] = ()
    # Simple statements that share this one's line (u = x ** 2; v = u * 3):
    # python steps the line as one, the drawing labels each statement's nodes.
    parts: tuple[StatementInfo, ...] = ()
    # A statement whose value is a tuple of expressions (return out, hidden;
    # a, b = x * 2, y * 3): each element's label, and the name it is
    # assigned to (None for a return), so each tensor is labelled by its own
    # expression, not by the whole tuple.
    elements: tuple[tuple[str, str | None], ...] = ()
    # A with statement's last line: python comes back to its first line to
    # leave the block (to call __exit__), which is not the statement running again.
    with_end: int = 0
    # Names it reads only as arguments of calls (``model(x)``): what it
    # hands over, which a function of the program's may read itself.
    passed: tuple[str, ...] = ()
    # Names it reads and binds (``x = self.conv(x)``): what they named when
    # it began is what it read (see Engine._begin).
    rereads: tuple[str, ...] = field(default=(), init=False, compare=False)

    def __post_init__(self) -> None:
        if self.targets and not self.parts:
            object.__setattr__(self, "rereads", tuple(n for n in self.reads if n in self.targets))

    @property
    def label(self) -> str:
        label = self.label_of
        if not isinstance(label, str):
            label = label()
            object.__setattr__(self, "label_of", label)
        return label

    def in_comprehension(self, line: int, column: int) -> bool:
        return any(
            (line, column) >= (first, col) and (line, column) < (last, end_col)
            for first, col, last, end_col in self.comprehensions
        )


_LINE = re.compile(r".*?(?:\r\n|\n|\r|$)", re.S)


class _Text:
    """A source text that hands out the code of AST nodes. (What
    ``ast.get_source_segment`` does, without splitting the whole text into
    lines again for every node.)"""

    def __init__(self, source: str) -> None:
        self.lines = _LINE.findall(source)

    def segment(self, node: ast.AST) -> str | None:
        try:
            first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            return None
        if end is None or not 0 <= first <= last < len(self.lines):
            return None
        lines = self.lines
        if first == last:
            return lines[first].encode()[start:end].decode()
        head = lines[first].encode()[start:].decode()
        tail = lines[last].encode()[:end].decode()
        return "".join([head, *lines[first + 1 : last], tail])


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
        text = _Text(source)
        blocks: list[list[Any]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                self._add(node, text)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    blocks.append(block)
        for block in blocks:
            self._join_shared_lines(block, text)

    def _join_shared_lines(self, block: list[Any], source: _Text) -> None:
        """Simple statements of one block written on one line become one
        statement with parts."""
        by_line: dict[int, list[ast.stmt]] = {}
        for stmt in block:
            if isinstance(stmt, ast.stmt) and not hasattr(stmt, "body") and stmt.lineno == stmt.end_lineno:
                by_line.setdefault(stmt.lineno, []).append(stmt)
        for line, stmts in by_line.items():
            if len(stmts) < 2:
                continue
            parts = tuple(self._by_line_of(stmt, source) for stmt in stmts)
            text = self._line(line).strip()
            self._by_line[line] = StatementInfo(
                line, line, _strip_comment(text), _later(shorten_expression, text), tuple(n for p in parts for n in p.targets),
                tuple(dict.fromkeys(n for p in parts for n in p.reads)),
                tuple(c for p in parts for c in p.comprehensions), parts,
            )

    def _by_line_of(self, node: ast.stmt, source: _Text) -> StatementInfo:
        text = source.segment(node) or ""
        return StatementInfo(
            node.lineno, node.lineno, text, _later(_label, node, source, text), _targets(node), _reads(node),
            _inlined_comprehensions(node), passed=_passed(node),
        )

    def _add(self, node: ast.stmt, source: _Text) -> None:
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
            info = StatementInfo(
                start, end, _strip_comment(text), _later(_label, node, source, text), _targets(node),
                _reads(node, header_only=True), _inlined_comprehensions(node),
                with_end=(node.end_lineno or end) if isinstance(node, (ast.With, ast.AsyncWith)) else 0,
            )
        else:
            end = node.end_lineno or start
            text = source.segment(node) or self._line(start).strip()
            info = StatementInfo(
                start, end, text, _later(_label, node, source, text), _targets(node), _reads(node),
                _inlined_comprehensions(node), elements=_tuple_elements(node, source), passed=_passed(node),
            )
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
            info = StatementInfo(line, line, text, _later(shorten_expression, text), (), ())
        return info


def _later(make: Callable[..., str], *args: Any) -> Callable[[], str]:
    return lambda: make(*args)


def _strip_comment(text: str) -> str:
    # Good enough for headers: a "#" inside a string in a header is rare.
    return text.split("  #")[0].rstrip()


def _value_node(node: ast.stmt) -> ast.expr | None:
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)):
        return node.value
    return None


def _label(node: ast.stmt, source: _Text, text: str) -> str:
    if isinstance(node, ast.AugAssign):
        target = ast.unparse(node.target)
        op = _BINOPS.get(type(node.op), "?")
        operand = source.segment(node.value) or ast.unparse(node.value)
        return shorten_expression(f"{target} {op} ({operand})" if " " in operand.strip() else f"{target} {op} {operand}")
    if isinstance(node, ast.Assign) and not all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in node.targets):
        # x[0] = v, self.w = v: what changed is the target, so show it all.
        return shorten_expression(text)
    value = _value_node(node)
    if value is not None:
        segment = source.segment(value) or ast.unparse(value)
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


def _tuple_elements(node: ast.stmt, source: _Text) -> tuple[tuple[str, str | None], ...]:
    """(label, target) of each element of a tuple a statement returns or
    assigns element by element; () for any other statement."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.Tuple) or not isinstance(node, (ast.Return, ast.Assign)):
        return ()
    labels = [shorten_expression(source.segment(e) or ast.unparse(e)) for e in value.elts]
    if isinstance(node, ast.Return):
        return tuple((label, None) for label in labels)
    target = node.targets[-1]
    if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(labels):
        return ()
    return tuple(
        (label, t.id if isinstance(t, ast.Name) else None) for label, t in zip(labels, target.elts)
    )


def _inlined_comprehensions(node: ast.stmt) -> tuple[tuple[int, int, int, int], ...]:
    """The spans of the comprehensions a statement runs in its own frame: not
    those of the statements in its body, nor those inside a lambda or a
    generator expression (they run in frames of their own)."""
    spans: list[tuple[int, int, int, int]] = []
    todo: list[ast.AST] = list(ast.iter_child_nodes(node))
    while todo:
        sub = todo.pop()
        if isinstance(sub, (ast.stmt, ast.Lambda, ast.GeneratorExp)):
            continue
        if isinstance(sub, (ast.ListComp, ast.SetComp, ast.DictComp)) and sub.end_lineno is not None:
            spans.append((sub.lineno, sub.col_offset, sub.end_lineno, sub.end_col_offset or 0))
            continue  # one span covers the comprehensions nested in it
        todo.extend(ast.iter_child_nodes(sub))
    return tuple(spans)


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


def _passed(node: ast.stmt) -> tuple[str, ...]:
    """The names ``node`` reads only as whole arguments of calls: ``x`` in
    ``loss = model(x).sum()``, not in ``(model(x) * x).sum()``."""
    as_argument: set[int] = set()
    loads: list[ast.Name] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            as_argument.update(id(a) for a in (*sub.args, *(k.value for k in sub.keywords)) if isinstance(a, ast.Name))
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            loads.append(sub)
    elsewhere = {n.id for n in loads if id(n) not in as_argument}
    return tuple(dict.fromkeys(n.id for n in loads if n.id not in elsewhere))


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
