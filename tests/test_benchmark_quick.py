"""The benchmarks run on the committed code: each one's --quick mode completes on small
synthetic data and writes every documented key (timings are not checked: they depend on
the machine and its load)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_benchmark_results import render, sha256

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sparse_quick(tmp_path_factory):
    output = tmp_path_factory.mktemp("sparse") / "sparse.json"
    return _quick(
        "sparse",
        output,
        ("ragbook/retrieval/bm25.py", "ragbook/retrieval/pruning.py"),
        timeout=600,
    )


def test_sparse_quick_writes_every_documented_key(sparse_quick):
    data, _ = sparse_quick
    keys = render.DOCUMENTED_KEYS["sparse"] + render.SPARSE_PRUNING_KEYS
    assert render.missing_keys(data, keys) == []
    assert data["quick"] is True and data["run"]["arguments"]["quick"] is True
    assert data["run"]["benchmark"] == "sparse" and data["schema_version"] == 1


def test_sparse_quick_records_the_commit_it_measured(sparse_quick):
    data, _ = sparse_quick
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    assert data["run"]["source"]["git_commit"] == head.stdout.strip()
    assert isinstance(data["run"]["source"]["ragbook_modified"], bool)


def test_sparse_quick_prints_a_verdict_for_every_target(sparse_quick):
    data, stdout = sparse_quick
    sections = [data["beir"]["speed"], *data["synthetic"]["sizes"].values()]
    assert len(sections) == 3
    for section in sections:
        assert section["targets"], section["documents"]
        for target in section["targets"]:
            assert isinstance(target["met"], bool)
            verdict = "MET" if target["met"] else "NOT MET"
            line = re.compile(re.escape(target["target"]) + r" .* " + verdict + "$")
            assert any(line.search(text) for text in stdout.splitlines()), target


def test_sparse_quick_pruned_and_exhaustive_search_agree(sparse_quick):
    # correctness, not speed: every query's hits are the same with and without
    # pruning, and pruning never reads more postings than the query terms hold
    data, _ = sparse_quick
    effectiveness = data["beir"]["effectiveness"]
    assert effectiveness["pruned_minus_exhaustive_ndcg_at_10"] == 0
    assert effectiveness["pruned_runs_identical_to_exhaustive"] == {
        "top_10": effectiveness["queries"],
        "top_1000": effectiveness["queries"],
    }
    for section in [data["beir"]["speed"], *data["synthetic"]["sizes"].values()]:
        assert section["identical_hits"] == {
            "k10": section["queries"],
            "k1000": section["queries"],
        }
        for k in ("k10", "k1000"):
            postings = section["postings_read"][k]
            assert 0 < postings["pruned"] <= postings["exhaustive"]


@pytest.mark.live
def test_llm_quick_runs_every_part_and_writes_its_keys(tmp_path):
    from test_llm import _live_model

    _live_model()  # skips (or fails under RAGBOOK_REQUIRE_LLM=1) without the model
    data, stdout = _quick(
        "llm",
        tmp_path / "llm.json",
        (
            "ragbook/llm/model.py",
            "ragbook/llm/decoding.py",
            "ragbook/llm/scoring.py",
            "ragbook/generation/cited.py",
        ),
    )
    assert data["quick"] is True and data["run"]["benchmark"] == "llm"
    (result,) = data["results"]
    assert result["model"] == "qwen2.5-0.5b" and result["threads"] == 1
    for key in ("median_total_s", "median_first_token_s", "share_of_bound"):
        assert result[key] > 0, key
    cited = data["cited"]
    (answer,) = cited["answers"]
    assert answer["prompt_tokens"] > 0 and answer["answer"]
    assert 0 < answer["first_token_s"] <= answer["reply_s"] <= answer["total_s"]
    rerank = data["rerank"]
    (reranked,) = rerank["answers"]
    assert reranked["candidates"] == rerank["depth"] == 4
    assert 0 < reranked["candidate_s"] < reranked["query_s"]
    for target in data["targets"]:
        verdict = "MET" if target["met"] else "NOT MET"
        assert f"{target['target']}: " in stdout and verdict in stdout


def _quick(
    script: str, output: Path, measures: tuple[str, ...], timeout: int = 900
) -> tuple[dict, str]:
    """Run ``benchmarks/<script>.py --quick``; check that its results file records,
    with their current digests, the script, the harness and ``measures`` (the ragbook
    modules whose speed it times), which is what the staleness test of the committed
    results reads."""
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}.py", "--quick", "--output", str(output)],
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(output.read_text(encoding="utf-8"))
    measured = data["run"]["source"]["measured"]
    for name in (f"benchmarks/{script}.py", "benchmarks/harness.py", *measures):
        assert measured.get(name) == sha256(ROOT / name), name
    return data, done.stdout


def test_vectors_quick_writes_every_documented_key(tmp_path):
    data, _ = _quick(
        "vectors",
        tmp_path / "vectors.json",
        (
            "ragbook/retrieval/vectors.py",
            "ragbook/retrieval/ivf.py",
            "ragbook/retrieval/vector_kernels.py",
        ),
    )
    assert render.missing_keys(data, render.DOCUMENTED_KEYS["vectors"]) == []
    assert data["run"]["benchmark"] == "vectors"
    assert data["run"]["arguments"]["quick"] is True
    assert isinstance(data["run"]["source"]["ragbook_modified"], bool)


def test_dense_quick_runs_every_step_and_writes_its_keys(tmp_path):
    data, stdout = _quick(
        "dense",
        tmp_path / "dense.json",
        (
            "ragbook/retrieval/embedder.py",
            "ragbook/retrieval/vectors.py",
            "ragbook/retrieval/bm25.py",
            "ragbook/evaluation/intervals.py",
        ),
    )
    assert data["run"]["benchmark"] == "dense" and data["quick"] is True
    assert data["run"]["arguments"]["quick"] is True
    assert isinstance(data["run"]["source"]["ragbook_modified"], bool)
    queries = data["effectiveness"]["queries"]
    assert len(data["per_query"]["query_ids"]) == queries > 0
    for name in ("bm25", "bm25_unstemmed", "minilm"):
        assert len(data["per_query"]["systems"][name]["ndcg_at_10"]) == queries
    assert set(data["effectiveness"]["comparisons"]) == {
        "minilm-bm25",
        "minilm-bm25_unstemmed",
    }
    assert data["encoding"]["documents_per_s"] > 0
    assert data["encoding"]["max_seq_length"] == 256
    for target in data["targets"]:
        verdict = {None: "-", True: "MET", False: "NOT MET"}[target["met"]]
        line = re.compile(
            re.escape(target["target"]) + r": \S+  " + verdict + r"(\s|$)"
        )
        assert any(line.search(text) for text in stdout.splitlines()), target
    # ExactIndex ranks the vectors as NumPy does (a correctness check, not speed)
    assert data["targets"][0]["met"] is True


def test_postgres_quick_completes_and_records_its_run(tmp_path):
    data, stdout = _quick(
        "postgres",
        tmp_path / "postgres.json",
        (
            "ragbook/postgres/store.py",
            "ragbook/postgres/loading.py",
            "ragbook/postgres/searching.py",
            "ragbook/postgres/server.py",
        ),
    )
    assert data["run"]["benchmark"] == "postgres"
    assert data["run"]["arguments"]["quick"] is True
    assert isinstance(data["run"]["source"]["ragbook_modified"], bool)
    assert "results written to" in stdout
