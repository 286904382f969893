"""The book's recorded generations (ragbook/data/generations/).

Every record is keyed by its own model and request, says who made it, and holds a
result of the shape its kind needs. Whether the texts are the model's is checked by
regenerating a sample with the model (tools/llm_records.py check, in make test)."""

import os
from pathlib import Path

import pytest

from ragbook import llm

FOLDER = llm.book_records().path.parent
FILES = sorted(FOLDER.glob("*.jsonl"))
RESULT_KEYS = {
    "sample": {"text", "finish_reason", "prompt_tokens", "completion_tokens"},
    "chat": {
        "text",
        "finish_reason",
        "prompt_tokens",
        "completion_tokens",
        "seconds_to_first_token",
        "seconds",
    },
    "count": {"tokens"},
    "structured": {
        "refusal_logprob",
        "text",
        "finish_reason",
        "answer",
        "closed",
        "prompt_tokens",
        "completion_tokens",
        "seconds",
    },
    "prompt_tokens": {"tokens"},
    "logprobs": {"tokens"},
    "relevance": {"yes_minus_no"},
}


def test_there_are_records_for_the_books_models():
    assert {path.stem for path in FILES} <= set(llm.MODELS)
    assert "qwen2.5-1.5b" in {path.stem for path in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_record_is_keyed_by_its_model_and_request(path):
    spec = llm.MODELS[path.stem]
    entries = llm.Records(path).entries()
    assert entries
    for entry in entries:
        request = entry["request"]
        assert entry["key"] == llm.request_key(spec.sha256, request), entry["key"]
        assert set(entry["result"]) >= RESULT_KEYS[request["kind"]], entry["key"]
        made_by = entry["made_by"]
        assert made_by["model_sha256"] == spec.sha256 and made_by["model"] == spec.name
        assert made_by["runtime"].startswith("llama-cpp-python ") and made_by["machine"]
        if request["kind"] == "structured":
            # a reply under the grammar: the answer's tokens start the text, and every
            # log-probability is one
            result = entry["result"]
            spoken = "".join(piece for piece, _ in result["answer"])
            assert len(result["answer"]) <= result["completion_tokens"], entry["key"]
            if "\ufffd" not in spoken:  # a character split over tokens decodes apart
                assert result["text"].startswith(spoken), entry["key"]
            assert all(v <= 0 for _, v in result["answer"] + (result["closed"] or []))
            assert result["refusal_logprob"] <= 0
        if request["kind"] == "chat":
            assert request["temperature"] == 0.0 and entry["result"]["text"].strip()
            assert entry["result"]["completion_tokens"] <= request["max_tokens"]


def test_the_near_tie_chapter_11_shows_is_a_record_made_again_elsewhere():
    """ragbook/data/near_tie.json (tools/llm_records.py tie) holds a recorded reply and
    the same request made again on another CPU: the recorded side must be the record
    itself, the two machines must differ, and the replies must part after their shared
    start, at a token the second machine ranks below its top choice."""
    import json
    from importlib import resources

    tie = json.loads(
        (resources.files("ragbook") / "data" / "near_tie.json").read_text("utf-8")
    )
    entry = llm.Records(FOLDER / f"{tie['model']}.jsonl").get(tie["key"])
    assert entry is not None and entry["request"] == tie["request"]
    recorded, again = tie["recorded"], tie["regenerated"]
    assert recorded["text"] == entry["result"]["text"]
    assert recorded["machine"] == entry["made_by"]["machine"]
    assert recorded["instructions"] != again["instructions"]
    assert recorded["text"] != again["text"]
    for text in (recorded["text"], again["text"]):
        assert text.startswith(tie["shared_start"])
    assert (
        recorded["text"][len(tie["shared_start"])]
        != again["text"][len(tie["shared_start"])]
    )
    margins = tie["margins"]
    assert min(margins) == 0 and 0 < max(margins) < 0.5  # tools/llm_records.NEAR_TIE
    assert sum(m > 0 for m in margins) < len(margins) // 10


def test_a_file_written_atomically_is_readable_as_a_plain_write_would_be(tmp_path):
    from ragbook.llm.files import write_atomically

    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.jsonl"
        write_atomically(fresh, b"{}\n")
        # a new file gets 0666 less the umask 022, not the temporary file's 0600
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.jsonl"
        kept.write_bytes(b"")
        kept.chmod(0o640)
        write_atomically(kept, b"{}\n")
        assert kept.stat().st_mode & 0o777 == 0o640  # an existing file keeps its own
        assert kept.read_bytes() == b"{}\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "fresh.jsonl",
            "kept.jsonl",
        ]
    finally:
        os.umask(umask)
