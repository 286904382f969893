"""Reading a paraphrase: the glossary, the semantic reader and the on-disk vector cache
(chapter 14)."""

import io
import re

import numpy as np
import pytest

from ragbook.cli import main
from ragbook.corpus.documents import load_corpus
from ragbook.retrieval.embedder import CachedEncoder, cache_directory
from ragbook.generation.generators import ABSTAIN, ScriptedGenerator
from ragbook.generation.readers import SemanticExtractiveGenerator
from ragbook.retrieval.glossary import ASTRONOMY, Glossary
from ragbook.corpus.labels import load_questions
from ragbook.evaluation.end_to_end import quotes_evidence
from ragbook.generation.prompts import build_prompt


# ---- glossary ------------------------------------------------------------------------
def test_glossary_appends_the_definitions_of_the_terms_it_finds():
    glossary = Glossary(
        {"year": "the time to orbit the Sun once", "day": "noon to noon"}
    )
    assert (
        glossary("How long is a year on Venus?")
        == "How long is a year on Venus? (year: the time to orbit the Sun once)"
    )
    # matched after the analyzer (case folded), each term once, in the order of the
    # question
    assert (
        glossary("A DAY or a Year? And a day?")
        == "A DAY or a Year? And a day? (day: noon to noon; year: the time to orbit "
        "the Sun once)"
    )
    assert (
        glossary("Who discovered Triton?") == "Who discovered Triton?"
    )  # nothing to gloss: unchanged
    assert (
        glossary.terms_in("years and days") == []
    )  # no stemming: "years" is not "year"
    assert len(ASTRONOMY) == 3 and "year" in ASTRONOMY.definitions


@pytest.mark.parametrize(
    "definitions, message",
    [
        ({}, "at least one definition"),
        (
            {"the": "an article"},
            "one lowercase word",
        ),  # a stopword never reaches the analyzer's output
        ({"solar day": "noon to noon"}, "one lowercase word"),  # two words
        ({"Year": "orbit"}, "one lowercase word"),
        ({"year": "   "}, "is empty"),
    ],
)
def test_glossary_refuses_what_it_cannot_match(definitions, message):
    with pytest.raises(ValueError, match=message):
        Glossary(definitions)
    with pytest.raises(TypeError, match="a question is a str"):
        ASTRONOMY(None)


