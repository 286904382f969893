"""The committed benchmark results files and the README tables generated from them (no
benchmark is run)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load_render():
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ in benchmarks/
    try:
        spec = importlib.util.spec_from_file_location(
            "benchmarks_render", BENCHMARKS / "render.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


render = _load_render()


@pytest.fixture(scope="module")
def results():
    return render.load_results(str(BENCHMARKS / "results"))


def test_readme_section_is_what_the_results_files_give(results):
    text = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    assert text.count(render.BEGIN) == 1 and text.count(render.END) == 1
    assert render.generated_section(text) == render.render(results), (
        "benchmarks/README.md is out of date: run .venv/bin/python benchmarks/render.py"
    )


@pytest.mark.parametrize("name", sorted(render.DOCUMENTED_KEYS))
def test_results_files_have_the_documented_keys(results, name):
    assert render.missing_keys(results[name], render.DOCUMENTED_KEYS[name]) == []
    assert results[name]["schema_version"] == 1
    assert results[name]["run"]["benchmark"] == name


def _numbers(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numbers(value, f"{path}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, node


@pytest.mark.parametrize("name", sorted(render.DOCUMENTED_KEYS))
def test_figures_are_plain_finite_numbers(results, name):
    data = results[name]
    for path, value in _numbers(data):
        assert math.isfinite(value), path
    for path in ("run.duration_s", "run.machine.cpu_count", "run.machine.memory_mib"):
        node = data
        for part in path.split("."):
            node = node[part]
        assert isinstance(node, (int, float)) and node > 0, path
    assert len(data["run"]["load_average_start"]) == 3
    assert data["run"]["date_utc"].endswith("Z")


def test_sparse_has_the_figures_the_book_reads(results):
    # the database appendix reads every synthetic size; chapter 5 reads SciFact's and
    # the million documents' postings shares and throughput ratios
    sizes = results["sparse"]["synthetic"]["sizes"]
    assert len(sizes) >= 2 and "1000000" in sizes
    for section in (results["sparse"]["beir"]["speed"], sizes["1000000"]):
        for k in ("k10", "k1000"):
            assert 0 < section["postings_read"][k]["share"] <= 1
            for other in ("ragbook_exhaustive", "bm25s"):
                ratio = section["ratios"][f"ragbook/{other}"][f"queries_per_s_{k}"]
                mine = section["systems"]["ragbook"][f"queries_per_s_{k}"]
                theirs = section["systems"][other][f"queries_per_s_{k}"]
                assert ratio == pytest.approx(mine / theirs)
    for n in sizes:
        ragbook = sizes[n]["systems"]["ragbook"]
        assert sizes[n]["documents"] == int(n)
        for key in (
            "build_s",
            "queries_per_s_k10",
            "index_arrays_mib",
            "peak_build_mib",
        ):
            assert isinstance(ragbook[key], float) and ragbook[key] > 0, (n, key)
        # a ratio is ragbook's figure over bm25s's, from the same run
        bm25s = sizes[n]["systems"]["bm25s"]
        ratio = sizes[n]["ratios"]["ragbook/bm25s"]["build_s"]
        assert ratio == pytest.approx(ragbook["build_s"] / bm25s["build_s"])


def test_missing_keys_reports_absent_and_empty_levels():
    data = {"a": {"x": {"k": 1}, "y": {}}, "b": None}
    assert render.missing_keys(data, ["a.*.k"]) == ["a.y.k"]
    assert render.missing_keys(data, ["b.c", "c"]) == ["b.c", "c"]
    assert render.missing_keys({"r": {"ragbook/faiss": 2.0}}, ["r.ragbook/faiss"]) == []


def test_results_files_parse_as_strict_json():
    for name in render.DOCUMENTED_KEYS:
        text = (BENCHMARKS / "results" / f"{name}.json").read_text(encoding="utf-8")
        json.loads(text, parse_constant=lambda c: pytest.fail(f"{name}.json holds {c}"))


def test_postgres_results_have_the_figures_chapter_15_reads():
    """benchmarks/results/postgres.json (benchmarks/postgres.py): the keys chapter 15
    reads, finite numbers."""
    data = json.loads(
        (BENCHMARKS / "results" / "postgres.json").read_text(encoding="utf-8")
    )
    assert data["run"]["benchmark"] == "postgres"
    vec = data["vectors"]
    assert vec["n"] >= 20_000 and vec["dimensions"] == 384
    for system in ("postgres", "faiss_hnsw"):
        rows = vec[system]["ef_search"]
        assert set(rows) >= {"10", "40", "320"}
        for row in rows.values():
            assert 0 <= row["recall"] <= 1 and 0 < row["median_ms"] <= row["p99_ms"]
    for key in ("load_rows_per_s", "hnsw_build_s"):
        assert math.isfinite(vec["postgres"][key]) and vec["postgres"][key] > 0
    assert vec["ragbook_exact"]["recall"] == 1.0
    assert vec["replica"]["replay_lag_median_ms"] >= 0
    assert (
        vec["shards"]["shards"] == 2 and sum(vec["shards"]["rows"].values()) == vec["n"]
    )
    labelled = data["labelled"]
    for name in (
        "ragbook exact (MiniLM)",
        "postgres HNSW, ef_search 1000",
        "ragbook BM25",
        "postgres ts_rank_cd, all terms",
        "postgres ts_rank_cd, any term",
    ):
        assert 0 <= labelled[name]["recall@10"] <= 1


def test_dense_results_have_the_figures_chapter_5_reads():
    """benchmarks/results/dense.json (benchmarks/dense.py): BM25 and MiniLM on SciFact's
    test queries, the per-query values chapter 5 bootstraps, and what they add up to."""
    data = json.loads(
        (BENCHMARKS / "results" / "dense.json").read_text(encoding="utf-8")
    )
    assert data["run"]["benchmark"] == "dense" and data["quick"] is False
    effectiveness = data["effectiveness"]
    assert effectiveness["dataset"] == "scifact"
    assert (effectiveness["documents"], effectiveness["queries"]) == (5183, 300)
    per_query = data["per_query"]
    assert len(per_query["query_ids"]) == len(set(per_query["query_ids"])) == 300
    for name in ("bm25", "bm25_unstemmed", "minilm"):
        system = effectiveness["systems"][name]
        for key in ("ndcg_at_10", "recall_at_100", "rr_at_10"):
            values = per_query["systems"][name][key]
            assert len(values) == 300 and all(0 <= v <= 1 for v in values)
            # ir_measures' mean over the queries is the mean of its per-query values
            assert system[key] == pytest.approx(sum(values) / 300, abs=1e-9)
    for baseline in ("bm25", "bm25_unstemmed"):
        c = effectiveness["comparisons"][f"minilm-{baseline}"]
        low, high = c["interval"]
        assert low <= c["mean_difference"] <= high
        assert c["a_better"] + c["a_worse"] + c["tied"] == 300
        assert c["mean_difference"] == pytest.approx(
            effectiveness["systems"]["minilm"]["ndcg_at_10"]
            - effectiveness["systems"][baseline]["ndcg_at_10"]
        )
    encoding = data["encoding"]
    assert encoding["max_seq_length"] == 256 and encoding["documents"] == 5183
    assert encoding["documents_per_s"] == pytest.approx(5183 / encoding["documents_s"])
    assert 0 <= encoding["documents_truncated"] <= 5183
    assert {p["compares_with"] for p in effectiveness["published"]} == {
        "bm25",
        "minilm",
    }
    assert all(isinstance(t["met"], bool) for t in data["targets"])


def test_llm_results_cover_both_models_and_state_their_targets():
    data = json.loads((BENCHMARKS / "results" / "llm.json").read_text(encoding="utf-8"))
    measured = {(r["model"], r["threads"]) for r in data["results"]}
    assert {("qwen2.5-0.5b", 2), ("qwen2.5-1.5b", 2)} <= measured
    for r in data["results"]:
        assert r["load_s"] > 0 and r["answers"], r["model"]
        for answer in r["answers"]:
            assert 0 < answer["first_token_s"] <= answer["total_s"]
            assert answer["prompt_tokens"] > 0 and answer["completion_tokens"] > 0
        # the share of the bound is what its parts give
        assert math.isclose(
            r["share_of_bound"],
            r["median_generation_tokens_per_s"] / r["bound_tokens_per_s"],
        )
    targets = {t["target"]: t["met"] for t in data["targets"]}
    assert any("at most 4 s" in name for name in targets)
    assert all(isinstance(met, bool) for met in targets.values())


def sha256(path: Path) -> str:
    """The hex SHA-256 of a file's bytes, as a results file records it."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "path",
    sorted((BENCHMARKS / "results").glob("*.json")),
    ids=lambda path: path.name,
)
def test_results_were_measured_on_the_code_as_it_is(path):
    # A results file records the SHA-256 of every file whose code it measured (the
    # script, the harness, each ragbook module the run loaded). Once one of them
    # changes, the figures describe code that no longer exists: measure them again.
    data = json.loads(path.read_text(encoding="utf-8"))
    measured = data["run"]["source"].get("measured")
    assert measured, f"{path.name} does not record the files it measured"
    script = f"benchmarks/{data['run']['benchmark']}.py"
    assert script in measured and "benchmarks/harness.py" in measured
    assert any(name.startswith("ragbook/") for name in measured), path.name
    root = BENCHMARKS.parent
    changed = [
        name
        for name, digest in sorted(measured.items())
        if not (root / name).is_file() or sha256(root / name) != digest
    ]
    command = " ".join(data["run"]["command"])
    if data["run"]["benchmark"] in render.DOCUMENTED_KEYS:  # in the README's tables
        command += "` and `.venv/bin/python benchmarks/render.py"
    assert not changed, (
        f"{path.name} was measured at commit {data['run']['source']['git_commit']}; "
        f"since then {', '.join(changed)} changed. Run `{command}` again on a quiet "
        "machine and commit what they write."
    )
