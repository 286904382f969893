"""Answer keys and the answer metrics (ragbook.evaluation.answers), against hand-derived
values and SQuAD's definitions."""

import collections
import re
import string

import pytest

from ragbook.evaluation.answers import (
    contains_answer,
    correct,
    correct_and_grounded,
    exact_match,
    score_answer,
    token_f1,
)
from ragbook.corpus.keys import normalize_answer, parse_key, references
from ragbook.corpus.labels import Evidence, Question, Span

MERCURY = Question(
    "q",
    "How long is a year on Mercury?",
    "88 days",
    "paraphrase",
    (Evidence((Span("mercury", 0, 5, "x"),)),),
    parse_key(["88 days", "87.969 days"]),
)
NOTHING = Question("n", "What is the mass of the lander?", "", "unanswerable", ())


def squad_normalize(text):
    """SQuAD v1.1's normalisation as its paper and evaluation define it: lower case,
    punctuation removed, articles removed, whitespace collapsed."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return text.split()


def squad_f1(prediction, gold):
    p, g = squad_normalize(prediction), squad_normalize(gold)
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


@pytest.mark.parametrize(
    "text, words",
    [
        ("About 4,879 kilometres [1].", ["about", "4879", "km"]),
        ("4 879 km", ["4", "879", "km"]),  # only commas separate thousands
        ("−173 °C", ["-173", "degc"]),
        ("-173 degrees Celsius", ["-173", "degc"]),
        ("minus 173 °C", ["-173", "degc"]),
        ("tilted 28.32°", ["tilted", "28.32", "degree"]),
        ("28.32 degrees", ["28.32", "degree"]),
        ("a range of 5-10 km", ["range", "of", "5", "10", "km"]),
        ("47.4 kilometres per second", ["47.4", "km", "s"]),
        ("47.4 km/s", ["47.4", "km", "s"]),
        ("Eighty-eight Earth days", ["88", "day"]),
        ("forty two moons", ["42", "moon"]),
        ("twenty-nine moons", ["29", "moon"]),
        ("twenty moons", ["20", "moon"]),
        ("30 seven-day weeks", ["30", "7", "day", "weeks"]),
        ("40 per cent", ["40", "percent"]),
        ("40%", ["40", "percent"]),
        ("0.387 astronomical units", ["0.387", "au"]),
        ("a 3:2 resonance.", ["3:2", "resonance"]),
        ("2,440,500 km", ["2440500", "km"]),
        ("90 kelvin", ["90", "k"]),
    ],
)
def test_normalize_answer(text, words):
    assert normalize_answer(text) == words


@pytest.mark.parametrize(
    "text",
    ["The Great Red Spot!", "an  old,  grey moon", "Nabu; (god of writing)", "A: b."],
)
def test_normalisation_is_squads_for_words_without_numbers_or_units(text):
    assert normalize_answer(text) == squad_normalize(text)


def test_token_f1_by_hand():
    # answer words: orbit takes about 88 day (5); gold "88 days": 88 day (2); common 2
    # precision 2/5, recall 1, F1 = 2 * 0.4 * 1 / 1.4 = 4/7
    assert token_f1("The orbit takes about 88 Earth days [1].", ["88 days"]) == (
        pytest.approx(4 / 7)
    )
    # the best reference counts: "87.969 days" shares only "day" -> 2 * 1/5 * 1/2 / 0.7
    assert token_f1(
        "The orbit takes about 88 Earth days.", ["87.969 days", "88 days"]
    ) == (pytest.approx(4 / 7))
    assert token_f1("Nothing in common", ["88 days"]) == 0.0


@pytest.mark.parametrize(
    "prediction, gold",
    [
        ("the Great Red Spot is a storm", "Great Red Spot"),
        ("Gassendi watched it", "Pierre Gassendi"),
        ("storm storm storm", "a storm"),
    ],
)
def test_token_f1_agrees_with_squad_without_numbers(prediction, gold):
    assert token_f1(prediction, [gold]) == pytest.approx(squad_f1(prediction, gold))


def test_exact_match():
    assert exact_match("88 days.", ["88 days"])
    assert exact_match("The 88 Earth days", ["88 days"])
    assert not exact_match("about 88 days", ["88 days"])


def test_contains_answer_needs_whole_words_in_a_row():
    key = ["88 days", "87.969 days"]
    assert contains_answer("It takes 87.969 Earth days [2].", key)
    assert contains_answer("roughly eighty-eight days", key)
    assert not contains_answer("188 days", key)
    assert not contains_answer("88 hours", key)
    assert not contains_answer("days: 88", key)


def test_a_key_with_two_groups_needs_both():
    key = [["4,879 km"], ["12,104 km", "12104 kilometres"]]
    assert references(key) == ["4,879 km 12,104 km", "4,879 km 12104 kilometres"]
    assert contains_answer("Mercury is 4,879 km wide and Venus 12,104 km.", key)
    assert not contains_answer("Mercury is 4,879 km wide.", key)


def test_parse_key_refuses_bad_keys():
    with pytest.raises(TypeError, match="list of accepted forms"):
        parse_key("88 days")
    with pytest.raises(ValueError, match="mixes"):
        parse_key(["88 days", ["87.969 days"]])
    with pytest.raises(ValueError, match="no words"):
        parse_key(["[1] ."])
    with pytest.raises(ValueError, match="group 1 is empty"):
        parse_key([[]])


def test_correct_for_answerable_and_unanswerable_questions():
    assert correct("About 88 days [1].", MERCURY)
    assert not correct("The sources do not contain the answer.", MERCURY)
    assert not correct("About 59 days [1].", MERCURY)
    assert correct("The sources do not contain the answer.", NOTHING)
    assert not correct("It weighed 760 kg [1].", NOTHING)


def test_correct_and_grounded_needs_the_checks_to_pass():
    sources = ["It needs only about 88 Earth days to complete one circuit."]
    assert correct_and_grounded("It needs about 88 Earth days [1].", MERCURY, sources)
    # right, but cites nothing
    assert not correct_and_grounded("It needs about 88 Earth days.", MERCURY, sources)
    # right number, but a claim the source does not support
    assert not correct_and_grounded(
        "Mercury is hot and needs about 88 days, like Venus, Mars and Saturn [1].",
        MERCURY,
        sources,
    )
    assert correct_and_grounded(
        "The sources do not contain the answer.", NOTHING, sources
    )


def test_score_answer_collects_every_measure():
    sources = ["It needs only about 88 Earth days to complete one circuit."]
    score = score_answer("About 88 Earth days [1].", MERCURY, sources)
    assert (score.refused, score.exact_match, score.contains) == (False, False, True)
    assert score.f1 == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert score.correct and score.grounded
    refusal = score_answer("The sources do not contain the answer.", NOTHING, sources)
    assert refusal.correct and refusal.grounded and refusal.f1 == 1.0


# ---- the judge and its agreement with the key (ragbook.evaluation.judging)
# ----------------------
def test_agreement_by_hand_and_against_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    from ragbook.evaluation.judging import agreement

    first = [True, True, True, False, False, True, False, True]
    second = [True, False, True, False, True, True, False, True]
    a = agreement(first, second)
    # 6 of 8 agree; first says yes 5/8, second 5/8: p_e = 25/64 + 9/64 = 34/64
    assert (a.both_yes, a.both_no, a.only_first, a.only_second) == (4, 2, 1, 1)
    assert a.observed == 0.75 and a.chance == pytest.approx(34 / 64)
    assert a.kappa == pytest.approx((0.75 - 34 / 64) / (1 - 34 / 64))
    assert a.kappa == pytest.approx(cohen_kappa_score(first, second))


def test_agreement_refuses_bad_verdicts():
    from ragbook.evaluation.judging import agreement

    with pytest.raises(ValueError, match="same items"):
        agreement([True], [True, False])
    with pytest.raises(TypeError, match="leave out"):
        agreement([True, None], [True, False])
    assert agreement([True, True], [True, True]).kappa == 1.0


class _Replies:
    def __init__(self, text):
        self.text, self.messages = text, None

    def chat(self, messages, max_tokens):
        self.messages = messages

        class _G:
            pass

        g = _G()
        g.text = self.text
        return g


@pytest.mark.parametrize(
    "reply, verdict",
    [("Yes", True), ("no.", False), (" YES, it", True), ("Maybe", None)],
)
def test_judge_reads_the_first_word(reply, verdict):
    from ragbook.evaluation.judging import LLMJudge

    model = _Replies(reply)
    assert LLMJudge(model)(MERCURY, "About 88 days.") is verdict
    assert "Reference answer: 88 days" in model.messages[1]["content"]
    with pytest.raises(ValueError, match="needs no judge"):
        LLMJudge(model)(NOTHING, "anything")


def test_a_choice_is_the_option_named_first():
    from ragbook.evaluation.answers import chosen_option

    options = ["Mars", "Moon"]
    assert chosen_option("Mars is bigger than the Moon [1].", options) == "Mars"
    assert chosen_option("The Moon is smaller than Mars.", options) == "Moon"
    assert chosen_option("Neither.", options) is None
    assert contains_answer("Mars is bigger than the Moon.", ["Mars"], options)
    assert not contains_answer("The Moon is smaller than Mars.", ["Mars"], options)
    # without the options, both answers contain "Mars"
    assert contains_answer("The Moon is smaller than Mars.", ["Mars"])


def test_score_answer_agrees_with_correct_and_correct_and_grounded():
    from ragbook.corpus.documents import load_corpus
    from ragbook.corpus.labels import load_questions

    questions = load_questions(load_corpus(), split="dev")[::7]
    sources = ["It needs only about 88 Earth days to complete one circuit."]
    replies = [
        "About 88 Earth days [1].",
        "The sources do not contain it.",
        "Mars [1].",
    ]
    for q in questions:
        for reply in replies + ([f"{q.answer} [1]."] if q.answerable else []):
            score = score_answer(reply, q, sources)
            assert score.correct == correct(reply, q), (q.id, reply)
            assert score.grounded == correct_and_grounded(reply, q, sources), q.id
