"""Integrity of the bundled corpus and its labelled questions; the pitfall facts the
book relies on."""

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from ragbook.corpus.documents import CORPUS_ORDER, load_corpus
from ragbook.corpus.labels import load_questions
from ragbook.indexing.text import analyze, contains_phrase, split_sentences

DOCS = {d.id: d for d in load_corpus()}
RAW = json.loads(
    (resources.files("ragbook") / "data" / "questions.json").read_text(encoding="utf-8")
)["questions"]
SPLIT = json.loads(
    (resources.files("ragbook") / "data" / "questions.json").read_text(encoding="utf-8")
)["split"]
FIRST_NEW = next(r for r in RAW if r["id"] == "mercury-n01")
QUESTIONS = load_questions(DOCS.values())


def words(text):
    return len(text.split())


def body_words(document):
    return sum(words(s.text) for s in document.sections)


def sentences(doc_id):
    return [s.text for sec in DOCS[doc_id].sections for s in split_sentences(sec.text)]


def test_ten_articles_each_long_with_a_lead_and_six_sections():
    assert list(DOCS) == list(CORPUS_ORDER)
    for document in DOCS.values():
        assert document.text.startswith(f"# {document.title}\n")
        assert document.lead.heading == "" and words(document.lead.text) >= 60, (
            document.id
        )
        assert len(document.sections) - 1 >= 6, document.id
        assert body_words(document) >= 1500, document.id
    assert sum(body_words(d) for d in DOCS.values()) >= 25000


def test_question_counts():
    answerable = [q for q in QUESTIONS if q.answerable]
    assert len(QUESTIONS) >= 260
    multi = [q for q in answerable if len(q.doc_ids) >= 2 and len(q.evidence) >= 2]
    assert len(multi) >= 30
    unanswerable = [q for q in QUESTIONS if not q.answerable]
    assert len(unanswerable) >= 40
    assert sum(q.style == "paraphrase" for q in QUESTIONS) >= 120
    assert sum(q.style == "lexical" for q in QUESTIONS) >= 20
    # every article has its own answerable and unanswerable questions
    for doc_id in DOCS:
        assert any(q.doc_ids == {doc_id} for q in answerable), doc_id
        assert any(doc_id in r.get("absent", {}) for r in RAW), doc_id


def test_every_answer_passes_its_own_key():
    from ragbook.evaluation.answers import correct

    for q in QUESTIONS:
        if q.answerable:
            assert q.answers, q.id
            assert correct(q.answer, q), q.id
        else:
            assert not q.answers and correct("The sources do not contain it.", q)


