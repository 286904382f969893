"""Round trips and error cases of the retrieval data formats, ragbook.corpus.beir and
ragbook.corpus.trec."""

import gzip
import json

import pytest

from ragbook.corpus.beir import BeirData, read_beir, write_beir
from ragbook.corpus.trec import (
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)

CORPUS = {
    "d1": {"title": "Mars", "text": "Mars has two small moons, Phobos and Deimos."},
    "d2": {
        "title": "",
        "text": (
            'Jupiter has dozens of moons.\nA second line, a tab\there, and "quotes".'
        ),
    },
    "d3": {"title": "Spärck Jones", "text": "Inverse document frequency — 1972. ✓"},
}
QUERIES = {
    "q1": "What moons does Mars have?",
    "q2": "Who proposed idf?",
    "q3": "Unjudged query",
}
QRELS = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1, "d9": -1}}


def write_text(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(*objects):
    return "".join(json.dumps(o) + "\n" for o in objects)


def beir_folder(tmp_path, corpus=None, queries=None, qrels=None):
    """A small BEIR folder written by hand; each part can be replaced by raw text."""
    folder = tmp_path / "beir"
    write_text(
        folder / "corpus.jsonl",
        corpus
        if corpus is not None
        else jsonl(
            {
                "_id": "d1",
                "title": "Mars",
                "text": "Two moons.",
                "metadata": {"url": "x"},
            },
            {"_id": "d2", "title": "", "text": "Jupiter."},
        ),
    )
    write_text(
        folder / "queries.jsonl",
        queries
        if queries is not None
        else jsonl(
            {"_id": "q1", "text": "Mars moons?", "metadata": {}},
        ),
    )
    write_text(
        folder / "qrels" / "test.tsv",
        qrels if qrels is not None else "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    )
    return folder


# --- BEIR -----------------------------------------------------------------------------


@pytest.mark.parametrize("compress", [False, True])
def test_beir_round_trip(tmp_path, compress):
    folder = tmp_path / "new" / "dataset"  # parent folders are created
    write_beir(folder, CORPUS, QUERIES, QRELS, split="dev", compress=compress)
    name = "corpus.jsonl.gz" if compress else "corpus.jsonl"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [name, "queries.jsonl", "qrels"]
    )
    assert (folder / "qrels" / "dev.tsv").read_text(encoding="utf-8").splitlines()[
        0
    ] == "query-id\tcorpus-id\tscore"
    data = read_beir(str(folder), split="dev")
    assert data == BeirData(CORPUS, QUERIES, QRELS)
    assert list(data.corpus) == list(CORPUS) and list(data.queries) == list(QUERIES)


def test_gz_corpus_is_real_gzip(tmp_path):
    write_beir(tmp_path, CORPUS, QUERIES, QRELS, compress=True)
    with gzip.open(tmp_path / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    assert first == {"_id": "d1", **CORPUS["d1"]}


def test_read_beir_reads_hand_written_folder_skipping_empty_lines(tmp_path):
    folder = beir_folder(
        tmp_path,
        corpus='{"_id": "d1", "title": "T", "text": "one"}\n\n   \n{"_id": "d2", '
        '"title": "", "text": "two"}\n\n',
        qrels="query-id\tcorpus-id\tscore\n\nq1\td2\t1\r\nq1\td1\t0\n",
    )
    data = read_beir(folder)
    assert data.corpus == {
        "d1": {"title": "T", "text": "one"},
        "d2": {"title": "", "text": "two"},
    }
    assert data.queries == {"q1": "Mars moons?"}
    assert data.qrels == {"q1": {"d2": 1, "d1": 0}}


def test_read_beir_falls_back_to_gz(tmp_path):
    folder = beir_folder(tmp_path)
    text = (folder / "corpus.jsonl").read_bytes()
    (folder / "corpus.jsonl").unlink()
    with gzip.open(folder / "corpus.jsonl.gz", "wb") as handle:
        handle.write(text)
    assert read_beir(folder).corpus == {
        "d1": {"title": "Mars", "text": "Two moons."},
        "d2": {"title": "", "text": "Jupiter."},
    }


def test_both_corpus_files_are_ambiguous(tmp_path):
    folder = beir_folder(tmp_path)
    with gzip.open(folder / "corpus.jsonl.gz", "wb") as handle:
        handle.write((folder / "corpus.jsonl").read_bytes())
    with pytest.raises(ValueError, match="both corpus.jsonl and corpus.jsonl.gz"):
        read_beir(folder)


def test_write_beir_refuses_to_make_a_folder_ambiguous(tmp_path):
    write_beir(tmp_path, CORPUS, QUERIES, QRELS)
    with pytest.raises(ValueError, match="already holds corpus.jsonl"):
        write_beir(tmp_path, CORPUS, QUERIES, QRELS, compress=True)
    assert not (tmp_path / "corpus.jsonl.gz").exists()


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no BEIR folder"):
        read_beir(tmp_path / "absent")


def test_missing_corpus(tmp_path):
    folder = beir_folder(tmp_path)
    (folder / "corpus.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match="no corpus.jsonl or corpus.jsonl.gz"):
        read_beir(folder)


def test_missing_queries(tmp_path):
    folder = beir_folder(tmp_path)
    (folder / "queries.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match=r"queries\.jsonl: no such file"):
        read_beir(folder)


def test_missing_split_names_the_available_ones(tmp_path):
    folder = beir_folder(tmp_path)
    with pytest.raises(
        FileNotFoundError, match=r"no qrels/dev\.tsv; the splits there are: 'test'"
    ):
        read_beir(folder, split="dev")


def test_invalid_json_gives_file_and_line(tmp_path):
    folder = beir_folder(
        tmp_path,
        corpus=(
            '{"_id": "d1", "title": "", "text": "ok"}\n\n{"_id": "d2", "title": ""\n'
        ),
    )
    with pytest.raises(ValueError, match=r"corpus\.jsonl:3: invalid JSON"):
        read_beir(folder)
    folder = beir_folder(tmp_path, queries='{"_id": "q1", "text": "ok"}\nnot json\n')
    with pytest.raises(ValueError, match=r"queries\.jsonl:2: invalid JSON"):
        read_beir(folder)


def test_a_line_that_is_not_an_object(tmp_path):
    folder = beir_folder(tmp_path, corpus='["d1", "text"]\n')
    with pytest.raises(
        ValueError, match=r"corpus\.jsonl:1: expected a JSON object, got a JSON list"
    ):
        read_beir(folder)


def test_missing_id(tmp_path):
    folder = beir_folder(
        tmp_path,
        corpus=jsonl(
            {"_id": "d1", "title": "", "text": "a"}, {"title": "", "text": "b"}
        ),
    )
    with pytest.raises(ValueError, match=r"corpus\.jsonl:2: document has no '_id'"):
        read_beir(folder)
    folder = beir_folder(tmp_path, queries=jsonl({"text": "a"}))
    with pytest.raises(ValueError, match=r"queries\.jsonl:1: query has no '_id'"):
        read_beir(folder)


def test_non_string_id_is_not_converted(tmp_path):
    folder = beir_folder(tmp_path, corpus=jsonl({"_id": 7, "title": "", "text": "a"}))
    with pytest.raises(ValueError, match="'_id' must be a non-empty string, got 7"):
        read_beir(folder)


def test_missing_text_or_title(tmp_path):
    folder = beir_folder(tmp_path, corpus=jsonl({"_id": "d1", "text": "a"}))
    with pytest.raises(
        ValueError, match=r"corpus\.jsonl:1: document 'd1' has no 'title'"
    ):
        read_beir(folder)
    folder = beir_folder(tmp_path, queries=jsonl({"_id": "q1", "text": None}))
    with pytest.raises(
        ValueError, match=r"queries\.jsonl:1: 'text' of query 'q1' must be a string"
    ):
        read_beir(folder)


def test_duplicate_ids(tmp_path):
    doc = {"_id": "d1", "title": "", "text": "a"}
    folder = beir_folder(
        tmp_path, corpus=jsonl(doc, {"_id": "d2", "title": "", "text": "b"}, doc)
    )
    with pytest.raises(
        ValueError,
        match=r"corpus\.jsonl:3: duplicate document id 'd1', first on line 1",
    ):
        read_beir(folder)
    folder = beir_folder(
        tmp_path, queries=jsonl({"_id": "q1", "text": "a"}, {"_id": "q1", "text": "b"})
    )
    with pytest.raises(
        ValueError, match=r"queries\.jsonl:2: duplicate query id 'q1', first on line 1"
    ):
        read_beir(folder)


def test_empty_corpus(tmp_path):
    folder = beir_folder(tmp_path, corpus="\n\n")
    with pytest.raises(ValueError, match=r"corpus\.jsonl: no documents"):
        read_beir(folder)


def test_empty_queries_and_header_only_qrels(tmp_path):
    folder = beir_folder(tmp_path, queries="")
    with pytest.raises(ValueError, match=r"queries\.jsonl: no queries"):
        read_beir(folder)
    folder = beir_folder(tmp_path, qrels="query-id\tcorpus-id\tscore\n")
    with pytest.raises(ValueError, match=r"test\.tsv: no judgments"):
        read_beir(folder)


def test_qrels_header_is_required(tmp_path):
    folder = beir_folder(tmp_path, qrels="q1\td1\t1\n")
    with pytest.raises(
        ValueError,
        match=r"test\.tsv:1: expected the header 'query-id\\tcorpus-id\\tscore'",
    ):
        read_beir(folder)


@pytest.mark.parametrize(
    "row, count", [("q1\td1", 2), ("q1\td1\t1\textra", 4), ("q1 d1 1", 1)]
)
def test_qrels_row_with_wrong_field_count(tmp_path, row, count):
    folder = beir_folder(
        tmp_path, qrels=f"query-id\tcorpus-id\tscore\nq1\td2\t0\n{row}\n"
    )
    with pytest.raises(
        ValueError,
        match=rf"test\.tsv:3: expected 3 tab-separated fields .*, got {count}",
    ):
        read_beir(folder)


@pytest.mark.parametrize("score", ["1.0", "high", "", "1_0"])
def test_qrels_non_integer_score(tmp_path, score):
    folder = beir_folder(
        tmp_path, qrels=f"query-id\tcorpus-id\tscore\nq1\td1\t{score}\n"
    )
    with pytest.raises(
        ValueError, match=rf"test\.tsv:2: score '{score}' is not an integer"
    ):
        read_beir(folder)


def test_qrels_duplicate_judgment(tmp_path):
    folder = beir_folder(
        tmp_path, qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t0\n"
    )
    with pytest.raises(
        ValueError,
        match=r"test\.tsv:3: duplicate judgment of document 'd1' for query 'q1'",
    ):
        read_beir(folder)


def test_qrels_with_unknown_query_ids_name_them(tmp_path):
    folder = beir_folder(
        tmp_path,
        qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq7\td1\t1\nq8\td2\t1\nq7\td2\t0\n",
    )
    with pytest.raises(
        ValueError,
        match=r"query ids not in queries\.jsonl: 'q7' \(line 3\), 'q8' \(line 4\)$",
    ):
        read_beir(folder)


def test_write_beir_errors(tmp_path):
    with pytest.raises(ValueError, match="corpus is empty"):
        write_beir(tmp_path, {}, QUERIES, QRELS)
    with pytest.raises(
        ValueError, match="qrels mention query 'q9', which is not in queries"
    ):
        write_beir(tmp_path, CORPUS, QUERIES, {"q9": {"d1": 1}})
    with pytest.raises(ValueError, match="exactly 'title' and 'text'"):
        write_beir(tmp_path, {"d1": {"text": "no title"}}, QUERIES, QRELS)
    with pytest.raises(
        TypeError, match=r"relevance must be a whole number, got 1\.0 of type float"
    ):
        write_beir(tmp_path, CORPUS, QUERIES, {"q1": {"d1": 1.0}})
    with pytest.raises(ValueError, match="tab or line break"):
        write_beir(tmp_path, CORPUS, QUERIES, {"q1": {"d\t1": 1}})
    with pytest.raises(ValueError, match="split must be a plain file name"):
        write_beir(tmp_path, CORPUS, QUERIES, QRELS, split="../test")
    assert (
        list(tmp_path.iterdir()) == []
    )  # nothing is written when the input is refused


# --- TREC runs ------------------------------------------------------------------------

RUN = {
    "q1": [
        ("d3", 12.5),
        ("d2", 1 / 3),
        ("d1", 0.1 + 0.2),
        ("d7", 1e-300),
        ("d4", -2.5e-7),
    ],
    "q2": [("doc-β", 7.0), ("d1", -1.0)],
    "10": [("x", 123456789.123456789)],
}


def test_trec_run_round_trip_is_exact(tmp_path):
    path = tmp_path / "runs" / "bm25.run"
    write_trec_run(str(path), RUN, tag="bm25")
    assert read_trec_run(path) == RUN  # floats compared exactly, query order kept


def test_written_run_has_ranks_in_list_order(tmp_path):
    path = tmp_path / "a.run"
    write_trec_run(path, {"q1": [("b", 2.0), ("a", 2.0), ("c", 1)]})
    assert (
        path.read_text(encoding="utf-8")
        == "q1 Q0 b 1 2.0 ragbook\nq1 Q0 a 2 2.0 ragbook\nq1 Q0 c 3 1.0 ragbook\n"
    )


def test_read_trec_run_orders_like_trec_eval(tmp_path):
    # The file's rank column and line order disagree with the scores on purpose:
    # trec_eval ignores both.
    path = write_text(
        tmp_path / "ties.run",
        "q1 Q0 d10 1 0.5 t\n"
        "q1 Q0 d2  2 0.5 t\n"
        "q1 Q0 a   3 0.9 t\n"
        "q1 Q0 d1  4 0.5 t\n"
        "q1 Q0 z   5 0.1 t\n"
        "q1 Q0 D9  6 0.5 t\n"
        "\n"
        "q0\tQ0\tb\t1\t1\tt\n"
        "q0 Q0 c 2 1.0 t\n",
    )
    # Score descending; ties by docid descending as strings ("d2" > "d10" > "d1" >
    # "D9").
    assert read_trec_run(path) == {
        "q1": [
            ("a", 0.9),
            ("d2", 0.5),
            ("d10", 0.5),
            ("d1", 0.5),
            ("D9", 0.5),
            ("z", 0.1),
        ],
        "q0": [("c", 1.0), ("b", 1.0)],
    }


def test_run_parsed_by_an_independent_reader(tmp_path):
    path = tmp_path / "run.txt"
    write_trec_run(path, RUN, tag="my-run")
    parsed = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, q0, docid, rank, score, tag = line.split()
        assert q0 == "Q0" and tag == "my-run"
        parsed.setdefault(qid, []).append((int(rank), docid, float(score)))
    assert parsed == {
        qid: [(r, d, s) for r, (d, s) in enumerate(ranking, start=1)]
        for qid, ranking in RUN.items()
    }


@pytest.mark.parametrize(
    "line, count",
    [("q1 Q0 d1 1 0.5", 5), ("q1 Q0 d1 1 0.5 tag extra", 7), ("q1 d1 0.5", 3)],
)
def test_run_wrong_field_count(tmp_path, line, count):
    path = write_text(tmp_path / "bad.run", f"q1 Q0 d0 1 0.9 t\n\n{line}\n")
    with pytest.raises(
        ValueError,
        match=r"bad\.run:3: expected 6 fields \(qid Q0 docid rank score tag\), got "
        rf"{count}",
    ):
        read_trec_run(path)


@pytest.mark.parametrize("score", ["high", "nan", "inf", "0x1p3", "1,5"])
def test_run_non_numeric_score(tmp_path, score):
    path = write_text(tmp_path / "bad.run", f"q1 Q0 d1 1 {score} t\n")
    with pytest.raises(
        ValueError, match=rf"bad\.run:1: score '{score}' is not a finite decimal number"
    ):
        read_trec_run(path)


def test_run_non_integer_rank(tmp_path):
    path = write_text(
        tmp_path / "bad.run", "q1 Q0 d1 0.7 1 t\n"
    )  # score and rank swapped
    with pytest.raises(ValueError, match=r"bad\.run:1: rank '0\.7' is not an integer"):
        read_trec_run(path)


def test_run_repeated_docid(tmp_path):
    path = write_text(
        tmp_path / "bad.run", "q1 Q0 d1 1 0.9 t\nq2 Q0 d1 1 0.9 t\nq1 Q0 d1 2 0.8 t\n"
    )
    with pytest.raises(
        ValueError,
        match=r"bad\.run:3: document 'd1' is repeated in the ranking of query 'q1'",
    ):
        read_trec_run(path)


def test_empty_run_file(tmp_path):
    path = write_text(tmp_path / "empty.run", "\n")
    with pytest.raises(ValueError, match="the run is empty"):
        read_trec_run(path)


def test_write_trec_run_errors(tmp_path):
    path = tmp_path / "out.run"
    with pytest.raises(
        ValueError,
        match=r"query 'q1', rank 2: score 0\.9 is above the score 0\.5 at rank 1",
    ):
        write_trec_run(path, {"q1": [("a", 0.5), ("b", 0.9)]})
    with pytest.raises(
        ValueError, match=r"query 'q1', rank 2: document 'a' is repeated"
    ):
        write_trec_run(path, {"q1": [("a", 0.5), ("a", 0.4)]})
    with pytest.raises(ValueError, match="contains whitespace"):
        write_trec_run(path, {"q1": [("a doc", 0.5)]})
    with pytest.raises(ValueError, match="the run tag 'my run' contains whitespace"):
        write_trec_run(path, {"q1": [("a", 0.5)]}, tag="my run")
    with pytest.raises(ValueError, match="ranking of query 'q1' is empty"):
        write_trec_run(path, {"q1": []})
    with pytest.raises(ValueError, match="score must be a finite number, got nan"):
        write_trec_run(path, {"q1": [("a", float("nan"))]})
    with pytest.raises(
        TypeError, match="score must be a finite number, got '0.5' of type str"
    ):
        write_trec_run(path, {"q1": [("a", "0.5")]})
    with pytest.raises(ValueError, match=r"\(docid, score\) pair"):
        write_trec_run(path, {"q1": [("a", 0.5, "extra")]})
    with pytest.raises(ValueError, match="the run is empty"):
        write_trec_run(path, {})
    assert not path.exists()


# --- TREC qrels -----------------------------------------------------------------------


def test_trec_qrels_round_trip(tmp_path):
    path = tmp_path / "deep" / "qrels.txt"
    write_trec_qrels(path, QRELS)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "q1 0 d1 2"
    assert read_trec_qrels(str(path)) == QRELS


def test_read_trec_qrels_hand_written(tmp_path):
    path = write_text(
        tmp_path / "q.txt",
        "301 0 FBIS3-10082 1\n\n301\t0\tFBIS3-10169  0\r\n302 Q0 LA010189-0018 -2\n",
    )
    assert read_trec_qrels(path) == {
        "301": {"FBIS3-10082": 1, "FBIS3-10169": 0},
        "302": {"LA010189-0018": -2},
    }


@pytest.mark.parametrize("line, count", [("q1 0 d1", 3), ("q1 0 d1 1 x", 5)])
def test_qrels_wrong_field_count(tmp_path, line, count):
    path = write_text(tmp_path / "bad.qrels", f"q1 0 d0 1\n{line}\n")
    with pytest.raises(
        ValueError,
        match=(
            r"bad\.qrels:2: expected 4 fields \(qid 0 docid relevance\), "
            f"got {count}"
        ),
    ):
        read_trec_qrels(path)


@pytest.mark.parametrize("relevance", ["1.0", "yes", "²"])
def test_qrels_non_integer_relevance(tmp_path, relevance):
    path = write_text(tmp_path / "bad.qrels", f"q1 0 d1 {relevance}\n")
    with pytest.raises(
        ValueError, match=rf"bad\.qrels:1: relevance '{relevance}' is not an integer"
    ):
        read_trec_qrels(path)


def test_qrels_judged_twice(tmp_path):
    path = write_text(tmp_path / "bad.qrels", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n")
    with pytest.raises(
        ValueError, match=r"bad\.qrels:3: document 'd1' is judged twice for query 'q1'"
    ):
        read_trec_qrels(path)


def test_empty_qrels_file(tmp_path):
    with pytest.raises(ValueError, match="the qrels are empty"):
        read_trec_qrels(write_text(tmp_path / "empty.qrels", ""))


def test_write_trec_qrels_errors(tmp_path):
    path = tmp_path / "out.qrels"
    with pytest.raises(
        TypeError, match=r"relevance must be a whole number, got True of type bool"
    ):
        write_trec_qrels(path, {"q1": {"d1": True}})
    with pytest.raises(ValueError, match="contains whitespace"):
        write_trec_qrels(path, {"q 1": {"d1": 1}})
    with pytest.raises(ValueError, match="qrels of query 'q1' are empty"):
        write_trec_qrels(path, {"q1": {}})
    with pytest.raises(ValueError, match="the qrels are empty"):
        write_trec_qrels(path, {})
    assert not path.exists()


def test_missing_trec_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_trec_run(tmp_path / "absent.run")
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_trec_qrels(tmp_path / "absent.qrels")


def test_invalid_utf8_gives_the_line(tmp_path):
    path = tmp_path / "latin1.qrels"
    path.write_bytes("q1 0 d1 1\nq1 0 caf\u00e9 1\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.qrels:2: not valid UTF-8"):
        read_trec_qrels(path)


# --- standard tools -------------------------------------------------------------------


def test_ir_measures_reads_written_files(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    run_path, qrels_path = tmp_path / "x.run", tmp_path / "x.qrels"
    write_trec_run(run_path, {"q1": [("d1", 2.0), ("d2", 1.0)], "q2": [("d3", 0.5)]})
    write_trec_qrels(qrels_path, {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    run = sorted(
        (s.query_id, s.doc_id, s.score)
        for s in ir_measures.read_trec_run(str(run_path))
    )
    qrels = sorted(
        (q.query_id, q.doc_id, q.relevance)
        for q in ir_measures.read_trec_qrels(str(qrels_path))
    )
    assert run == [("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q2", "d3", 0.5)]
    assert qrels == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d3", 2)]
    p1 = ir_measures.P @ 1
    scores = ir_measures.calc_aggregate(
        [p1],
        ir_measures.read_trec_qrels(str(qrels_path)),
        ir_measures.read_trec_run(str(run_path)),
    )
    assert scores[p1] == 1.0
