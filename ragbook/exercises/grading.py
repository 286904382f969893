"""The grading engine: hidden cases run against the reader's function, with a verdict
that says what is wrong.

A chapter asks the reader to write a function, then calls
``check("name", their_function)``. The checker runs every hidden case and prints which
ones failed and how (the input, the expected value and what came back, or the exception
raised), never the code of a solution. Expected values are written down from hand
derivation (exact fractions where possible), not computed by ragbook.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from .. import validate
from ..show import wrap

__all__ = ["Raises", "Case", "Exercise", "Verdict", "EXERCISES", "check", "register"]


@dataclass(frozen=True)
class Raises:
    """An expected outcome: the function must raise this exception type (or a
    subclass)."""

    error: type[BaseException]

    def __repr__(self) -> str:
        return f"raises {self.error.__name__}"


@dataclass(frozen=True)
class Case:
    """One hidden case: what it tests, the arguments, and the expected result."""

    description: str
    args: tuple
    expected: Any
    kwargs: dict = field(default_factory=dict)

    def call_text(self, name: str) -> str:
        parts = [_show(a) for a in self.args] + [
            f"{k}={_show(v)}" for k, v in self.kwargs.items()
        ]
        return f"{name}({', '.join(parts)})"


@dataclass(frozen=True)
class Exercise:
    """A graded exercise: the function name the reader writes, its hidden cases, a float
    tolerance."""

    name: str
    function_name: str
    cases: tuple[Case, ...]
    tolerance: float = 1e-9


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`check`; true when every case passed. Prints as a readable
    report."""

    exercise: str
    passed: int
    total: int
    failures: tuple[str, ...]

    def __bool__(self) -> bool:
        return self.passed == self.total

    def __repr__(self) -> str:
        if self:
            return f"PASS {self.exercise}: all {self.total} hidden cases are right."
        lines = [
            f"NOT YET {self.exercise}: {self.passed} of {self.total} hidden cases pass."
        ]
        lines += [f"  - {failure}" for failure in self.failures]
        return "\n".join(lines)

    def __str__(self) -> str:
        """The report with each failure wrapped to the book's line width."""
        return wrap(repr(self), indent="    ")

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # how IPython displays it
        printer.text(str(self))


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Fraction):
        return f"{float(value):.6g}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_show(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _show(value.tolist())
    return repr(value)


def _matches(expected: Any, got: Any, tolerance: float) -> bool:
    if isinstance(expected, (int, float, Fraction)) and not isinstance(expected, bool):
        if hasattr(got, "tolist"):
            got = got.tolist()
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        return math.isclose(
            float(got), float(expected), rel_tol=tolerance, abs_tol=tolerance
        )
    if isinstance(expected, (list, tuple)):
        if hasattr(got, "tolist"):
            got = got.tolist()
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            return False
        return all(_matches(e, g, tolerance) for e, g in zip(expected, got))
    return bool(expected == got)


def _run_case(
    exercise: Exercise, function: Callable, number: int, case: Case
) -> str | None:
    call = case.call_text(exercise.function_name)
    where = f"case {number} ({case.description}): {call}"
    try:
        got = function(*case.args, **case.kwargs)
    except Exception as error:  # the reader's code may raise anything; report it
        if isinstance(case.expected, Raises) and isinstance(error, case.expected.error):
            return None
        wanted = (
            repr(case.expected)
            if isinstance(case.expected, Raises)
            else f"expected {_show(case.expected)}"
        )
        return f"{where} {wanted}, but it raised {type(error).__name__}: {error}"
    if isinstance(case.expected, Raises):
        return (
            f"{where} should {case.expected!r} (bad input must be refused), but it "
            f"returned {_show(got)}"
        )
    if not _matches(case.expected, got, exercise.tolerance):
        return f"{where} expected {_show(case.expected)}, got {_show(got)}"
    return None


EXERCISES: dict[str, Exercise] = {}


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to :data:`EXERCISES` under its name (names are unique)."""
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register takes an Exercise, got {type(exercise).__name__}")
    if exercise.name in EXERCISES:
        raise ValueError(f"an exercise named {exercise.name!r} is already registered")
    EXERCISES[exercise.name] = exercise
    return exercise


def check(name: str, function: Callable) -> Verdict:
    """Run the hidden cases of exercise ``name`` against ``function`` and return the
    verdict."""
    validate.text(name, "name")
    if name not in EXERCISES:
        known = ", ".join(sorted(EXERCISES))
        raise KeyError(f"no exercise named {name!r}; the exercises are: {known}")
    if not callable(function):
        raise TypeError(
            f"check needs the function you wrote, got {type(function).__name__}"
        )
    exercise = EXERCISES[name]
    failures = []
    for number, case in enumerate(exercise.cases, start=1):
        failure = _run_case(exercise, function, number, case)
        if failure is not None:
            failures.append(failure)
    return Verdict(
        name, len(exercise.cases) - len(failures), len(exercise.cases), tuple(failures)
    )
