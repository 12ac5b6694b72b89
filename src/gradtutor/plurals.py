"""``str.format`` that can count: ``{n:node|nodes}`` is "1 node" or "3 nodes".

Explanations and the shell's messages are templates in files; a count in
them reads as English does, not as "3 node(s)". Languages without plural
forms (Chinese) simply do not use the spec.
"""

from __future__ import annotations

import string
from typing import Any


class CountingFormatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if "|" in format_spec and isinstance(value, int) and not isinstance(value, bool):
            one, many = format_spec.split("|", 1)
            return f"{value} {one if value == 1 else many}"
        return super().format_field(value, format_spec)


COUNTING = CountingFormatter()
