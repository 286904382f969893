"""The tool and the pipeline go through the book's recorded generations only when
``RAGBOOK_LLM_RECORDS`` asks for them (ragbook.system.rag.pipeline_records), with the
chapters' meanings: ``only`` replays a present record and refuses a missing one without
running the model, ``replay`` also makes and adds a missing one; unset or ``off``, the
model answers and nothing is kept. A model the user names that cannot answer is an
error that says why.

The model is a stand-in: its computations (the chat template and the reply) are
replaced, so that nothing here needs llama.cpp or the model's file."""

import io
import re
import sys
from pathlib import Path

import pytest

import ragbook
from ragbook import llm
from ragbook.cli import main
from ragbook.cli import options as cli
from ragbook.llm import LocalModel, ModelError, Records
from ragbook.system.rag import RAGPipeline, pipeline_records

BOOK_RECORDS = Path(ragbook.__file__).parent / "data" / "generations"
REPLY = "Robots return to the dock below 20 percent [1]."
TIMING = re.compile(r"; indexed in \d+\.\d+ s, answered in \d+\.\d+ s")


@pytest.fixture
def records_folder(tmp_path, monkeypatch):
    """The book's records, moved to a scratch folder (the package's files untouched)."""
    folder = tmp_path / "generations"
    monkeypatch.setattr(
        llm, "book_records", lambda name: Records(folder / f"{name}.jsonl")
    )
    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)
    monkeypatch.delenv("RAGBOOK_LLM_USED", raising=False)
    return folder


@pytest.fixture
def documents(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "dock.md").write_text(
        "# Charging dock\n\nThe charging dock is in bay four.\n\n## Schedule\n\n"
        "Robots return to the dock when the battery falls below 20 percent.\n",
        encoding="utf-8",
    )
    (folder / "badges.md").write_text(
        "# Badges\n\nVisitors collect a badge at reception.\n", encoding="utf-8"
    )
    return folder


class StandIn:
    """The model's computations replaced: a token per word, and one fixed reply."""

    def __init__(self, monkeypatch):
        self.calls = 0
        monkeypatch.setattr(
            LocalModel, "_template", lambda model, messages: self.template(messages)
        )
        monkeypatch.setattr(
            LocalModel,
            "_generate",
            lambda model, messages, max_tokens, on_text: self.generate(on_text),
        )
        monkeypatch.setattr(LocalModel, "runtime", lambda model: {"model": "stand-in"})

    def template(self, messages):
        return [0] * sum(len(m["content"].split()) for m in messages)

    def generate(self, on_text):
        self.calls += 1
        if on_text is not None:
            on_text(REPLY)
        return {
            "text": REPLY,
            "finish_reason": "stop",
            "prompt_tokens": 40,
            "completion_tokens": 12,
            "seconds_to_first_token": 0.25,
            "seconds": 0.5,
        }


def no_model(monkeypatch):
    """Any computation with the model fails, and so would loading the runtime."""

    def ran(*arguments):
        raise AssertionError("the model ran")

    monkeypatch.setattr(LocalModel, "_template", ran)
    monkeypatch.setattr(LocalModel, "_generate", ran)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)


def ask(question, documents, capsys):
    status = main(
        [
            "ask",
            question,
            "--documents",
            str(documents),
            "--reader",
            "llm",
            "--model",
            "qwen2.5-0.5b",
        ],
        out=(out := io.StringIO()),
    )
    return status, TIMING.sub("", out.getvalue()), capsys.readouterr().err


def test_only_replays_a_present_record_and_refuses_a_missing_one(
    records_folder, documents, monkeypatch, capsys
):
    path = records_folder / "qwen2.5-0.5b.jsonl"
    question = "When do robots return to the dock?"
    # replay: the request is not there, so the model answers and the answer is added
    stand_in = StandIn(monkeypatch)
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "replay")
    status, made, _ = ask(question, documents, capsys)
    assert status == 0 and stand_in.calls == 1
    assert made.startswith(REPLY) and "replayed from the book's qwen2.5-0.5b" in made
    kinds = sorted(entry["request"]["kind"] for entry in Records(path).entries())
    assert "chat" in kinds and set(kinds) <= {"chat", "prompt_tokens"}
    recorded = len(kinds)
    # only: the same question replays, the model never runs, the output is the same
    no_model(monkeypatch)
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "only")
    status, replayed, _ = ask(question, documents, capsys)
    assert status == 0 and replayed == made
    # the recorded timings, not this run's, are the ones printed
    assert "first token after 0.25 s, answer in 0.50 s" in replayed
    # only: another question has no record, which is an error, and nothing is added
    status, printed, error = ask("Where is the charging dock?", documents, capsys)
    assert status == 2 and REPLY not in printed
    assert "no record of this" in error and "RAGBOOK_LLM_RECORDS=only" in error
    assert len(Records(path)) == recorded


