"""The argument checks that every ragbook function and constructor shares.

One rule for bad input everywhere: a value of the wrong type raises ``TypeError``, a
value of the right type outside what is allowed raises ``ValueError``, and every message
names the argument, shows the offending value (``repr``) and says what is allowed. The
checks return the value in a plain form (an ``int``, a ``float``, a list, an array), so
a caller can write ``k = validate.k(k)``.

- numbers: :func:`whole` (ints, NumPy ints too; never bool), :func:`count` (>= 0),
  :func:`k` (>= 1), :func:`real` (finite ints or floats, NumPy's too; never bool or
  str), :func:`probability`, :func:`flag`;
- arrays: :func:`finite_array` (numbers only, no nan or inf, optional dimension and
  emptiness checks), :func:`at_least_one` (numbers or arrays of them, each at least 1);
- sequences: :func:`sequence` (any iterable but a bare str or bytes), :func:`ids` (of
  ints);
- texts: :func:`text`, :func:`texts` (a sequence of str, never a bare str or bytes),
  :func:`token_lists`, :func:`query` (a non-empty str or a non-empty sequence of str
  terms), :func:`non_empty_corpus` (a collection with at least one term after analysis),
  and :func:`document_frequencies` (n from 0 to N for the idf formulas).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "whole",
    "count",
    "k",
    "real",
    "probability",
    "flag",
    "finite_array",
    "at_least_one",
    "text",
    "texts",
    "sequence",
    "ids",
    "token_lists",
    "query",
    "non_empty_corpus",
    "document_frequencies",
]


def _type_name(value: object) -> str:
    return type(value).__name__


# ---- numbers -------------------------------------------------------------------------
def _bounds(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" of at least {minimum}"
    if maximum is not None:
        return f" of at most {maximum}"
    return ""


def whole(
    value: object, name: str, minimum: int | None = None, maximum: int | None = None
) -> int:
    """``value`` as an int: a Python or NumPy integer (not a bool) within [minimum,
    maximum]."""
    if type(value) is not int and (
        isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
    ):
        allowed = f"{name} must be a whole number{_bounds(minimum, maximum)}"
        raise TypeError(f"{allowed}, got {value!r} of type {_type_name(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (
        maximum is not None and value > maximum
    ):
        allowed = f"{name} must be a whole number{_bounds(minimum, maximum)}"
        raise ValueError(f"{allowed}, got {value!r}")
    return value


def count(value: object, name: str) -> int:
    """A whole number of at least 0 (a size, a number of items)."""
    return whole(value, name, minimum=0)


def k(value: object, name: str = "k") -> int:
    """A cutoff: a whole number of at least 1."""
    return whole(value, name, minimum=1)


def real(
    value: object,
    name: str,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    below: float | None = None,
) -> float:
    """``value`` as a float: a finite int or float (NumPy's included; not a bool, not a
    str).

    ``minimum`` and ``maximum`` are inclusive bounds, ``above`` and ``below`` strict
    ones.
    """
    parts = []
    if minimum is not None and maximum is not None:
        parts.append(f"in [{minimum}, {maximum}]")
        minimum_text = maximum_text = False
    else:
        minimum_text = maximum_text = True
    if minimum is not None and minimum_text:
        parts.append(f"at least {minimum}")
    if above is not None:
        parts.append(f"above {above}")
    if maximum is not None and maximum_text:
        parts.append(f"at most {maximum}")
    if below is not None:
        parts.append(f"below {below}")
    allowed = f"{name} must be a finite number" + (
        " " + " and ".join(parts) if parts else ""
    )
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{allowed}, got {value!r} of type {_type_name(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{allowed}, got {value!r}")
    if (
        (minimum is not None and number < minimum)
        or (maximum is not None and number > maximum)
        or (above is not None and number <= above)
        or (below is not None and number >= below)
    ):
        raise ValueError(f"{allowed}, got {value!r}")
    return number


def probability(value: object, name: str) -> float:
    """A finite number in [0, 1]."""
    return real(value, name, minimum=0, maximum=1)


def flag(value: object, name: str) -> bool:
    """``value`` as a bool: only ``True`` or ``False`` (NumPy's included), not 0, 1 or a
    str."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name} must be True or False, got {value!r} of type {_type_name(value)}"
        )
    return bool(value)


# ---- arrays --------------------------------------------------------------------------
def finite_array(
    values: object,
    name: str,
    ndim: int | None = None,
    dtype=np.float64,
    allow_empty: bool = True,
) -> np.ndarray:
    """``values`` as a NumPy array of ``dtype``: numbers only (no str, bool or None),
    all finite.

    ``ndim`` requires that many dimensions; ``allow_empty=False`` refuses an array
    without elements; ``dtype=None`` keeps the array's own (integer or floating) type.
    """
    if values is None or isinstance(values, (str, bytes)):
        raise TypeError(
            f"{name} must be numbers, got {values!r} of type {_type_name(values)}"
        )
    try:
        raw = np.asarray(values)
    except ValueError as error:  # ragged nested sequences
        raise ValueError(
            f"{name} must be a regular array of numbers, got {values!r}: {error}"
        ) from None
    if raw.dtype.kind not in "iuf" and raw.size:
        what = {
            "b": "booleans",
            "U": "strings",
            "S": "bytes",
            "c": "complex numbers",
        }.get(raw.dtype.kind, "objects")
        raise TypeError(f"{name} must be real numbers, got {what} ({_short(values)})")
    array = raw if dtype is None else raw.astype(dtype, copy=False)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimension{'s' if ndim != 1 else ''}, got "
            f"shape {array.shape}"
        )
    if not allow_empty and array.size == 0:
        raise ValueError(f"{name} is empty; it needs at least one number")
    bad = ~np.isfinite(array) if array.dtype.kind == "f" else None
    if bad is not None and bad.any():
        if array.ndim == 0:
            raise ValueError(f"{name} must be a finite number, got {values!r}")
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        position = where[0] if len(where) == 1 else where
        raise ValueError(
            f"{name} must be finite numbers (no nan or inf), got {array[where]!r} "
            f"at position {position}"
        )
    return array


