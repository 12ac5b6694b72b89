"""Finding lessons: the bundled course, plus teachers' own folders."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gradtutor.errors import LessonError, UsageError
from gradtutor.explanations import lessons_dir
from gradtutor.lesson_format import Lesson, load_lesson


@dataclass(frozen=True)
class Entry:
    lesson: Lesson
    bundled: bool
    number: int  # position in the listing, from 1


def bundled_course_dir() -> str:
    return os.path.join(lessons_dir(), "course")


def lesson_files(folder: str) -> list[str]:
    """The ``*.yaml`` files of a folder, in name order (a single file is itself)."""
    if os.path.isfile(folder):
        return [folder]
    if not os.path.isdir(folder):
        raise UsageError.said("error_no_folder", folder=folder)
    return sorted(
        os.path.join(folder, name) for name in os.listdir(folder) if name.endswith((".yaml", ".yml"))
    )


class Catalog:
    """All lessons the learner can take. Broken lesson files are kept in ``problems``."""

    def __init__(self, extra_dirs: tuple[str, ...] = ()) -> None:
        self.entries: list[Entry] = []
        self.problems: list[LessonError] = []
        sources = [(bundled_course_dir(), True)] + [(d, False) for d in extra_dirs]
        seen: set[str] = set()
        for folder, bundled in sources:
            for path in lesson_files(folder):
                try:
                    lesson = load_lesson(path)
                except LessonError as exc:
                    self.problems.append(exc)
                    continue
                if lesson.id in seen:
                    self.problems.append(LessonError(path, 1, f"lesson id '{lesson.id}' is used by another lesson"))
                    continue
                seen.add(lesson.id)
                self.entries.append(Entry(lesson, bundled, len(self.entries) + 1))

    def find(self, name: str) -> Entry:
        """By id, number in the listing, or file name (``03-backward-frees``)."""
        key = name.strip()
        for entry in self.entries:
            stem = os.path.splitext(os.path.basename(entry.lesson.path))[0]
            if key in (entry.lesson.id, stem) or (key.isdigit() and int(key) == entry.number):
                return entry
        matches = [e for e in self.entries if key and key in e.lesson.id]
        if len(matches) == 1:
            return matches[0]
        raise UsageError.said("error_no_lesson", name=name)
