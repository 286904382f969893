"""``ragbook evaluate``: retrieval and answers measured on the labelled questions of the
bundled corpus, with bootstrap intervals and a figure of recall against k (chapter
14).
"""

from __future__ import annotations

from ..corpus.documents import load_corpus
from ..progress import reporter
from .options import build_pipeline, describe_setup

__all__ = ["evaluate", "PRINTED_MEASURES"]

PRINTED_MEASURES = (  # what evaluate prints, in the words of ragbook.evaluation.answers
    ("exact_match", "exact match"),
    ("f1", "token F1"),
    ("contains", "contains an accepted answer"),
    ("correct", "correct (refusals for unanswerable)"),
    ("grounded", "correct and grounded"),
)


def evaluate(args, out) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..corpus.labels import load_questions
    from ..evaluation.intervals import bootstrap_interval
    from ..evaluation.metrics import evaluate_retrieval
    from ..evaluation.end_to_end import evaluate_answers

    documents = load_corpus()
    questions = load_questions(documents, split=args.split)
    pipeline = build_pipeline(args)
    pipeline.index(documents)
    ks = tuple(range(1, 11))
    rewrite = pipeline.glossary or (lambda question: question)
    report = evaluate_retrieval(
        questions,
        lambda q, k: pipeline.retriever.search(rewrite(q), k),
        pipeline.chunks,
        ks=ks,
    )
    print(
        f"retrieval ({describe_setup(args)}, {args.chunker} chunks of "
        f"{args.chunk_words} words, {len(pipeline.chunks)} chunks)",
        file=out,
    )
    print(report.table(), file=out)
    what = f"answering {len(questions)} labelled questions"
    with reporter(None, what, len(questions)) as progress:

        def answer(question: str):
            result = pipeline.answer(question)
            progress.update(progress.done + 1)
            return result

        answers = evaluate_answers(questions, answer)
    print(
        f"\nanswers ({args.reader} reader, "
        + (
            f"abstaining below {pipeline.reader_abstain_below}, "
            if pipeline.reader_abstain_below is not None
            else ""
        )
        + f"k = {args.k}), {answers.questions} {args.split} questions, "
        "95% bootstrap intervals:",
        file=out,
    )
    for measure, label in PRINTED_MEASURES:
        low, high = bootstrap_interval(answers.values(measure))
        print(
            f"  {label:36} {answers.mean(measure):.3f}  [{low:.3f}, {high:.3f}]",
            file=out,
        )
    print(
        f"  evidence in the prompt r = {answers.r:.3f}; correct and grounded with it "
        f"a = {answers.a:.3f}, without it b = {answers.b:.3f}",
        file=out,
    )
    print(
        f"  measured {answers.accuracy:.3f} = r a + (1 - r) b = {answers.composed:.3f}",
        file=out,
    )
    print(
        f"  answered {answers.answered}; refused {answers.refused_unanswerable} "
        f"of {answers.unanswerable} unanswerable",
        file=out,
    )
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(ks, [report.mean(f"recall@{k}") for k in ks], "-o")
    ax.set_xlabel("k")
    ax.set_ylabel("recall@k")
    ax.set_ylim(0, 1)
    ax.set_title(f"{args.retriever} on the labelled questions")
    fig.tight_layout()
    fig.savefig(args.figure, dpi=120)
    print(f"\nfigure written to {args.figure}", file=out)
    return 0
