"""Graded exercises of chapter 16: hidden cases with expected values derived by hand."""

from __future__ import annotations

from .grading import Case, Exercise, Raises, register

# Chapter 16. The chunks a user may read: chunk i is visible when the level of its
# document is one of the user's levels (no level implies another). Each expected list is
# that rule applied by hand, chunk by chunk; seed 003's D1-D4 first (D4 restricted to
# finance).
register(
    Exercise(
        name="visible-chunks",
        function_name="visible_chunks",
        cases=(
            Case(
                "seed 003: a public user reads D1, D2, D3 but not D4",
                (
                    ["D1", "D2", "D3", "D4"],
                    {"D1": "public", "D2": "public", "D3": "public", "D4": "finance"},
                    {"public"},
                ),
                [0, 1, 2],
            ),
            Case(
                "seed 003: public and finance read all four",
                (
                    ["D1", "D2", "D3", "D4"],
                    {"D1": "public", "D2": "public", "D3": "public", "D4": "finance"},
                    {"public", "finance"},
                ),
                [0, 1, 2, 3],
            ),
            Case(
                "staff alone does not imply public: chunks 0 and 2 of staff document a",
                (
                    ["a", "b", "a", "c"],
                    {"a": "staff", "b": "public", "c": "finance"},
                    {"staff"},
                ),
                [0, 2],
            ),
            Case(
                "several chunks of one document keep their ids: only chunk 1 is public",
                (["b", "a", "b"], {"a": "public", "b": "finance"}, {"public"}),
                [1],
            ),
            Case(
                "a user without levels reads nothing",
                (["a", "b"], {"a": "public", "b": "staff"}, set()),
                [],
            ),
            Case("no chunks, nothing to read", ([], {"a": "public"}, {"public"}), []),
            Case(
                "a chunk whose document has no access level is refused",
                (["a", "x"], {"a": "public"}, {"public"}),
                Raises(ValueError),
            ),
            Case(
                "an unknown access level is refused",
                (["a"], {"a": "secret"}, {"public"}),
                Raises(ValueError),
            ),
        ),
    )
)
