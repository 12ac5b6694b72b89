"""Spacing of filled-in Chinese text, as Chinese typography sets it.

Templates put a space around each field (``已被 {place} 的反向传播释放``)
because a field may be Latin (``In [3]``) or Chinese (``第 3 行``). Once
filled, the spaces follow the rules: none between two Chinese characters or
beside full-width punctuation, one between Chinese and Latin letters, digits
or code. Code in backquotes is left exactly as it is.
"""

from __future__ import annotations

import re

_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
# Full-width punctuation: ，。：；！？、（）《》「」 and the like.
_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"

_SPACE_BETWEEN_HAN = re.compile(f"(?<=[{_HAN}]) +(?=[{_HAN}])")
_SPACE_AFTER_PUNCT = re.compile(f"(?<=[{_PUNCT}]) +(?=\\S|$)")
_LEADING_BEFORE_PUNCT = re.compile(f"^ +(?=[{_PUNCT}])")
_SPACE_BEFORE_PUNCT = re.compile(f"(?<=\\S) +(?=[{_PUNCT}])")
_HAN_THEN_LATIN = re.compile(f"(?<=[{_HAN}])(?=[A-Za-z0-9])")
_LATIN_THEN_HAN = re.compile(f"(?<=[A-Za-z0-9)\\]])(?=[{_HAN}])")
_CODE = re.compile(r"(`[^`\n]*`)")
_HAS_HAN = re.compile(f"[{_HAN}]")
_STARTS_HAN = re.compile(f"[{_HAN}]")
_ENDS_HAN = re.compile(f"[{_HAN}]$")


def tidy(text: str, language: str) -> str:
    """``text`` with its spaces set for ``language`` (only Chinese changes)."""
    if language != "zh" or not _HAS_HAN.search(text):
        return text
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):  # the even parts are outside backquotes
        part = _SPACE_BETWEEN_HAN.sub("", parts[i])
        part = _SPACE_AFTER_PUNCT.sub("", part)
        part = _SPACE_BEFORE_PUNCT.sub("", part)
        if i > 0:
            part = _LEADING_BEFORE_PUNCT.sub("", part)  # `code` ）-> `code`）
        part = _LATIN_THEN_HAN.sub(" ", _HAN_THEN_LATIN.sub(" ", part))
        if i > 0 and _STARTS_HAN.match(part):
            part = " " + part  # `code`的 -> `code` 的
        if i + 1 < len(parts) and _ENDS_HAN.search(part):
            part += " "  # 的`code` -> 的 `code`
        parts[i] = part
    return "".join(parts)
