"""Graded exercises: a chapter asks the reader to write a function, then calls
``check("name", function)``.

:mod:`ragbook.exercises.grading` runs the hidden cases and writes the verdict; each
``chapterNN`` module registers the cases of one chapter's exercises, with expected
values derived by hand.
"""

from __future__ import annotations

from . import (
    chapter01,
    chapter02,
    chapter03,
    chapter04,
    chapter05,
    chapter06,
    chapter07,
    chapter08,
    chapter09,
    chapter10,
    chapter11,
    chapter12,
    chapter13,
    chapter14,
    chapter16,
)  # noqa: F401  (importing a chapter's module registers its exercises)
from .grading import EXERCISES, Case, Exercise, Raises, Verdict, check, register

__all__ = ["Raises", "Case", "Exercise", "Verdict", "EXERCISES", "check", "register"]
