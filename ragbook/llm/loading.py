"""Loading the model: llama.cpp's ``Llama`` built from the GGUF file on first use, the
chat template read from its header, the model's tokens and its cache; and the check of
chat messages that every request makes (chapter 11 loads the model, chapter 10 counts
prompts in its tokens).

:class:`ModelLoading` is a part of :class:`~ragbook.llm.LocalModel`, which sets the
attributes it reads (``file``, ``n_ctx``, ``threads``, ``seed``, ``verbose``,
``reuse_prefix``) (see :mod:`ragbook.llm`).
"""

from __future__ import annotations

import time
from typing import Mapping, Sequence

from .. import validate
from .files import (
    DEFAULT_MODEL,
    ModelError,
    ModelNotInstalled,
    install_command,
    model_file,
)


def checked_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """``messages`` as plain dicts, each with exactly a ``role`` (system, user,
    assistant) and a ``content`` text; a ValueError names the first that is not."""
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


class ModelLoading:
    """The runtime, loaded on first use: the ``Llama``, the chat template, the tokens,
    the cache."""

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

    # -- tokens ------------------------------------------------------------------------
    def _tokens(self, text: str, special: bool = False) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def _template(self, messages: list[dict[str, str]]) -> list[int]:
        self.llama  # noqa: B018 - load, for the formatter
        rendered = self._formatter(messages=messages).prompt
        return self._tokens(rendered, special=True)

    # -- the cache ---------------------------------------------------------------------
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
