"""How retrieval and generation errors compose into end-to-end accuracy (chapter 1).

With r the share of questions whose whole evidence is in the prompt (not recall@k), a
the generator's accuracy when it is and a0 when it is not (correct refusals of
unanswerable questions included), the law of total probability gives

    accuracy = r * a + (1 - r) * a0.
"""

from __future__ import annotations

from .. import validate

__all__ = ["end_to_end_accuracy", "evidence_rate_needed"]


def _probability(name: str, value: float) -> float:
    return validate.probability(value, f"{name} (a probability)")


def end_to_end_accuracy(
    evidence_rate: float, accuracy_with: float, accuracy_without: float
) -> float:
    """r * a + (1 - r) * a0: the whole system's accuracy from its two measured parts,
    r the ``evidence_rate``."""
    r = _probability("evidence_rate", evidence_rate)
    a = _probability("accuracy_with", accuracy_with)
    a0 = _probability("accuracy_without", accuracy_without)
    return r * a + (1.0 - r) * a0


def evidence_rate_needed(
    target: float, accuracy_with: float, accuracy_without: float
) -> float:
    """The evidence rate r that makes r * a + (1 - r) * a0 equal ``target``.

    It is (target - a0) / (a - a0).

    A result above 1 means no retriever can reach the target with this generator; below
    0 means any retriever does. Raises when a == a0, since the evidence rate then has no
    effect at all.
    """
    t = _probability("target", target)
    a = _probability("accuracy_with", accuracy_with)
    a0 = _probability("accuracy_without", accuracy_without)
    if a == a0:
        raise ValueError(
            f"accuracy_with equals accuracy_without ({a}): the evidence rate does not "
            "change accuracy"
        )
    return (t - a0) / (a - a0)
