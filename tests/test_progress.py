"""Long work reports what it does and how far it is (ragbook.progress), on a terminal by
default, on a given stream when asked, and never in a notebook's or a pipe's output
unless asked."""

import io
import re
import sys

import numpy as np
import pytest

from ragbook import progress
from ragbook.cli import main
from ragbook.retrieval.dense import DenseRetriever
from ragbook.retrieval.embedder import CachedEncoder, load_minilm
from ragbook.progress import Reporter, reporter

TEXTS = [
    "Mars has two small moons, Phobos and Deimos.",
    "Venus turns once every 243 Earth days.",
    "Triton orbits Neptune backwards.",
    "The Moon keeps one face towards the Earth.",
    "Jupiter has dozens of moons.",
]


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def final(text: str) -> str:
    """What a terminal (or a notebook, which keeps only the last state of a line)
    shows: each line as it was last rewritten after a carriage return."""
    return "\n".join(line.split("\r")[-1] for line in text.split("\n"))


def test_a_stream_gets_every_update_and_a_final_line():
    stream = io.StringIO()
    with reporter(stream, "counting", 3) as report:
        for done in range(4):
            report.update(done)
    text = stream.getvalue()
    assert text == (
        "\rcounting: 0 of 3\rcounting: 1 of 3\rcounting: 2 of 3\rcounting: 3 of 3\n"
    )
    assert final(text) == "counting: 3 of 3\n"


def test_the_default_is_silent_when_standard_error_is_not_a_terminal(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with reporter(None, "counting", 2) as report:
        report.update(1)
        report.update(2)
    assert stderr.getvalue() == ""


def test_the_default_reports_on_a_terminal_once_the_work_takes_longer(monkeypatch):
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    now = [100.0]
    report = reporter(None, "counting", 3)
    report.clock = lambda: now[0]
    report.started = now[0]
    report.update(1)  # at once: quick work prints nothing
    assert stderr.getvalue() == ""
    now[0] += progress.DELAY + 0.5
    report.update(2)
    report.update(3)
    report.close()
    assert stderr.getvalue() == "\rcounting: 2 of 3\rcounting: 3 of 3\n"


def test_quick_work_on_a_terminal_prints_nothing_at_all(monkeypatch):
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    with reporter(None, "counting", 2) as report:
        report.update(1)
        report.update(2)
    assert stderr.getvalue() == ""  # well under DELAY: not even a newline


def test_true_reports_on_standard_error_and_false_never(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with reporter(True, "counting", 1) as report:
        report.update(1)
    assert stderr.getvalue() == "\rcounting: 1 of 1\n"
    stderr.truncate(0)
    stderr.seek(0)
    with reporter(False, "counting", 1) as report:
        report.update(1)
    assert stderr.getvalue() == ""


@pytest.mark.parametrize("bad", ["stdout", 1, 0.5, [sys.stdout]])
def test_anything_else_is_a_type_error(bad):
    with pytest.raises(TypeError, match="progress must be None"):
        reporter(bad, "counting", 1)


def test_a_closed_line_is_not_ended_twice():
    stream = io.StringIO()
    report = Reporter("counting", 1, stream)
    report.update(1)
    report.close()
    report.close()
    assert stream.getvalue() == "\rcounting: 1 of 1\n"


@pytest.fixture(scope="module")
def encoder():
    return load_minilm()


def test_minilm_reports_after_every_batch_and_returns_the_same_vectors(encoder):
    stream = io.StringIO()
    vectors = encoder.encode(TEXTS, batch_size=2, progress=stream)
    what = "embedding 5 texts with all-MiniLM-L6-v2"
    assert (
        stream.getvalue() == "".join(f"\r{what}: {n} of 5" for n in (0, 2, 4, 5)) + "\n"
    )
    assert np.array_equal(vectors, encoder.encode(TEXTS, batch_size=2))


def test_minilm_is_silent_by_default_off_a_terminal(encoder, capsys):
    encoder.encode(TEXTS)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_the_cache_reports_while_it_computes_and_not_when_it_reads(encoder, tmp_path):
    cached = CachedEncoder(encoder, tmp_path)
    first, second = io.StringIO(), io.StringIO()
    vectors = cached.encode(TEXTS, progress=first)
    again = cached.encode(TEXTS, progress=second)
    assert (
        final(first.getvalue()) == "embedding 5 texts with all-MiniLM-L6-v2: 5 of 5\n"
    )
    assert second.getvalue() == "" and (cached.misses, cached.hits) == (1, 1)
    assert np.array_equal(vectors, again)


def test_a_dense_retriever_passes_progress_to_an_encoder_that_takes_it(encoder):
    stream = io.StringIO()
    dense = DenseRetriever(encoder, TEXTS, progress=stream)
    assert final(stream.getvalue()).endswith(": 5 of 5\n")
    assert dense.search("Which moons does Mars have?", 1)[0].chunk_id == 0

    class Plain:  # an encoder whose encode takes no progress argument, as LSA's
        def encode(self, texts):
            return np.eye(len(texts), dtype=np.float32)

    quiet = io.StringIO()
    plain = DenseRetriever(Plain(), TEXTS, progress=quiet)
    assert quiet.getvalue() == "" and plain.vectors.shape == (5, 5)


def test_the_tools_first_run_shows_the_embedding_on_a_terminal(tmp_path, monkeypatch):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "dock.md").write_text(
        "# Dock\n\nThe dock is in bay four.\n\nThe crane is in bay two.\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("RAGBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stderr = Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    argv = ["ask", "Where is the dock?", "--documents", str(tmp_path / "notes")]
    argv += ["--retriever", "embedder", "--reader", "lexical"]
    assert main(argv, out=io.StringIO()) == 0
    shown = final(stderr.getvalue())
    assert re.fullmatch(
        r"embedding (\d+) texts? with all-MiniLM-L6-v2: \1 of \1\n", shown
    )
    stderr.truncate(0)
    stderr.seek(0)
    assert main(argv, out=io.StringIO()) == 0  # the second run reads the cache
    assert stderr.getvalue() == ""
