"""BEIR folders, read and written (chapter 9): ``corpus.jsonl`` (or ``.jsonl.gz``),
``queries.jsonl`` and ``qrels/<split>.tsv``, the layout of the BEIR benchmark's data
sets, so that your own data meets the tools that read them.

Files are UTF-8. The reader skips empty lines and refuses anything else it cannot read
exactly, with the file name and line number in the message. The writer checks
everything before creating a file, creates parent folders, and never writes what the
reader would refuse.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .. import validate
from .lines import (
    as_mapping,
    check_relevance,
    check_text_id,
    numbered_lines,
    parse_int,
    write_lines,
)

__all__ = ["BeirData", "read_beir", "write_beir"]


_QRELS_HEADER = "query-id\tcorpus-id\tscore"


@dataclass(frozen=True)
class BeirData:
    """A BEIR dataset: documents by id (``{"title", "text"}``), query texts by id, and
    one split's qrels."""

    corpus: dict[str, dict]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


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


def _read_jsonl(
    path: Path, fields: tuple[str, ...], kind: str, kinds: str
) -> dict[str, dict[str, Any]]:
    """Objects of a BEIR jsonl file by ``_id``, each reduced to ``fields`` (all required
    strings)."""
    records: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for number, line in numbered_lines(path, packed=path.suffix == ".gz"):
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
    for number, line in numbered_lines(path):
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
        relevance = parse_int(score.strip(), "score", where)
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
    as_mapping(corpus, "corpus", "from document id to {'title': ..., 'text': ...}")
    as_mapping(queries, "queries", "from query id to text")
    as_mapping(qrels, "qrels", "from query id to {document id: relevance}")
    validate.flag(compress, "compress")
    if not corpus:
        raise ValueError("corpus is empty; a BEIR folder needs at least one document")
    if not queries:
        raise ValueError("queries is empty; a BEIR folder needs at least one query")
    if not qrels:
        raise ValueError("qrels is empty; a BEIR split needs at least one judgment")
    corpus_lines = []
    for docid, doc in corpus.items():
        check_text_id(docid, "a document id")
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
        check_text_id(qid, "a query id")
        if not isinstance(text, str):
            raise TypeError(
                f"the text of query {qid!r} must be a str, got {type(text).__name__}"
            )
        query_lines.append(json.dumps({"_id": qid, "text": text}, ensure_ascii=False))
    qrels_lines = [_QRELS_HEADER]
    for qid, judged in qrels.items():
        check_text_id(qid, "a query id in qrels")
        if qid not in queries:
            raise ValueError(f"qrels mention query {qid!r}, which is not in queries")
        as_mapping(
            judged, f"the qrels of query {qid!r}", "from document id to relevance"
        )
        if not judged:
            raise ValueError(
                f"qrels of query {qid!r} are empty; leave the query out of qrels "
                "instead"
            )
        for docid, relevance in judged.items():
            check_text_id(docid, f"a document id in the qrels of query {qid!r}")
            for value in (qid, docid):
                if any(ch in value for ch in "\t\r\n"):
                    raise ValueError(
                        f"id {value!r} contains a tab or line break, which a .tsv "
                        "row cannot hold"
                    )
            grade = check_relevance(relevance, f"qrels[{qid!r}][{docid!r}]")
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
    write_lines(root / "queries.jsonl", query_lines)
    write_lines(root / "qrels" / f"{split}.tsv", qrels_lines)
