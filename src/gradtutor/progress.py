"""Lesson progress, kept in SQLite in the user's data directory.

Each change is its own committed transaction, so a crash or Ctrl-C loses
nothing already recorded. Two shells may write at once: the database runs in
WAL mode and waits (``busy_timeout``) instead of failing when the other one
holds the lock. A file that is not a readable database is moved aside (its
name gets ``.damaged-<time>``) with a message, and a fresh one is started.
The folder is created readable by the user only, and so is the file.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass

DB_NAME = "progress.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS lesson (
    id TEXT PRIMARY KEY,
    step INTEGER NOT NULL DEFAULT 0,
    completed INTEGER NOT NULL DEFAULT 0,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS step (
    lesson TEXT NOT NULL,
    step INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    hints INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (lesson, step)
);
"""


@dataclass(frozen=True)
class LessonProgress:
    lesson: str
    step: int  # the step to resume at
    completed: bool


@dataclass(frozen=True)
class StepProgress:
    attempts: int
    hints: int
    done: bool


class ProgressStore:
    """Progress of every lesson. ``notice`` says what happened to a damaged file, if anything."""

    def __init__(self, data_dir: str) -> None:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
        os.chmod(data_dir, 0o700)
        self.path = os.path.join(data_dir, DB_NAME)
        self.notice: str | None = None
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            aside = f"{self.path}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                if os.path.exists(self.path + suffix):
                    os.replace(self.path + suffix, aside + suffix)
            self.notice = (
                f"The progress file {self.path} could not be read ({exc}); it was moved to {aside} "
                "and a new one was started."
            )
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        if not os.path.exists(self.path):
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(self.path, 0o600)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(_SCHEMA)
            check = conn.execute("PRAGMA quick_check").fetchone()
            if not check or check[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {check[0] if check else 'no answer'}")
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        self._conn.close()

    def _write(self, sql: str, args: tuple[object, ...]) -> None:
        with self._conn:  # one committed transaction per change
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute(sql, args)

    # ---- reading -----------------------------------------------------------------
    def lesson(self, lesson_id: str) -> LessonProgress:
        row = self._conn.execute("SELECT step, completed FROM lesson WHERE id = ?", (lesson_id,)).fetchone()
        if row is None:
            return LessonProgress(lesson_id, 0, False)
        return LessonProgress(lesson_id, int(row[0]), bool(row[1]))

    def step(self, lesson_id: str, step: int) -> StepProgress:
        row = self._conn.execute(
            "SELECT attempts, hints, done FROM step WHERE lesson = ? AND step = ?", (lesson_id, step)
        ).fetchone()
        return StepProgress(0, 0, False) if row is None else StepProgress(int(row[0]), int(row[1]), bool(row[2]))

    # ---- writing -----------------------------------------------------------------
    def set_position(self, lesson_id: str, step: int, completed: bool = False) -> None:
        self._write(
            "INSERT INTO lesson (id, step, completed, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET step = excluded.step, "
            "completed = MAX(lesson.completed, excluded.completed), updated = excluded.updated",
            (lesson_id, step, int(completed), time.time()),
        )

    def _bump(self, lesson_id: str, step: int, column: str) -> None:
        assert column in ("attempts", "hints")
        self._write(
            f"INSERT INTO step (lesson, step, {column}) VALUES (?, ?, 1) "
            f"ON CONFLICT(lesson, step) DO UPDATE SET {column} = {column} + 1",
            (lesson_id, step),
        )

    def add_attempt(self, lesson_id: str, step: int) -> None:
        self._bump(lesson_id, step, "attempts")

    def add_hint(self, lesson_id: str, step: int) -> None:
        self._bump(lesson_id, step, "hints")

    def mark_done(self, lesson_id: str, step: int) -> None:
        self._write(
            "INSERT INTO step (lesson, step, done) VALUES (?, ?, 1) "
            "ON CONFLICT(lesson, step) DO UPDATE SET done = 1",
            (lesson_id, step),
        )

    def reset(self, lesson_id: str) -> None:
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute("DELETE FROM step WHERE lesson = ?", (lesson_id,))
            self._conn.execute("UPDATE lesson SET step = 0, updated = ? WHERE id = ?", (time.time(), lesson_id))
