"""Temperature softmax and error composition against the reference texts' worked
numbers."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy.special import softmax as scipy_softmax

from ragbook.evaluation.composition import end_to_end_accuracy, evidence_rate_needed
from ragbook.generation.sampling import softmax, zero_temperature_limit


def test_seed_003_temperature_example():
    logits = [math.log(4), math.log(2), 0.0]
    np.testing.assert_allclose(softmax(logits, 1.0), [4 / 7, 2 / 7, 1 / 7], rtol=1e-12)
    np.testing.assert_allclose(
        softmax(logits, 0.5), [16 / 21, 4 / 21, 1 / 21], rtol=1e-12
    )
    np.testing.assert_allclose(
        softmax([math.log(2), 0.0], 1.0), [2 / 3, 1 / 3], rtol=1e-12
    )
    np.testing.assert_allclose(
        softmax([math.log(2), 0.0], 0.5), [4 / 5, 1 / 5], rtol=1e-12
    )


def test_limit_of_small_temperatures():
    logits = [math.log(4), math.log(2), 0.0]
    np.testing.assert_allclose(softmax(logits, 0.01), [1, 0, 0], atol=1e-12)
    np.testing.assert_array_equal(zero_temperature_limit(logits), [1, 0, 0])
    np.testing.assert_array_equal(
        zero_temperature_limit([2.0, 5.0, 5.0]), [0, 0.5, 0.5]
    )


@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=12),
    st.floats(0.05, 20),
)
def test_agrees_with_scipy(logits, temperature):
    np.testing.assert_allclose(
        softmax(logits, temperature),
        scipy_softmax(np.array(logits) / temperature),
        rtol=1e-9,
        atol=1e-15,
    )


def test_softmax_refuses_bad_input():
    with pytest.raises(ValueError, match="positive finite"):
        softmax([1.0, 2.0], 0)
    with pytest.raises(ValueError, match="non-empty"):
        softmax([], 1.0)
    with pytest.raises(ValueError, match="finite"):
        softmax([1.0, float("nan")], 1.0)


def test_seed_001_error_composition():
    assert end_to_end_accuracy(0.9, 0.85, 0.2) == pytest.approx(0.9 * 0.85 + 0.1 * 0.2)
    assert round(end_to_end_accuracy(0.9, 0.85, 0.2), 4) == 0.785
    assert round(end_to_end_accuracy(0.95, 0.85, 0.2), 4) == 0.8175
    assert round(end_to_end_accuracy(0.9, 0.95, 0.2), 4) == 0.875
    assert round(end_to_end_accuracy(0.8, 0.9, 0.1), 4) == 0.74


def test_evidence_rate_needed_inverts_the_composition():
    # (0.875 - 0.2) / (0.85 - 0.2) = 0.675 / 0.65 by hand
    assert evidence_rate_needed(0.875, 0.85, 0.2) == pytest.approx(0.675 / 0.65)
    assert evidence_rate_needed(0.785, 0.85, 0.2) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="does not change"):
        evidence_rate_needed(0.5, 0.3, 0.3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        end_to_end_accuracy(1.5, 0.5, 0.5)


def test_top_p_keeps_the_smallest_nucleus_by_hand():
    from ragbook.generation.sampling import top_p

    probs = [4 / 7, 2 / 7, 1 / 7]
    # 4/7 < 0.8 <= 6/7: the two most probable tokens, renormalised to 2/3 and 1/3
    assert top_p(probs, 0.8) == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert top_p(probs, 0.5) == pytest.approx([1.0, 0.0, 0.0])
    assert top_p(probs, 1.0) == pytest.approx(probs)
    # exactly reaching p closes the set
    assert top_p([0.5, 0.25, 0.25], 0.75) == pytest.approx([2 / 3, 1 / 3, 0.0])
    with pytest.raises(ValueError):
        top_p(probs, 0.0)
