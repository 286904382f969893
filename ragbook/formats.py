"""Readers and writers for the standard retrieval data formats, so your own data meets
standard tools.

Chapter 9 explains each format and why evaluation tools (trec_eval, ir-measures, BEIR)
expect it.

- BEIR folder: ``corpus.jsonl`` (or ``.jsonl.gz``), ``queries.jsonl`` and
  ``qrels/<split>.tsv``.
- TREC run: one line per retrieved document, ``qid Q0 docid rank score tag``,
  whitespace-separated.
- TREC qrels: one line per judgment, ``qid 0 docid relevance``, whitespace-separated.

Files are UTF-8. Readers skip empty lines and refuse anything else they cannot read
exactly, with the file name and line number in the message. Writers check everything
before creating a file, create parent folders, and never write what their reader would
refuse.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from . import validate

__all__ = [
    "BeirData",
    "read_beir",
    "write_beir",
    "read_trec_run",
    "write_trec_run",
    "read_trec_qrels",
    "write_trec_qrels",
]

_QRELS_HEADER = "query-id\tcorpus-id\tscore"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class BeirData:
    """A BEIR dataset: documents by id (``{"title", "text"}``), query texts by id, and
    one split's qrels."""

    corpus: dict[str, dict]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


# --- reading helpers ------------------------------------------------------------------


def _lines(path: Path, packed: bool = False) -> Iterator[tuple[int, str]]:
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


def _parse_int(field: str, what: str, where: str) -> int:
    if not _INTEGER.fullmatch(field):
        raise ValueError(f"{where}: {what} {field!r} is not an integer")
    return int(field)


def _parse_score(field: str, where: str) -> float:
    if not _DECIMAL.fullmatch(field):
        raise ValueError(f"{where}: score {field!r} is not a finite decimal number")
    value = float(field)
    if not math.isfinite(value):  # a decimal too large for a float, such as 1e999
        raise ValueError(f"{where}: score {field!r} does not fit in a finite float")
    return value


def _folder(folder: str | os.PathLike[str]) -> Path:
    path = Path(folder)
    if not path.exists():
        raise FileNotFoundError(f"no BEIR folder at {path}")
    if not path.is_dir():
        raise NotADirectoryError(
            f"{path} is a file; a BEIR folder is a directory holding corpus.jsonl"
        )
    return path


def _check_split(split: str) -> None:
    validate.text(split, "split")
    if not split or split in {".", ".."} or "/" in split or "\\" in split:
        raise ValueError(
            f"split must be a plain file name such as 'test' or 'dev', got {split!r}"
        )


# --- BEIR -----------------------------------------------------------------------------


def _read_jsonl(
    path: Path, fields: tuple[str, ...], kind: str, kinds: str
) -> dict[str, dict[str, Any]]:
    """Objects of a BEIR jsonl file by ``_id``, each reduced to ``fields`` (all required
    strings)."""
    records: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for number, line in _lines(path, packed=path.suffix == ".gz"):
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{where}: invalid JSON ({error.msg} at column {error.colno})"
            ) from None
        if not isinstance(obj, dict):
            raise ValueError(
                f"{where}: expected a JSON object, got a JSON {type(obj).__name__}"
            )
        if "_id" not in obj:
            raise ValueError(
                f"{where}: {kind} has no '_id'; every line needs '_id', "
                f"{', '.join(map(repr, fields))}"
            )
        key = obj["_id"]
        if not isinstance(key, str) or not key:
            raise ValueError(f"{where}: '_id' must be a non-empty string, got {key!r}")
        for name in fields:
            if name not in obj:
                raise ValueError(
                    f"{where}: {kind} {key!r} has no {name!r} (it may be empty, "
                    "not absent)"
                )
            if not isinstance(obj[name], str):
                raise ValueError(
                    f"{where}: {name!r} of {kind} {key!r} must be a string, got "
                    f"{obj[name]!r}"
                )
        if key in records:
            raise ValueError(
                f"{where}: duplicate {kind} id {key!r}, first on line {first_line[key]}"
            )
        first_line[key] = number
        records[key] = {name: obj[name] for name in fields}
    if not records:
        raise ValueError(f"{path}: no {kinds} (the file has no non-empty lines)")
    return records


