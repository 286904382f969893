"""Lines of data files read and written exactly: every line numbered for the errors,
whole numbers and scores parsed strictly, ids and relevance grades checked, and files
written only once everything in them has been checked. The BEIR and TREC formats
 (:mod:`ragbook.corpus.beir`, :mod:`ragbook.corpus.trec`) are built on them.
"""

from __future__ import annotations

import gzip
import math
import re
import zlib
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from .. import validate

__all__ = [
    "numbered_lines",
    "parse_int",
    "parse_score",
    "check_text_id",
    "check_relevance",
    "as_mapping",
    "write_lines",
]


_INTEGER = re.compile(r"[+-]?[0-9]+")


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def numbered_lines(path: Path, packed: bool = False) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` for the non-empty lines of a UTF-8 file,
    gzip-compressed if ``packed``."""
    try:
        handle = gzip.open(path, "rb") if packed else open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    with handle:
        number = 0
        try:
            for number, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as error:
                    raise ValueError(
                        f"{path}:{number}: not valid UTF-8 ({error.reason})"
                    ) from None
                line = line.rstrip("\r\n")
                if line.strip():
                    yield number, line
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise ValueError(
                f"{path}: damaged or not gzip ({error}), after {number} readable lines"
            ) from None


def parse_int(field: str, what: str, where: str) -> int:
    if not _INTEGER.fullmatch(field):
        raise ValueError(f"{where}: {what} {field!r} is not an integer")
    return int(field)


def parse_score(field: str, where: str) -> float:
    if not _DECIMAL.fullmatch(field):
        raise ValueError(f"{where}: score {field!r} is not a finite decimal number")
    value = float(field)
    if not math.isfinite(value):  # a decimal too large for a float, such as 1e999
        raise ValueError(f"{where}: score {field!r} does not fit in a finite float")
    return value


def check_text_id(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    return value


def check_relevance(value: object, where: str) -> int:
    return validate.whole(value, f"{where}: relevance")


def as_mapping(value: object, name: str, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping {what}, got {type(value).__name__}")
    return value


def write_lines(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)