def at_least_one(value: object, name: str) -> np.ndarray:
    """A number or an array of numbers (a whole curve at once), every one finite and at
    least 1."""
    array = finite_array(value, name)
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name} must be at least 1, got {value!r} of type {_type_name(value)}"
        )
    if array.size == 0:
        raise ValueError(f"{name} is empty; it needs at least one number")
    if not np.all(array >= 1):
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return array


def _short(values: object) -> str:
    text = repr(values)
    return text if len(text) <= 80 else text[:77] + "..."


# ---- texts ---------------------------------------------------------------------------
def text(value: object, name: str) -> str:
    """``value`` itself, if it is a str."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str, got {_short(value)} of type {_type_name(value)}"
        )
    return value


def sequence(value: object, name: str, what: str = "items") -> list:
    """``value`` as a list: any iterable except a bare str or bytes (which would give
    characters)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(
            f"{name} must be a sequence of {what}, got a single string "
            f"{_short(value)}; wrap it in a list"
        )
    if value is None or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a sequence of {what}, got {_short(value)} of type "
            f"{_type_name(value)}"
        )
    return list(value)


def ids(value: object, name: str, what: str = "chunk ids (ints)") -> list[int]:
    """``value`` as a list of ints: a sequence (not a str) of Python or NumPy integers,
    never bools."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        return value.ravel().tolist()
    items = sequence(value, name, what)
    for position, item in enumerate(items):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(
                f"{name} must hold {what}, got {_short(item)} of type "
                f"{_type_name(item)} at position {position}"
            )
    return [int(item) for item in items]


def texts(value: object, name: str = "texts", allow_empty: bool = True) -> list[str]:
    """``value`` as a list of str; a bare str or bytes, and any item that is not a str,
    is refused."""
    items = sequence(value, name, "str")
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(
                f"{name} must hold only str, got {_short(item)} of type "
                f"{_type_name(item)} at position {position}"
            )
    if not allow_empty and not items:
        raise ValueError(f"{name} is empty; it needs at least one text")
    return items


def token_lists(value: object, name: str = "token_lists") -> list:
    """``value`` as a list with one sequence of terms per chunk; a str in place of a
    list is refused.

    The terms themselves are not looked at here (a collection has millions): check the
    distinct terms.
    """
    rows = sequence(value, name, "lists of terms")
    for position, row in enumerate(rows):
        if isinstance(row, (str, bytes)):
            raise TypeError(
                f"{name} must hold lists of terms, not strings ({_short(row)} at "
                f"position {position})"
            )
        if not isinstance(row, (list, tuple)):
            rows[position] = sequence(row, f"{name}[{position}]", "terms")
    return rows


def query(value: object, name: str = "query", terms: bool = True) -> str | list[str]:
    """A query: a str with some non-whitespace, or (with ``terms``) a non-empty sequence
    of str terms.

    A query whose terms are all stopwords or unknown is still a query; what a retriever
    does with it is the retriever's business. ``None``, an empty str and an empty
    sequence are not queries.
    """
    allowed = "a non-empty str" + (
        " or a non-empty sequence of str terms" if terms else ""
    )
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"{name} is empty: it must be {allowed}, got {value!r}")
        return value
    if (
        not terms
        or value is None
        or isinstance(value, (bytes, numbers.Number))
        or not isinstance(value, Iterable)
    ):
        raise TypeError(
            f"{name} must be {allowed}, got {_short(value)} of type {_type_name(value)}"
        )
    items = list(value)
    if not items:
        raise ValueError(f"{name} is empty: it must be {allowed}, got {value!r}")
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(
                f"{name} must be {allowed}; term {position} is {_short(item)} of "
                f"type {_type_name(item)}"
            )
    return items


def non_empty_corpus(
    token_lists: Sequence[Sequence[Any]], name: str = "the collection"
) -> None:
    """Refuse a collection with no chunks, or whose chunks have no term at all after
    analysis."""
    if len(token_lists) == 0:
        raise ValueError(f"cannot index an empty collection: {name} has no chunks")
    if not any(len(tokens) for tokens in token_lists):
        raise ValueError(
            f"cannot index {name}: all {len(token_lists)} chunks are empty after "
            "analysis "
            "(only stopwords, punctuation or whitespace)"
        )


def document_frequencies(n: object, N: object) -> tuple[np.ndarray, int]:
    """Document frequencies ``n`` (a number or an array, each from 0 to N) and the
    collection size N >= 1."""
    N = whole(N, "N", minimum=1)
    frequencies = finite_array(n, "n")
    if frequencies.size and (frequencies.min() < 0 or frequencies.max() > N):
        bad = frequencies.min() if frequencies.min() < 0 else frequencies.max()
        raise ValueError(
            f"n must lie from 0 to N = {N} (a number of chunks), got {bad!r}"
        )
    return frequencies, N
