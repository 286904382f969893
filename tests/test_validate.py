"""The shared argument checks of ragbook.validate: what each accepts, what it refuses,
and with which message."""

import math
import re

import numpy as np
import pytest

from ragbook import validate


# ---- numbers -------------------------------------------------------------------------
def test_whole_accepts_python_and_numpy_ints_and_returns_a_python_int():
    for value in (3, np.int64(3), np.int32(3), np.uint8(3)):
        checked = validate.whole(value, "n")
        assert checked == 3 and type(checked) is int


@pytest.mark.parametrize(
    "value", [3.0, 2.5, "3", None, True, False, np.bool_(True), [3], np.float64(3.0)]
)
def test_whole_refuses_everything_else_with_a_type_error(value):
    with pytest.raises(
        TypeError,
        match=f"n must be a whole number, got {re.escape(repr(value))} of type",
    ):
        validate.whole(value, "n")


def test_whole_bounds():
    assert validate.whole(0, "n", minimum=0) == 0
    with pytest.raises(
        ValueError, match=r"^n must be a whole number of at least 1, got 0$"
    ):
        validate.whole(0, "n", minimum=1)
    with pytest.raises(
        ValueError, match=r"^n must be a whole number from 1 to 5, got 6$"
    ):
        validate.whole(6, "n", minimum=1, maximum=5)
    with pytest.raises(
        ValueError, match=r"^n must be a whole number of at most 5, got 6$"
    ):
        validate.whole(6, "n", maximum=5)


def test_count_and_k():
    assert validate.count(0, "n") == 0 and validate.k(1) == 1
    with pytest.raises(
        ValueError, match=r"^n must be a whole number of at least 0, got -1$"
    ):
        validate.count(-1, "n")
    with pytest.raises(
        ValueError, match=r"^k must be a whole number of at least 1, got 0$"
    ):
        validate.k(0)
    with pytest.raises(
        ValueError, match=r"^depth must be a whole number of at least 1, got -3$"
    ):
        validate.k(np.int64(-3), "depth")


def test_real_accepts_finite_ints_and_floats_of_python_and_numpy():
    for value in (1, 1.5, np.float32(1.5), np.float64(1.5), np.int64(2)):
        checked = validate.real(value, "x")
        assert type(checked) is float and checked == float(value)


@pytest.mark.parametrize(
    "value", ["1.2", b"1", None, True, np.bool_(False), [1.0], 1 + 2j]
)
def test_real_refuses_non_numbers_with_a_type_error(value):
    with pytest.raises(TypeError, match="x must be a finite number"):
        validate.real(value, "x")


@pytest.mark.parametrize(
    "value", [math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("inf")]
)
def test_real_refuses_non_finite_numbers_with_a_value_error(value):
    with pytest.raises(
        ValueError, match=r"x must be a finite number, got (nan|inf|-inf|np\.float)"
    ):
        validate.real(value, "x")


def test_real_bounds():
    assert validate.real(0, "b", minimum=0, maximum=1) == 0.0
    with pytest.raises(
        ValueError, match=r"^b must be a finite number in \[0, 1\], got 1.5$"
    ):
        validate.real(1.5, "b", minimum=0, maximum=1)
    with pytest.raises(ValueError, match=r"^t must be a finite number above 0, got 0$"):
        validate.real(0, "t", above=0)
    with pytest.raises(
        ValueError, match=r"^t must be a finite number at least 0 and below 1, got 1$"
    ):
        validate.real(1, "t", minimum=0, below=1)
    with pytest.raises(
        ValueError, match=r"^p must be a finite number in \[0, 1\], got -0.1$"
    ):
        validate.probability(-0.1, "p")


def test_flag():
    assert (
        validate.flag(True, "f") is True
        and validate.flag(np.bool_(False), "f") is False
    )
    for value in (0, 1, "yes", None):
        with pytest.raises(TypeError, match="f must be True or False"):
            validate.flag(value, "f")


# ---- arrays --------------------------------------------------------------------------
def test_finite_array():
    array = validate.finite_array([1, 2.5], "v")
    assert array.dtype == np.float64 and array.tolist() == [1.0, 2.5]
    assert validate.finite_array(np.arange(3), "v", dtype=None).dtype.kind == "i"
    assert validate.finite_array([], "v").size == 0
    with pytest.raises(
        ValueError,
        match=r"^v must be finite numbers \(no nan or inf\), got np.float64\(nan\) at "
        r"position 1$",
    ):
        validate.finite_array([0.0, math.nan], "v")
    with pytest.raises(ValueError, match=r"at position \(1, 0\)"):
        validate.finite_array([[0.0], [math.inf]], "v")
    with pytest.raises(TypeError, match="v must be real numbers, got strings"):
        validate.finite_array(["1", "2"], "v")
    with pytest.raises(TypeError, match="v must be real numbers, got booleans"):
        validate.finite_array([True, False], "v")
    with pytest.raises(TypeError, match="v must be numbers, got '12'"):
        validate.finite_array("12", "v")
    with pytest.raises(TypeError, match="v must be numbers, got None"):
        validate.finite_array(None, "v")
    with pytest.raises(ValueError, match="v must have 1 dimension, got shape"):
        validate.finite_array([[1.0]], "v", ndim=1)
    with pytest.raises(ValueError, match="v is empty"):
        validate.finite_array([], "v", allow_empty=False)
    with pytest.raises(ValueError, match="v must be a regular array"):
        validate.finite_array([[1.0], [1.0, 2.0]], "v")


