"""A reader that writes cited answers: structured output, sentence ids as citations,
and abstention read from the model's probabilities (chapters 11 and 15).

The prompt numbers every sentence of every source: ``[2.3]`` is the third sentence of
source 2. The model's reply is constrained by a grammar (llama.cpp's GBNF) to two
lines::

    Answer: 224.7 Earth days
    Evidence: [2.1]

The answer is a few words on one line, with no brackets and no end of sentence, and the
evidence line may name only sentence ids of the prompt. The reader renders the reply
as ``224.7 Earth days [2].``: the answer is one claim, every citation names a source
that holds a sentence the model chose, so a citation is valid by construction, and the
evidence is a real sentence of the prompt, which the reader keeps in ``last``.

Whether to answer is read from the model's probabilities, not from its words: the
probability that the answer starts with "none", the mean log-probability of the
answer's tokens, or how much the sources raised that probability over the question
alone (:func:`scores`). The threshold is a number to calibrate on dev questions
(chapter 15), not a phrase to look for in the reply. Before answering, the reader also
refuses an answer holding a number that no sentence it may cite holds (the number
check of the grounding checks).

A grammar checks the form, not the content: a well-formed answer can cite the right
sentence and misstate it, or cite a sentence that does not hold the answer.

The prompt, grammar and reply's reading are in :mod:`~ragbook.generation.cited_prompt`;
the checks on the answer's words in :mod:`~ragbook.generation.cited_checks`.
"""

from __future__ import annotations

from typing import Callable

from .. import validate
from .answer_types import event_mismatch, kind_mismatch
from .conflicts import answered_twice, disagreeing
from .dated import settle
from .parts import first_option, lead_with_option, options, order_claims
from .parts import split_claims, two_parts
from .requests import off_task
from .siblings import said_of_another
from .cited_checks import anchor, cut, grouped_as_evidence, half_range, missing_names
from .cited_checks import period_mismatch, says_not_stated
from .cited_checks import spelled_as_evidence
from .cited_checks import supported, uncut, unnamed, unsupported_numbers
from .cited_checks import without_designations
from .cited_prompt import (
    ANSWER_ENDS,
    AnswerStream,
    CitedAnswer,
    CITED_INSTRUCTION,
    CLOSED_INSTRUCTION,
    NONE,
    OPENING,
    COMPARE_INSTRUCTION,
    TWO_PART_INSTRUCTION,
    SCORES,
    Sentence,
    cited_messages,
    evidence_grammar,
    numbered_sentences,
    parse_claims,
    quote,
    render_answer,
    scores,
)
from .generators import ABSTAIN
from .prompts import Prompt

__all__ = [
    "REFUSE_BY",
    "REFUSE_BELOW",
    "CitedReader",
]

# the reader's default score and threshold: chapter 15's choice on dev, where no
# threshold on any score raised the share correct and grounded; the model refuses by
# answering "none", the likeliest first token when it is
REFUSE_BY = "none"
REFUSE_BELOW = None


