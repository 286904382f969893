"""Generators: anything that turns a :class:`~ragbook.generation.prompts.Prompt` into
text (chapter 11).

- :class:`ScriptedGenerator` replays fixed replies, so tests are deterministic and need
  no model.
- the readers that quote a source sentence instead of writing one live beside this
  module, in :mod:`ragbook.generation.readers`; when they find nothing good enough they
  answer :data:`ABSTAIN`.
- :class:`TrigramModel` is a small language model trained on the corpus: it completes
  text from memory and reports its token probabilities, and can be conditioned on
  retrieved chunks.
- :class:`ChatClient` sends the prompt to a model that speaks the chat-completions
  protocol.
- :class:`Conversation` keeps the last exchanges and rewrites a follow-up into a
  standalone question.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import re
import time
import urllib.error
import urllib.request
from collections import Counter, deque
from typing import Iterable, Mapping, Sequence

from .. import validate
from .prompts import Prompt, chat_messages
from ..indexing.text import split_sentences

__all__ = [
    "ABSTAIN",
    "is_refusal",
    "ScriptedGenerator",
    "LanguageModel",
    "TrigramModel",
    "ConditionedModel",
    "ChatClient",
    "ChatError",
    "Conversation",
]

ABSTAIN = "The sources do not contain the answer."
# A refusal in a model's own words, as the book's instruction asks for one: "the
# sources do not contain it", "this is not mentioned in the sources", "the provided
# sources don't say".
_REFUSAL = re.compile(
    r"\b(?:sources?|passages?|context)\b[^.]{0,60}?\b(?:do|does|did)(?:\s+not|n't)\s+"
    r"(?:contain|include|mention|provide|say|state|specify|give)"
    r"|\bnot\s+(?:contained|mentioned|provided|stated|given|found)\s+in\s+the\s+"
    r"(?:provided\s+)?sources?\b",
    re.I,
)


def is_refusal(text: str) -> bool:
    """True for :data:`ABSTAIN`, and for an answer saying that the sources do not
    contain the answer."""
    text = validate.text(text, "answer")
    return text.strip() == ABSTAIN or _REFUSAL.search(text) is not None


class ScriptedGenerator:
    """Returns ``replies`` one after another and records every prompt it was given."""

    def __init__(self, replies: Sequence[str]):
        self.replies = validate.texts(replies, "replies")
        self.prompts: list[Prompt] = []

    def __call__(self, prompt: Prompt) -> str:
        if len(self.prompts) >= len(self.replies):
            raise RuntimeError(
                f"the script has only {len(self.replies)} replies and all were used"
            )
        self.prompts.append(prompt)
        return self.replies[len(self.prompts) - 1]


# ---- trigram -------------------------------------------------------------------------
_WORD = re.compile(r"\d+(?:[.,:]\d+)*|\w+(?:'\w+)?|[^\w\s]")
BOS, EOS = "<s>", "</s>"


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


class LanguageModel:
    """What a next-token model gives once it has ``probability(context, token)`` and a
    ``vocabulary``: the probabilities of a continuation's tokens, and a greedy
    completion (shared by :class:`TrigramModel` and :class:`ConditionedModel`)."""

    vocabulary: list[str]

    def probability(self, context: Sequence[str], token: str) -> float:
        raise NotImplementedError

    def token_probabilities(
        self, prompt: str, continuation: str
    ) -> list[tuple[str, float]]:
        """Each token of ``continuation`` with its probability given the prompt and the
        tokens before it."""
        context = _words(validate.text(prompt, "prompt"))
        validate.text(continuation, "continuation")
        result = []
        for token in _words(continuation):
            result.append((token, self.probability(context, token)))
            context.append(token)
        return result

    def complete(
        self, prompt: str, max_tokens: int = 20
    ) -> tuple[str, list[tuple[str, float]]]:
        """Greedy continuation until a full stop or ``max_tokens``: (text, tokens with
        probabilities)."""
        context = _words(validate.text(prompt, "prompt"))
        max_tokens = validate.count(max_tokens, "max_tokens")
        produced: list[tuple[str, float]] = []
        candidates = self.vocabulary + [EOS]
        for _ in range(max_tokens):
            best = max(
                candidates, key=lambda w: (self.probability(context, w), w == EOS)
            )
            if best == EOS:
                break
            produced.append((best, self.probability(context, best)))
            context.append(best)
            if best in ".!?":
                break
        return _detokenize([t for t, _ in produced]), produced


class TrigramModel(LanguageModel):
    """An interpolated trigram model over words, numbers and punctuation, trained
    sentence by sentence.

        P(w | u, v) = l3 c(u v w)/c(u v) + l2 c(v w)/c(v) + l1 (c(w) + 1)/(T + V + 1)

    with l3 + l2 + l1 = 1 (a context never seen gives its share to the lower orders) and
    add-one unigrams, so every token, even an unseen one, has a probability above zero.
    """

    def __init__(
        self,
        texts: Iterable[str],
        weights: tuple[float, float, float] = (0.6, 0.3, 0.1),
    ):
        checked = validate.finite_array(weights, "the interpolation weights", ndim=1)
        if (
            checked.shape != (3,)
            or not math.isclose(checked.sum(), 1.0)
            or checked.min() <= 0
        ):
            raise ValueError(
                "the interpolation weights must be three positive numbers that "
                f"sum to 1, got {weights}"
            )
        self.weights = tuple(checked.tolist())
        self.unigrams: Counter = Counter()
        self.bigrams: Counter = Counter()
        self.trigrams: Counter = Counter()
        self.contexts1: Counter = Counter()
        self.contexts2: Counter = Counter()
        sentences = 0
        for text in validate.texts(texts, "texts"):
            for sentence in split_sentences(text):
                tokens = [BOS, BOS] + _words(sentence.text) + [EOS]
                sentences += 1
                for i in range(2, len(tokens)):
                    u, v, w = tokens[i - 2], tokens[i - 1], tokens[i]
                    self.unigrams[w] += 1
                    self.bigrams[v, w] += 1
                    self.contexts1[v] += 1
                    self.trigrams[u, v, w] += 1
                    self.contexts2[u, v] += 1
        if not sentences:
            raise ValueError("cannot train a language model on no text")
        self.total = sum(self.unigrams.values())
        self.vocabulary = sorted(self.unigrams)

    def probability(self, context: Sequence[str], token: str) -> float:
        """P(token | last two tokens of context)."""
        padded = [BOS, BOS] + list(context)
        u, v = padded[-2], padded[-1]
        l3, l2, l1 = self.weights
        p1 = (self.unigrams[token] + 1) / (self.total + len(self.vocabulary) + 1)
        p2 = self.bigrams[v, token] / self.contexts1[v] if self.contexts1[v] else None
        p3 = (
            self.trigrams[u, v, token] / self.contexts2[u, v]
            if self.contexts2[u, v]
            else None
        )
        if p3 is None and p2 is None:
            return p1
        if p3 is None:
            return (l2 * p2 + l1 * p1) / (l2 + l1)
        if p2 is None:
            return (l3 * p3 + l1 * p1) / (l3 + l1)
        return l3 * p3 + l2 * p2 + l1 * p1

    def conditioned(
        self, chunks: Iterable[str], weight: float = 0.9
    ) -> "ConditionedModel":
        """This model conditioned on retrieved chunks: weight * P_chunks + (1 - weight)
        * P_self."""
        return ConditionedModel(TrigramModel(chunks, self.weights), self, weight)

    @staticmethod
    def geometric_mean(probabilities: Sequence[float]) -> float:
        """exp(mean log p): the per-token probability of a sequence."""
        probabilities = validate.finite_array(
            probabilities, "probabilities", ndim=1
        ).tolist()
        if not probabilities:
            raise ValueError("no tokens")
        if min(probabilities) <= 0 or max(probabilities) > 1:
            raise ValueError(
                f"probabilities must lie in (0, 1], got {min(probabilities)!r} to "
                f"{max(probabilities)!r}"
            )
        return math.exp(sum(math.log(p) for p in probabilities) / len(probabilities))


class ConditionedModel(LanguageModel):
    """A mixture of a model of the retrieved chunks and a background model: the trigram
    RAG generator."""

    def __init__(self, local: TrigramModel, background: TrigramModel, weight: float):
        for name, model in (("local", local), ("background", background)):
            if not isinstance(model, TrigramModel):
                raise TypeError(
                    f"{name} must be a TrigramModel, got {type(model).__name__}"
                )
        if not 0 < validate.real(weight, "the weight of the chunks") < 1:
            raise ValueError(
                "the weight of the chunks must lie strictly between 0 and 1, got "
                f"{weight}"
            )
        self.local, self.background, self.weight = local, background, weight
        self.vocabulary = sorted(set(local.vocabulary) | set(background.vocabulary))

    def probability(self, context: Sequence[str], token: str) -> float:
        return self.weight * self.local.probability(context, token) + (
            1 - self.weight
        ) * self.background.probability(context, token)


def _detokenize(tokens: Sequence[str]) -> str:
    text = ""
    for token in tokens:
        if (
            text
            and not re.match(r"^[.,;:!?)\]]$", token)
            and not text.endswith(("(", "["))
        ):
            text += " "
        text += token
    return text


# ---- chat-completions client ---------------------------------------------------------
class ChatError(RuntimeError):
    """A request the server refused, a reply that is not a chat completion, or retries
    exhausted."""


class ChatClient:
    """A client for the chat-completions protocol
    (``POST {base_url}/chat/completions``).

    Settings come from the arguments or from the environment: ``RAGBOOK_BASE_URL``,
    ``RAGBOOK_MODEL`` and ``RAGBOOK_API_KEY``. The key is sent as a bearer token and
    never printed, logged or shown in the repr. Temperature 0 by default. A 429 or 5xx
    reply is retried up to ``retries`` times with exponential backoff (honouring
    ``Retry-After``); any other 4xx, or a malformed reply, raises :class:`ChatError` at
    once.
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_tokens: int | None = None,
    ):
        for name, value in (
            ("base_url", base_url),
            ("model", model),
            ("api_key", api_key),
        ):
            if value is not None:
                validate.text(value, name)
        self.base_url = (base_url or os.environ.get("RAGBOOK_BASE_URL") or "").rstrip(
            "/"
        )
        self.model = model or os.environ.get("RAGBOOK_MODEL") or ""
        self._api_key = (
            api_key if api_key is not None else os.environ.get("RAGBOOK_API_KEY", "")
        )
        if not self.base_url:
            raise ValueError(
                "no base URL: pass base_url or set RAGBOOK_BASE_URL (e.g. "
                "http://127.0.0.1:8080/v1)"
            )
        if not self.model:
            raise ValueError("no model name: pass model or set RAGBOOK_MODEL")
        temperature = validate.real(temperature, "temperature", minimum=0)
        timeout = validate.real(timeout, "timeout (seconds)", above=0)
        retries, backoff = (
            validate.count(retries, "retries"),
            validate.real(backoff, "backoff (seconds)", minimum=0),
        )
        self.temperature, self.timeout, self.retries, self.backoff = (
            temperature,
            timeout,
            retries,
            backoff,
        )
        self.max_tokens = (
            None if max_tokens is None else validate.whole(max_tokens, "max_tokens")
        )

    def __repr__(self) -> str:
        key = "set" if self._api_key else "not set"
        return (
            f"ChatClient(base_url={self.base_url!r}, model={self.model!r}, api key "
            f"{key})"
        )

    def _request(self, body: bytes) -> urllib.request.Request:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=body,
            headers=headers,
            method="POST",
        )

    def complete(
        self, messages: Sequence[Mapping[str, str]], max_tokens: int | None = None
    ) -> str:
        request = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
        }
        if max_tokens is not None:
            request["max_tokens"] = validate.whole(max_tokens, "max_tokens")
        body = json.dumps(request).encode()
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(
                    self._request(body), timeout=self.timeout
                ) as response:
                    payload = response.read()
                break
            except urllib.error.HTTPError as error:
                retryable = error.code == 429 or 500 <= error.code < 600
                if not retryable:
                    detail = error.read()[:200].decode("utf-8", "replace")
                    raise ChatError(
                        f"the server refused the request with HTTP {error.code}: "
                        f"{detail}"
                    ) from None
                if attempt == self.retries:
                    raise ChatError(
                        f"HTTP {error.code} after {self.retries + 1} attempts; "
                        "giving up"
                    ) from None
                wait = error.headers.get("Retry-After") if error.headers else None
                time.sleep(
                    float(wait)
                    if wait and wait.replace(".", "", 1).isdigit()
                    else self.backoff * 2**attempt
                )
            except (
                urllib.error.URLError,
                TimeoutError,
                ConnectionError,
                http.client.HTTPException,
            ) as error:
                if attempt == self.retries:
                    raise ChatError(
                        f"could not reach {self.base_url} after "
                        f"{self.retries + 1} attempts: {error}"
                    ) from None
                time.sleep(self.backoff * 2**attempt)
        try:
            content = json.loads(payload)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatError(
                f"the reply is not a chat completion: {payload[:200]!r}"
            ) from None
        if not isinstance(content, str):
            raise ChatError(f"the reply's message content is not text: {content!r}")
        return content

    def __call__(self, prompt: Prompt | str) -> str:
        """The reply to the book's prompt, sent as a system message (the instruction)
        and a user message (the sources and the question):
        :func:`ragbook.generation.prompts.chat_messages`."""
        return self.complete(chat_messages(prompt), self.max_tokens)


