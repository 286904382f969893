"""Decoding: the model writing. A greedy completion of a chat prompt, streamed piece by
piece (what :meth:`~ragbook.llm.LocalModel.chat` computes, chapter 11), and a
structured reply decoded under a grammar, with the probabilities a reader needs to
decide whether to trust it (chapter 11's structured output).

:class:`Decoding` is a part of :class:`~ragbook.llm.LocalModel`: its requests go through
the model's records, and it uses the runtime of
:class:`~ragbook.llm.loading.ModelLoading` and the logits of
:class:`~ragbook.llm.scoring.Scoring` (see :mod:`ragbook.llm`).
"""

from __future__ import annotations

import time
from typing import Mapping, Sequence

from .. import validate
from .loading import checked_messages


class Decoding:
    """Greedy completions and structured replies of a
    :class:`~ragbook.llm.LocalModel`."""

    # -- greedy completion -------------------------------------------------------------
    def _stream(self, tokens: list[int], max_tokens: int, on_text, start, **options):
        """Greedy completion of ``tokens``, streamed to ``on_text``: the text, why it
        stopped, and the seconds from ``start`` to its first piece (None if none came).
        ``options`` go to llama.cpp (a grammar, a logits processor)."""
        first = None
        pieces: list[str] = []
        finish = "length"
        for chunk in self._llama.create_completion(
            prompt=tokens,
            max_tokens=max_tokens,
            temperature=0.0,
            seed=self.seed,
            stop=[self._eos] if self._eos else None,
            stream=True,
            **options,
        ):
            choice = chunk["choices"][0]
            piece = choice.get("text") or ""
            if piece:
                if first is None:
                    first = time.perf_counter() - start
                pieces.append(piece)
                if on_text is not None:
                    on_text(piece)
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
        return "".join(pieces), finish, first

    def _generate(
        self, messages: list[dict[str, str]], max_tokens: int, on_text
    ) -> dict:
        tokens = self._template(messages)
        self._check_fits(len(tokens), max_tokens)
        llama = self.llama
        reused = self._reuse(tokens)
        start = time.perf_counter()
        text, finish, first = self._stream(tokens, max_tokens, on_text, start)
        total = time.perf_counter() - start
        count = len(llama._input_ids) - len(tokens)
        return {
            "text": text,
            "finish_reason": finish,
            "prompt_tokens": len(tokens),
            "completion_tokens": max(count, 0),
            "reused_tokens": reused,
            "seconds_to_first_token": round(first if first is not None else total, 4),
            "seconds": round(total, 4),
        }

    # -- a sampled completion ----------------------------------------------------------
    def _sample(
        self, messages: list[dict[str, str]], seed: int, temperature: float, max_tokens
    ) -> dict:
        tokens = self._template(messages)
        self._check_fits(len(tokens), max_tokens)
        self._reuse(tokens)  # an empty cache, as for every request
        reply = self.llama.create_completion(
            prompt=tokens,
            max_tokens=max_tokens,
            temperature=temperature,
            top_k=0,
            top_p=1.0,
            min_p=0.0,
            typical_p=1.0,
            repeat_penalty=1.0,
            seed=seed,
            stop=[self._eos] if self._eos else None,
        )
        choice = reply["choices"][0]
        return {
            "text": choice["text"],
            "finish_reason": choice["finish_reason"],
            "prompt_tokens": len(tokens),
            "completion_tokens": reply["usage"]["completion_tokens"],
        }

    # -- structured output -------------------------------------------------------------
    def structured_reply(
        self,
        messages: Sequence[Mapping[str, str]],
        opening: str,
        refusal: str,
        grammar: str,
        max_tokens: int = 48,
        closed: Sequence[Mapping[str, str]] | None = None,
        answer_ends: str = "\n",
        on_text=None,
    ) -> dict:
        """A reply to ``messages`` that opens with ``opening`` and continues under
        ``grammar``, with the token probabilities a reader needs to decide whether to
        trust it (chapter 11).

        - ``refusal_logprob``: the natural-log probability, right after ``opening``, of
          the first token of ``refusal`` (``" none"``, say), over the whole vocabulary.
        - ``text``: the reply after ``opening``, decoded greedily, each token restricted
          to what the GBNF ``grammar`` (llama.cpp's grammar format) allows.
        - ``answer``: the generated tokens before the one that holds or completes
          ``answer_ends`` (a line break, say), as ``[text, log-probability]`` pairs;
          each probability is the model's own, before the grammar masked anything (a
          token the grammar forced can be improbable).
        - ``closed``: with ``closed`` messages (the question without its sources, say),
          the same answer tokens teacher-forced after ``closed`` and ``opening``, with
          their log-probabilities: how likely the answer is without the evidence.

        Everything happens in one request, so one record holds it; the cache is emptied
        first, as for every request. ``on_text`` receives the reply as it comes.
        """
        messages = checked_messages(messages)
        opening = validate.text(opening, "opening")
        refusal = validate.text(refusal, "refusal")
        grammar = validate.text(grammar, "grammar")
        if "root" not in grammar:
            raise ValueError("grammar must define a root rule (GBNF: root ::= ...)")
        max_tokens = validate.whole(max_tokens, "max_tokens")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        closed = None if closed is None else checked_messages(closed)
        answer_ends = validate.text(answer_ends, "answer_ends")
        if on_text is not None and not callable(on_text):
            raise TypeError("on_text must be a function of one str, or None")
        request = {
            "kind": "structured",
            "messages": messages,
            "opening": opening,
            "refusal": refusal,
            "grammar": grammar,
            "max_tokens": max_tokens,
            "closed": closed,
            "answer_ends": answer_ends,
            "seed": self.seed,
            "n_ctx": self.n_ctx,
        }
        result = self._recorded(
            request,
            lambda: self._structured(
                messages,
                opening,
                refusal,
                grammar,
                max_tokens,
                closed,
                answer_ends,
                on_text,
            ),
        )
        if result["replayed"] and on_text is not None:
            on_text(result["text"])
        return result

    def _structured(
        self,
        messages: list[dict[str, str]],
        opening: str,
        refusal: str,
        grammar: str,
        max_tokens: int,
        closed: list[dict[str, str]] | None,
        answer_ends: str,
        on_text,
    ) -> dict:
        import numpy as np

        start = time.perf_counter()
        tokens = self._template(messages) + self._tokens(opening)
        self._check_fits(len(tokens), max_tokens)
        refusal_tokens = self._tokens(refusal)
        if not refusal_tokens:
            raise ValueError(f"refusal {refusal!r} has no tokens")
        self._feed(tokens)
        refusal_logprob = self._log_softmax_at(self._logits(), refusal_tokens[0])
        seen: list = []  # the model's own logits before each generated token

        def watch(input_ids, scores):
            seen.append(np.asarray(scores, dtype=np.float64).copy())
            return scores

        # the prompt is in the cache, its last logits read: decoding starts there
        text, finish, first, generated = self._greedy_under_grammar(
            grammar, max_tokens, on_text, start, watch
        )
        answer: list[list] = []
        answer_ids: list[int] = []
        text_so_far = ""
        for token, logits in zip(generated, seen):
            piece = self._llama.detokenize([token]).decode("utf-8", "replace")
            if answer_ends in piece or answer_ends in text_so_far + piece:
                break
            text_so_far += piece
            answer.append([piece, round(self._log_softmax_at(logits, token), 6)])
            answer_ids.append(token)
        result = {
            "refusal_logprob": round(refusal_logprob, 6),
            "text": text,
            "finish_reason": finish,
            "answer": answer,
            "prompt_tokens": len(tokens),
            "completion_tokens": len(generated),
            "seconds_to_first_token": round(first if first is not None else 0.0, 4),
            "seconds": round(time.perf_counter() - start, 4),
            "closed": None,
        }
        if closed is not None and answer_ids:
            forced = [
                self._log_softmax_at(logits, token)
                for token, logits in self._forced(
                    self._template(closed) + self._tokens(opening), answer_ids
                )
            ]
            result["closed"] = [
                [piece, round(value, 6)] for (piece, _), value in zip(answer, forced)
            ]
        return result

    def _greedy_under_grammar(
        self, grammar: str, max_tokens: int, on_text, start, watch
    ):
        """Greedy decoding under the GBNF ``grammar`` from the logits of the last token
        in the cache: the text, why it stopped (``"stop"`` at an end-of-generation
        token, ``"length"`` after ``max_tokens``), the seconds from ``start`` to the
        first piece, and the tokens evaluated. ``watch`` sees the model's logits before
        each token is chosen.

        The choice is the token of highest logit among those the grammar allows, as
        llama.cpp's greedy sampler after its grammar sampler makes it; but the grammar
        is first asked about the top token alone, and only when it refuses that token
        about the whole vocabulary. Where the top token is allowed it is the choice
        either way, so the text is the same, and most steps skip matching the grammar
        against some 150,000 tokens.
        """
        import ctypes

        import llama_cpp
        import numpy as np

        llama = self._llama
        vocab = llama._model.vocab
        sampler = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar.encode("utf-8"), b"root"
        )
        if not sampler:
            raise ValueError("grammar does not parse as GBNF (llama.cpp refused it)")
        n_vocab = llama.n_vocab()
        entry = np.dtype(
            [("id", np.intc), ("logit", np.single), ("p", np.single)], align=True
        )
        every = np.zeros(n_vocab, dtype=entry)
        one = np.zeros(1, dtype=entry)

        def allowed(table) -> "object":
            """The table's logits after the grammar has set what it refuses to -inf."""
            array = llama_cpp.llama_token_data_array(
                data=table.ctypes.data_as(llama_cpp.llama_token_data_p),
                size=len(table),
                selected=-1,
                sorted=False,
            )
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
            return table["logit"]

        pieces: list[bytes] = []
        shown = 0  # bytes of the text passed to on_text
        generated: list[int] = []
        first = None
        finish = "length"
        try:
            for step in range(max_tokens):
                logits = np.ctypeslib.as_array(
                    llama._ctx.get_logits(), shape=(n_vocab,)
                )
                watch(None, logits)
                token = int(np.argmax(logits))
                one["id"], one["logit"] = token, logits[token]
                if not np.isfinite(allowed(one)[0]):
                    every["id"] = np.arange(n_vocab)
                    every["logit"] = logits
                    token = int(np.argmax(allowed(every)))
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    finish = "stop"
                    break
                llama_cpp.llama_sampler_accept(sampler, token)
                pieces.append(llama.detokenize([token]))
                text = b"".join(pieces).decode("utf-8", "ignore")
                whole = len(text.encode("utf-8"))
                if whole > shown:  # only whole characters are passed on
                    if first is None:
                        first = time.perf_counter() - start
                    if on_text is not None:
                        on_text(text.encode("utf-8")[shown:].decode("utf-8"))
                    shown = whole
                if step + 1 < max_tokens:
                    llama.eval([token])
                    generated.append(token)
        finally:
            llama_cpp.llama_sampler_free(sampler)
        return b"".join(pieces).decode("utf-8", "ignore"), finish, first, generated