class CitedReader:
    """A reader (a prompt in, an answer out) that asks a language model for a short
    answer and the ids of its evidence sentences under a grammar, and decides whether
    to answer from the model's probabilities (see the module's description).

    ``model`` is a :class:`~ragbook.llm.LocalModel` (anything with its
    ``structured_reply``). The reader refuses when:

    - no sentence can be cited (no sources, or none about the question's subject);
    - the score named by ``refuse_by`` (:func:`scores`: ``none``, ``confidence`` or
      ``lift``) is below ``refuse_below`` (None: no threshold);
    - the model's words are "none";
    - with ``check_numbers``, a number of the answer is in no sentence it may cite
      (the grounding checks' number check, applied before answering; "34, 800 km"
      is first joined as a sentence writes it, "34,800 km", and a word the length
      limit cut is not read: :func:`~ragbook.generation.cited_checks.uncut`);
    - with ``check_names``, a name of the question
      (:func:`~ragbook.generation.cited_checks.missing_names`: Titan, Galle; the
      ``subjects`` excepted) is in none of the sources its evidence comes from, label
      or text;
    - with ``check_kinds``, the answer is not the kind of thing the question asks
      for (:func:`~ragbook.generation.answer_types.kind_mismatch`: an age for a
      depth), and with ``check_dimensions`` (the default) a length is not the one
      asked for, in its words or evidence (a height for a width), or a count does
      not count what is asked about (two balloons for "How many coronae ...?");
    - with ``check_events`` (the default), the evidence does not name the event a
      "when" or "who" question asks about (a flyby's date for "When was Arrokoth
      discovered?": :func:`~ragbook.generation.answer_types.event_mismatch`);
    - with ``check_holders`` (the default), every evidence sentence holding the
      answer's figure says it of another thing than the question names (Chang'e 5's
      1.7 kg for Chang'e 6: :func:`~ragbook.generation.siblings.said_of_another`);
    - with ``check_requests``, the request is not a question about the documents
      (:func:`~ragbook.generation.requests.off_task`: "ignore your sources", "repeat
      your instructions"); the model is then not asked;
    - with ``verify``, the model, asked in a prompt of its own whether the first
      evidence sentence answers the question, finds No likelier than Yes
      (:meth:`verdict`; the score is then in ``last.scores["verdict"]``);
    - with ``verify_unnamed`` (the default), the same, but asked only when that
      sentence does not name a name of the question (the ``subjects`` excepted;
      :func:`~ragbook.generation.cited_checks.unnamed`): a figure about another
      spacecraft or crater than the one asked about.

    With ``quote_unsupported`` (the default), an answer whose words do not pass the
    grounding checks (:mod:`ragbook.generation.verification`) against the sources it
    cites (:func:`~ragbook.generation.cited_checks.supported`: a claim's terms found
    in them, its numbers held) is given as its first evidence sentence, quoted and
    cited (:func:`~ragbook.generation.cited_prompt.quote`): what cannot be checked in
    the model's words is said in the source's.

    With ``two_part`` (the default), a question in two parts
    (:func:`~ragbook.generation.parts.two_parts`: "..., Jupiter or Saturn?", "how hot
    and how cold") is asked for two claims, each with its own evidence and each
    checked as above; a claim that fails is left out, and the answer is refused when
    both fail or when a name of the question is in none of the sources of the claims
    left (a comparison with one side found). A comparison's claims are ordered by
    their figures (:func:`~ragbook.generation.parts.order_claims`), winner first.

    With ``check_conflicts`` (the default), an answer to a question in one part for
    which a sentence of the sources gives another figure
    (:func:`~ragbook.generation.conflicts.disagreeing`)
    says so: "The sources disagree:", then that sentence, quoted and cited, as does
    an answer whose two claims answer the same question differently
    (:func:`~ragbook.generation.conflicts.answered_twice`); where both sides are
    dated, the answer follows the newer and quotes the older after "Older source:"
    (:func:`~ragbook.generation.dated.settle`).

    With ``closed_book`` (the default), the same request also reads the answer's
    probability without the sources, for the ``lift`` score; without it the lift is
    -inf and the request is shorter.

    When the sentences the model named say less of its answer than another sentence
    it may cite, that sentence is the evidence
    (:func:`~ragbook.generation.cited_checks.anchor`).

    ``subjects`` (the articles' titles, say): when the question names some, the grammar
    lets the model cite only sentences of sources whose label names one of them.
    ``ranker`` (a :class:`~ragbook.generation.readers.SemanticExtractiveGenerator`):
    the model reads only the ``keep`` sentences it ranks best, which shortens the
    prompt.

    ``last`` is the last :class:`~ragbook.generation.cited_prompt.CitedAnswer`;
    ``on_text``, when set, receives the answer's words as they are generated. The
    reader has no token budget of its own: a prompt longer than the model's context
    window is refused with :class:`~ragbook.llm.ContextOverflow`, never cut.
    """

    def __init__(
        self,
        model,
        refuse_by: str = REFUSE_BY,
        refuse_below: float | None = REFUSE_BELOW,
        max_tokens: int = 64,
        check_numbers: bool = True,
        subjects=None,
        ranker=None,
        keep: int = 6,
        instruction: str = CITED_INSTRUCTION,
        verify: bool = False,
        closed_book: bool = True,
        quote_unsupported: bool = True,
        check_names: bool = True,
        check_kinds: bool = True,
        two_part: bool = True,
        check_conflicts: bool = True,
        check_requests: bool = True,
        verify_unnamed: bool = True,
        check_dimensions: bool = True,
        check_events: bool = True,
        check_holders: bool = True,
    ):
        if not callable(getattr(model, "structured_reply", None)):
            raise TypeError(
                "model must have a structured_reply method (a "
                f"ragbook.llm.LocalModel), got {model!r}"
            )
        if refuse_by not in SCORES:
            raise ValueError(
                f"refuse_by must be one of {', '.join(SCORES)}, got {refuse_by!r}"
            )
        if ranker is not None and not callable(getattr(ranker, "score", None)):
            raise TypeError(
                "ranker must score a prompt's sentences (score(prompt), best first, "
                f"as the semantic reader does), got {ranker!r}"
            )
        self.model = model
        self.refuse_by = refuse_by
        self.refuse_below = (
            None
            if refuse_below is None
            else validate.real(refuse_below, "refuse_below")
        )
        self.max_tokens = validate.k(max_tokens, "max_tokens")
        self.check_numbers = validate.flag(check_numbers, "check_numbers")
        self.subjects = None
        if subjects is not None:
            from .reader_checks import SubjectCheck

            # the whole-word, case-blind matching of the subject check
            self.subjects = SubjectCheck(lambda prompt: "", subjects)
        self.ranker = ranker
        self.keep = validate.k(keep, "keep")
        self.instruction = validate.text(instruction, "instruction")
        self.verify = validate.flag(verify, "verify")
        self.closed_book = validate.flag(closed_book, "closed_book")
        self.quote_unsupported = validate.flag(quote_unsupported, "quote_unsupported")
        self.check_names = validate.flag(check_names, "check_names")
        self.check_kinds = validate.flag(check_kinds, "check_kinds")
        self.two_part = validate.flag(two_part, "two_part")
        self.check_conflicts = validate.flag(check_conflicts, "check_conflicts")
        self.check_requests = validate.flag(check_requests, "check_requests")
        self.verify_unnamed = validate.flag(verify_unnamed, "verify_unnamed")
        self.check_dimensions = validate.flag(check_dimensions, "check_dimensions")
        self.check_events = validate.flag(check_events, "check_events")
        self.check_holders = validate.flag(check_holders, "check_holders")
        self.subject_names = tuple(self.subjects.subjects) if self.subjects else ()
        if refuse_by == "lift" and not self.closed_book:
            raise ValueError(
                "refuse_by='lift' needs closed_book=True: the lift compares the "
                "answer's probability with and without the sources"
            )
        if (self.verify or self.verify_unnamed) and not callable(
            getattr(model, "relevance", None)
        ):
            raise TypeError(
                "verify and verify_unnamed need a model with a relevance(question, "
                f"passage) method (a ragbook.llm.LocalModel), got {model!r}"
            )
        self.last: CitedAnswer | None = None
        self.on_text: Callable[[str], None] | None = None

    def __repr__(self) -> str:
        return (
            f"CitedReader({self.model!r}, refuse_by={self.refuse_by!r}, "
            f"refuse_below={self.refuse_below})"
        )

    def shown(self, prompt: Prompt) -> list[Sentence]:
        """The sentences the model reads: every sentence of the sources, or, with a
        ``ranker``, the ``keep`` it ranks best, in the order of the sources."""
        sentences = numbered_sentences(prompt)
        if self.ranker is None:
            return sentences
        best = self.ranker.score(prompt)[: self.keep]
        chosen = {(s.source, s.sentence) for s in best}
        return [s for s in sentences if (s.source, s.text) in chosen]

    def citable(self, prompt: Prompt, shown: list[Sentence]) -> list[Sentence]:
        """The shown sentences the grammar lets the model cite: all of them, or, with
        ``subjects`` and a question that names some, those of the sources whose label
        names one of the same subjects."""
        if self.subjects is None:
            return shown
        wanted = self.subjects.named(prompt.question, cased=True)
        if not wanted:
            return shown
        about = {
            source.number
            for source in prompt.sources
            if wanted & self.subjects.named(source.label)
        }
        return [s for s in shown if s.source in about]

    def ask(
        self,
        prompt: Prompt,
        shown: list[Sentence],
        citable: list[Sentence],
        claims: int = 1,
    ):
        """The model's structured reply to ``prompt`` (see
        :meth:`~ragbook.llm.LocalModel.structured_reply`), in ``claims`` claims (two
        for a question in two parts, under :data:`TWO_PART_INSTRUCTION`, or
        :data:`COMPARE_INSTRUCTION` when it chooses between two options)."""
        closed = (
            [
                {"role": "system", "content": CLOSED_INSTRUCTION},
                {"role": "user", "content": f"Question: {prompt.question}"},
            ]
            if self.closed_book
            else None
        )
        if claims == 1:
            instruction = self.instruction
        elif options(prompt.question):
            instruction = COMPARE_INSTRUCTION
        else:
            instruction = TWO_PART_INSTRUCTION
        return self.model.structured_reply(
            cited_messages(prompt, instruction, shown),
            OPENING,
            NONE,
            evidence_grammar([s.id for s in citable], claims=claims),
            self.max_tokens * claims,
            closed=closed,
            answer_ends=ANSWER_ENDS,
            on_text=AnswerStream(self.on_text) if self.on_text else None,
        )

    def _refuse(
        self, why, words="", evidence=(), reply=None, score=None, moved=False
    ) -> CitedAnswer:
        self.last = CitedAnswer(
            ABSTAIN, True, why, words, tuple(evidence), reply, score, moved
        )
        return self.last

    def read(self, prompt: Prompt) -> CitedAnswer:
        """The whole reading of ``prompt``: the reply, its scores, and the answer or
        the reason for refusing."""
        if self.check_requests and isinstance(prompt, Prompt):
            off = off_task(prompt.question)
            if off:
                return self._refuse(f"not a question about the documents: {off}")
        shown = self.shown(prompt)
        citable = self.citable(prompt, shown)
        if not citable:
            return self._refuse("nothing to cite")
        parts = 2 if self.two_part and two_parts(prompt.question) else 1
        result = self.ask(prompt, shown, citable, parts)
        reply, score = result["text"], scores(result)
        if result["finish_reason"] == "length":
            # the grammar's bounds keep a reply within max_tokens; a reply cut short
            # all the same has no evidence line to read
            return self._refuse("reply cut at max_tokens", reply=reply, score=score)
        # a second claim that repeats the first says nothing more
        claims = list(
            {w.strip(" ."): (w, e) for w, e in parse_claims(reply, citable)}.values()
        )
        claims = split_claims(claims) if parts == 2 else claims  # "A, and B": two
        if self.refuse_below is not None and score[self.refuse_by] < self.refuse_below:
            why = f"{self.refuse_by} below {self.refuse_below}"
            claims = [(words, evidence, why, False) for words, evidence in claims]
        else:
            claims = [
                self.check(prompt, words, evidence, citable, parts)
                for words, evidence in claims
            ]
        kept = [c for c in claims if not c[2]]
        why = "" if kept else claims[0][2]
        if kept and parts == 2 and self.check_names:
            # a question about two subjects: each name in the sources of some claim
            cited = [s for c in kept for s in c[1]]
            if missing_names(prompt, cited, self.subject_names):
                why = "a name of the question in none of its sources"
        verdict, first = None, kept[0][1][0] if kept else None
        names = self.subject_names
        if not why and (
            self.verify
            or self.verify_unnamed
            and parts == 1
            and unnamed(prompt, first, names)
        ):
            verdict = self.verdict(prompt, first)
            if verdict < 0:
                why = "the model says its evidence does not answer"
        if verdict is not None:
            score = {**score, "verdict": verdict}
        if why:
            words, evidence, _, moved = claims[0]
            return self._refuse(why, words, evidence, reply, score, moved)
        kept = order_claims(prompt.question, kept)
        rendered, quoted, against = [], False, []
        if self.check_conflicts:  # two claims, one question: the second disagrees
            against = answered_twice(prompt.question, kept, prompt)
            kept = kept[:1] if against else kept
        for words, evidence, _, _ in kept:
            label = prompt.sources[evidence[0].source - 1].label
            words = lead_with_option(prompt.question, words, label)
            words = spelled_as_evidence(words, evidence)
            claim = render_answer(words, evidence)
            if self.quote_unsupported and (
                cut(words)
                or half_range(prompt.question, words, evidence)
                or not supported(claim, prompt)
            ):
                claim, quoted = quote(evidence[0]), True
                option = first_option(prompt.question, words)
                if option and first_option(prompt.question, claim) != option:
                    claim = f"{option}: {claim}"  # the quote keeps the claim's option
            if claim not in rendered:  # two claims quoting one sentence: once
                rendered.append(claim)
            if self.check_conflicts and parts == 1:  # one claim: one side against
                names = self.subject_names
                against = disagreeing(prompt.question, words, evidence, prompt, names)
        answer = " ".join(rendered)
        evidence = tuple(dict.fromkeys(s for c in kept for s in c[1]))
        followed = ""
        if against:
            before = evidence
            answer, evidence, against, followed = settle(
                answer, evidence, against, prompt
            )
            quoted = quoted or evidence != before  # the newer side, quoted
        self.last = CitedAnswer(
            answer,
            False,
            "",
            "; ".join(c[0] for c in kept),
            evidence,
            reply,
            score,
            any(c[3] for c in kept),
            quoted,
            tuple((c[0], tuple(c[1])) for c in kept),
            tuple(against),
            followed,
        )
        return self.last

    def check(
        self,
        prompt: Prompt,
        words: str,
        evidence: list[Sentence],
        citable: list[Sentence],
        parts: int = 1,
    ) -> tuple[str, list[Sentence], str, bool]:
        """One claim of the reply checked: (words, evidence, why it is refused or
        ``""``, whether the evidence moved to a better sentence). The checks of the
        class's description, in order; for a question in two parts the names are
        checked against both claims' sources together (:meth:`read`), and the kind
        not at all (each part asks its own kind)."""
        if words.strip(" .").lower() in ("", "none") or says_not_stated(words):
            return words, evidence, "the model said none", False
        words = grouped_as_evidence(words, citable)  # "34, 800 km": 34,800 km
        figures = uncut(without_designations(words, prompt.question))
        if self.check_numbers and not any(
            not unsupported_numbers(figures, [s]) for s in citable
        ):
            return words, evidence, "a number in no sentence it may cite", False
        anchored = anchor(figures, evidence, citable, self.check_numbers)
        moved = anchored != evidence
        # the subjects (the articles' titles) are checked by what may be cited; a
        # comparison of two needs only one of them in each source
        if (
            self.check_names
            and parts == 1
            and missing_names(prompt, anchored, self.subject_names)
        ):
            why = "a name of the question in none of its sources"
            return words, anchored, why, moved
        if self.check_kinds and parts == 1:
            texts = [s.text for s in anchored] if self.check_dimensions else None
            mismatch = kind_mismatch(prompt.question, words, texts)
            if mismatch:
                return words, anchored, mismatch, moved
        if self.check_events and parts == 1:
            texts, asked = [s.text for s in anchored], prompt.question
            mismatch = event_mismatch(asked, words, texts) or period_mismatch(
                asked, words, texts
            )
            if mismatch:
                return words, anchored, mismatch, moved
        holders = [s for s in anchored if not unsupported_numbers(figures, [s])]
        if self.check_holders and parts == 1 and holders:
            names, shown = self.subject_names, "\n".join(x.text for x in prompt.sources)
            other = [
                said_of_another(prompt.question, words, s.text, names, shown)
                for s in holders
            ]
            if all(other):
                return words, anchored, f"the figure is said of {other[0]}", moved
        return words, anchored, "", moved

    def verdict(self, prompt: Prompt, sentence: Sentence) -> float:
        """logit(Yes) - logit(No) of the model asked, in a prompt of its own, whether
        the evidence sentence, under its source's label, answers the question (the
        relevance judgement of chapter 15's model check)."""
        label = prompt.sources[sentence.source - 1].label
        return float(self.model.relevance(prompt.question, f"{label}: {sentence.text}"))

    def __call__(self, prompt: Prompt) -> str:
        return self.read(prompt).answer
