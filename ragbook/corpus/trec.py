"""TREC run and qrels files, read and written (chapter 9), the formats trec_eval and
ir-measures read:

- a run: one line per retrieved document, ``qid Q0 docid rank score tag``,
  whitespace-separated;
- qrels: one line per judgment, ``qid 0 docid relevance``, whitespace-separated.

Files are UTF-8. Readers skip empty lines and refuse anything else they cannot read
exactly, with the file name and line number in the message. Writers check everything
before creating a file, create parent folders, and never write what their reader would
refuse.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from .. import validate
from .lines import (
    as_mapping,
    check_relevance,
    check_text_id,
    numbered_lines,
    parse_int,
    parse_score,
    write_lines,
)

__all__ = ["read_trec_run", "write_trec_run", "read_trec_qrels", "write_trec_qrels"]


def _check_trec_id(value: object, what: str) -> str:
    text = check_text_id(value, what)
    if any(ch.isspace() for ch in text):
        raise ValueError(
            f"{what} {text!r} contains whitespace, which separates the fields of "
            "a TREC file"
        )
    return text


def _trec_rows(source: Path, layout: str) -> Iterator[tuple[str, list[str]]]:
    """("file:line", whitespace-separated fields) for each non-empty line, which must
    have as many fields as ``layout`` names."""
    count = len(layout.split())
    for number, line in numbered_lines(source):
        where = f"{source}:{number}"
        fields = line.split()
        if len(fields) != count:
            raise ValueError(
                f"{where}: expected {count} fields ({layout}), got {len(fields)}"
            )
        yield where, fields


def read_trec_run(path: str | os.PathLike[str]) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run file into ``{qid: [(docid, score), ...]}``, each list in
    trec_eval's order.

    trec_eval ignores the rank column and orders each query's documents by score
    descending, breaking ties by docid *descending* (``strcmp``, so byte order); this
    reader does the same, so a list here is the list trec_eval evaluates. Queries keep
    their order of first appearance. The rank must be an integer; the ``Q0`` and tag
    columns are not read. A wrong number of fields, a score that is not a finite number,
    a docid repeated within a query, or an empty file raise ValueError.
    """
    source = Path(path)
    run: dict[str, dict[str, float]] = {}
    for where, (qid, _, docid, rank, score, _) in _trec_rows(
        source, "qid Q0 docid rank score tag"
    ):
        parse_int(rank, "rank", where)
        value = parse_score(score, where)
        scored = run.setdefault(qid, {})
        if docid in scored:
            raise ValueError(
                f"{where}: document {docid!r} is repeated in the ranking of query "
                f"{qid!r}"
            )
        scored[docid] = value
    if not run:
        raise ValueError(f"{source}: the run is empty (no non-empty lines)")
    return {
        qid: sorted(scored.items(), key=lambda item: (item[1], item[0]), reverse=True)
        for qid, scored in run.items()
    }


def _score(value: object, where: str) -> float:
    return validate.real(value, f"{where}: score")


def write_trec_run(
    path: str | os.PathLike[str],
    run: Mapping[str, Sequence[tuple[str, float]]],
    tag: str = "ragbook",
) -> None:
    """Write ``run`` (``{qid: [(docid, score), ...]}``, best first) as a TREC run file.

    Ranks are written 1..n in list order and scores with ``repr``, so they read back
    exactly. trec_eval ranks by score, not by the rank column, so scores must not
    increase down a list (that raises); documents with tied scores are ordered by
    trec_eval, and by :func:`read_trec_run`, by docid descending. Ids and the tag must
    be non-empty and without whitespace; a query with an empty list, a docid repeated
    within a query, or an empty run raise.
    """
    _check_trec_id(tag, "the run tag")
    as_mapping(run, "run", "from query id to a list of (docid, score) pairs")
    if not run:
        raise ValueError("the run is empty; there is nothing to write")
    lines = []
    for qid, ranking in run.items():
        _check_trec_id(qid, "a query id")
        ranking = validate.sequence(
            ranking, f"the ranking of query {qid!r}", "(docid, score) pairs"
        )
        if not ranking:
            raise ValueError(
                f"the ranking of query {qid!r} is empty; leave the query out of "
                "the run instead"
            )
        seen: set[str] = set()
        previous = math.inf
        for rank, entry in enumerate(ranking, start=1):
            where = f"query {qid!r}, rank {rank}"
            if (
                isinstance(entry, (str, bytes))
                or not isinstance(entry, Sequence)
                or len(entry) != 2
            ):
                raise ValueError(
                    f"{where}: each entry must be a (docid, score) pair, got {entry!r}"
                )
            docid = _check_trec_id(entry[0], f"{where}: the docid")
            score = _score(entry[1], where)
            if docid in seen:
                raise ValueError(
                    f"{where}: document {docid!r} is repeated in the ranking"
                )
            if score > previous:
                raise ValueError(
                    f"{where}: score {score!r} is above the score {previous!r} at "
                    f"rank {rank - 1}; "
                    "a ranking is best first, and trec_eval orders by score, not "
                    "by the rank column"
                )
            seen.add(docid)
            previous = score
            lines.append(f"{qid} Q0 {docid} {rank} {score!r} {tag}")
    write_lines(Path(path), lines)


def read_trec_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid 0 docid relevance``) into
    ``{qid: {docid: relevance}}``.

    Queries and documents keep their file order. The second column (the iteration,
    always 0 in practice) is not read, as by trec_eval. A wrong number of fields, a
    relevance that is not an integer, a document judged twice for one query, or an empty
    file raise ValueError.
    """
    source = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    for where, (qid, _, docid, relevance) in _trec_rows(
        source, "qid 0 docid relevance"
    ):
        value = parse_int(relevance, "relevance", where)
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise ValueError(
                f"{where}: document {docid!r} is judged twice for query {qid!r}"
            )
        judged[docid] = value
    if not qrels:
        raise ValueError(f"{source}: the qrels are empty (no non-empty lines)")
    return qrels


def write_trec_qrels(
    path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, int]]
) -> None:
    """Write ``qrels`` (``{qid: {docid: relevance}}``) as a TREC qrels file, iteration
    column 0.

    Ids must be non-empty and without whitespace and relevances ints; a query with no
    judgments or empty qrels raise, since the file could not hold them.
    """
    as_mapping(qrels, "qrels", "from query id to {document id: relevance}")
    if not qrels:
        raise ValueError("the qrels are empty; there is nothing to write")
    lines = []
    for qid, judged in qrels.items():
        _check_trec_id(qid, "a query id")
        as_mapping(
            judged, f"the qrels of query {qid!r}", "from document id to relevance"
        )
        if not judged:
            raise ValueError(
                f"the qrels of query {qid!r} are empty; leave the query out instead"
            )
        for docid, relevance in judged.items():
            _check_trec_id(docid, f"a document id of query {qid!r}")
            lines.append(
                f"{qid} 0 {docid} "
                f"{check_relevance(relevance, f'qrels[{qid!r}][{docid!r}]')}"
            )
    write_lines(Path(path), lines)
