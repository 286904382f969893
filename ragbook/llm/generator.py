"""The generator: the book's prompt read by a :class:`~ragbook.llm.model.LocalModel`
(see :mod:`ragbook.llm`)."""

from __future__ import annotations

from typing import Sequence

from .. import validate
from ..generation.prompts import Prompt, chat_messages
from .model import Generation, LocalModel


class LLMGenerator:
    """A generator (chapter 11) backed by a :class:`LocalModel`: prompt in, the model's
    answer out.

    ``count`` measures a prompt text in the model's tokens, chat template included, for
    :func:`ragbook.generation.prompts.pack_prompt`; a prompt that does not fit
    ``n_ctx`` with ``max_tokens`` reserved raises :class:`ContextOverflow` rather than
    being cut.

    ``examples``, (prompt, answer) pairs, are worked examples: each goes before the
    question as an earlier user turn (the prompt's sources and question) and the
    assistant's answer, after the system message (chapter 15). Their tokens count in
    ``count``.
    """

    def __init__(
        self,
        model: LocalModel,
        max_tokens: int = 200,
        examples: Sequence[tuple[Prompt | str, str]] = (),
    ):
        if not isinstance(model, LocalModel):
            raise TypeError(
                f"model must be a ragbook.llm.LocalModel, got {type(model).__name__}"
            )
        self.model = model
        self.max_tokens = validate.whole(max_tokens, "max_tokens")
        self.examples: list[tuple[str, str]] = []
        for n, pair in enumerate(
            validate.sequence(examples, "examples", "(prompt, answer) pairs"), start=1
        ):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(
                    f"example {n} must be a (prompt, answer) pair, got {pair!r}"
                )
            prompt, answer = pair
            if not isinstance(prompt, (Prompt, str)):
                raise TypeError(
                    f"the prompt of example {n} must be a Prompt or a str, "
                    f"got {type(prompt).__name__}"
                )
            answer = validate.text(answer, f"the answer of example {n}")
            if not answer.strip():
                raise ValueError(f"the answer of example {n} is empty")
            self.examples.append((chat_messages(prompt)[-1]["content"], answer))
        self.last: Generation | None = None
        # a function given the answer's text as it is generated (the tool streams it)
        self.on_text = None

    def __repr__(self) -> str:
        shown = f", examples={len(self.examples)}" if self.examples else ""
        return f"LLMGenerator({self.model.name!r}, max_tokens={self.max_tokens}{shown})"

    def count(self, text: str) -> int:
        return self.model.prompt_tokens(chat_messages(text, self.examples))

    def budget(self) -> int:
        """The prompt tokens that fit: the context window less the tokens reserved for
        the answer."""
        return self.model.n_ctx - self.max_tokens

    def __call__(
        self,
        prompt: Prompt | str,
        on_text=None,
        history: Sequence[tuple[str, str]] = (),
    ) -> str:
        """The model's answer to ``prompt``; ``history`` holds earlier (question,
        answer) exchanges."""
        on_text = on_text if on_text is not None else self.on_text
        self.last = self.model.chat(
            chat_messages(prompt, [*self.examples, *history]),
            self.max_tokens,
            on_text=on_text,
        )
        return self.last.text.strip()