def test_glossary_from_a_json_file_and_its_errors(tmp_path):
    path = tmp_path / "terms.json"
    path.write_text('{"refund": "money paid back"}', encoding="utf-8")
    assert (
        Glossary.from_json(path)("When is a refund due?")
        == "When is a refund due? (refund: money paid back)"
    )
    with pytest.raises(ValueError, match="cannot read the glossary"):
        Glossary.from_json(tmp_path / "missing.json")
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="is not UTF-8 JSON"):
        Glossary.from_json(path)
    path.write_text('["refund"]', encoding="utf-8")
    with pytest.raises(ValueError, match="one JSON object"):
        Glossary.from_json(path)
    path.write_text('{"refund policy": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match="one lowercase word"):
        Glossary.from_json(path)


def test_cli_glossary_file_and_missing_embedder(tmp_path, capsys, monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "dock.md").write_text(
        "# Dock\n\nThe dock is in bay four.\n", encoding="utf-8"
    )
    terms = tmp_path / "terms.json"
    terms.write_text('{"dock": "where robots charge"}', encoding="utf-8")
    out = io.StringIO()
    assert (
        main(
            [
                "ask",
                "Where is the dock?",
                "--documents",
                str(notes),
                "--glossary",
                str(terms),
                "--retriever",
                "bm25",
                "--reader",
                "lexical",
            ],
            out=out,
        )
        == 0
    )
    assert f"glossary {terms}" in out.getvalue() and "bay four" in out.getvalue()
    assert main(["ask", "x?", "--glossary", str(tmp_path / "nope.json")]) == 2
    assert "cannot read the glossary" in capsys.readouterr().err

    import ragbook.retrieval.embedder

    def missing():
        raise ImportError("the MiniLM encoder needs onnxruntime and tokenizers")

    monkeypatch.setattr(ragbook.retrieval.embedder, "load_minilm", missing)
    assert main(["ask", "Where is the dock?", "--documents", str(notes)]) == 2
    assert "--retriever bm25 --reader lexical" in capsys.readouterr().err


# ---- the semantic reader, with an encoder whose vectors are set by hand --------------
class HandEncoder:
    """Maps each known text to a fixed unit vector; records what it was asked to
    encode."""

    def __init__(self, table):
        self.table = {
            text: np.asarray(v, dtype=np.float64) / np.linalg.norm(v)
            for text, v in table.items()
        }
        self.seen = []

    def encode(self, texts):
        self.seen.extend(texts)
        return np.array([self.table[t] for t in texts])


SOURCES = [
    ("Venus, Orbit", "It orbits the Sun every 224.7 days. Its orbit is round."),
    ("Venus, Rotation", "A solar day lasts 117 days."),
]
QUESTION = "How long is a year on Venus?"


def hand_encoder(question_text):
    return HandEncoder(
        {
            question_text: [1, 0, 0],
            "Venus, Orbit: It orbits the Sun every 224.7 days.": [
                3,
                4,
                0,
            ],  # cosine 3/5 = 0.6
            "Venus, Orbit: Its orbit is round.": [4, 3, 0],  # 0.8, but no number
            "Venus, Rotation: A solar day lasts 117 days.": [
                1,
                1,
                0,
            ],  # 1/sqrt(2) = 0.7071
        }
    )


def test_semantic_reader_scores_by_cosine_with_the_number_penalty():
    encoder = hand_encoder(QUESTION)
    reader = SemanticExtractiveGenerator(encoder, abstain_below=0.5)
    prompt = build_prompt(QUESTION, SOURCES)
    scored = reader.score(prompt)
    assert [(s.source, round(s.coverage, 4)) for s in scored] == [
        (2, 0.7071),
        (1, 0.6),
        (1, 0.3),
    ]  # 0.8 - 0.5
    assert reader(prompt) == "A solar day lasts 117 days [2]."
    # every sentence is embedded behind its source label
    assert (
        "Venus, Orbit: Its orbit is round." in encoder.seen
        and "Its orbit is round." not in encoder.seen
    )


def test_semantic_reader_embeds_the_rewritten_question_and_abstains_below_threshold():
    glossary = Glossary({"year": "one orbit"})
    rewritten = glossary(QUESTION)
    table = hand_encoder(rewritten).table
    table[rewritten] = np.array(
        [0.6, 0.8, 0.0]
    )  # now closest to the orbit sentence: 0.6*0.6 + 0.8*0.8 = 1.0
    encoder = HandEncoder({})
    encoder.table = table
    reader = SemanticExtractiveGenerator(encoder, abstain_below=0.5, rewrite=glossary)
    prompt = build_prompt(QUESTION, SOURCES)
    assert reader(prompt) == "It orbits the Sun every 224.7 days [1]."
    assert rewritten in encoder.seen and QUESTION not in encoder.seen
    # the rotation sentence alone: cosine (0.6 + 0.8) / sqrt(2) = 0.98995, just below
    # 0.99
    only_rotation = build_prompt(QUESTION, SOURCES[1:])
    assert (
        SemanticExtractiveGenerator(encoder, abstain_below=0.99, rewrite=glossary)(
            only_rotation
        )
        == ABSTAIN
    )
    assert (
        SemanticExtractiveGenerator(encoder, abstain_below=0.98, rewrite=glossary)(
            only_rotation
        )
        != ABSTAIN
    )
    with pytest.raises(
        ValueError,
        match=(
            r"abstain_below \(a cosine\) must be a finite number in \[-1, 1\], "
            "got 1.5"
        ),
    ):
        SemanticExtractiveGenerator(encoder, abstain_below=1.5)


def test_semantic_reader_embeds_each_sentence_once():
    encoder = hand_encoder(QUESTION)
    reader = SemanticExtractiveGenerator(encoder)
    prompt = build_prompt(QUESTION, SOURCES)
    reader(prompt)
    reader(prompt)
    sentences = [t for t in encoder.seen if t != QUESTION]
    assert len(sentences) == 3 and encoder.seen.count(QUESTION) == 2


# ---- the on-disk cache ---------------------------------------------------------------
class CountingEncoder:
    fingerprint = "counting-v1"
    dimension = 2

    def __init__(self):
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_cache_computes_once_and_reads_back_the_same_vectors(tmp_path):
    encoder = CountingEncoder()
    cached = CachedEncoder(encoder, tmp_path)
    first = cached.encode(["a", "bb"])
    second = cached.encode(["a", "bb"])
    assert encoder.calls == 1 and (cached.misses, cached.hits) == (1, 1)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second, [[1, 1], [2, 1]])
    # another order, other texts, another model: other files, never stale vectors
    assert cached.path_for(["bb", "a"]) != cached.path_for(["a", "bb"])
    assert cached.path_for(["a", "b"]) != cached.path_for(["a", "bb"])
    assert cached.path_for(["ab"]) != cached.path_for(
        ["a", "b"]
    )  # lengths are part of the key
    other = CountingEncoder()
    other.fingerprint = "counting-v2"
    assert CachedEncoder(other, tmp_path).path_for(["a", "bb"]) != cached.path_for(
        ["a", "bb"]
    )
    assert len(list(tmp_path.glob("*.npy"))) == 1


