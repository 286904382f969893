"""The model: :class:`LocalModel`, a GGUF file run by llama.cpp when a request is not
in the records; the records every request goes through; and its chat completion, a
:class:`Generation` (chapter 11; see :mod:`ragbook.llm`).

The class is composed of three parts, each a module: loading the runtime, its tokens
and its cache (:mod:`ragbook.llm.loading`), decoding greedy completions and structured
replies (:mod:`ragbook.llm.decoding`), and scoring given texts: token counts,
log-probabilities, relevance (:mod:`ragbook.llm.scoring`).
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .. import validate
from .decoding import Decoding
from .files import ModelError, model_file
from .loading import ModelLoading, checked_messages
from .records import (
    RecordMissing,
    Records,
    instruction_sets,
    machine,
    records_mode,
    request_key,
)
from .scoring import Scoring

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


class LocalModel(ModelLoading, Decoding, Scoring):
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

    # -- the chat completion (computed by Decoding._generate) --------------------------
    def chat(
        self, messages: Sequence[Mapping[str, str]], max_tokens: int = 256, on_text=None
    ) -> Generation:
        """The model's reply to ``messages``, greedy; ``on_text`` receives the text as
        it is generated.

        Raises :class:`ContextOverflow` when the prompt and ``max_tokens`` do not fit
        ``n_ctx``, and :class:`ModelError` when the model's reply is empty.
        """
        messages = checked_messages(messages)
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

    # -- a sampled completion (computed by Decoding._sample) ---------------------------
    def sample(
        self,
        messages: Sequence[Mapping[str, str]],
        seed: int,
        temperature: float = 0.8,
        max_tokens: int = 30,
    ) -> str:
        """One reply to ``messages`` drawn at ``temperature``: every token from the
        softmax of the logits divided by the temperature, with no top-k, top-p or min-p
        cut, from llama.cpp's sampler seeded with ``seed`` (chapter 13). A draw is
        recorded like every request, so a replay gives the same reply on any machine;
        :meth:`chat` decodes greedily instead."""
        messages = checked_messages(messages)
        seed = validate.whole(seed, "seed")
        temperature = validate.real(temperature, "temperature")
        if temperature <= 0:
            raise ValueError(
                f"temperature must be above 0 to sample (greedy decoding is chat), "
                f"got {temperature}"
            )
        max_tokens = validate.whole(max_tokens, "max_tokens")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        request = {
            "kind": "sample",
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_k": 0,
            "top_p": 1.0,
            "min_p": 0.0,
            "seed": seed,
            "n_ctx": self.n_ctx,
        }
        result = self._recorded(
            request, lambda: self._sample(messages, seed, temperature, max_tokens)
        )
        return result["text"]

    # -- the context window ------------------------------------------------------------
    def _check_fits(self, prompt_tokens: int, max_tokens: int) -> None:
        if prompt_tokens + max_tokens > self.n_ctx:
            raise ContextOverflow(
                f"the prompt takes {prompt_tokens} tokens and {max_tokens} are "
                f"reserved for the answer: {prompt_tokens + max_tokens} > the context "
                f"window of {self.n_ctx}. Pack fewer sources "
                "(ragbook.generation.prompts.pack_prompt with the generator's count) "
                "or reserve fewer answer tokens"
            )
