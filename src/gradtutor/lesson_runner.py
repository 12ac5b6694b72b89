"""Running a lesson inside the shell, by a person or by a script.

:class:`LessonRun` walks a lesson's steps in a :class:`ShellSession`, so the
code a lesson runs and the code a learner types get the same graph and the
same explanations as anywhere else. The session asks it first about every
input (:meth:`LessonRun.intercept`: ``:next``, an answer's number, Enter to
continue) and tells it what each Python input did (:meth:`after_input`: a
task's checks). Progress goes to the store after every change.

``run_script`` plays a lesson without a person (answers are the correct
choices, tasks take their solution); with ``collect_problems`` it is the
lesson author's ``--check``: every run step must produce the events it lists
and every task's solution must pass its checks.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Iterator

from rich.console import Console, RenderableType
from rich.text import Text

from gradtutor.lesson_catalog import Entry
from gradtutor.lesson_checks import CheckResult, any_event_matches, run_checks
from gradtutor.lesson_format import Step as LessonStep
from gradtutor.model import Event, Step
from gradtutor.narrate import Verbatim, Wrapped, indented
from gradtutor.progress import ProgressStore
from gradtutor.render.words import MARKS

if TYPE_CHECKING:
    from gradtutor.shell_session import Reply, ShellSession

MAX_WRONG_ANSWERS = 2  # then the right answer is shown
# A text quoting a drawing: "x (old)", `loss [✗ freed]`, “z (old)”, `z (旧)`. A
# quote is a drawing when it has one of the markers pictures use, in any language.
_QUOTED = re.compile(r'"([^"\n]+)"|`([^`\n]+)`|“([^”\n]+)”')


def _drawing_marks() -> Iterator[str]:
    for words in MARKS.values():
        sep = words["sep"]
        yield from (words["old"].strip(), words["dropped"].strip(), "✗ " + words["freed"])
        for key, word in words.items():
            if key not in ("old", "dropped", "sep"):
                yield from (f"[{word}]", f"[{word}{sep}", f"{sep}{word}]")


_DRAWING_MARKS = tuple(_drawing_marks())
CONTINUE, ANSWER, TASK = "continue", "answer", "task"


class LessonRun:
    """One learner in one lesson. ``problems`` collects what a ``--check`` reports."""

    def __init__(self, entry: Entry, session: ShellSession, store: ProgressStore | None) -> None:
        self.entry = entry
        self.lesson = entry.lesson
        self.session = session
        self.store = store
        self.index = 0
        self.awaiting: str | None = None
        self.verify_pictures = False  # --check: quoted drawings must be in the picture
        self.hints_shown = 0
        self.wrong_answers = 0  # of the predict or quiz step being answered
        self.task_events: list[Event] = []
        self.done = False
        self.problems: list[str] = []

    # ---- helpers -------------------------------------------------------------------
    def t(self, text: Any) -> str:
        return self.lesson.text(text, self.session.settings.language)

    def msg(self, key: str, **fields: object) -> str:
        return self.session.msg(key, **fields)

    @property
    def step(self) -> LessonStep:
        return self.lesson.steps[self.index]

    def _where(self) -> str:
        line = self.step.line
        return f"{self.lesson.path}:{line}" if line else self.lesson.path

    def _save(self, completed: bool = False) -> None:
        if self.store is not None:
            self.store.set_position(self.lesson.id, self.index, completed)

    def _choices(self, step: LessonStep) -> list[RenderableType]:
        return [indented(Wrapped(f"{i}. {self.t(c.text)}"), 2) for i, c in enumerate(step.choices, 1)]

    def _code(self, code: str) -> RenderableType:
        return indented(Verbatim(code.rstrip("\n"), "cyan"), 2)

    # ---- flow ----------------------------------------------------------------------
    def start(self) -> list[RenderableType]:
        out: list[RenderableType] = [
            Text(self.msg("lesson_title", number=self.entry.number, title=self.t(self.lesson.title)), "bold magenta"),
            Wrapped(self.t(self.lesson.summary), "italic"),
        ]
        if not self.entry.bundled:
            out.append(Wrapped(self.msg("lesson_outside", path=os.path.abspath(self.lesson.path)), "yellow"))
        out.append(Text(self.msg("lesson_keys"), "dim"))
        aside = self.session.begin_lesson_namespace()
        if aside:
            out.append(Wrapped(self.msg("lesson_names_aside", names=", ".join(aside)), "dim"))
        _ = self.session.engine  # torch and F in the lesson's namespace
        saved = self.store.lesson(self.lesson.id) if self.store is not None else None
        if saved is not None and 0 < saved.step < len(self.lesson.steps) and not saved.completed:
            self._replay(saved.step)
            self.index = saved.step
            out.append(Text(self.msg("lesson_resumed", n=self.index + 1), "dim"))
            picture = self.session.picture_now()  # what the step about to be shown talks about
            if picture is not None:
                out.append(picture)
        return out + self.show()

    def _replay(self, upto: int) -> None:
        """Run the code of steps before ``upto`` again, quietly, to rebuild the names."""
        for step in self.lesson.steps[:upto]:
            if step.code and step.kind != "quiz":  # a quiz's code is shown, never run
                self.session.replay(step.code)

    def show(self) -> list[RenderableType]:
        """Show the current step, and run its code if it is a run step."""
        step = self.step
        total = len(self.lesson.steps)
        out: list[RenderableType] = [Text(self.msg("lesson_step", n=self.index + 1, total=total), "bold magenta")]
        self._save()
        if step.kind == "text":
            self._check_quoted_drawings(self.t(step.text))
            out += [Wrapped(self.t(step.text)), Text(self.msg("lesson_continue"), "dim")]
            self.awaiting = CONTINUE
        elif step.kind == "run":
            reply = self.session.run_python(step.code or "", echo=True)
            out += reply.renderables
            self._expect(step, reply.steps)
            if step.note:
                self._check_quoted_drawings(self.t(step.note))
                out.append(Wrapped(self.t(step.note), "italic"))
            out.append(Text(self.msg("lesson_continue"), "dim"))
            self.awaiting = CONTINUE
        elif step.kind in ("predict", "quiz"):
            out.append(Wrapped(self.t(step.text), "bold"))
            if step.code:  # a predict's code runs after the answer; a quiz's is only shown
                out.append(self._code(step.code))
            out += self._choices(step)
            out.append(Text(self.msg("lesson_answer_prompt"), "dim"))
            self.awaiting = ANSWER
            self.wrong_answers = 0
        else:  # task
            out += [Wrapped(self.t(step.text), "bold"), Text(self.msg("lesson_task_keys"), "dim")]
            self.awaiting = TASK
            self.task_events = []
            self.hints_shown = 0
            self.last_reasons: tuple[str, ...] = ()
        return out

    def advance(self, done: bool = True) -> list[RenderableType]:
        if self.store is not None and done:
            self.store.mark_done(self.lesson.id, self.index)
        self.index += 1
        if self.index >= len(self.lesson.steps):
            self.done = True
            self.awaiting = None
            if self.store is not None:
                self.store.set_position(self.lesson.id, len(self.lesson.steps), completed=True)
            return [Text(self.msg("lesson_done", title=self.t(self.lesson.title)), "bold green"), *self._leave()]
        return self.show()

    def answer(self, number: int) -> list[RenderableType]:
        step = self.step
        if not 1 <= number <= len(step.choices):
            return [Text(self.msg("lesson_answer_prompt"), "yellow")]
        if self.store is not None:
            self.store.add_attempt(self.lesson.id, self.index)
        choice = step.choices[number - 1]
        verdict = self.msg("lesson_right") if choice.correct else self.msg("lesson_wrong")
        out: list[RenderableType] = [
            Text(verdict, "bold green" if choice.correct else "bold yellow"),
            indented(Wrapped(self.t(choice.explain)), 2),
        ]
        if not choice.correct:
            # As swirl does: a wrong answer gets its reason and another try;
            # after the second, the right answer is shown and explained.
            self.wrong_answers += 1
            if self.wrong_answers < MAX_WRONG_ANSWERS:
                out.append(Text(self.msg("lesson_try_again"), "dim"))
                return out
            right = next(c for c in step.choices if c.correct)
            out += [Wrapped(self.msg("lesson_answer_was", choice=self.t(right.text)), "bold"),
                    indented(Wrapped(self.t(right.explain)), 2)]
        if step.kind == "predict" and step.code:
            reply = self.session.run_python(step.code, echo=True)
            out += reply.renderables
            self._expect(step, reply.steps)
        out.append(Text(self.msg("lesson_continue"), "dim"))
        self.awaiting = CONTINUE
        return out

    def after_input(self, steps: list[Step]) -> list[RenderableType]:
        """A Python input ran: during a task, record the attempt and run the checks."""
        if self.awaiting != TASK:
            return []
        last = [e for s in steps for e in s.events]
        self.task_events += last
        if self.store is not None:
            self.store.add_attempt(self.lesson.id, self.index)
        results = run_checks(self.step.checks, self.session.namespace, self.task_events, last)
        failing = [r for r in results if not r.passed]
        if not failing:
            return [Text(self.msg("lesson_task_done"), "bold green"), *self.advance()]
        # Which check is not met, in the learner's words; said again only after
        # an input that did something the tutor reports or changed the answer.
        reasons = tuple(self._reason(r) for r in failing)
        relevant = bool(last) or reasons != self.last_reasons
        self.last_reasons = reasons
        if not relevant:
            return []
        return [Text(self.msg("lesson_task_not_yet", reason=reasons[0]), "dim")]

    def _check_quoted_drawings(self, text: str) -> None:
        """For --check: a drawing the text quotes ("x (old)") is in the
        picture of the graph at this step, at either level."""
        if not self.verify_pictures:
            return
        quoted = [a or b or c for a, b, c in _QUOTED.findall(text)]
        drawn = [q for q in quoted if any(mark in q for mark in _DRAWING_MARKS)]
        if not drawn:
            return
        pictures = self.session.pictures_now()
        for fragment in drawn:
            if not any(fragment in picture for picture in pictures):
                self.problems.append(f"{self._where()}: the text quotes the drawing {fragment!r}, "
                                     "which the picture at this step does not show")

    def _reason(self, result: CheckResult) -> str:
        """Why a check is not met, in the learner's language."""
        key, fields = result.say
        return self.msg(key, **fields) if key else result.reason

    def _expect(self, step: LessonStep, steps: list[Step]) -> None:
        """For --check: the events the lesson says this code produces really happen."""
        events = [e for s in steps for e in s.events]
        for matcher in step.expect_events:
            if not any_event_matches(matcher, events):
                self.problems.append(f"{self._where()}: expected event {dict(matcher)} did not happen")
        listed_error = any(m.get("kind") == "error" for m in step.expect_events)
        for e in events:
            if e.kind == "error" and not listed_error:
                self.problems.append(f"{self._where()}: the code raised {e.get('exception')}: {e.get('message')}")

    # ---- commands -----------------------------------------------------------------
    def intercept(self, text: str) -> Reply | None:
        """Handle ``text`` if it belongs to the lesson; None lets the shell run it."""
        from gradtutor.shell_session import Reply

        stripped = text.strip()
        command = stripped.split()[0] if stripped.startswith(":") else None
        handlers = {
            ":next": self._cmd_next,
            ":hint": self._cmd_hint,
            ":solution": self._cmd_solution,
            ":skip": lambda: self.advance(done=False),
            ":restart": self._cmd_restart,
            ":quit": self._cmd_quit,
        }
        if command in handlers:
            return Reply(handlers[command]())
        if command is not None:
            return None
        if self.awaiting == CONTINUE and not stripped:
            return Reply(self.advance())
        if self.awaiting == ANSWER:
            if stripped.isdigit():
                return Reply(self.answer(int(stripped)))
            if not stripped:
                return Reply([Text(self.msg("lesson_answer_prompt"), "dim")])
        return None

    def _cmd_next(self) -> list[RenderableType]:
        if self.awaiting == ANSWER:
            return [Text(self.msg("lesson_need_answer"), "yellow")]
        if self.awaiting == TASK:
            return [Text(self.msg("lesson_need_task"), "yellow")]
        return self.advance()

    def _cmd_hint(self) -> list[RenderableType]:
        step = self.step
        if self.awaiting != TASK:
            return [Text(self.msg("lesson_no_hints_here"), "dim")]
        # A hint about a check that already passes would tell the learner to do
        # what they did: it is passed over.
        results = run_checks(step.checks, self.session.namespace, self.task_events, [])
        about = step.hint_checks or (None,) * len(step.hints)
        while self.hints_shown < len(step.hints):
            number = about[self.hints_shown]
            if number is None or not results[number].passed:
                break
            self.hints_shown += 1
        if self.hints_shown >= len(step.hints):
            failing = [r for r in results if not r.passed]
            if failing:
                return [Text(self.msg("lesson_hints_done", reason=self._reason(failing[0])), "dim")]
            return [Text(self.msg("lesson_no_hints"), "dim")]
        self.hints_shown += 1
        if self.store is not None:
            self.store.add_hint(self.lesson.id, self.index)
        text = self.t(step.hints[self.hints_shown - 1])
        return [Wrapped(self.msg("lesson_hint", n=self.hints_shown, total=len(step.hints), text=text), "yellow")]

    def _cmd_solution(self) -> list[RenderableType]:
        step = self.step
        if step.kind in ("quiz", "predict"):
            right = next(c for c in step.choices if c.correct)
            return [Wrapped(self.msg("lesson_answer_was", choice=self.t(right.text)), "bold")]
        if step.kind != "task":
            return self._cmd_next()
        out: list[RenderableType] = [Text(self.msg("lesson_solution"), "bold")]
        reply = self.session.run_python(step.code or "", echo=True)
        out += reply.renderables
        before = self.index
        out += self.after_input(reply.steps)
        if self.index == before and not self.done:
            results = run_checks(step.checks, self.session.namespace, self.task_events, [])
            failing = [r.reason for r in results if not r.passed]
            self.problems.append(f"{self._where()}: the task's solution does not pass: {'; '.join(failing)}")
        return out

    def _cmd_restart(self) -> list[RenderableType]:
        self.session.reset_namespace()
        if self.store is not None:
            self.store.reset(self.lesson.id)
        self.index = 0
        return [Text(self.msg("lesson_restarted"), "dim"), *self.show()]

    def _cmd_quit(self) -> list[RenderableType]:
        return [Text(self.msg("lesson_left", n=self.index + 1, id=self.lesson.id), "dim"), *self._leave()]

    def _leave(self) -> list[RenderableType]:
        """The lesson is over: the person's own names come back."""
        self.session.lesson = None
        back = self.session.end_lesson_namespace()
        return [Wrapped(self.msg("lesson_names_back", names=", ".join(back)), "dim")] if back else []


def run_script(entry: Entry, session: ShellSession, console: Console | None) -> list[str]:
    """Play the whole lesson without a person; print it to ``console`` (None: silently).

    Returns the problems found (see :class:`LessonRun`); an empty list means it passed.
    """

    def show(items: list[RenderableType]) -> None:
        if console is not None:
            for item in items:
                console.print(item, crop=False)

    run = LessonRun(entry, session, store=None)
    run.verify_pictures = True
    session.lesson = run
    show(run.start())
    guard = 0
    while not run.done and guard < 10 * len(entry.lesson.steps) + 10:
        guard += 1
        step = run.step
        if run.awaiting == ANSWER:
            number = next(i for i, c in enumerate(step.choices, 1) if c.correct)
            show([Text(f"> {number}", "bold")])
            show(run.answer(number))
        elif run.awaiting == TASK:
            for _ in step.hints:
                show(run._cmd_hint())
            before = run.index
            show(run._cmd_solution())
            if run.index == before and not run.done:
                show(run.advance(done=False))
        else:
            show(run.advance())
    if session.lesson is run:
        run._leave()
    return run.problems