def _read_beir_qrels(
    path: Path, queries: Mapping[str, str]
) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    header_seen = False
    unknown: dict[str, int] = {}  # query id -> first line it appears on
    for number, line in _lines(path):
        where = f"{path}:{number}"
        if not header_seen:
            if line != _QRELS_HEADER:
                raise ValueError(
                    f"{where}: expected the header {_QRELS_HEADER!r}, got {line!r}"
                )
            header_seen = True
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError(
                f"{where}: expected 3 tab-separated fields (query-id, corpus-id, "
                f"score), got {len(fields)}"
            )
        qid, docid, score = fields
        if not qid or not docid:
            raise ValueError(f"{where}: query-id and corpus-id must not be empty")
        relevance = _parse_int(score.strip(), "score", where)
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            raise ValueError(
                f"{where}: duplicate judgment of document {docid!r} for query {qid!r}"
            )
        judged[docid] = relevance
        if qid not in queries:
            unknown.setdefault(qid, number)
    if not qrels:
        raise ValueError(f"{path}: no judgments (only the header, or nothing)")
    if unknown:
        listed = ", ".join(
            f"{qid!r} (line {line})" for qid, line in list(unknown.items())[:10]
        )
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        raise ValueError(
            f"{path}: qrels mention query ids not in queries.jsonl: {listed}{more}"
        )
    return qrels


def read_beir(folder: str | os.PathLike[str], split: str = "test") -> BeirData:
    """Read a BEIR folder: ``corpus.jsonl`` (or ``corpus.jsonl.gz``), ``queries.jsonl``,
    ``qrels/<split>.tsv``.

    Every query of ``queries.jsonl`` is kept, judged in this split or not; qrels may
    name documents that are not in the corpus (they count as relevant and
    unretrievable). Only ``title`` and ``text`` of a document and ``text`` of a query
    are returned; ``metadata`` and other keys are not read. Missing files raise
    FileNotFoundError; malformed lines, duplicate ids, unknown query ids in the qrels,
    an empty file, or both corpus files present raise ValueError.
    """
    _check_split(split)
    root = _folder(folder)
    plain, packed = root / "corpus.jsonl", root / "corpus.jsonl.gz"
    if plain.exists() and packed.exists():
        raise ValueError(
            f"{root} holds both corpus.jsonl and corpus.jsonl.gz; keep one, the "
            "corpus is ambiguous"
        )
    if not plain.exists() and not packed.exists():
        raise FileNotFoundError(f"{root} has no corpus.jsonl or corpus.jsonl.gz")
    corpus = _read_jsonl(
        plain if plain.exists() else packed, ("title", "text"), "document", "documents"
    )
    queries = {
        qid: obj["text"]
        for qid, obj in _read_jsonl(
            root / "queries.jsonl", ("text",), "query", "queries"
        ).items()
    }
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        found = (
            sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
            if (root / "qrels").is_dir()
            else []
        )
        available = ", ".join(map(repr, found)) if found else "none"
        raise FileNotFoundError(
            f"{root} has no qrels/{split}.tsv; the splits there are: {available}"
        )
    return BeirData(corpus, queries, _read_beir_qrels(qrels_path, queries))