def test_the_split_is_the_recorded_procedure_and_stratified():
    import collections
    import copy
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent.parent / "tools" / "split_questions.py"
    spec = importlib.util.spec_from_file_location("split_questions", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    records = copy.deepcopy(RAW)
    for r in records:
        del r["split"]
    seed = int(re.search(r"seed (\d+)", SPLIT).group(1))
    share = float(re.search(r"a share of ([0-9.]+)", SPLIT).group(1))
    tool.split(records, "mercury-n01", share, seed)
    assert [r["split"] for r in records] == [r["split"] for r in RAW]
    test = collections.Counter(tool.stratum(r) for r in RAW if r["split"] == "test")
    every = collections.Counter(tool.stratum(r) for r in RAW[RAW.index(FIRST_NEW) :])
    for stratum, n in every.items():
        assert abs(test[stratum] - share * n) <= 0.5 + 1e-9, stratum
    assert all(r["split"] == "dev" for r in RAW[: RAW.index(FIRST_NEW)])


def test_ids_are_unique_and_records_complete():
    ids = [r["id"] for r in RAW]
    assert len(ids) == len(set(ids))
    for r in RAW:
        assert r["question"].strip().endswith("?"), r["id"]


def test_every_span_occurs_verbatim_once_in_its_article():
    for r in RAW:
        for piece in r["evidence"]:
            for span in piece:
                assert DOCS[span["doc"]].text.count(span["text"]) == 1, (
                    r["id"],
                    span["text"],
                )
                assert "\n" not in span["text"], r["id"]


def test_every_answer_follows_from_its_spans():
    for q in QUESTIONS:
        if not q.answerable:
            assert q.answer == "" and q.evidence == ()
            continue
        if len(q.doc_ids) > 1 and q.id.startswith("multi-n"):
            continue  # a comparison or a difference, derived from the spans
        span_terms = {
            t
            for piece in q.evidence
            for span in piece.spans
            for t in analyze(span.text)
        }
        missing = [t for t in analyze(q.answer) if t not in span_terms]
        assert not missing, (q.id, missing)
        # and every piece of evidence is needed by a different document or fact: no
        # empty pieces
        assert all(piece.spans for piece in q.evidence)


def test_unanswerable_questions_have_no_span_and_ask_on_topic():
    for q in QUESTIONS:
        if q.style == "unanswerable":
            assert not q.evidence and q.text.endswith("?")


# ---- the pitfall facts, stated the way the book needs them ---------------------------
def test_mercury_orbit_sentence_does_not_name_the_planet():
    hits = [s for s in sentences("mercury") if "87.969" in s]
    assert hits and all(not contains_phrase(s, "Mercury") for s in hits)


def test_resonance_found_by_radar_in_1965_without_naming_mercury():
    hits = [
        s for s in sentences("mercury") if "3:2" in s and "1965" in s and "adar" in s
    ]
    assert hits and all(not contains_phrase(s, "Mercury") for s in hits)


def test_mercury_solar_day_and_pluto_rotation():
    assert any("176 Earth days" in s and "solar day" in s for s in sentences("mercury"))
    assert any("6.387 Earth days" in s for s in sentences("pluto"))


def test_venus_year_is_never_called_a_year():
    hits = [s for s in sentences("venus") if "224.7" in s]
    assert len(hits) >= 2
    assert all(
        not contains_phrase(s, "year") and not contains_phrase(s, "years") for s in hits
    )


def test_titan_temperature_measured_but_not_stated():
    assert any(
        "Pioneer 11" in s and "temperature" in s and "Titan" in s
        for s in sentences("saturn")
    )
    temperature = re.compile(r"°|kelvin|\d\s?K\b|degrees", re.IGNORECASE)
    for doc_id in DOCS:
        for s in sentences(doc_id):
            if "Titan" in s and "Titania" not in s:
                assert not temperature.search(s), s


def test_neptune_disagrees_with_itself():
    text = DOCS["neptune"].text
    assert (
        "164.8 years" in DOCS["neptune"].lead.text
        and "164.79" not in DOCS["neptune"].lead.text
    )
    assert "164.79" in text and "580 m/s" in DOCS["neptune"].lead.text
    assert any("almost 600 m/s" in s for s in sentences("neptune"))


def test_discoverers_and_age():
    assert any("Lassell" in s and "Triton" in s for s in sentences("neptune"))
    assert any("Herschel" in s and "1781" in s for s in sentences("uranus"))
    hits = [s for s in sentences("ceres") if "4.56 billion years" in s]
    assert hits and all(
        not contains_phrase(s, "old") and not contains_phrase(s, "age") for s in hits
    )


def test_labels_name_each_required_question():
    texts = {q.text for q in QUESTIONS}
    for required in [
        "How long is a year on Venus?",
        "Who discovered Triton?",
        "What is the rotation period of Pluto?",
        "How old is Ceres?",
        "What moons does Mars have?",
        "Which has more known moons, Saturn or Jupiter?",
    ]:
        assert required in texts, required


# ---- the held-out questions -------------------------------------------------------
HOLDOUT_RAW = json.loads(
    (resources.files("ragbook") / "data" / "holdout.json").read_text(encoding="utf-8")
)["questions"]


def test_holdout_questions_load_and_are_all_held_out():
    held = load_questions(DOCS.values(), split="holdout")
    assert len(held) == len(HOLDOUT_RAW) >= 80
    assert all(q.split == "holdout" for q in held)
    # the file of questions.json has no held-out question, and the held-out file only
    assert not [q for q in QUESTIONS if q.split == "holdout"]
    assert [q.id for q in load_questions(DOCS.values())] == [r["id"] for r in RAW]


def test_holdout_questions_are_new_and_cover_every_kind_and_article():
    from ragbook.evaluation.answers import correct

    held = load_questions(DOCS.values(), split="holdout")
    assert not {q.id for q in held} & {r["id"] for r in RAW}
    asked = {r["question"].strip().lower() for r in RAW}
    assert not [q.id for q in held if q.text.strip().lower() in asked]
    answerable = [q for q in held if q.answerable]
    assert sum(not q.answerable for q in held) >= 0.25 * len(held)
    assert sum(len(q.doc_ids) >= 2 for q in answerable) >= 8
    for doc_id in DOCS:
        assert any(q.doc_ids == {doc_id} for q in answerable), doc_id
        assert any(doc_id in r.get("absent", {}) for r in HOLDOUT_RAW), doc_id
    for q in held:
        assert q.text.endswith("?"), q.id
        if q.answerable:
            assert correct(q.answer, q), q.id
        else:
            assert correct("The sources do not contain it.", q), q.id
    for r in HOLDOUT_RAW:
        for piece in r["evidence"]:
            for span in piece:
                assert DOCS[span["doc"]].text.count(span["text"]) == 1, r["id"]


def check_new_held_out_set(
    name: str, earlier: list[dict], readers: list[str], unanswerable: int = 12
) -> None:
    """ragbook/data/<name>.json: 60 labelled questions, ``unanswerable`` of them
    unanswerable, every article
    at least 3 times, none repeating an id or a question of ``earlier``, each key
    accepting its own answer; read (the file's name in the text) by exactly the files
    ``readers`` among the package, tools, benchmarks, tests and chapter sources."""
    from ragbook.evaluation.answers import correct

    path = resources.files("ragbook") / "data" / f"{name}.json"
    held = load_questions(DOCS.values(), path=str(path), split="holdout")
    assert len(held) == 60
    assert not {q.id for q in held} & {r["id"] for r in earlier}
    asked = {r["question"].strip().lower() for r in earlier}
    assert not [q.id for q in held if q.text.strip().lower() in asked]
    assert sum(not q.answerable for q in held) == unanswerable
    for doc_id in DOCS:
        assert sum(doc_id in q.doc_ids for q in held) >= 3, doc_id
    for q in held:
        assert q.answerable == (q.style != "unanswerable"), q.id
        assert correct(
            q.answer if q.answerable else "The sources do not contain it.", q
        )
    found = readers_of(name)
    assert found == readers, f"read by {found}"


def readers_of(name: str) -> list[str]:
    """The files among the package, tools, benchmarks, tests and chapter sources that
    name ``name`` (this file excepted)."""
    root = Path(__file__).resolve().parent.parent
    sources = [
        path
        for folder in ("ragbook", "tools", "benchmarks", "tests")
        for path in (root / folder).rglob("*.py")
    ] + sorted((root / "chapters").glob("*.md"))
    return [
        path.name
        for path in sources
        if name in path.read_text(encoding="utf-8") and path.name != "test_corpus.py"
    ]


def test_the_second_held_out_set_is_new_and_read_only_by_the_reader_chapter():
    # written later, from the articles alone; read once, by the reader chapter
    # (chapters/15_reader.md), by no module that could tune to it
    check_new_held_out_set("holdout2", RAW + HOLDOUT_RAW, ["15_reader.md"])


def test_the_third_held_out_set_is_new_and_read_only_by_the_reader_chapter():
    # written from the articles alone, after the second set was read; read once, by
    # the reader chapter, for the reader with the checks chosen on the dev sets
    second = json.loads(
        (resources.files("ragbook") / "data" / "holdout2.json").read_text(
            encoding="utf-8"
        )
    )["questions"]
    check_new_held_out_set("holdout3", RAW + HOLDOUT_RAW + second, ["15_reader.md"])


def test_the_supplementary_dev_questions_are_new_and_read_by_the_reader_chapter():
    # more dev questions for choosing the cited reader's checks: named things, parts,
    # comparisons and unanswerable questions whose attribute the articles do not give
    from ragbook.evaluation.answers import correct

    path = resources.files("ragbook") / "data" / "dev2.json"
    raw = json.loads(path.read_text(encoding="utf-8"))["questions"]
    extra = load_questions(DOCS.values(), path=str(path), split="dev")
    assert len(extra) == len(raw) == 45 and sum(not q.answerable for q in extra) == 18
    earlier = list(RAW) + list(HOLDOUT_RAW)
    for name in ("holdout2", "holdout3"):
        text = (resources.files("ragbook") / "data" / f"{name}.json").read_text(
            encoding="utf-8"
        )
        earlier += json.loads(text)["questions"]
    assert not {q.id for q in extra} & {r["id"] for r in earlier}
    asked = {r["question"].strip().lower() for r in earlier}
    assert not [q.id for q in extra if q.text.strip().lower() in asked]
    for q in extra:
        assert q.answerable == (q.style != "unanswerable"), q.id
        assert correct(
            q.answer if q.answerable else "The sources do not contain it.", q
        )
    for r in raw:
        for doc, phrases in r.get("absent", {}).items():
            for phrase in phrases:
                assert phrase.lower() not in DOCS[doc].text.lower(), (r["id"], phrase)
    assert readers_of("dev2") == ["15_reader.md"]


def bundled_questions(*names: str) -> list[dict]:
    """The raw questions of questions.json, holdout.json and the bundled files
    ``names`` (ragbook/data/<name>.json), in that order."""
    found = list(RAW) + list(HOLDOUT_RAW)
    for name in names:
        text = (resources.files("ragbook") / "data" / f"{name}.json").read_text(
            encoding="utf-8"
        )
        found += json.loads(text)["questions"]
    return found


# the later labelled files, in the order they were written
LATER_SETS = (
    "holdout2",
    "holdout3",
    "dev2",
    "holdout4",
    "holdout5",
    "holdout6",
    "holdout7",
    "holdout8",
    "holdout9",
    "holdout10",
    "holdout11",
    "holdout12",
)


def written_before(name: str) -> list[dict]:
    """The raw questions of every file written before ragbook/data/<name>.json."""
    return bundled_questions(*LATER_SETS[: LATER_SETS.index(name)])


def check_spans_and_absent_phrases(name: str) -> None:
    """Every evidence span of ragbook/data/<name>.json occurs once in its article, and
    every phrase it lists as absent occurs nowhere in the article named."""
    for r in bundled_questions(name)[len(RAW) + len(HOLDOUT_RAW) :]:
        for doc, phrases in r.get("absent", {}).items():
            for phrase in phrases:
                assert phrase.lower() not in DOCS[doc].text.lower(), (r["id"], phrase)
        for piece in r["evidence"]:
            for span in piece:
                assert DOCS[span["doc"]].text.count(span["text"]) == 1, r["id"]


def test_the_fourth_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone, with no system's answers in view, and kept for
    # one reading after the reader's next change (the event check): the reader
    # chapter reads it, once
    check_new_held_out_set(
        "holdout4", written_before("holdout4"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout4")


def test_the_fifth_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone, about facts no earlier set asks, and recorded
    # before any system answered them: the reader chapter reads it, once
    check_new_held_out_set(
        "holdout5", written_before("holdout5"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout5")


def test_the_sixth_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone after the fifth was read, about facts no earlier
    # set asks, and recorded before any system answered them: read once, by the
    # reader chapter, after the last rule
    check_new_held_out_set(
        "holdout6", written_before("holdout6"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout6")


def test_the_seventh_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone after the sixth was read, about facts no earlier
    # set asks, and recorded before any system answered them: read once, by the
    # reader chapter, after the last rule
    check_new_held_out_set(
        "holdout7", written_before("holdout7"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout7")


def test_the_eighth_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone after the seventh was read, about facts no
    # earlier set asks, and recorded before any system answered them: read once, by
    # the reader chapter, after the last rule
    check_new_held_out_set(
        "holdout8", written_before("holdout8"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout8")


def test_the_ninth_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone after the eighth was read, about facts no
    # earlier set asks, and recorded before any system answered them: read once, by
    # the reader chapter, after the last rule
    check_new_held_out_set(
        "holdout9", written_before("holdout9"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout9")


def test_the_tenth_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone after the ninth was recorded, about facts no
    # earlier set asks, and recorded before any system answered them: read once, by
    # the reader chapter, after the last rule
    check_new_held_out_set(
        "holdout10", written_before("holdout10"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout10")


def test_the_eleventh_held_out_set_is_new_and_read_by_the_reader_chapter():
    # written from the articles alone after the tenth was recorded, and read once, by
    # the reader chapter, after a later change of the reader
    check_new_held_out_set(
        "holdout11", written_before("holdout11"), ["15_reader.md"], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout11")


def test_the_twelfth_held_out_set_is_new_and_not_yet_read():
    # written from the articles alone after the eleventh was recorded, and kept for
    # one reading after a later change of the reader: no file reads it yet
    check_new_held_out_set(
        "holdout12", written_before("holdout12"), [], unanswerable=14
    )
    check_spans_and_absent_phrases("holdout12")


@pytest.mark.parametrize(
    "name, before",
    [
        ("conflicts_holdout2", []),
        ("conflicts_holdout3", ["2"]),
        ("conflicts_holdout4", ["2", "3"]),
        ("conflicts_holdout5", ["2", "3", "4"]),
        ("conflicts_holdout6", ["2", "3", "4", "5"]),
        ("conflicts_holdout7", ["2", "3", "4", "5", "6"]),
        ("conflicts_holdout8", ["2", "3", "4", "5", "6", "7"]),
        ("conflicts_holdout9", ["2", "3", "4", "5", "6", "7", "8"]),
    ],
)
def test_the_conflict_cases_written_later_are_new_and_read_by_the_reader_chapter(
    name, before
):
    # written from the articles alone, without sight of the disagreement rules, each
    # file after the one before it was read; read once, by the reader chapter
    from ragbook.system.planted import load_conflicts

    data = resources.files("ragbook") / "data"
    path = data / f"{name}.json"
    later = load_conflicts(path=str(path))  # each case checked against the corpus
    earlier = load_conflicts() + [
        case
        for n in before
        for case in load_conflicts(path=str(data / f"conflicts_holdout{n}.json"))
    ]
    assert len(later) == 20 and {c.split for c in later} == {"later"}
    assert not {c.id for c in later} & {c.id for c in earlier}
    facts = {}
    for case in later:
        facts.setdefault(case.id.rsplit("-", 1)[0], []).append(case)
    assert all(
        sorted(c.kind for c in pair) == ["after", "file"] for pair in facts.values()
    )
    for pair in facts.values():
        assert len({(c.question, c.true, c.false) for c in pair}) == 1
    assert {(c.host, c.question) for c in later}.isdisjoint(
        {(c.host, c.question) for c in earlier}
    )
    # the newest files are kept for one reading after the reader's next change
    assert readers_of(name) == (
        [] if name == "conflicts_holdout9" else ["15_reader.md"]
    )