def test_unset_or_off_the_model_answers_and_nothing_is_kept(
    records_folder, documents, monkeypatch, capsys
):
    stand_in = StandIn(monkeypatch)
    for setting in (None, "off"):
        if setting is not None:
            monkeypatch.setenv("RAGBOOK_LLM_RECORDS", setting)
        status, printed, _ = ask("When do robots return?", documents, capsys)
        assert status == 0 and printed.startswith(REPLY)
        assert "replayed" not in printed and "(qwen2.5-0.5b)" in printed
    assert stand_in.calls == 2
    assert not records_folder.exists()  # no records file was written


def test_a_pipeline_built_from_a_name_uses_the_books_records_only_when_asked(
    monkeypatch,
):
    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)
    monkeypatch.delenv("RAGBOOK_GGUF", raising=False)

    def model_records(model=None):
        pipeline = RAGPipeline(reader="llm", retriever="bm25", model=model)
        pipeline.index(["# Vega\n\nVega is a bright star in Lyra.\n"], names=["vega"])
        records = pipeline._generate.model.records
        return None if records is None else records.path

    assert model_records("qwen2.5-0.5b") is None
    for setting in ("replay", "only"):
        monkeypatch.setenv("RAGBOOK_LLM_RECORDS", setting)
        assert model_records("qwen2.5-0.5b") == BOOK_RECORDS / "qwen2.5-0.5b.jsonl"
        assert model_records() == BOOK_RECORDS / "qwen2.5-1.5b.jsonl"  # the default
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "off")
    assert model_records("qwen2.5-0.5b") is None
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "always")
    with pytest.raises(ValueError, match="replay, only or off"):
        pipeline_records("qwen2.5-0.5b")


def test_only_refuses_a_model_file_the_book_has_no_records_of(tmp_path, monkeypatch):
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF" + bytes(60))
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "replay")
    assert pipeline_records(str(other)) is None  # the model answers, nothing is kept
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "only")
    with pytest.raises(ModelError, match="there are none for .*other.gguf"):
        pipeline_records(str(other))


def test_under_only_the_default_reader_is_cited_without_the_runtime(monkeypatch):
    # the model never runs under only, so the runtime need not be installed
    monkeypatch.setattr(cli, "llm_missing", lambda model=None: "no runtime here")
    monkeypatch.delenv("RAGBOOK_GGUF", raising=False)
    monkeypatch.setenv("RAGBOOK_LLM_RECORDS", "only")
    args = cli.build_parser().parse_args(["ask", "Q?"])
    cli.resolve_defaults(args)
    assert (args.reader, args.fallback) == ("cited", None)
    assert cli.describe_setup(args) == (
        "hybrid, cited reader (the default model, replayed from the book's "
        "qwen2.5-1.5b records), glossary astronomy"
    )
    monkeypatch.delenv("RAGBOOK_LLM_RECORDS")
    args = cli.build_parser().parse_args(["ask", "Q?"])
    cli.resolve_defaults(args)
    assert args.reader == "semantic" and "(no runtime here)" in args.fallback


@pytest.mark.parametrize("setting", [None, "only"])
def test_a_missing_model_file_is_named_whether_given_by_option_or_variable(
    tmp_path, monkeypatch, capsys, setting
):
    if setting is None:
        monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)
    else:
        monkeypatch.setenv("RAGBOOK_LLM_RECORDS", setting)
    monkeypatch.delenv("RAGBOOK_GGUF", raising=False)
    missing = str(tmp_path / "missing.gguf")
    # --model names the model: one that cannot answer is an error that says why
    assert main(["ask", "How long is a year on Venus?", "--model", missing]) == 2
    error = capsys.readouterr().err
    assert f"no model file at {missing}" in error and "applies to" not in error
    # $RAGBOOK_GGUF is a setting: the default reader falls back and says why
    monkeypatch.setenv("RAGBOOK_GGUF", missing)
    args = cli.build_parser().parse_args(["ask", "Q?"])
    cli.resolve_defaults(args)
    assert args.reader == "semantic"
    assert f"no model file at {missing}" in cli.describe_setup(args)