# ---- conversation --------------------------------------------------------------------
_FOLLOW_UP = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*\??\s*$|^\s*and\s+(.+?)\s*\?\s*$",
    re.I,
)


_PREPOSITION = re.compile(r"^(?:on|in|at|for|of|to|from|with|about)\s+", re.I)


class Conversation:
    """The last ``size`` exchanges, and a rewrite of elliptical follow-ups into
    standalone questions.

    "What about Saturn?" after "How many moons does Jupiter have?" becomes "How many
    moons does Saturn have?": the follow-up's subject replaces the subject the previous
    question named (one of ``subjects``, e.g. the document titles). A question that is
    not such a follow-up is returned unchanged.
    """

    def __init__(self, subjects: Iterable[str], size: int = 3):
        if validate.whole(size, "size") < 1:
            raise ValueError(f"the history must hold at least one exchange, got {size}")
        self.subjects = sorted(
            {s for s in validate.texts(subjects, "subjects") if s},
            key=len,
            reverse=True,
        )
        self.history: deque[tuple[str, str]] = deque(maxlen=size)

    def add(self, question: str, answer: str) -> None:
        self.history.append(
            (validate.text(question, "question"), validate.text(answer, "answer"))
        )

    def rewrite(self, question: str) -> str:
        match = _FOLLOW_UP.match(question)
        if not match or not self.history:
            return question
        new_subject = (match.group(1) or match.group(2)).strip()
        # "And on Mars?" after "How long is a day on Pluto?": the subject is Mars,
        # the preposition is the previous question's
        new_subject = _PREPOSITION.sub("", new_subject) or new_subject
        for previous, _ in reversed(self.history):
            for subject in self.subjects:
                pattern = re.compile(rf"\b{re.escape(subject)}\b", re.I)
                if pattern.search(previous):
                    return pattern.sub(new_subject, previous, count=1)
        return question
