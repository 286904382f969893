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
refer to. Figures are read by :mod:`~ragbook.generation.figures`: two agree when they
differ by less than 2 % (``88`` and ``87.969`` days), two years only when they are the
same year. A sentence that restates the
evidence's own figures is no disagreement. The rule misses a disagreement worded
differently from the question ("satellites" for "moons"), and can take two figures of
different things described in the same words for one (two flybys of one spacecraft in
different years).

A sentence that says it corrects a figure ("later revised this figure", "corrected this
total") disagrees by its own words with the sentence it corrects, whatever words that
one uses: when the evidence is such a correction, the sentence before it (or, where the
correction opens a chunk, the last sentence of another chunk of the same section) is
on the other side when it gives another figure of the kind asked for, or another name
where a name is asked for (:func:`corrected`; "corrected this attribution").

A person is compared by name, and only in a clause that names the event the question
asks about and the thing it is about, besides the article's subject: "Gerard Kuiper
discovered Miranda in 1948" disagrees with an answer "Seth Nicholson" to "Which
astronomer discovered Miranda?". "Who discovered Pluto?" is compared only with a
clause that opens with the subject ("Pluto was discovered by ..."): too many
discoveries are told of Pluto's system for its name anywhere to say which one is
meant.

Where every source on both sides is dated, the newer one settles the disagreement
(:mod:`~ragbook.generation.dated`).
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import QUANTITIES, asked_event, expected_kinds, names_in
from .cited_prompt import Sentence, numbered_sentences
from .figures import PERCENT, YEAR, agree, figure_value, figures, without_figures
from .prompts import Prompt
from ..indexing.text import analyze

__all__ = [
    "CORRECTS",
    "DISAGREE",
    "SAME",
    "SHARED",
    "answered_twice",
    "attribute_terms",
    "corrected",
    "disagreeing",
]

DISAGREE = "The sources disagree:"  # how an answer says so, before the other side
SHARED = 0.25  # the share of the evidence's words a disagreeing sentence must hold
SAME = 0.5  # ... and the share by which it says what the evidence says
# the words by which a sentence says that it corrects an earlier figure
CORRECTS = re.compile(
    r"\b(?:revis|correct(?!ly\b)|updat|amend|supersed|re-?analys)\w*"
    r"|\b(?:this|that|the (?:earlier|older|previous|original)) (?:figure|total|value"
    r"|estimate|number|measurement|count|tally|date|attribution|reading|claim)\b",
    re.I,
)

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
# the words by which a question asks for a date ("In what month and year ...?")
_DATE_ASKING = {_stem(word) for word in ("year", "month", "date")}


def attribute_terms(question: str, names: list[str]) -> set[str]:
    """The terms of the question that say what is asked about ("moons" in "How many
    moons does Mars have?"): its analysed terms less the names and the words of
    asking ("many", "long"; "month" and "year" where it asks for a date)."""
    named = {_stem(t) for n in names for t in analyze(n)}
    asking = _ASKING_STEMS | (
        _DATE_ASKING if expected_kinds(question) == {"date"} else set()
    )
    return {
        term
        for term in map(_stem, analyze(question))
        if term not in named and term not in asking and not term.isdigit()
    }


def _counted(text: str, asked: set[str]) -> list[float]:
    """The counts of ``text`` that count something asked about: a number or number
    word followed, within three words, by an asked term ("ten known moons")."""
    words = re.findall(r"[\w'’.,-]+", text)
    found = []
    for i, word in enumerate(words):
        token = word.strip(".,")
        if figures(token, "count") and not YEAR.fullmatch(token):
            if {_stem(w.strip(".,").lower()) for w in words[i + 1 : i + 4]} & asked:
                found.append(figure_value(token))
    return found


def _shares(text: str, asked: set[str], question: str) -> list[float]:
    """The shares in percent of ``text`` that are shares of what is asked about: an
    asked term, not a name, within five words of the figure and in its clause ("95
    percent carbon dioxide"; not "95 percent of Earth's, and a mass ..."), and no name
    after "of" that the question does not name ("0.2 percent of Earth's mass" is no
    share of Pluto's mass)."""
    found = []
    for match in PERCENT.finditer(text):
        clause = re.split(r"[,;:]\s", text[: match.start()])[-1]
        before = re.findall(r"[\w'’-]+", clause)[-5:]
        clause = re.split(r"[,;:]\s", text[match.end() :])[0]
        after = re.findall(r"[\w'’-]+", clause)[:5]
        base = re.match(r"\s*of (?:the )?([A-Z][\w'’-]*)", text[match.end() :])
        if base and re.sub(r"['’]s$", "", base.group(1)) not in question:
            continue
        if _terms(" ".join(w for w in before + after if w.islower())) & asked:
            found.append(float(match.group(1)))
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
    held = _terms(f"{label} {without_figures(context, kind)}")
    return len(asked & held) / len(asked)


def _shared(sentence: Sentence, evidence: list[Sentence], kind: str) -> float:
    """The largest share of an evidence sentence's terms, figures and units left out,
    that ``sentence`` holds: how much the two say in the same words."""
    held = _terms(without_figures(sentence.text, kind))
    shares = [
        len(terms & held) / len(terms)
        for terms in (_terms(without_figures(e.text, kind)) for e in evidence)
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
    :func:`attribute_terms` of the question, and no fewer than the evidence holds
    unless it holds :data:`SAME` of an evidence sentence's words (then it says the
    same thing), counting its source's label and the sentence before it (not when
    that is evidence) and leaving out its figures' units; and it holds at least
    :data:`SHARED` of the words of an evidence sentence (figures left out), or stands
    just before one (which may speak of it in words of its own: "that layer"). A
    question asking for a person compares names instead, clause by clause
    (:func:`_names_another`). The sentences an evidence sentence says it corrects are
    added (:func:`corrected`)."""
    question = validate.text(question, "question")
    asks = expected_kinds(question)
    kinds = [k for k in asks if k not in ("name", "yes/no")]
    if _PERSON.search(question.strip()):
        kinds.append("name")
    if not kinds and evidence:  # a question that does not say ("By how much ...?"),
        # or asks for a name of a thing: only a correction, of a figure of the
        # answer's kind or of a name, is a disagreement
        kinds = [k for k, unit in QUANTITIES.items() if unit.search(words)]
        kinds += ["name"] if "name" in asks else []
        return corrected(words, evidence, prompt, kinds, question) if kinds else []
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
    # with a designation's number ("Apollo 11"), but an owner ("China's Chang'e 4")
    owned = r"(?<!^)\b[A-Z][A-Za-z]+\b(?:[ -]\d+\b)?(?!['’]s [A-Z])"
    others = {
        w for w in re.findall(owned, question.strip()) if w.lower() not in subject_words
    }
    found = []
    for kind in kinds:
        answer = _read(words, kind, question)
        if not answer:
            continue
        known = answer + [v for s in evidence for v in _read(s.text, kind, question)]
        bar = max(0.5, max(_covered(asked, s, prompt, kind, cited) for s in evidence))
        for sentence in numbered_sentences(prompt):
            if sentence.id in cited or sentence in found:
                continue
            label = prompt.sources[sentence.source - 1].label
            about = f"{label} {sentence.text}"
            if named and not any(re.search(rf"\b{re.escape(n)}", about) for n in named):
                continue
            if kind == "name":  # a person, read clause by clause
                # the subject alone: the names of the answer, not of its evidence's
                # every place and instrument ("the Brera Observatory")
                theirs = known if others else answer
                if _names_another(sentence.text, others, theirs, question, named):
                    found.append(sentence)
                continue
            context = f"{_before(sentence, prompt, cited)} {sentence.text}"
            source, n = sentence.id.split(".")  # just before an evidence sentence
            right_before = f"{source}.{int(n) + 1}" in cited
            if not all(re.search(rf"\b{w}(?!\d)", context) for w in others):
                continue
            every = _read(sentence.text, kind, question)
            # "128 new moons ... to 274" agrees, by its 274
            values = (
                _counted(sentence.text, asked)
                if kind == "count"
                else _shares(sentence.text, asked, question)
                if kind == "ratio"
                else every
            )
            if (
                values
                and _differs(every + values, known, kind)
                and (
                    (shared := _shared(sentence, evidence, kind)) >= SHARED
                    or right_before
                )
                and _covered(asked, sentence, prompt, kind, cited)
                >= (0.5 if shared >= SAME else bar)
            ):
                found.append(sentence)
    for sentence in corrected(words, evidence, prompt, kinds, question):
        if sentence not in found:
            found.append(sentence)
    return found


# a question that asks for a person, whose name a sentence about the same thing can
# give otherwise ("discovered by Gerard Kuiper")
_PERSON = re.compile(
    r"^(?:who|whom|whose|(?:what|which) (?:astronomer|scientist|person|engineer))\b",
    re.I,
)


def _read(text: str, kind: str, question: str) -> list:
    """What ``text`` gives of ``kind``: its figures (:func:`figures`) or, for a name,
    its names that the question does not hold (:func:`names_in`)."""
    if kind == "name":
        return sorted(names_in(text) - names_in(question))
    return figures(text, kind)


def _differs(theirs: list, known: list, kind: str) -> bool:
    """Whether a sentence's figures or names ``theirs`` are there and none agrees with
    the ``known`` ones of the answer and its evidence."""
    if kind == "name":
        return bool(theirs) and not set(theirs) & set(known)
    return bool(theirs) and not any(agree(v, k, kind) for v in theirs for k in known)


def _names_another(
    text: str, others: set[str], known: list, question: str, subjects: list[str]
) -> bool:
    """Whether a clause of ``text`` names the event the question asks about
    (:func:`~ragbook.generation.answer_types.asked_event`) and someone no ``known``
    name names: "Gerard Kuiper discovered Miranda in 1948" where the answer is "Seth
    Nicholson". The clause names each of the question's ``others`` names or, where
    the question names its subject alone, opens with one of its ``subjects`` ("Ceres
    was discovered by ..."; a subject named anywhere, "Pluto's moon Charon was
    discovered by ...", is named with too many events). A list of discoveries is
    read one clause at a time."""
    event = asked_event(question)
    if event is None or not (others or subjects):
        return False
    opens = "|".join(re.escape(s) for s in subjects)
    for clause in re.split(r"[;,]\s*|\s+and\s+", text):
        if (
            (
                all(re.search(rf"\b{w}\b", clause) for w in others)
                if others
                else re.match(rf"(?:The )?(?:{opens}) (?:was|were|is)\b", clause)
            )
            and re.search(rf"\b(?:{event[1]})\b", clause, re.I)
            and _differs(_read(clause, "name", question), known, "name")
        ):
            return True
    return False


def corrected(
    words: str,
    evidence: list[Sentence],
    prompt: Prompt,
    kinds: list[str],
    question: str = "",
) -> list[Sentence]:
    """The sentences that an evidence sentence says it corrects (:data:`CORRECTS`)
    and that give another figure of one of ``kinds`` than the answer's ``words`` and
    the evidence (for the kind "name", a name that neither they nor ``question``
    give): the sentence before the correction in its source or, where the
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
                answer = _read(words, kind, question)
                known = answer + [
                    v for s in evidence for v in _read(s.text, kind, question)
                ]
                theirs = _read(sentence.text, kind, question)
                if answer and _differs(theirs, known, kind):
                    found.append(sentence)
                    break
    return found


def answered_twice(question: str, claims: list, prompt: Prompt) -> list[Sentence]:
    """The evidence of the second of two ``claims`` ((words, evidence, ...) each) when
    both answer the same question differently, else []: each names the same two or
    more names of the question (all it names of it), its evidence (read with its
    source's label and the sentence before it, where "Both" finds what it refers to)
    names one of them, and the names they give besides, or their figures, have none in
    common. "Edward Holden discovered Phobos and Deimos" and "Asaph Hall discovered
    Phobos and Deimos" both answer "Who discovered Phobos and Deimos?", the
    question's two names being one subject; "Phobos ..." and "Deimos ..." answer its
    two parts."""
    if len(claims) != 2:
        return []
    asked = names_in(validate.text(question, "question"))
    named = [names_in(c[0]) & asked for c in claims]
    if len(named[0]) < 2 or named[0] != named[1]:
        return []
    for claim in claims:
        context = " ".join(
            f"{prompt.sources[s.source - 1].label} {_before(s, prompt, set())} {s.text}"
            for s in claim[1]
        )
        if not names_in(context) & named[0]:
            return []  # a claim about something else, given the question's names
    names = [names_in(c[0]) - asked for c in claims]
    numbers = [set(re.findall(r"\d[\d,.]*\d|\d", c[0])) for c in claims]
    if not any(all(said) and not said[0] & said[1] for said in (names, numbers)):
        return []  # nothing said twice otherwise ("Hall" and "Hall in 1877" agree)
    return [s for s in claims[1][1] if s not in claims[0][1]]
