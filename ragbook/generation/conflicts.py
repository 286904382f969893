"""Sources that disagree (chapter 15).

A corpus can state one fact twice with different figures: an old fact sheet beside the
article, a correction planted after the true sentence. A reader that cites one of
them is well grounded and may still be wrong, and nothing tells the user that another
source says otherwise. :func:`disagreeing` finds, among the sentences of a prompt,
those that state the answer's kind of figure (:mod:`ragbook.generation.answer_types`)
about the same thing with another value; the cited reader then says that the sources
disagree and cites both sides.

"The same thing" is read from words, as a person skimming would: the sentence names
the question's subject (in its text or its source's label) and the question's other
names ("Galileo"), holds a figure of the kind the question asks for, and holds as many
of the question's words that say what is asked about ("moons" in "How many moons does
Mars have?") as the evidence does, and a quarter of the evidence's own words. Words
are compared by a crude stem ("launched" and "launch", "flew" and "fly"), and a
sentence is read with the one before it, where "It" and "this figure" find what they
refer to. Two figures agree when they differ by less than 2 % (``88`` and ``87.969``
days); two years only when they are the same year. A sentence that restates the
evidence's own figures is no disagreement. The rule misses a disagreement worded
differently from the question ("satellites" for "moons"), and can take two figures of
different things described in the same words for one (two flybys of one spacecraft in
different years).

A sentence that says it corrects a figure ("later revised this figure", "corrected this
total") disagrees by its own words with the sentence it corrects, whatever words that
one uses: when the evidence is such a correction, the sentence before it (or, where the
correction opens a chunk, the last sentence of another chunk of the same section) is
on the other side when it gives another figure of the kind asked for
(:func:`corrected`).

Where every source on both sides is dated (an organisation's documents carry a version
and a date, which the tool puts in their labels), the disagreement has a rule for
settling it: the newer source is preferred (:func:`newest`, :func:`settle`), and the
answer says that it was.
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import NUMBER_WORDS, SPELLED_NUMBER, QUANTITIES, expected_kinds
from .cited_prompt import Sentence, numbered_sentences, quote
from .prompts import Prompt
from ..corpus.orgdocs import label_date
from ..indexing.text import analyze

__all__ = [
    "CORRECTS",
    "DISAGREE",
    "OLDER",
    "SHARED",
    "TOLERANCE",
    "figures",
    "attribute_terms",
    "corrected",
    "disagreeing",
    "newest",
    "settle",
]

DISAGREE = "The sources disagree:"  # how an answer says so, before the other side
OLDER = "Older source:"  # before the other side, when the answer follows the newer
SHARED = 0.25  # the share of the evidence's words a disagreeing sentence must hold
TOLERANCE = 0.02  # two figures within 2 % of each other agree
# the words by which a sentence says that it corrects an earlier figure
CORRECTS = re.compile(
    r"\b(?:revis|correct(?!ly\b)|updat|amend|supersed|re-?analys)\w*"
    r"|\bthis (?:figure|total|value|estimate|number|measurement|count|date)\b",
    re.I,
)

_YEAR = re.compile(r"\b(1[0-9]{3}|2[0-9]{3})\b")
_FIGURE = re.compile(
    r"(?<![\w.])[-−]?(\d[\d,]*(?:\.\d+)?)(?!\.\d)|" + SPELLED_NUMBER.pattern, re.I
)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def _value(text: str) -> float:
    """The value of a figure as matched: ``"-173"``, ``"6.4 billion years"``,
    ``"two hours"``."""
    text = text.strip().lower()
    sign = -1.0 if text[:1] in "-−" else 1.0
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    number = (
        float(digits.group().replace(",", ""))
        if digits
        else float(NUMBER_WORDS[SPELLED_NUMBER.search(text).group().lower()])
    )
    scale = re.search(r"thousand|million|billion|trillion", text)
    return sign * number * (_SCALE[scale.group()] if scale else 1.0)


# each unit's size in the unit a kind is compared in (km, days, kg, km/s); a unit not
# listed ("Earth radii") is left as written
_UNITS = {
    "length": [
        (r"km|kilomet(?:re|er)s?", 1.0),
        (r"cm|centimet(?:re|er)s?", 1e-5),
        (r"mm|millimet(?:re|er)s?", 1e-6),
        (r"m|met(?:re|er)s?", 1e-3),
        (r"miles?", 1.609344),
        (r"au|astronomical units?", 1.495978707e8),
        (r"light[- ]years?", 9.4607e12),
        (r"parsecs?", 3.0857e13),
    ],
    "duration": [
        (r"s|seconds?", 1 / 86400),
        (r"minutes?", 1 / 1440),
        (r"h|hours?", 1 / 24),
        (r"days?", 1.0),
        (r"sols?", 1.0275),
        (r"weeks?", 7.0),
        (r"months?", 30.44),
        (r"years?|yr", 365.25),
        (r"decades?", 3652.5),
        (r"century|centuries", 36525.0),
        (r"millennia", 365250.0),
    ],
    "mass": [
        (r"kg|kilograms?", 1.0),
        (r"g|grams?", 1e-3),
        (r"tonnes?|tons?", 1e3),
        (r"earth masses", 5.972e24),
        (r"jupiter masses", 1.898e27),
        (r"solar masses", 1.989e30),
    ],
}


def _in_unit(match: str, kind: str) -> float:
    """The value of a figure with its unit, in the unit its kind is compared in: km,
    days, kg, °C or km/s (``"3.8 cm per year"`` is 3.8e-5 / 31,557,600 km/s)."""
    value = _value(match)
    unit = re.sub(rf"^[-−\s\d.,]*(?:{SPELLED_NUMBER.pattern})?", "", match, flags=re.I)
    unit = re.sub(r"^\s*(?:thousand|million|billion|trillion)", "", unit.lower())
    if kind == "temperature":
        if re.search(r"f|fahrenheit", unit):
            return (value - 32) * 5 / 9
        if not re.search(r"c", unit):  # kelvin
            return value - 273.15
        return value
    if kind == "speed":
        if unit.strip() == "mph":
            return value * 1.609344 / 3600
        if "/" in unit:
            distance, _, per = unit.partition("/")
            seconds = {"s": 1.0, "h": 3600.0}.get(per.strip(), 1.0)
        else:  # "km per hour", "metres a second"
            distance, _, per = unit.strip().partition(" ")
            seconds = _scale(per.split()[-1], "duration") * 86400 if per else 1.0
        return value * _scale(distance, "length") / seconds
    return value * _scale(unit, kind)


def _scale(unit: str, kind: str) -> float:
    """The size of ``unit`` in the unit ``kind`` is compared in; 1 for a unit not
    listed."""
    unit = unit.strip().lower()
    if kind == "duration":  # "Earth days" are days
        unit = re.sub(r"^(?:earth|martian|terrestrial) ", "", unit)
    for pattern, size in _UNITS.get(kind, []):
        if re.fullmatch(pattern, unit):
            return size
    return 1.0


def figures(text: str, kind: str) -> list[float]:
    """The figures of ``kind`` in ``text``: a length, duration, mass, temperature or
    speed with its unit, in one unit for its kind (km, days, kg, °C, km/s; scale words
    applied: ``6.4 billion years`` is 6.4e9 x 365.25 days), a year for a date, and for
    a count every number or number word that is not a year and has no unit."""
    text = validate.text(text, "text")
    if kind in QUANTITIES:
        return [_in_unit(m.group(), kind) for m in QUANTITIES[kind].finditer(text)]
    if kind == "date":
        return [float(y) for y in _YEAR.findall(text)]
    if kind == "count":
        rest = text
        for pattern in QUANTITIES.values():
            rest = pattern.sub(" ", rest)
        rest = _YEAR.sub(" ", rest)
        return [_value(m.group()) for m in _FIGURE.finditer(rest)]
    return []


def _without_figures(text: str, kind: str) -> str:
    """The text with its figures of ``kind``, units and all, taken out."""
    if kind in QUANTITIES:
        return QUANTITIES[kind].sub(" ", text)
    return _FIGURE.sub(" ", _YEAR.sub(" ", text))


def _agree(a: float, b: float, kind: str) -> bool:
    """Two figures of ``kind`` agree: equal years, or other figures within
    :data:`TOLERANCE` of each other (2 % of a year like 2001 would be 40 years)."""
    if kind == "date":
        return a == b
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b))


# past forms whose stem is not their spelling: "flew by" asks what "fly by" asks
_IRREGULAR = {
    "flew": "fly",
    "flown": "fly",
    "brought": "bring",
    "found": "find",
    "began": "begin",
    "begun": "begin",
    "took": "take",
    "taken": "take",
    "made": "make",
    "saw": "see",
    "seen": "see",
    "sent": "send",
    "built": "build",
    "rose": "rise",
    "risen": "rise",
    "grew": "grow",
    "grown": "grow",
    "held": "hold",
    "spun": "spin",
    "went": "go",
    "gone": "go",
}


def _stem(term: str) -> str:
    """A crude stem that lets a question's word find its other forms in a sentence:
    ``launched``, ``launches`` and ``launch``; ``arrived`` and ``arrive``; ``moons``
    and ``moon``; ``flew`` and ``fly``."""
    term = _IRREGULAR.get(term, term)
    if term.endswith("ies") and len(term) > 4:
        return term[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if (
            term.endswith(suffix)
            and len(term) - len(suffix) >= 3
            and not term.endswith("ss")
        ):
            term = term[: -len(suffix)]
            break
    return term[:-1] if term.endswith("e") and len(term) > 3 else term


def _terms(text: str) -> set[str]:
    return {_stem(t) for t in analyze(text)}


# the words of "how long", "how many" ...: they ask, they are not what is asked about
_ASKING = set(
    "long many much big large far old high deep wide fast hot cold warm tall thick "
    "heavy massive across number far times".split()
)
_ASKING_STEMS = {_stem(word) for word in _ASKING}


def attribute_terms(question: str, names: list[str]) -> set[str]:
    """The terms of the question that say what is asked about ("moons" in "How many
    moons does Mars have?"): its analysed terms less the names and the words of
    asking ("many", "long")."""
    named = {_stem(t) for n in names for t in analyze(n)}
    return {
        term
        for term in map(_stem, analyze(question))
        if term not in named and term not in _ASKING_STEMS and not term.isdigit()
    }


def _counted(text: str, asked: set[str]) -> list[float]:
    """The counts of ``text`` that count something asked about: a number or number
    word followed, within three words, by an asked term ("ten known moons")."""
    words = re.findall(r"[\w'’.,-]+", text)
    found = []
    for i, word in enumerate(words):
        token = word.strip(".,")
        if figures(token, "count") and not _YEAR.fullmatch(token):
            if {_stem(w.strip(".,").lower()) for w in words[i + 1 : i + 4]} & asked:
                found.append(_value(token))
    return found


def _before(sentence: Sentence, prompt: Prompt, skip: set[str]) -> str:
    """The sentence before ``sentence`` in its source; "" for the first, or when that
    sentence's id is in ``skip``."""
    source, n = sentence.id.split(".")
    previous = f"{source}.{int(n) - 1}"
    if previous in skip:
        return ""
    return next((s.text for s in numbered_sentences(prompt) if s.id == previous), "")


def _covered(
    asked: set[str],
    sentence: Sentence,
    prompt: Prompt,
    kind: str,
    evidence: set[str] = frozenset(),
) -> float:
    """The share of the asked terms that the sentence, the sentence before it in its
    source (where "It" and "this figure" find what they refer to; not when that is an
    ``evidence`` sentence, whose subject a sentence after it would borrow) and its
    source's label hold, outside the figures of ``kind`` and their units."""
    label = prompt.sources[sentence.source - 1].label
    context = f"{_before(sentence, prompt, set(evidence))} {sentence.text}"
    held = _terms(f"{label} {_without_figures(context, kind)}")
    return len(asked & held) / len(asked)


def _shared(sentence: Sentence, evidence: list[Sentence], kind: str) -> float:
    """The largest share of an evidence sentence's terms, figures and units left out,
    that ``sentence`` holds: how much the two say in the same words."""
    held = _terms(_without_figures(sentence.text, kind))
    shares = [
        len(terms & held) / len(terms)
        for terms in (_terms(_without_figures(e.text, kind)) for e in evidence)
        if terms
    ]
    return max(shares, default=0.0)


def disagreeing(
    question: str,
    words: str,
    evidence: list[Sentence],
    prompt: Prompt,
    subjects: tuple[str, ...] = (),
) -> list[Sentence]:
    """The sentences of ``prompt``'s sources that give another figure than the answer's
    ``words`` for what ``question`` asks.

    Such a sentence names the question's subject (one of ``subjects`` it names, or
    its other capitalised words), in its text or its source's label, and, in its text
    or the sentence before it, the question's other capitalised names; it holds a figure
    of a kind the question asks for
    (:func:`~ragbook.generation.answer_types.expected_kinds`; a count only when
    followed by a word of the question, as in "ten moons"), and none of its figures
    agrees with the answer's or the evidence's; and it holds at least half of the
    :func:`attribute_terms` of the question, and no fewer than the evidence holds,
    counting its source's label and the sentence before it (not when that is
    evidence) and leaving out its figures' units; and it holds at
    least :data:`SHARED` of the words of an evidence sentence (figures left out). The
    sentences an evidence sentence says it corrects are added (:func:`corrected`)."""
    question = validate.text(question, "question")
    kinds = [k for k in expected_kinds(question) if k not in ("name", "yes/no")]
    if not kinds and evidence:  # a question that does not say ("By how much ...?"):
        # only a correction, of a figure of the answer's kind, is a disagreement
        kinds = [k for k, unit in QUANTITIES.items() if unit.search(words)]
        return corrected(words, evidence, prompt, kinds) if kinds else []
    if not evidence or not kinds:
        return []
    named = [s for s in subjects if re.search(rf"\b{re.escape(s)}\b", question, re.I)]
    if not named:
        named = re.findall(r"(?<!^)\b[A-Z][a-z]+", question.strip())
    asked = attribute_terms(question, named)
    if not asked:  # nothing to tell one figure's subject from another's
        return corrected(words, evidence, prompt, kinds)
    cited = {s.id for s in evidence}
    # the question's other names ("Galileo" in "When did the Galileo spacecraft
    # arrive at Jupiter?"): what a sentence about the same thing names too
    subject_words = {w.lower() for n in named for w in n.split()}
    others = {
        w
        for w in re.findall(r"(?<!^)\b[A-Z][A-Za-z]+", question.strip())
        if w.lower() not in subject_words
    }
    found = []
    for kind in kinds:
        answer = figures(words, kind)
        if not answer:
            continue
        known = answer + [v for s in evidence for v in figures(s.text, kind)]
        bar = max(0.5, max(_covered(asked, s, prompt, kind, cited) for s in evidence))
        for sentence in numbered_sentences(prompt):
            if sentence.id in cited or sentence in found:
                continue
            label = prompt.sources[sentence.source - 1].label
            about = f"{label} {sentence.text}"
            if named and not any(re.search(rf"\b{re.escape(n)}", about) for n in named):
                continue
            context = f"{_before(sentence, prompt, cited)} {sentence.text}"
            if not all(re.search(rf"\b{w}", context) for w in others):
                continue
            values = (
                _counted(sentence.text, asked)
                if kind == "count"
                else figures(sentence.text, kind)
            )
            every = figures(sentence.text, kind)  # "128 new moons ... to 274": agrees
            if (
                values
                and not any(_agree(v, k, kind) for v in every + values for k in known)
                and _covered(asked, sentence, prompt, kind, cited) >= bar
                and _shared(sentence, evidence, kind) >= SHARED
            ):
                found.append(sentence)
    for sentence in corrected(words, evidence, prompt, kinds):
        if sentence not in found:
            found.append(sentence)
    return found


def corrected(
    words: str, evidence: list[Sentence], prompt: Prompt, kinds: list[str]
) -> list[Sentence]:
    """The sentences that an evidence sentence says it corrects (:data:`CORRECTS`)
    and that give another figure of one of ``kinds`` than the answer's ``words`` and
    the evidence: the sentence before the correction in its source or, where the
    correction is the first sentence of its source (a chunk), the last sentence of
    each other source with the same label (another chunk of the same section)."""
    sentences = {s.id: s for s in numbered_sentences(prompt)}
    cited = {s.id for s in evidence}
    found = []
    for correction in evidence:
        if not CORRECTS.search(correction.text):
            continue
        source, n = correction.id.split(".")
        before = sentences.get(f"{source}.{int(n) - 1}")
        if before is not None:
            candidates = [before]
        else:
            label = prompt.sources[int(source) - 1].label
            ends = (
                max(
                    (s for s in sentences.values() if s.source == other.number),
                    key=lambda s: int(s.id.split(".")[1]),
                    default=None,
                )
                for other in prompt.sources
                if other.label == label and other.number != int(source)
            )
            candidates = [s for s in ends if s is not None]
        for sentence in candidates:
            if sentence.id in cited or sentence in found:
                continue
            for kind in kinds:
                answer = figures(words, kind)
                known = answer + [v for s in evidence for v in figures(s.text, kind)]
                theirs = figures(sentence.text, kind)
                if (
                    answer
                    and theirs
                    and not any(_agree(v, k, kind) for v in theirs for k in known)
                ):
                    found.append(sentence)
                    break
    return found


def newest(sentences: list[Sentence], prompt: Prompt):
    """The sentence of the newest source among ``sentences`` and the date of each
    sentence's source, (sentence, dates), when every source is dated (a label that
    names a version and a date; :func:`~ragbook.corpus.orgdocs.label_date`) and one
    date is later than all the others; else None: undated sources, or two sources of
    the newest date, leave the disagreement to the reader of the answer."""
    dates = [label_date(prompt.sources[s.source - 1].label) for s in sentences]
    if not sentences or None in dates:
        return None
    latest = max(dates)
    if dates.count(latest) > 1:
        return None
    return sentences[dates.index(latest)], dates


def settle(
    answer: str, evidence: tuple[Sentence, ...], against: list[Sentence], prompt
) -> tuple[str, tuple[Sentence, ...], list[Sentence], str]:
    """An answer, its evidence and the sentences that disagree with it, with the note
    that says so: (answer, evidence, the other side, the date the answer follows or
    ``""``).

    When the sources of the first evidence sentence and of every sentence against it
    are dated and one is the newest (:func:`newest`), the answer follows that one
    (quoted, when it was against the model's evidence) and quotes each older side
    after :data:`OLDER`; else the sentences against it are quoted after
    :data:`DISAGREE`. The dates are in the sources' labels, not in the answer, so that
    the grounding checks read the answer against the sources' texts as they read any
    other."""
    settled = newest([evidence[0], *against], prompt)
    if not settled:
        notes = " ".join(quote(s) for s in against)
        return f"{answer} {DISAGREE} {notes}", evidence, against, ""
    chosen, dates = settled
    older = [s for s in [evidence[0], *against] if s != chosen]
    if chosen != evidence[0]:  # the model's evidence is the older side
        answer, evidence = quote(chosen), (chosen,)
    notes = " ".join(f"{OLDER} {quote(s)}" for s in older)
    return f"{answer} {notes}", evidence, older, max(dates).isoformat()
