"""The pipeline, its evaluation decomposition, and the command-line tool."""

import io
import re
import subprocess
import sys

import pytest

from ragbook.cli import main
from ragbook.corpus.documents import load_corpus
from ragbook.generation.generators import ABSTAIN, ScriptedGenerator
from ragbook.corpus.labels import load_questions
from ragbook.system.rag import RAGPipeline
from ragbook.evaluation.end_to_end import evaluate_answers, quotes_evidence
from ragbook.generation.readers import SEMANTIC_ABSTAIN_BELOW

DOCS = load_corpus()
QUESTIONS = load_questions(DOCS)


@pytest.fixture(scope="module")
def pipeline():
    p = RAGPipeline()
    assert p.index(DOCS) == 377
    return p


def test_query_has_the_tutorial_shape(pipeline):
    result = pipeline.query("Who discovered Triton?", k=3)
    assert set(result) == {"question", "answer", "prompt", "retrieved"}
    assert len(result["retrieved"]) == 3 and set(result["retrieved"][0]) == {
        "chunk",
        "source",
        "score",
        "index",
    }
    assert "Lassell" in result["answer"] and result["answer"].endswith("[1].")
    assert result["retrieved"][0]["source"].startswith("Neptune")


def test_answer_question_carries_prompt_ranks_and_checks(pipeline):
    answer = pipeline.answer("What moons does Mars have?")
    assert [r.rank for r in answer.retrieved] == [1, 2, 3, 4, 5]
    assert answer.retrieved[0].score >= answer.retrieved[-1].score
    assert (
        answer.supported
        and "moons" in answer.answer
        and answer.answer.rstrip(".").endswith("]")
    )
    assert len(answer.prompt.sources) == 5


def test_budget_and_allowed_chunks(pipeline):
    small = pipeline.answer("Who discovered Triton?", budget=400)
    assert 0 < len(small.prompt.sources) < 5 and len(small.retrieved) == len(
        small.prompt.sources
    )
    not_neptune = [c.id for c in pipeline.chunks if c.doc_id != "neptune"]
    filtered = pipeline.answer("Who discovered Triton?", allowed=not_neptune)
    assert all(r.chunk.doc_id != "neptune" for r in filtered.retrieved)


def test_scripted_generator_and_unsupported_answers():
    p = RAGPipeline(
        generator=ScriptedGenerator(["Triton was found by Galle in 1850 [1].", ABSTAIN])
    )
    p.index(DOCS)
    wrong = p.answer("Who discovered Triton?")
    assert not wrong.supported and wrong.checks[0].unsupported_numbers == ("1850",)
    refused = p.answer("Who discovered Triton?")
    assert refused.abstained and not refused.supported and refused.checks == ()


def test_index_accepts_texts_with_names_and_refuses_bad_input():
    p = RAGPipeline(chunker="windows", words=20, retriever="tfidf")
    assert (
        p.index(
            [
                "# Notes\n\nThe dock is in bay four. Robots dock when the battery "
                "is low."
            ],
            names=["notes"],
        )
        == 1
    )
    assert "bay four" in p.query("Where is the dock?", 1)["retrieved"][0]["chunk"]
    with pytest.raises(ValueError, match="no documents"):
        p.index([])
    with pytest.raises(ValueError, match="unknown retriever"):
        RAGPipeline(retriever="magic")
    with pytest.raises(RuntimeError, match="nothing is indexed"):
        RAGPipeline().answer("anything?")


def test_evaluation_decomposes_accuracy(pipeline):
    result = evaluate_answers(QUESTIONS, pipeline.answer)
    assert result.questions == len(QUESTIONS)
    assert result.composed == pytest.approx(
        result.accuracy
    )  # the law of total probability, exactly
    hits = [c for _, r, c in result.outcomes if r]
    assert result.r == pytest.approx(len(hits) / len(QUESTIONS)) and 0 < result.a <= 1
    assert result.unanswerable == sum(not q.answerable for q in QUESTIONS)


def test_quotes_evidence_both_directions():
    question = next(q for q in QUESTIONS if q.text == "Who discovered Triton?")
    span = question.evidence[0].spans[0].text
    assert quotes_evidence(span + " [1].", question)
    assert not quotes_evidence("Galle found it [1].", question)


