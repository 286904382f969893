"""Scoring: what the model says of a text it did not write. The tokens of a text or of
a chat prompt (chapter 10), the log-probability of each token of a given reply
(chapter 13), how far a reply is from the model's own greedy choices (the records'
check), and logit(Yes) - logit(No) for "does this passage answer the question?"
(chapter 15's model check and reranking).

:class:`Scoring` is a part of :class:`~ragbook.llm.LocalModel`: its requests go through
the model's records, and it evaluates tokens with the runtime of
:class:`~ragbook.llm.loading.ModelLoading` (see :mod:`ragbook.llm`).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from .. import validate
from .files import ModelError
from .loading import checked_messages


class Scoring:
    """Token counts, log-probabilities and relevance scores of a
    :class:`~ragbook.llm.LocalModel`."""

    # -- token counts ------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Tokens of plain ``text`` in the model's own vocabulary."""
        text = validate.text(text, "text")
        return self._recorded(
            {"kind": "count", "text": text}, lambda: {"tokens": len(self._tokens(text))}
        )["tokens"]

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of ``messages`` as the chat template renders them, the assistant's
        turn opened."""
        messages = checked_messages(messages)
        request = {"kind": "prompt_tokens", "messages": messages}
        return self._recorded(
            request, lambda: {"tokens": len(self._template(messages))}
        )["tokens"]

    # -- logits ------------------------------------------------------------------------
    def _logits(self) -> "object":
        import numpy as np

        llama = self._llama
        return np.ctypeslib.as_array(
            llama._ctx.get_logits(), shape=(llama.n_vocab(),)
        ).astype(np.float64)

    def _feed(self, tokens: list[int]) -> None:
        """Evaluate ``tokens``, reusing the cached prefix; at least the last token is
        evaluated."""
        llama = self.llama
        shared = min(self._reuse(tokens), len(tokens) - 1)
        llama.n_tokens = shared
        llama.eval(tokens[shared:])

    @staticmethod
    def _log_softmax_at(logits, token: int) -> float:
        import numpy as np

        top = logits.max()
        return float(logits[token] - top - math.log(float(np.exp(logits - top).sum())))

    # -- a given reply, scored ---------------------------------------------------------
    def continuation_logprobs(
        self, messages: Sequence[Mapping[str, str]], continuation: str
    ) -> list[tuple[str, float]]:
        """Each token of ``continuation`` as the assistant's reply to ``messages``, with
        its log-probability.

        The natural-log probability of each token given the prompt and the tokens before
        it; their sum is log p(continuation | prompt), the quantity RAG-Sequence and
        RAG-Token combine (chapter 13).
        """
        messages = checked_messages(messages)
        continuation = validate.text(continuation, "continuation")
        if not continuation:
            raise ValueError(
                "continuation is empty: give the text whose probability is wanted"
            )
        request = {
            "kind": "logprobs",
            "messages": messages,
            "continuation": continuation,
        }

        def compute() -> dict:
            import numpy as np

            out = []
            pieces = self._tokens(continuation)
            for token, logits in self._teacher_forced(messages, pieces):
                top = logits.max()
                log_z = top + math.log(float(np.exp(logits - top).sum()))
                out.append(
                    [
                        self.llama.detokenize([token]).decode("utf-8", "replace"),
                        float(logits[token] - log_z),
                    ]
                )
            return {"tokens": out}

        return [
            (text, value) for text, value in self._recorded(request, compute)["tokens"]
        ]

    def reply_margins(
        self, messages: Sequence[Mapping[str, str]], reply: str, ended: bool = True
    ) -> list[float]:
        """How far each token of ``reply``, the assistant's answer to ``messages``, is
        from the model's own greedy choice here: the top logit minus the token's logit,
        0 where the token is the top choice. With ``ended``, the end-of-turn token
        follows the reply and is measured too.

        Greedy decoding on another CPU can take another token where two are nearly tied
        (their float sums differ in the last bits), and the replies part there. A reply
        whose every margin is small is still the model's greedy reply up to such ties;
        a reply edited by hand is not. Never recorded: it checks records.
        """
        messages = checked_messages(messages)
        reply = validate.text(reply, "reply")
        if not reply:
            raise ValueError("reply is empty: give the text to measure")
        pieces = self._tokens(reply)
        if ended:
            end = self._tokens(self._eos, special=True) if self._eos else []
            pieces = pieces + end[:1]
        return [
            float(logits.max() - logits[token])
            for token, logits in self._teacher_forced(messages, pieces)
        ]

    def _teacher_forced(self, messages: list[dict], pieces: list[int]):
        """Each of ``pieces`` with the model's logits just before it, the pieces fed
        one by one after the prompt of ``messages`` (the reply forced, not sampled)."""
        return self._forced(self._template(messages), pieces)

    def _forced(self, prompt: list[int], pieces: list[int]):
        """Each of ``pieces`` with the model's logits just before it, fed one by one
        after the tokens of ``prompt``."""
        self._check_fits(len(prompt) + len(pieces), 0)
        self._feed(prompt)
        for token in pieces:
            yield token, self._logits()
            self.llama.eval([token])

    # -- relevance ---------------------------------------------------------------------
    def relevance(self, query: str, passage: str) -> float:
        """How strongly the model says Yes to "does this passage answer the query?":
        logit(Yes) - logit(No)."""
        query, passage = (
            validate.text(query, "query"),
            validate.text(passage, "passage"),
        )
        messages = [
            {
                "role": "system",
                "content": (
                    "You judge whether a passage answers a question. Reply Yes or No."
                ),
            },
            {
                "role": "user",
                "content": (
                    f"Question: {query}\n\nPassage: {passage}\n\n"
                    "Does the passage answer the question? Reply Yes or No."
                ),
            },
        ]
        request = {"kind": "relevance", "messages": messages}

        def compute() -> dict:
            tokens = self._template(messages)
            self._check_fits(len(tokens), 1)
            self._feed(tokens)
            logits = self._logits()
            yes, no = self._tokens("Yes"), self._tokens("No")
            if len(yes) != 1 or len(no) != 1:
                raise ModelError(
                    f"{self.file.name} does not spell Yes and No as single tokens"
                )
            return {"yes_minus_no": round(float(logits[yes[0]] - logits[no[0]]), 6)}

        return self._recorded(request, compute)["yes_minus_no"]
