"""Finds English left in the tutor's Chinese output, and Chinese set the way
Chinese typography does not set it.

What may stay Latin in Chinese text: code (in backquotes, or a word joined to
code punctuation such as ``x.grad``, ``backward()``, ``retain_graph=True``),
the program's own names, text quoted from PyTorch or Python ("Trying to
backward through the graph a second time"), the program's output and
Python's tracebacks, and a short list of proper names (PyTorch, In [3], Ctrl-D).
Everything else is a word the tutor should have said in Chinese.
"""

from __future__ import annotations

import io
import re
import tokenize

# Names that stay as they are in Chinese: products, keys, Python's own words
# for things the learner types, and what a tensor's repr prints.
PROPER = frozenset("""
    In PyTorch Python IPython Jupyter autograd torch gradtutor Stack Overflow Ctrl Alt Enter Esc Tab
    CPU GPU CUDA JSON HTML SVG DOT Markdown TorchScript NumPy numpy MLP RNN LSTM GRU BCE MSE SGD Adam ReLU GPT
    tensor grad_fn requires_grad dtype device float32 float64 int64 True False None nan inf
    Tensor Parameter Module Optimizer Linear nn functional
    RuntimeError UserWarning Warning Error KeyboardInterrupt Traceback NotImplementedError ValueError TypeError
    id kebab en zh BatchNorm WGAN GAN GP svg dot markdown html json text
""".split())

_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_CJK_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_HAS_CJK = re.compile(f"[{_CJK}]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_']*")
_BACKQUOTED = re.compile(r"`[^`\n]*`")
_OPTION = re.compile(r"--[a-z][\w-]*(?: (?:[A-Z]|[a-z]+\b(?![^\s]*[\u3400-\u9fff])))?")
# Quoted English: an error message or a name the text discusses.
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[ -~]*”|'[^'\n]*'")
_CODE_ECHO = re.compile(r"^\s*(In \[\d+\]:|\.\.\.:|>>> |\.\.\. )")
_NODE_NAME = re.compile(r"^(\w*Backward\d*|AccumulateGrad)$")
# An English term glossed after its Chinese name: 随时间反向传播（truncated BPTT）.
_GLOSS = re.compile(f"(?<=[{_CJK}])（[A-Za-z][A-Za-z -]*）")
# The tutor's own lines start indented or with a step heading; a line at the
# left margin without Chinese is the program's output.
_PROGRAM_OUTPUT = re.compile(f"^(?![ ─-])[^{_CJK}]*$")


def identifiers(*sources: str) -> set[str]:
    """Every name and every word of a string literal in ``sources`` (Python),
    not of its comments: those are never printed."""
    found: set[str] = set()
    for source in sources:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            found.update(_WORD.findall(source))
            continue
        for token in tokens:
            if token.type in (tokenize.NAME, tokenize.STRING) or token.type >= 60:  # f-string parts
                found.update(_WORD.findall(token.string))
    return found


def _is_code(text: str, start: int, end: int) -> bool:
    """Is the word at ``text[start:end]`` part of code (``x.grad``, ``f()``, ``a=b``, ``:next``)?"""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    kebab = after == "-" and text[end + 1:end + 2].isalpha()  # a lesson's id: grad-fn-graph
    if before in "._:%-/[=" or before.isdigit() or after in "(._=[/" or kebab or "_" in text[start:end]:
        return True
    # An argument of a call: grad(outputs, inputs).
    opened = text.rfind("(", 0, start)
    return opened > 0 and ")" not in text[opened:start] and (text[opened - 1].isalnum() or text[opened - 1] in "_.")


def english_left(text: str, allowed: set[str] | frozenset[str] = frozenset(), whole_output: bool = False) -> list[str]:
    """The English words of ``text`` (Chinese prose) that are none of the
    above, each as ``word: the line``. With ``whole_output``, lines that quote
    code, tracebacks and lines without Chinese are the program's or Python's
    and are looked at only for the tutor's own words (``[grad]`` markers and
    value summaries are the tutor's)."""
    found: list[str] = []
    in_traceback = False
    for line in text.splitlines():
        if whole_output:
            if line.startswith("Traceback (most recent call last)"):
                in_traceback = True
                continue
            if in_traceback:
                # Frames are indented; the exception line ends the traceback.
                in_traceback = line.startswith(" ")
                continue
            if _CODE_ECHO.match(line) or _PROGRAM_OUTPUT.match(line):
                continue
            if re.match(r"^\s*(/\S+|\S+\.py):\d+: \w*Warning: ", line):
                continue
        stripped = _GLOSS.sub(" ", _QUOTED.sub(" ", _OPTION.sub(" ", _BACKQUOTED.sub(" ", line))))
        for match in _WORD.finditer(stripped):
            word = match.group()
            if word in PROPER or word in allowed or _NODE_NAME.match(word):
                continue
            if len(word) == 1 or _is_code(stripped, match.start(), match.end()):
                continue
            found.append(f"{word}: {line.strip()}")
    return found


# Two spaces or more are layout (a legend's columns), not typography.
_SPACE_INSIDE = re.compile(f"(?<=[{_CJK}{_CJK_PUNCT}]) (?=[{_CJK}{_CJK_PUNCT}])")
_SPACE_AT_PUNCT = re.compile(f"(?<=[{_CJK_PUNCT}]) (?=\\S)|(?<=\\S) (?=[{_CJK_PUNCT}])")
# A step heading: its place ("第 12 行（续）"), one space, the statement it quotes.
_HEADING = re.compile(r"^(─+|-+) ")
_NO_SPACE = re.compile(f"[{_CJK}][A-Za-z0-9`]|[A-Za-z0-9`][{_CJK}]")


def typography_left(text: str) -> list[str]:
    """Lines of Chinese prose set against Chinese typography: a space between
    two Chinese characters or beside full-width punctuation, or none between
    Chinese and Latin letters or digits ("第 3 行", "In [2] 的")."""
    found: list[str] = []
    for line in text.splitlines():
        if not _HAS_CJK.search(line):
            continue
        body = line.strip()
        if _HEADING.match(body):
            body = body.replace("（续） ", "（续）", 1)  # the space after the place parts two columns
        for pattern, what in ((_SPACE_INSIDE, "space between Chinese"), (_SPACE_AT_PUNCT, "space at punctuation"),
                              (_NO_SPACE, "no space")):
            match = pattern.search(_BACKQUOTED.sub("`x`", body))
            if match:
                found.append(f"{what} at {match.group()!r}: {body}")
    return found