def _check_text_id(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    return value


def _check_relevance(value: object, where: str) -> int:
    return validate.whole(value, f"{where}: relevance")


def _mapping(value: object, name: str, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping {what}, got {type(value).__name__}")
    return value


def write_beir(
    folder: str | os.PathLike[str],
    corpus: Mapping[str, Mapping[str, str]],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    split: str = "test",
    compress: bool = False,
) -> None:
    """Write a BEIR folder that :func:`read_beir` reads back equal, ``corpus.jsonl.gz``
    if ``compress``.

    Each document is a mapping with exactly the keys ``title`` and ``text`` (strings).
    Every query id in ``qrels`` must be in ``queries``, and ids in ``qrels`` must not
    contain tabs or line breaks. Writing one corpus file where the other already exists
    raises, since the folder would be ambiguous.
    """
    _check_split(split)
    _mapping(corpus, "corpus", "from document id to {'title': ..., 'text': ...}")
    _mapping(queries, "queries", "from query id to text")
    _mapping(qrels, "qrels", "from query id to {document id: relevance}")
    validate.flag(compress, "compress")
    if not corpus:
        raise ValueError("corpus is empty; a BEIR folder needs at least one document")
    if not queries:
        raise ValueError("queries is empty; a BEIR folder needs at least one query")
    if not qrels:
        raise ValueError("qrels is empty; a BEIR split needs at least one judgment")
    corpus_lines = []
    for docid, doc in corpus.items():
        _check_text_id(docid, "a document id")
        if not isinstance(doc, Mapping) or set(doc) != {"title", "text"}:
            keys = sorted(doc) if isinstance(doc, Mapping) else type(doc).__name__
            raise ValueError(
                f"document {docid!r} must be a mapping with exactly 'title' and "
                f"'text', got {keys}"
            )
        for name in ("title", "text"):
            if not isinstance(doc[name], str):
                raise TypeError(
                    f"{name!r} of document {docid!r} must be a str, got "
                    f"{type(doc[name]).__name__}"
                )
        corpus_lines.append(
            json.dumps(
                {"_id": docid, "title": doc["title"], "text": doc["text"]},
                ensure_ascii=False,
            )
        )
    query_lines = []
    for qid, text in queries.items():
        _check_text_id(qid, "a query id")
        if not isinstance(text, str):
            raise TypeError(
                f"the text of query {qid!r} must be a str, got {type(text).__name__}"
            )
        query_lines.append(json.dumps({"_id": qid, "text": text}, ensure_ascii=False))
    qrels_lines = [_QRELS_HEADER]
    for qid, judged in qrels.items():
        _check_text_id(qid, "a query id in qrels")
        if qid not in queries:
            raise ValueError(f"qrels mention query {qid!r}, which is not in queries")
        _mapping(judged, f"the qrels of query {qid!r}", "from document id to relevance")
        if not judged:
            raise ValueError(
                f"qrels of query {qid!r} are empty; leave the query out of qrels "
                "instead"
            )
        for docid, relevance in judged.items():
            _check_text_id(docid, f"a document id in the qrels of query {qid!r}")
            for value in (qid, docid):
                if any(ch in value for ch in "\t\r\n"):
                    raise ValueError(
                        f"id {value!r} contains a tab or line break, which a .tsv "
                        "row cannot hold"
                    )
            grade = _check_relevance(relevance, f"qrels[{qid!r}][{docid!r}]")
            qrels_lines.append(f"{qid}\t{docid}\t{grade}")

    root = Path(folder)
    other = root / ("corpus.jsonl" if compress else "corpus.jsonl.gz")
    if other.exists():
        raise ValueError(
            f"{root} already holds {other.name}; writing the other corpus file "
            "would make it ambiguous"
        )
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    corpus_text = "".join(line + "\n" for line in corpus_lines).encode("utf-8")
    if compress:
        with (
            open(root / "corpus.jsonl.gz", "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,
        ):
            packed.write(corpus_text)
    else:
        (root / "corpus.jsonl").write_bytes(corpus_text)
    _write_lines(root / "queries.jsonl", query_lines)
    _write_lines(root / "qrels" / f"{split}.tsv", qrels_lines)


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)


# --- TREC -----------------------------------------------------------------------------


def _check_trec_id(value: object, what: str) -> str:
    text = _check_text_id(value, what)
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
    for number, line in _lines(source):
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
        _parse_int(rank, "rank", where)
        value = _parse_score(score, where)
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
    _mapping(run, "run", "from query id to a list of (docid, score) pairs")
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
    _write_lines(Path(path), lines)


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
        value = _parse_int(relevance, "relevance", where)
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
    _mapping(qrels, "qrels", "from query id to {document id: relevance}")
    if not qrels:
        raise ValueError("the qrels are empty; there is nothing to write")
    lines = []
    for qid, judged in qrels.items():
        _check_trec_id(qid, "a query id")
        _mapping(judged, f"the qrels of query {qid!r}", "from document id to relevance")
        if not judged:
            raise ValueError(
                f"the qrels of query {qid!r} are empty; leave the query out instead"
            )
        for docid, relevance in judged.items():
            _check_trec_id(docid, f"a document id of query {qid!r}")
            lines.append(
                f"{qid} 0 {docid} "
                f"{_check_relevance(relevance, f'qrels[{qid!r}][{docid!r}]')}"
            )
    _write_lines(Path(path), lines)
