"""The language-model benchmark's reading of a GGUF header: the weights a generated
token reads, on a file written here with sizes known by construction."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "llm.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("llm_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _gguf(path: Path, tensors: list[tuple[str, int]], data_bytes: int) -> None:
    """A GGUF file of version 3: an alignment of 32, an array of two strings, then
    ``tensors`` as (name, offset) and ``data_bytes`` of tensor data."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 2)
    head += _string("general.alignment") + struct.pack("<II", 4, 32)
    head += _string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2)
    head += _string("a") + _string("bc")
    for name, offset in tensors:
        head += _string(name) + struct.pack("<IQQIQ", 2, 4, 2, 0, offset)
    head += b"\0" * (-len(head) % 32)
    path.write_bytes(head + b"\1" * data_bytes)


def test_tensor_sizes_and_the_bytes_a_token_reads(bench, tmp_path):
    tied = tmp_path / "tied.gguf"
    _gguf(tied, [("token_embd.weight", 0), ("blk.0.ffn_up.weight", 64)], 64 + 96)
    # each tensor runs to the next one's offset, the last to the end of the file
    assert bench.tensor_bytes(str(tied)) == {
        "token_embd.weight": 64,
        "blk.0.ffn_up.weight": 96,
    }
    # tied embeddings: the table is the output matrix too, read whole for each token
    assert bench.bytes_per_token(str(tied)) == 160
    separate = tmp_path / "separate.gguf"
    _gguf(
        separate,
        [("output.weight", 96), ("token_embd.weight", 0), ("blk.0.ffn_up.weight", 32)],
        96 + 40,
    )
    assert bench.tensor_bytes(str(separate)) == {
        "token_embd.weight": 32,
        "blk.0.ffn_up.weight": 64,
        "output.weight": 40,
    }
    # a separate output matrix: the table is only looked up, one row a token
    assert bench.bytes_per_token(str(separate)) == 64 + 40
    wrong = tmp_path / "not.gguf"
    wrong.write_bytes(b"GGML" + bytes(28))
    with pytest.raises(ValueError, match="not a GGUF file"):
        bench.tensor_bytes(str(wrong))
