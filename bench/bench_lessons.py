"""Reading the course: every lesson and explanation file parsed by
``yamlfile.load_yaml`` with libyaml's parser (what gradtutor uses when
PyYAML has it) against PyYAML's pure-Python parser, side by side in one run
(alternating, medians of 7).

Run: .venv/bin/python bench/bench_lessons.py
"""

from __future__ import annotations

import glob
import os
import statistics
import time

from gradtutor import yamlfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "..", "lessons", "**", "*.yaml"), recursive=True))
TEXTS = [(path, open(path, encoding="utf-8").read()) for path in FILES]


def read_all(fast: object) -> float:
    saved = yamlfile._FAST
    yamlfile._FAST = fast
    try:
        start = time.perf_counter()
        for path, text in TEXTS:
            yamlfile.load_yaml(path, text)
        return time.perf_counter() - start
    finally:
        yamlfile._FAST = saved


def main() -> None:
    fast, slow = [], []
    for _ in range(7):
        slow.append(read_all(None))
        fast.append(read_all(yamlfile._FAST))
    s, f = statistics.median(slow), statistics.median(fast)
    print(f"{len(FILES)} files: PyYAML's parser {s * 1e3:.0f} ms, libyaml's {f * 1e3:.0f} ms, ratio {f / s:.2f}"
          + ("" if yamlfile._FAST is not None else " (this PyYAML has no libyaml: both are the pure-Python parser)"))


if __name__ == "__main__":
    main()