def test_at_least_one():
    assert validate.at_least_one(3, "n").tolist() == 3.0
    assert validate.at_least_one([1, 2], "n").tolist() == [1.0, 2.0]
    for bad in (0, [1, 0.5]):
        with pytest.raises(ValueError, match="n must be at least 1"):
            validate.at_least_one(bad, "n")
    with pytest.raises(ValueError, match="^n must be a finite number, got nan$"):
        validate.at_least_one(math.nan, "n")
    for bad in ("4", True):
        with pytest.raises(TypeError):
            validate.at_least_one(bad, "n")


# ---- sequences and texts -------------------------------------------------------------
def test_sequence_and_ids():
    assert validate.sequence((1, 2), "xs") == [1, 2]
    assert validate.sequence(iter("ab"), "xs") == [
        "a",
        "b",
    ]  # an iterator of characters is a sequence
    with pytest.raises(
        TypeError,
        match="xs must be a sequence of items, got a single string 'ab'; wrap it in a "
        "list",
    ):
        validate.sequence("ab", "xs")
    with pytest.raises(
        TypeError, match="xs must be a sequence of items, got a single string b'ab'"
    ):
        validate.sequence(b"ab", "xs")
    with pytest.raises(
        TypeError, match="xs must be a sequence of items, got None of type NoneType"
    ):
        validate.sequence(None, "xs")
    assert validate.ids([np.int64(2), 0], "ids") == [2, 0]
    assert validate.ids(np.array([3, 1]), "ids") == [3, 1]
    for bad in ([1.0], [True], ["1"], [None]):
        with pytest.raises(TypeError, match="ids must hold chunk ids"):
            validate.ids(bad, "ids")


def test_texts():
    assert validate.texts(("a", "b")) == ["a", "b"]
    assert validate.texts([]) == []
    with pytest.raises(ValueError, match="texts is empty"):
        validate.texts([], allow_empty=False)
    with pytest.raises(TypeError, match="got a single string 'abc'"):
        validate.texts("abc")
    with pytest.raises(
        TypeError, match="texts must hold only str, got 3 of type int at position 1"
    ):
        validate.texts(["a", 3])


def test_token_lists():
    assert validate.token_lists([["a"], ("b",), iter(["c"])])[2] == ["c"]
    with pytest.raises(TypeError, match="lists of terms, not strings"):
        validate.token_lists(["a b"])
    with pytest.raises(TypeError, match="got a single string"):
        validate.token_lists("a b")


def test_query():
    assert validate.query("mars") == "mars"
    assert validate.query(("mars", "moons")) == ["mars", "moons"]
    assert (
        validate.query("the of") == "the of"
    )  # only stopwords: still a query; the retriever decides
    for empty in ("", "   \n", [], ()):
        with pytest.raises(ValueError, match="query is empty"):
            validate.query(empty)
    for bad in (None, 3, 2.5, b"mars"):
        with pytest.raises(
            TypeError,
            match="query must be a non-empty str or a non-empty sequence of str terms",
        ):
            validate.query(bad)
    with pytest.raises(TypeError, match="term 1 is 3 of type int"):
        validate.query(["mars", 3])
    with pytest.raises(TypeError, match="^question must be a non-empty str, got"):
        validate.query(["mars"], "question", terms=False)


def test_non_empty_corpus_and_document_frequencies():
    validate.non_empty_corpus([[], ["a"]])
    with pytest.raises(ValueError, match="cannot index an empty collection"):
        validate.non_empty_corpus([])
    with pytest.raises(ValueError, match="all 2 chunks are empty after analysis"):
        validate.non_empty_corpus([[], []])
    n, N = validate.document_frequencies([0, 3], 3)
    assert n.tolist() == [0.0, 3.0] and N == 3
    with pytest.raises(ValueError, match="n must lie from 0 to N = 3"):
        validate.document_frequencies(4, 3)
    with pytest.raises(ValueError, match="N must be a whole number of at least 1"):
        validate.document_frequencies(0, 0)
    with pytest.raises(TypeError, match="N must be a whole number"):
        validate.document_frequencies(0, 3.0)


def test_the_old_per_module_checks_are_gone():
    import ragbook.evaluation.metrics
    import ragbook.retrieval.ranking
    import ragbook.retrieval.vectors

    assert not hasattr(ragbook.retrieval.ranking, "check_k")
    assert not hasattr(ragbook.evaluation.metrics, "_check_k")
    assert not hasattr(ragbook.retrieval.vectors, "_at_least_one")
