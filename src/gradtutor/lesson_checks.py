"""Evaluating a lesson's checks against the learner's namespace and events.

Pure with respect to the tutor: checks read the namespace (an ``expect``
expression is the lesson author's Python, run in the learner's namespace),
but nothing here records events or draws anything.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from gradtutor.lesson_format import Check
from gradtutor.model import Event


@dataclass(frozen=True)
class CheckResult:
    check: Check
    passed: bool
    reason: str = ""  # why it failed, for lesson authors (--check) and hints
    # The same for the learner, in their language: a message key and its fields.
    say: tuple[str, Mapping[str, Any]] = ("", {})


def _shown(value: Any) -> str:
    """A value as a learner reads it: 8 for [8.0], [1, 2] for [1.0, 2.0]."""
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return _shown(value[0])
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, float):
        return format(value, "g")
    return str(value)


def event_matches(matcher: Mapping[str, Any], event: Event) -> bool:
    """An event matches when its kind and every field the matcher names are equal."""
    if event.kind != matcher.get("kind"):
        return False
    data = event.data
    return all(key == "kind" or _same(data.get(key), value) for key, value in matcher.items())


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(actual, expected, rel_tol=1e-6, abs_tol=1e-9)
    return bool(actual == expected)


def any_event_matches(matcher: Mapping[str, Any], events: Iterable[Event]) -> bool:
    return any(event_matches(matcher, e) for e in events)


def _values_close(actual: Any, expected: Any) -> bool:
    """Nested lists of numbers (a tensor's tolist()) against the lesson's value."""
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_values_close(a, e) for a, e in zip(actual, expected))
        )
    if isinstance(actual, (list, tuple)) and len(actual) == 1:
        return _values_close(actual[0], expected)
    try:
        return math.isclose(float(actual), float(expected), rel_tol=1e-5, abs_tol=1e-6)
    except (TypeError, ValueError):
        return False


def _tensor_check(props: Mapping[str, Any], namespace: Mapping[str, Any]) -> tuple[bool, str, tuple[str, dict[str, Any]]]:
    import torch

    name = props["name"]
    value = namespace.get(name)
    if not isinstance(value, torch.Tensor):
        if name in namespace:
            return False, f"{name} is not a tensor", ("check_not_tensor", {"name": name})
        return False, f"{name} is not defined", ("check_undefined", {"name": name})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading .grad of a non-leaf warns
        actual = {
            "leaf": value.is_leaf,
            "requires_grad": value.requires_grad,
            "retains_grad": value.retains_grad,
            "grad_fn": value.grad_fn is not None,
        }
        grad = value.grad
    for prop in ("leaf", "requires_grad", "retains_grad", "grad_fn"):
        if prop in props and actual[prop] is not props[prop]:
            fields = {"name": name, "prop": prop, "expected": props[prop], "actual": actual[prop]}
            return False, f"{name}: {prop} is {actual[prop]}, expected {props[prop]}", ("check_prop", fields)
    if "grad" in props:
        expected = props["grad"]
        if expected is None:
            if grad is not None:
                return False, f"{name}.grad is set, expected None", ("check_grad_not_none", {"name": name})
        elif grad is None:
            return False, f"{name}.grad is None", ("check_grad_none", {"name": name, "expected": _shown(expected)})
        elif not _values_close(grad.detach().tolist(), expected):
            now = grad.detach().tolist()
            fields = {"name": name, "expected": _shown(expected), "actual": _shown(now)}
            return False, f"{name}.grad is {now}, expected {expected}", ("check_grad_value", fields)
    return True, "", ("", {})


def _event_words(matcher: Mapping[str, Any]) -> str:
    """An event matcher as a learner reads it: "backward (retain_graph=True)"."""
    details = ", ".join(f"{k}={v}" for k, v in matcher.items() if k != "kind")
    return f"{matcher.get('kind')} ({details})" if details else str(matcher.get("kind"))


def run_check(check: Check, namespace: Mapping[str, Any], events: list[Event], last_events: list[Event]) -> CheckResult:
    """``events``: all events since the task started; ``last_events``: the last input's."""
    if check.kind == "event":
        ok = any_event_matches(check.value, events)
        return CheckResult(check, ok, "" if ok else f"no event like {dict(check.value)} yet",
                           ("check_event", {"event": _event_words(check.value)}))
    if check.kind == "no_event":
        happened = any_event_matches(check.value, events)
        return CheckResult(check, not happened, f"an event like {dict(check.value)} happened" if happened else "",
                           ("check_no_event", {"event": _event_words(check.value)}))
    if check.kind == "no_error":
        errors = [e for e in last_events if e.kind == "error"]
        return CheckResult(check, not errors, "" if not errors else "the last input raised an error", ("check_error", {}))
    if check.kind == "tensor":
        ok, reason, say = _tensor_check(check.value, namespace)
        return CheckResult(check, ok, reason, say)
    if check.kind == "expect":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ok = bool(eval(check.value, dict(namespace)))  # noqa: S307 - the lesson's own check
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            return CheckResult(check, False, f"`{check.value}` raised {error}",
                               ("check_expect_raised", {"expr": check.value, "error": error}))
        return CheckResult(check, ok, "" if ok else f"`{check.value}` is false", ("check_expect_false", {"expr": check.value}))
    return CheckResult(check, False, f"unknown check {check.kind}", ("check_unknown", {"kind": check.kind}))


def run_checks(
    checks: Iterable[Check], namespace: Mapping[str, Any], events: list[Event], last_events: list[Event]
) -> list[CheckResult]:
    return [run_check(c, namespace, events, last_events) for c in checks]
