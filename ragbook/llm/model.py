"""The model: a GGUF file run by llama.cpp when a request is not in the records
(see :mod:`ragbook.llm`)."""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .. import validate
from .files import (
    DEFAULT_MODEL,
    ModelError,
    ModelNotInstalled,
    install_command,
    model_file,
)
from .records import (
    RecordMissing,
    Records,
    instruction_sets,
    machine,
    records_mode,
    request_key,
)

RUNTIME = "llama-cpp-python"


class ContextOverflow(ValueError):
    """A prompt (plus the tokens reserved for the answer) longer than the model's
    context window."""


@dataclass(frozen=True)
class Generation:
    """A chat completion: the text, why it stopped, token counts, timings measured when
    it was made, and what made it (the record's ``made_by``: model, runtime, machine,
    its vector instruction sets, threads)."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    seconds_to_first_token: float
    seconds: float
    reused_tokens: int = 0
    replayed: bool = field(default=False, compare=False)
    made_by: Mapping[str, str] | None = field(default=None, compare=False)

    @property
    def tokens_per_second(self) -> float:
        """Generation speed after the first token."""
        span = self.seconds - self.seconds_to_first_token
        return (
            (self.completion_tokens - 1) / span
            if self.completion_tokens > 1 and span > 0
            else math.nan
        )


def _messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    messages = validate.sequence(messages, "messages", "chat messages")
    if not messages:
        raise ValueError(
            "messages is empty: give at least one {'role': ..., 'content': ...} message"
        )
    out = []
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping) or set(message) != {"role", "content"}:
            raise ValueError(
                f"message {position} must be a mapping "
                "with exactly 'role' and 'content', "
                f"got {message!r}"
            )
        if message["role"] not in ("system", "user", "assistant"):
            raise ValueError(
                f"message {position} has role {message['role']!r}; "
                "allowed: system, user, assistant"
            )
        out.append(
            {
                "role": message["role"],
                "content": validate.text(message["content"], f"message {position}"),
            }
        )
    return out


class LocalModel:
    """A local GGUF chat model, replayed from :class:`Records` when it can be and run by
    llama.cpp when not.

    ``model`` is a known name (:data:`MODELS`), a path, or None (``$RAGBOOK_GGUF``, else
    the default). ``records`` is a :class:`Records` (the chapters pass
    :func:`book_records`), or None to record nothing. ``n_ctx`` is the context window in
    tokens, ``threads`` the CPU threads, ``seed`` the sampler's seed (decoding is
    greedy, so the seed only matters to a sampler that draws).

    Every request is evaluated from an empty cache. With ``reuse_prefix`` the tokens a
    request shares with the previous one are kept in the cache instead, which saves
    their prefill, but the logits then come from a matrix product over another batch of
    tokens, and a greedy answer can change in its last words (seen here with the 0.5B
    model); so reuse is refused together with records, which must be reproducible.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        records: Records | None = None,
        n_ctx: int = 4096,
        threads: int = 2,
        seed: int = 0,
        verbose: bool = False,
        reuse_prefix: bool = False,
    ):
        self.file = model_file(model)
        if records is not None and not isinstance(records, Records):
            raise TypeError(
                "records must be a ragbook.llm.Records or None, "
                f"got {type(records).__name__}"
            )
        self.records = records
        self.n_ctx = validate.whole(n_ctx, "n_ctx")
        if self.n_ctx < 64:
            raise ValueError(f"n_ctx must be at least 64 tokens, got {n_ctx}")
        self.threads = validate.whole(threads, "threads")
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.seed = validate.whole(seed, "seed")
        self.verbose = verbose
        if not isinstance(reuse_prefix, bool):
            raise TypeError(f"reuse_prefix must be True or False, got {reuse_prefix!r}")
        if reuse_prefix and records is not None:
            raise ValueError(
                "reuse_prefix cannot be combined with records: an answer computed on a "
                "reused cache is not reproducible from the request alone"
            )
        self.reuse_prefix = reuse_prefix
        self._llama = None
        self._formatter = None
        self._eos = None
        self._lock = threading.RLock()
        self.load_seconds: float | None = None

    def __repr__(self) -> str:
        return (
            f"LocalModel({self.file.name!r}, sha256 {self.file.sha256[:12]}..., "
            f"n_ctx={self.n_ctx})"
        )

    @property
    def name(self) -> str:
        return self.file.name

    # -- the runtime, loaded on first use ----------------------------------------------
    @property
    def llama(self):
        """The loaded ``llama_cpp.Llama`` (loading it on first use)."""
        with self._lock:
            if self._llama is None:
                self._load()
            return self._llama

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def _load(self) -> None:
        try:
            import llama_cpp
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            model_name = self.file.spec.name if self.file.spec else DEFAULT_MODEL
            raise ModelNotInstalled(
                "this request is not in the records and the runtime is not installed: "
                f"install it with\n    {install_command(model_name)}"
                "\n(or `make llm` in the book's repository)"
            ) from None
        if self.file.path is None:
            self.file = model_file(
                self.file.spec.name if self.file.spec else None, locate=True
            )
        start = time.perf_counter()
        llama = llama_cpp.Llama(
            model_path=str(self.file.path),
            n_ctx=self.n_ctx,
            n_threads=self.threads,
            n_threads_batch=self.threads,
            seed=self.seed,
            verbose=self.verbose,
        )
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(
                f"{self.file.path} is not a chat model: its GGUF header has no "
                "tokenizer.chat_template"
            )
        eos_id = llama.token_eos()
        bos_id = llama.token_bos()
        self._eos = llama._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llama._model.token_get_text(bos_id) if bos_id != -1 else ""
        self._formatter = Jinja2ChatFormatter(
            template=template, eos_token=self._eos, bos_token=bos
        )
        self._llama = llama
        self.load_seconds = time.perf_counter() - start

    def runtime(self) -> dict[str, str]:
        import llama_cpp

        return {
            "model": self.file.name,
            "model_sha256": self.file.sha256,
            "runtime": f"{RUNTIME} {llama_cpp.__version__}",
            "machine": machine(),
            "instructions": instruction_sets(),
            "threads": str(self.threads),
        }

    # -- records -----------------------------------------------------------------------
    def _recorded(self, request: dict, compute) -> dict:
        """The result of ``request``: replayed from the records when there, else
        computed and recorded."""
        mode = records_mode()
        key = request_key(self.file.sha256, request)
        used = os.environ.get("RAGBOOK_LLM_USED")
        if (
            used and self.records is not None
        ):  # tools/llm_records.py prune collects these
            with open(used, "a", encoding="utf-8") as log:
                log.write(f"{self.records.path.name} {key}\n")
        if self.records is not None and mode != "off":
            entry = self.records.get(key)
            if entry is not None:
                return {
                    **entry["result"],
                    "replayed": True,
                    "made_by": entry["made_by"],
                }
            if mode == "only":
                raise RecordMissing(
                    f"no record of this {request['kind']} request for {self.file.name} "
                    f"in {self.records.path} (RAGBOOK_LLM_RECORDS=only); run the "
                    "chapter with the model installed to record it"
                )
        with self._lock:
            result = compute()
        if self.records is not None and mode != "off":
            self.records.add(key, request, result, self.runtime())
        return {**result, "replayed": False, "made_by": self.runtime()}

    # -- tokens ------------------------------------------------------------------------
    def _tokens(self, text: str, special: bool = False) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def _template(self, messages: list[dict[str, str]]) -> list[int]:
        self.llama  # noqa: B018 - load, for the formatter
        rendered = self._formatter(messages=messages).prompt
        return self._tokens(rendered, special=True)

    def count_tokens(self, text: str) -> int:
        """Tokens of plain ``text`` in the model's own vocabulary."""
        text = validate.text(text, "text")
        return self._recorded(
            {"kind": "count", "text": text}, lambda: {"tokens": len(self._tokens(text))}
        )["tokens"]

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of ``messages`` as the chat template renders them, the assistant's
        turn opened."""
        messages = _messages(messages)
        request = {"kind": "prompt_tokens", "messages": messages}
        return self._recorded(
            request, lambda: {"tokens": len(self._template(messages))}
        )["tokens"]

    # -- generation --------------------------------------------------------------------
    def chat(
        self, messages: Sequence[Mapping[str, str]], max_tokens: int = 256, on_text=None
    ) -> Generation:
        """The model's reply to ``messages``, greedy; ``on_text`` receives the text as
        it is generated.

        Raises :class:`ContextOverflow` when the prompt and ``max_tokens`` do not fit
        ``n_ctx``, and :class:`ModelError` when the model's reply is empty.
        """
        messages = _messages(messages)
        max_tokens = validate.whole(max_tokens, "max_tokens")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if on_text is not None and not callable(on_text):
            raise TypeError("on_text must be a function of one str, or None")
        request = {
            "kind": "chat",
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "seed": self.seed,
            "n_ctx": self.n_ctx,
        }
        result = self._recorded(
            request, lambda: self._generate(messages, max_tokens, on_text)
        )
        if result["replayed"] and on_text is not None:
            on_text(result["text"])
        generation = Generation(
            result["text"],
            result["finish_reason"],
            result["prompt_tokens"],
            result["completion_tokens"],
            result["seconds_to_first_token"],
            result["seconds"],
            result.get("reused_tokens", 0),
            result["replayed"],
            result["made_by"],
        )
        if not generation.text.strip():
            raise ModelError(
                f"{self.file.name} returned an empty reply "
                f"({generation.finish_reason}, "
                f"{generation.completion_tokens} tokens)"
            )
        return generation

    def _check_fits(self, prompt_tokens: int, max_tokens: int) -> None:
        if prompt_tokens + max_tokens > self.n_ctx:
            raise ContextOverflow(
                f"the prompt takes {prompt_tokens} tokens and {max_tokens} are "
                f"reserved for the answer: {prompt_tokens + max_tokens} > the context "
                f"window of {self.n_ctx}. Pack fewer sources "
                "(ragbook.prompts.pack_prompt with the generator's count) or reserve "
                "fewer answer tokens"
            )

    def _reuse(self, tokens: list[int]) -> int:
        """Tokens at the start of ``tokens`` kept in the cache: those shared with the
        previous request when ``reuse_prefix``, else none (the cache is emptied)."""
        llama = self._llama
        if not self.reuse_prefix:
            llama.reset()
            return 0
        shared = 0
        for a, b in zip(llama._input_ids.tolist(), tokens):
            if a != b:
                break
            shared += 1
        return shared

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

    # -- scores ------------------------------------------------------------------------
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

    def continuation_logprobs(
        self, messages: Sequence[Mapping[str, str]], continuation: str
    ) -> list[tuple[str, float]]:
        """Each token of ``continuation`` as the assistant's reply to ``messages``, with
        its log-probability.

        The natural-log probability of each token given the prompt and the tokens before
        it; their sum is log p(continuation | prompt), the quantity RAG-Sequence and
        RAG-Token combine (chapter 13).
        """
        messages = _messages(messages)
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
        messages = _messages(messages)
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
        messages = _messages(messages)
        opening = validate.text(opening, "opening")
        refusal = validate.text(refusal, "refusal")
        grammar = validate.text(grammar, "grammar")
        if "root" not in grammar:
            raise ValueError("grammar must define a root rule (GBNF: root ::= ...)")
        max_tokens = validate.whole(max_tokens, "max_tokens")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        closed = None if closed is None else _messages(closed)
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

    @staticmethod
    def _log_softmax_at(logits, token: int) -> float:
        import numpy as np

        top = logits.max()
        return float(logits[token] - top - math.log(float(np.exp(logits - top).sum())))

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
        import llama_cpp
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

        # the prompt is in the cache: llama.cpp evaluates again only its last token
        text, finish, first = self._stream(
            tokens,
            max_tokens,
            on_text,
            start,
            grammar=llama_cpp.LlamaGrammar.from_string(grammar, verbose=False),
            logits_processor=llama_cpp.LogitsProcessorList([watch]),
        )
        generated = [int(t) for t in self._llama._input_ids[len(tokens) :]]
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