def test_cli_ask_and_errors(tmp_path, capsys, monkeypatch):
    # the default reader answers as it would for a user: the model installed here (or
    # the semantic reader without it), no records replayed
    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)
    out = io.StringIO()
    assert main(["ask", "Who discovered Triton?", "--reader", "semantic"], out=out) == 0
    text = out.getvalue()
    assert "Lassell" in text and "[1] score" in text and "checks: supported" in text
    (tmp_path / "dock.md").write_text(
        "# Dock\n\nThe dock is in bay four.\n", encoding="utf-8"
    )
    out = io.StringIO()
    assert (
        main(
            [
                "ask",
                "Where is the dock?",
                "--documents",
                str(tmp_path),
                "--show-prompt",
            ],
            out=out,
        )
        == 0
    )
    assert "bay four" in out.getvalue() and "--- prompt ---" in out.getvalue()
    assert main(["ask", "x?", "--documents", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["ask", "x?", "--probes", "3"]) == 2
    assert main(["ask", "x?", "--probes", "1"]) == 2  # named, so it must apply
    with pytest.raises(SystemExit) as exit_info:
        main(["ask", "x?", "-k", "0"])
    assert exit_info.value.code == 2


def test_python_dash_m_runs_the_tool():
    run = subprocess.run(
        [sys.executable, "-m", "ragbook", "ask", "Who discovered Triton?", "-k", "3"]
        + ["--reader", "semantic"],  # a subprocess would find the model if installed
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and "Lassell" in run.stdout


def test_evaluate_answers_one_split_with_intervals(tmp_path):
    out = io.StringIO()
    status = main(
        [
            "evaluate",
            "--split",
            "test",
            "--retriever",
            "bm25",
            "--reader",
            "lexical",
            "--figure",
            str(tmp_path / "figure.png"),
        ],
        out=out,
    )
    text = out.getvalue()
    n_test = sum(q.split == "test" for q in QUESTIONS)
    assert status == 0 and f"{n_test} test questions" in text
    for label in ("exact match", "token F1", "correct and grounded"):
        line = next(line for line in text.splitlines() if label in line)
        value, low, high = (float(x) for x in re.findall(r"\d\.\d{3}", line))
        assert 0 <= low <= value <= high <= 1, line
    refused = re.search(r"refused (\d+) of (\d+) unanswerable", text)
    assert int(refused.group(2)) == sum(
        q.split == "test" and not q.answerable for q in QUESTIONS
    )


def test_evaluate_reads_the_held_out_questions_from_their_own_file(tmp_path):
    import json
    from importlib import resources

    out = io.StringIO()
    arguments = ["evaluate", "--split", "holdout", "--retriever", "bm25"]
    arguments += ["--reader", "lexical", "--figure", str(tmp_path / "figure.png")]
    assert main(arguments, out=out) == 0
    held = json.loads(
        (resources.files("ragbook") / "data" / "holdout.json").read_text("utf-8")
    )["questions"]
    assert f"{len(held)} holdout questions" in out.getvalue()
    refused = re.search(r"refused (\d+) of (\d+) unanswerable", out.getvalue())
    assert int(refused.group(2)) == sum(not r["answers"] for r in held)


def test_evaluate_refuses_an_unknown_split(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--split", "train"])
    assert "invalid choice: 'train'" in capsys.readouterr().err


def test_chat_rewrites_follow_ups_and_stops_at_the_end_of_input(monkeypatch):
    monkeypatch.setattr(
        sys,
        "stdin",
        io.StringIO("How many moons does Mars have?\nWhat about Jupiter?\n\n"),
    )
    out = io.StringIO()
    arguments = ["chat", "--retriever", "bm25", "--reader", "lexical"]
    assert main([*arguments, "--glossary", "none"], out=out) == 0
    text = out.getvalue()
    assert "(asked as: How many moons does Jupiter have?)" in text
    assert "97 moons of Jupiter" in text and text.count("checks: ") == 2


def test_history_reaches_a_generator_that_takes_it_and_costs_budget(pipeline):
    seen = []

    def model(prompt, history=()):
        seen.append((prompt, list(history)))
        return ABSTAIN

    history = [("How many moons does Mars have?", "Two [1].")]
    one = answer_question_of(pipeline, model, "What about Jupiter?", history, 400)
    none = answer_question_of(pipeline, model, "What about Jupiter?", (), 400)
    assert seen[0][1] == history and seen[1][1] == []
    assert len(one.prompt.sources) <= len(none.prompt.sources)
    with pytest.raises(ValueError, match="takes no conversation history"):
        answer_question_of(pipeline, ScriptedGenerator(["x"]), "Q?", history, None)
    with pytest.raises(ValueError, match="no room"):
        answer_question_of(pipeline, model, "Q?", history * 50, 30)


def answer_question_of(pipeline, generator, question, history, budget):
    from ragbook.system.pipeline import answer_question

    return answer_question(
        question,
        pipeline.chunks,
        pipeline.retriever,
        generator,
        k=5,
        budget=budget,
        history=history,
    )


def test_the_readers_with_a_model_default_to_bm25():
    from ragbook.cli.options import build_parser, resolve_defaults

    for reader, retriever in (
        ("quote", "bm25"),
        ("llm", "bm25"),
        ("semantic", "hybrid"),
        ("combined", "hybrid"),
    ):
        args = build_parser().parse_args(["ask", "Q?", "--reader", reader])
        resolve_defaults(args)
        assert args.retriever == retriever
    args = build_parser().parse_args(
        ["ask", "Q?", "--reader", "quote", "--retriever", "lsa"]
    )
    resolve_defaults(args)
    assert args.retriever == "lsa"


def test_the_default_reader_is_cited_where_the_model_runs_and_named_when_not(
    monkeypatch,
):
    from ragbook.cli import options as cli

    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)  # no records named
    monkeypatch.setattr(cli, "llm_missing", lambda model=None: None)
    args = cli.build_parser().parse_args(["ask", "Q?"])
    cli.resolve_defaults(args)
    assert (args.reader, args.retriever, args.fallback) == ("cited", "hybrid", None)
    assert cli.glossary_choice(args) == "astronomy"
    assert cli.describe_setup(args) == (
        "hybrid, cited reader (the default model), glossary astronomy"
    )
    monkeypatch.setattr(cli, "llm_missing", lambda model=None: "no runtime here")
    args = cli.build_parser().parse_args(["ask", "Q?"])
    cli.resolve_defaults(args)
    assert (args.reader, args.retriever) == ("semantic", "hybrid")
    setup = cli.describe_setup(args)
    assert setup.startswith("hybrid, semantic reader, glossary astronomy [")
    assert "needs the language model" in setup and "(no runtime here)" in setup
    # a reader the user names is kept, and nothing is said
    args = cli.build_parser().parse_args(["ask", "Q?", "--reader", "lexical"])
    cli.resolve_defaults(args)
    assert (args.reader, args.fallback) == ("lexical", None)


def test_the_combined_reader_is_built_from_its_parts(tmp_path):
    from ragbook.generation.reader_checks import ModelCheck, SubjectCheck
    from ragbook.generation.readers import WORKED_EXAMPLES, FallbackReader

    documents = [
        "# Vega\n\nVega is a bright star in Lyra.\n",
        "# The Altair\n\nAltair is a star in Aquila.\n",
    ]
    pipeline = RAGPipeline(reader="combined", retriever="bm25")
    pipeline.index(documents, names=["vega", "altair"])
    check = pipeline._generate
    # the model checks the answer last, refusing when No is likelier than Yes, and the
    # model that checks is the one that reads
    assert isinstance(check, ModelCheck) and check.refuse_below == 0
    reader = check.reader
    assert isinstance(reader, FallbackReader)
    assert reader.second.reader.abstain_below == SEMANTIC_ABSTAIN_BELOW
    model = reader.first.reader.generator
    assert check.model is model.model
    # the model reads after the two worked examples, each its question and its answer
    assert len(model.examples) == len(WORKED_EXAMPLES) == 2
    for (shown, answer), (prompt, expected) in zip(model.examples, WORKED_EXAMPLES):
        assert prompt.question in shown and answer == expected
    assert isinstance(reader.first, SubjectCheck) and isinstance(
        reader.second, SubjectCheck
    )
    assert reader.first.subjects == ("Vega", "Altair")
    assert pipeline.reader_abstain_below == SEMANTIC_ABSTAIN_BELOW
    with pytest.raises(ValueError, match="llm, quote, combined, cited readers only"):
        RAGPipeline(reader="semantic", model="qwen2.5-0.5b")


def test_the_tool_probes_four_lists_by_default_and_never_more_than_there_are():
    from ragbook.cli import options as cli

    def probes(*extra):
        args = cli.build_parser().parse_args(
            ["ask", "Q?", "--reader", "lexical", "--retriever", "lsa", *extra]
        )
        cli.resolve_defaults(args)
        return cli.build_pipeline(args).probes

    assert probes("--lists", "16") == 4  # chapter 7's choice on the dev questions
    assert probes("--lists", "3") == 3
    assert probes("--lists", "16", "--probes", "2") == 2


def test_a_model_is_a_name_or_a_local_model():
    with pytest.raises(ValueError, match="cited readers only"):
        RAGPipeline(reader="lexical", model="qwen2.5-0.5b")
    with pytest.raises(TypeError, match="LocalModel"):
        RAGPipeline(reader="cited", model=object())


def test_the_cited_reader_is_built_as_chapter_14_chose_it(tmp_path):
    from ragbook.generation.cited import REFUSE_BELOW, CitedReader

    pipeline = RAGPipeline(reader="cited", retriever="bm25")
    pipeline.index(
        ["# Vega\n\nVega is a bright star.\n", "# Altair\n\nAltair is a star.\n"],
        names=["vega", "altair"],
    )
    reader = pipeline._generate
    assert isinstance(reader, CitedReader)
    assert (
        (reader.refuse_by, reader.refuse_below)
        == ("none", REFUSE_BELOW)
        == (
            "none",
            None,
        )
    )
    # no model check, no closed-book reading; words the checks reject are quoted
    assert not reader.verify and not reader.closed_book and reader.quote_unsupported
    assert reader.subjects.subjects == ("Vega", "Altair") and reader.ranker is not None
    assert pipeline.reader_abstain_below == REFUSE_BELOW
    assert RAGPipeline(reader="cited", abstain_below=3.5).abstain_below == 3.5


def test_the_cited_answer_prints_the_scores_it_computed_and_no_others():
    # without the closed-book pass the lift is not computed (-inf): not printed
    from ragbook.generation.cited_prompt import CitedAnswer
    from ragbook.generation.cited_prompt import Sentence
    from ragbook.cli.ask import print_cited

    evidence = (Sentence("2.1", 2, "A year on Venus lasts 224.7 Earth days."),)
    reading = CitedAnswer(
        answer="224.7 Earth days [2].",
        refused=False,
        why="",
        words="224.7 Earth days",
        evidence=evidence,
        reply='{"answer": "224.7 Earth days", "evidence": ["2.1"]}',
        scores={"none": 13.98, "confidence": -0.19, "lift": float("-inf")},
    )
    out = io.StringIO()
    print_cited(reading, out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "  scores: none 13.98, confidence -0.19"
    assert "  [2.1] A year on Venus lasts 224.7 Earth days." in lines


def test_a_draft_is_followed_by_the_checked_answer_or_the_refusal():
    """The words streamed after "draft:" are not the answer: the line after them says
    what the checks made of them."""
    from ragbook.generation.cited_prompt import CitedAnswer
    from ragbook.generation.cited_prompt import Sentence
    from ragbook.cli.ask import print_cited

    evidence = (Sentence("1.1", 1, "Two small moons orbit the planet."),)
    answered = CitedAnswer(
        "Two small moons orbit the planet [1].",
        False,
        "",
        "2",
        evidence,
        " 2",
        None,
        quoted=True,
    )
    out = io.StringIO()
    out.write("draft: 2")
    print_cited(answered, out, drafted=True)
    assert out.getvalue().splitlines()[:3] == [
        "draft: 2",
        "(the draft's words cannot be checked; its evidence, quoted)",
        "answer: Two small moons orbit the planet [1].",
    ]
    refused = CitedAnswer(
        "The sources do not contain the answer.",
        True,
        "a number in no sentence it may cite",
        "3",
        evidence,
        " 3",
        None,
    )
    out = io.StringIO()
    out.write("draft: 3")
    print_cited(refused, out, drafted=True)
    assert out.getvalue().splitlines() == [
        "draft: 3",
        "refused (a number in no sentence it may cite): "
        "The sources do not contain the answer.",
    ]


def test_each_claims_checks_are_printed_once_and_named_when_there_are_two():
    from types import SimpleNamespace

    from ragbook.cli.ask import print_checks
    from ragbook.generation.verification import check_answer

    sources = ["Venus takes 224.7 Earth days to orbit.", "Mars has two moons."]
    two = check_answer(
        "Venus orbits in 224.7 Earth days [1]. Mars has 3 moons.", sources
    )
    out = io.StringIO()
    print_checks(SimpleNamespace(abstained=False, checks=two), out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("checks, claim 1 of 2: supported (cites [1]")
    assert lines[1].startswith("checks, claim 2 of 2: NOT supported (cites nothing")
    one = check_answer("Mars has two moons [2].", sources)
    out = io.StringIO()
    print_checks(SimpleNamespace(abstained=False, checks=one), out)
    assert out.getvalue().startswith("checks: supported (cites [2]")