def test_cache_replaces_a_damaged_file_and_says_so(tmp_path, capsys):
    encoder = CountingEncoder()
    cached = CachedEncoder(encoder, tmp_path)
    path = cached.path_for(["a", "bb"])
    path.write_bytes(b"not an array")
    np.testing.assert_array_equal(cached.encode(["a", "bb"]), [[1, 1], [2, 1]])
    assert "unreadable" in capsys.readouterr().err and encoder.calls == 1
    np.save(path, np.zeros((3, 2), dtype=np.float32))  # wrong number of rows
    cached.encode(["a", "bb"])
    assert "shape (3, 2)" in capsys.readouterr().err and encoder.calls == 2
    assert cached.encode(["a", "bb"]).shape == (2, 2) and encoder.calls == 2


def test_cache_needs_a_fingerprint_and_leaves_queries_alone(tmp_path, monkeypatch):
    class Anonymous:
        def encode(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32)

    with pytest.raises(TypeError, match="fingerprint"):
        CachedEncoder(Anonymous(), tmp_path)
    encoder = CountingEncoder()
    cached = CachedEncoder(encoder, tmp_path)
    cached.encode_queries(["q"])
    assert encoder.calls == 1 and not list(tmp_path.glob("*.npy"))
    with pytest.raises(TypeError, match="single string"):
        cached.encode("one text")
    monkeypatch.setenv("RAGBOOK_CACHE", str(tmp_path / "here"))
    assert cache_directory() == tmp_path / "here"
    monkeypatch.delenv("RAGBOOK_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "ragbook"


# ---- the example question, end to end ------------------------------------------------
def test_the_tool_answers_the_example_question_with_its_labelled_evidence():
    """``ragbook ask "How long is a year on Venus?"`` with the model-free defaults
    quotes the labelled evidence."""
    out = io.StringIO()
    assert (
        main(["ask", "How long is a year on Venus?", "--reader", "semantic"], out=out)
        == 0
    )
    text = out.getvalue()
    answer = text.splitlines()[0]
    question = next(
        q
        for q in load_questions(load_corpus())
        if q.text == "How long is a year on Venus?"
    )
    assert "224.7" in answer and quotes_evidence(
        answer, question
    )  # the labels, written by hand, decide
    cited = int(re.search(r"\[(\d+)\]\.?$", answer).group(1))
    source_line = next(
        line
        for line in text.splitlines()
        if line.strip().startswith(f"[{cited}] score")
    )
    assert "Venus, Orbit and rotation" in source_line
    assert "checks: supported (cites [" in text


def test_the_lexical_setup_still_fails_the_example_question():
    out = io.StringIO()
    assert (
        main(
            [
                "ask",
                "How long is a year on Venus?",
                "--retriever",
                "bm25",
                "--reader",
                "lexical",
                "--glossary",
                "none",
            ],
            out=out,
        )
        == 0
    )
    assert "224.7" not in out.getvalue().splitlines()[0]


def test_the_glossary_passes_its_graded_exercise():
    from ragbook.exercises import check

    verdict = check(
        "glossary-rewrite",
        lambda question, definitions: Glossary(definitions)(question),
    )
    assert verdict and verdict.total == 9


# ---- the model reads, a sentence answers (ModelQuoteReader) ----------------------
ORBITS = [
    (
        "Mercury, Orbit",
        "The orbit is eccentric. It takes the planet 87.969 Earth days "
        "to travel once around the Sun.",
    ),
    ("Venus, Orbit", "A year on Venus lasts 224.7 Earth days. Venus spins backwards."),
]


def test_model_quote_reader_quotes_what_the_model_said():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.readers import ModelQuoteReader

    prompt = build_prompt("How long is a year on Mercury?", ORBITS)
    model = ScriptedGenerator(["A Mercury year is about 87.969 days long [1]."])
    reader = ModelQuoteReader(model)
    answer = reader(prompt)
    # the sentence holding the model's number, not the first sentence of source 1
    assert answer == (
        "It takes the planet 87.969 Earth days to travel once around the Sun [1]."
    )
    assert reader.last == "A Mercury year is about 87.969 days long [1]."
    # a sentence without the model's number loses the number penalty
    other = ModelQuoteReader(ScriptedGenerator(["Venus spins backwards [2]."]))
    assert other(prompt) == "Venus spins backwards [2]."


def test_model_quote_reader_refuses_with_the_model_and_forwards_its_budget():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.readers import ModelQuoteReader

    prompt = build_prompt("What is the mass of the lander?", ORBITS)
    reader = ModelQuoteReader(ScriptedGenerator(["The sources do not contain it."]))
    assert reader(prompt) == ABSTAIN
    assert not hasattr(reader, "budget")

    class Windowed(ScriptedGenerator):
        def budget(self):
            return 1234

        def count(self, text):
            return len(text.split())

    windowed = ModelQuoteReader(Windowed(["x"]))
    assert windowed.budget() == 1234 and windowed.count("a b") == 2
    with pytest.raises(TypeError, match="callable"):
        ModelQuoteReader("not a model")


# ---- two readers, the second when the first refuses (FallbackReader) -------------
def test_fallback_reader_asks_the_second_only_after_a_refusal():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.readers import FallbackReader

    prompt = build_prompt("How long is a year on Mercury?", ORBITS)
    second = ScriptedGenerator(["It takes 87.969 Earth days [1].", "unused"])
    reader = FallbackReader(
        ScriptedGenerator(["The sources do not contain the answer.", "Venus [2]."]),
        second,
    )
    assert reader(prompt) == "It takes 87.969 Earth days [1]." and reader.used == 1
    assert reader(prompt) == "Venus [2]." and reader.used == 0
    # the second was asked once, for the refusal only: its next answer is still queued
    assert second(prompt) == "unused"
    # both refusing is a refusal
    both = FallbackReader(ScriptedGenerator([ABSTAIN]), ScriptedGenerator([ABSTAIN]))
    assert both(prompt) == ABSTAIN


def test_fallback_reader_keeps_the_first_readers_window_and_rejects_non_readers():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.readers import FallbackReader

    class Windowed(ScriptedGenerator):
        def budget(self):
            return 99

        def count(self, text):
            return 7

    reader = FallbackReader(Windowed(["x"]), ScriptedGenerator(["y"]))
    assert reader.budget() == 99 and reader.count("anything") == 7
    assert not hasattr(
        FallbackReader(ScriptedGenerator(["x"]), Windowed(["y"])), "budget"
    )
    with pytest.raises(TypeError, match="second reader must be callable"):
        FallbackReader(ScriptedGenerator(["x"]), "semantic")


class _Windowed(ScriptedGenerator):
    """A reader with a context window of 5 tokens, one per text: a check wrapped
    around it must report the same window."""

    def budget(self):
        return 5

    def count(self, text):
        return 1


# ---- an answer about another subject is refused (SubjectCheck) --------------------
def test_subject_check_refuses_an_answer_about_another_subject():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.reader_checks import SubjectCheck

    titles = ["Mercury", "Venus", "Moon"]
    asked = build_prompt("How long is a year on Venus?", ORBITS)
    # cites source 1, labelled Mercury: another subject than the question's
    wrong = SubjectCheck(ScriptedGenerator(["It takes 87.969 Earth days [1]."]), titles)
    assert wrong(asked) == ABSTAIN and wrong.refused == 1
    # cites source 2, labelled Venus
    right = SubjectCheck(
        ScriptedGenerator(["A year lasts 224.7 Earth days [2]."]), titles
    )
    assert right(asked) == "A year lasts 224.7 Earth days [2]." and right.refused == 0
    # no citation, but the answer names the subject; whole words, any case
    named = SubjectCheck(ScriptedGenerator(["On VENUS, 224.7 days."]), titles)
    assert named(asked) == "On VENUS, 224.7 days."
    assert (
        SubjectCheck(ScriptedGenerator(["x"]), ["Moon"]).named("Moons, honeymoon")
        == set()
    )
    # a citation outside the sources names nothing
    outside = SubjectCheck(ScriptedGenerator(["224.7 days [9]."]), titles)
    assert outside(asked) == ABSTAIN
    # a question naming no subject, and a refusal, pass unchanged
    vague = build_prompt("How long is a year on the second planet?", ORBITS)
    free = SubjectCheck(ScriptedGenerator(["It takes 87.969 Earth days [1]."]), titles)
    assert free(vague) == "It takes 87.969 Earth days [1]."
    refusing = SubjectCheck(ScriptedGenerator(["The sources do not say."]), titles)
    assert refusing(asked) == "The sources do not say." and refusing.refused == 0


def test_subject_check_rejects_bad_subjects_and_keeps_the_window():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.reader_checks import SubjectCheck

    with pytest.raises(ValueError, match="non-empty list"):
        SubjectCheck(ScriptedGenerator(["x"]), [])
    with pytest.raises(ValueError, match="non-empty list"):
        SubjectCheck(ScriptedGenerator(["x"]), ["Mars", " "])
    with pytest.raises(TypeError, match="reader must be callable"):
        SubjectCheck("semantic", ["Mars"])

    assert SubjectCheck(_Windowed(["x"]), ["Mars"]).budget() == 5


# ---- an answer far from the question is refused (RelevanceCheck) ------------------
def test_relevance_check_refuses_an_answer_far_from_the_question():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.reader_checks import RelevanceCheck

    prompt = build_prompt(QUESTION, SOURCES)
    judge = SemanticExtractiveGenerator(hand_encoder(QUESTION), abstain_below=0.65)
    # the answer's sentence is shown with the label of the source it cites, as the
    # semantic reader shows it: cosine 1/sqrt(2) = 0.7071 >= 0.65, kept
    near = RelevanceCheck(ScriptedGenerator(["A solar day lasts 117 days [2]."]), judge)
    assert near.refuse_below == 0.65  # the judge's own threshold by default
    assert near(prompt) == "A solar day lasts 117 days [2]."
    assert round(near.last_similarity, 4) == 0.7071 and near.refused == 0
    # cosine 3/5 = 0.6 < 0.65: refused
    far = RelevanceCheck(
        ScriptedGenerator(["It orbits the Sun every 224.7 days [1]."]), judge
    )
    assert far(prompt) == ABSTAIN and far.refused == 1
    assert round(far.last_similarity, 4) == 0.6
    # a threshold of its own; -1 refuses nothing and only measures
    assert (
        RelevanceCheck(
            ScriptedGenerator(["It orbits the Sun every 224.7 days [1]."]), judge, 0.55
        )(prompt)
        == "It orbits the Sun every 224.7 days [1]."
    )
    # a refusal passes unchanged and is not measured
    refusing = RelevanceCheck(ScriptedGenerator(["The sources do not say."]), judge)
    assert refusing(prompt) == "The sources do not say."
    assert refusing.last_similarity is None and refusing.refused == 0


def test_relevance_check_rejects_bad_arguments_and_keeps_the_window():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.reader_checks import RelevanceCheck

    judge = SemanticExtractiveGenerator(hand_encoder(QUESTION))
    with pytest.raises(TypeError, match="reader must be callable"):
        RelevanceCheck("combined", judge)
    with pytest.raises(TypeError, match="judge must be a SemanticExtractiveGenerator"):
        RelevanceCheck(ScriptedGenerator(["x"]), hand_encoder(QUESTION))
    with pytest.raises(ValueError, match="refuse_below"):
        RelevanceCheck(ScriptedGenerator(["x"]), judge, 1.5)

    assert RelevanceCheck(_Windowed(["x"]), judge).budget() == 5


# ---- an answer the model says does not answer is refused (ModelCheck) -------------
class _Judge:
    """A stand-in for LocalModel.relevance: fixed scores by passage, and a log of what
    it was asked."""

    def __init__(self, scores):
        self.scores, self.asked = scores, []

    def relevance(self, question, passage):
        self.asked.append((question, passage))
        return self.scores[passage]


def test_model_check_asks_about_the_labelled_sentence_and_refuses_below_zero():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.reader_checks import ModelCheck

    prompt = build_prompt(QUESTION, SOURCES)
    judge = _Judge(
        {
            "Venus, Orbit: It orbits the Sun every 224.7 days.": 2.5,
            "Venus, Rotation: A solar day lasts 117 days.": -1.25,
            "Venus is hot.": 0.0,
        }
    )
    kept = ModelCheck(
        ScriptedGenerator(["It orbits the Sun every 224.7 days [1]."]), judge
    )
    assert kept(prompt) == "It orbits the Sun every 224.7 days [1]."
    assert kept.last_score == 2.5 and kept.refused == 0
    # the model was asked the question and the sentence under its source's label
    assert judge.asked[-1] == (
        QUESTION,
        "Venus, Orbit: It orbits the Sun every 224.7 days.",
    )
    # No likelier than Yes: refused
    refused = ModelCheck(ScriptedGenerator(["A solar day lasts 117 days [2]."]), judge)
    assert refused(prompt) == ABSTAIN
    assert refused.last_score == -1.25 and refused.refused == 1
    # a tie is kept (the threshold is inclusive); an uncited answer has no label
    assert ModelCheck(ScriptedGenerator(["Venus is hot."]), judge)(prompt) == (
        "Venus is hot."
    )
    # a threshold of its own
    strict = ModelCheck(
        ScriptedGenerator(["It orbits the Sun every 224.7 days [1]."]), judge, 3.0
    )
    assert strict(prompt) == ABSTAIN
    # a refusal passes unchanged, and the model is not asked
    asked = len(judge.asked)
    refusing = ModelCheck(ScriptedGenerator(["The sources do not say."]), judge)
    assert refusing(prompt) == "The sources do not say."
    assert refusing.last_score is None and len(judge.asked) == asked


def test_model_check_rejects_bad_arguments_and_keeps_the_window():
    from ragbook.generation.generators import ScriptedGenerator
    from ragbook.generation.reader_checks import ModelCheck

    judge = _Judge({})
    with pytest.raises(TypeError, match="reader must be callable"):
        ModelCheck("combined", judge)
    with pytest.raises(TypeError, match="relevance"):
        ModelCheck(ScriptedGenerator(["x"]), object())
    with pytest.raises(TypeError, match="refuse_below"):
        ModelCheck(ScriptedGenerator(["x"]), judge, "0")

    assert ModelCheck(_Windowed(["x"]), judge).budget() == 5
