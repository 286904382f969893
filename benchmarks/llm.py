"""The local language models, measured: load time, time to the first token,
prefill and generation speed, time per five-passage answer, with 1 and 2 threads;
generation against the bound memory bandwidth sets; the instruction prefix kept in the
cache across questions; the tool's whole answer with its cited reader
(``ragbook ask --reader cited``: retrieval, the sentence ranking, the structured reply
and its model check), with each answer's prompt tokens, time to the first token and
generation speed; and chapter 8's reranker, the model's relevance of each of fusion's
top 20 chunks, in seconds a query.

    .venv/bin/python benchmarks/llm.py [--models qwen2.5-0.5b qwen2.5-1.5b]
                                       [--threads 1 2] [--questions 4]
    .venv/bin/python benchmarks/llm.py --quick --output /tmp/llm.json   # smoke run

Generation is memory-bound: every new token reads every weight once, so tokens/s cannot
exceed bandwidth / (bytes of weights). The bandwidth is measured here as numpy copies
(STREAM's "copy": bytes read plus bytes written, per second) run on as many threads as
the model uses, and the weights' bytes are taken as the GGUF file's size (the 4-bit
weights are nearly all of it). Results go to benchmarks/results/llm.json, which chapter
10 reads.

Targets: a five-passage answer within 4 s with the 1.5B model on 2 threads (the median
over the questions), generation at 70 % or more of the bandwidth bound, and the tool's
cited answer with the 1.5B model within 8 s (the median over the questions).

``--quick`` runs every part on the 0.5B model, one thread, one question and 8 new
tokens: it proves the script runs on the committed code and writes every key, and its
timings say nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import (
    RESULTS_DIR,
    Targets,
    heading,
    load_average,
    note,
    run_info,
    table,
    write_results,
)  # noqa: E402

from ragbook import llm  # noqa: E402
from ragbook.retrieval.bm25 import BM25  # noqa: E402
from ragbook.indexing.chunking import sentence_chunks  # noqa: E402
from ragbook.corpus.documents import load_corpus  # noqa: E402
from ragbook.generation.prompts import build_prompt, sources_from_chunks  # noqa: E402

QUESTIONS = [
    "How long is a year on Venus?",
    "Who discovered Triton?",
    "What is the Great Red Spot?",
    "How many moons does Mars have?",
    "What is Sputnik Planitia?",
    "How hot is the surface of Mercury?",
]


def copy_bandwidth(threads: int, megabytes: int = 512, repeats: int = 5) -> float:
    """Bytes per second moved by ``threads`` concurrent numpy copies (read + write),
    best of ``repeats``."""
    n = megabytes * (1 << 20) // 8 // threads
    sources = [np.ones(n) for _ in range(threads)]
    targets = [np.empty(n) for _ in range(threads)]
    best = float("inf")
    for _ in range(repeats):
        workers = [
            threading.Thread(target=np.copyto, args=(t, s))
            for s, t in zip(sources, targets)
        ]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = min(best, time.perf_counter() - start)
    return 2 * n * 8 * threads / best


def prompts(count: int):
    documents = load_corpus()
    chunks = sentence_chunks(documents, 100)
    bm25 = BM25.from_texts([c.indexed_text for c in chunks])
    out = []
    for question in QUESTIONS[:count]:
        top = [chunks[h.chunk_id] for h in bm25.search(question, 5)]
        out.append(build_prompt(question, sources_from_chunks(top)))
    return out


def measure(name: str, threads: int, cases, max_tokens: int) -> dict:
    started = time.perf_counter()
    model = llm.LocalModel(name, records=None, threads=threads)
    model.llama  # noqa: B018 - load now, timed
    load_s = time.perf_counter() - started
    generator = llm.LLMGenerator(model, max_tokens=max_tokens)
    generator(cases[0])  # warm-up: page cache, thread pool
    rows = []
    for prompt in cases:
        generator(prompt)
        g = generator.last
        rows.append(
            {
                "question": prompt.question,
                "prompt_tokens": g.prompt_tokens,
                "completion_tokens": g.completion_tokens,
                "first_token_s": g.seconds_to_first_token,
                "total_s": g.seconds,
                "prefill_tokens_per_s": g.prompt_tokens / g.seconds_to_first_token,
                "generation_tokens_per_s": g.tokens_per_second,
            }
        )
    reuse = llm.LocalModel(name, records=None, threads=threads, reuse_prefix=True)
    reused = llm.LLMGenerator(reuse, max_tokens=max_tokens)
    reused(cases[-1])
    with_reuse = []
    for prompt in cases:
        reused(prompt)
        with_reuse.append(
            {
                "first_token_s": reused.last.seconds_to_first_token,
                "reused_tokens": reused.last.reused_tokens,
            }
        )
    del reuse, reused, generator, model
    return {
        "model": name,
        "threads": threads,
        "load_s": load_s,
        "answers": rows,
        "prefix_reuse": with_reuse,
    }


def measure_cited(name: str, count: int) -> dict:
    """The tool's whole answer with the cited reader, as ``ragbook ask --reader cited``
    gives it (the model's default threads), per question: wall seconds, and from the
    structured reply its prompt tokens, time to the first token and generation
    speed."""
    from ragbook.cli import options as cli

    started = time.perf_counter()
    args = cli.build_parser().parse_args(
        ["ask", QUESTIONS[0], "--reader", "cited", "--model", name]
    )
    cli.resolve_defaults(args)
    pipeline = cli.build_pipeline(
        args
    )  # the tool's own: its retrieval, glossary, cache
    pipeline.index(load_corpus())
    index_s = time.perf_counter() - started
    reader = pipeline._generate
    replies = []
    asked = reader.model.structured_reply

    def keep(*args, **kwargs):
        replies.append(asked(*args, **kwargs))
        return replies[-1]

    reader.model.structured_reply = keep
    pipeline.answer(QUESTIONS[0])  # warm-up: the model loaded, page cache
    rows = []
    for question in QUESTIONS[:count]:
        replies.clear()
        start = time.perf_counter()
        answer = pipeline.answer(question).answer
        total = time.perf_counter() - start
        if not replies:
            raise RuntimeError(
                f"the cited reader asked the model nothing for {question!r}"
            )
        r = replies[-1]
        generating = r["seconds"] - r["seconds_to_first_token"]
        rows.append(
            {
                "question": question,
                "answer": answer,
                "total_s": total,
                "prompt_tokens": r["prompt_tokens"],
                "completion_tokens": r["completion_tokens"],
                "first_token_s": r["seconds_to_first_token"],
                "reply_s": r["seconds"],
                "generation_tokens_per_s": (
                    (r["completion_tokens"] - 1) / generating
                    if generating > 0
                    else float("nan")
                ),
            }
        )
    return {
        "model": name,
        "threads": reader.model.threads,
        "index_s": index_s,
        "answers": rows,
        "median_total_s": median(rows, "total_s"),
        "median_prompt_tokens": median(rows, "prompt_tokens"),
        "median_first_token_s": median(rows, "first_token_s"),
        "median_generation_tokens_per_s": median(rows, "generation_tokens_per_s"),
    }


def measure_rerank(name: str, count: int, depth: int) -> dict:
    """Chapter 8's reranker: the model's relevance (logit Yes - logit No) of each of
    fusion's top ``depth`` chunks (BM25 and MiniLM by RRF, sentence chunks of 100
    words), one call per candidate, per question: wall seconds for the whole list."""
    from ragbook.retrieval.dense import DenseRetriever
    from ragbook.retrieval.embedder import load_minilm
    from ragbook.retrieval.fusion import HybridRetriever

    chunks = sentence_chunks(load_corpus(), 100)
    texts = [c.indexed_text for c in chunks]
    fusion = HybridRetriever(
        [BM25.from_texts(texts), DenseRetriever(load_minilm(), texts)], c=60, depth=50
    )
    model = llm.LocalModel(name)
    model.relevance(QUESTIONS[0], chunks[0].text)  # warm-up: the model loaded
    rows = []
    for question in QUESTIONS[:count]:
        candidates = [
            chunks[hit.chunk_id].text for hit in fusion.search(question, depth)
        ]
        start = time.perf_counter()
        for text in candidates:
            model.relevance(question, text)
        seconds = time.perf_counter() - start
        rows.append(
            {
                "question": question,
                "candidates": len(candidates),
                "candidate_tokens": int(
                    np.mean([model.count_tokens(text) for text in candidates])
                ),
                "query_s": seconds,
                "candidate_s": seconds / len(candidates),
            }
        )
    return {
        "model": name,
        "threads": model.threads,
        "depth": depth,
        "answers": rows,
        "median_query_s": median(rows, "query_s"),
        "median_candidate_s": median(rows, "candidate_s"),
    }


def median(rows, key):
    return float(np.median([r[key] for r in rows if r[key] == r[key]]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models",
        nargs="+",
        default=["qwen2.5-0.5b", "qwen2.5-1.5b"],
        choices=sorted(llm.MODELS),
    )
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--output", default=os.path.join(RESULTS_DIR, "llm.json"))
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: the 0.5B model, 1 thread, 1 question, 8 new tokens",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.models, args.threads = ["qwen2.5-0.5b"], [1]
        args.questions, args.max_tokens = 1, 8
    if not 1 <= args.questions <= len(QUESTIONS) or min(args.threads) < 1:
        parser.error(
            f"--questions must be 1..{len(QUESTIONS)} and --threads at least 1"
        )
    import llama_cpp

    run = run_info("llm", argv, vars(args), ["llama-cpp-python", "numpy"])
    started = time.perf_counter()
    cases = prompts(args.questions)
    heading(
        "Local language models: five-passage answers (BM25 top 5 of sentence chunks)"
    )
    bandwidth = {t: copy_bandwidth(t) for t in sorted(set(args.threads))}
    for t, b in bandwidth.items():
        print(f"copy bandwidth with {t} thread(s): {b / 1e9:.1f} GB/s")
    targets, results, rows = Targets(), [], []
    for name in args.models:
        size = llm.MODELS[name].size
        for threads in args.threads:
            note(f"{name}, {threads} thread(s)")
            r = measure(name, threads, cases, args.max_tokens)
            gen = median(r["answers"], "generation_tokens_per_s")
            bound = bandwidth[threads] / size
            r.update(
                {
                    "median_total_s": median(r["answers"], "total_s"),
                    "median_first_token_s": median(r["answers"], "first_token_s"),
                    "median_prefill_tokens_per_s": median(
                        r["answers"], "prefill_tokens_per_s"
                    ),
                    "median_generation_tokens_per_s": gen,
                    "bandwidth_bytes_per_s": bandwidth[threads],
                    "bound_tokens_per_s": bound,
                    "share_of_bound": gen / bound,
                    "median_first_token_reused_s": median(
                        r["prefix_reuse"], "first_token_s"
                    ),
                }
            )
            results.append(r)
            rows.append(
                [
                    name,
                    threads,
                    r["load_s"],
                    r["median_first_token_s"],
                    r["median_first_token_reused_s"],
                    r["median_prefill_tokens_per_s"],
                    gen,
                    bound,
                    r["share_of_bound"],
                    r["median_total_s"],
                ]
            )
    cited_model = "qwen2.5-0.5b" if args.quick else "qwen2.5-1.5b"
    note(f"the tool's cited reader, {cited_model}")
    cited = measure_cited(cited_model, args.questions)
    note(f"chapter 8's reranker, {cited_model}")
    rerank = measure_rerank(cited_model, args.questions, 4 if args.quick else 20)
    table(
        [
            "model",
            "threads",
            "load s",
            "first token s",
            "with prefix reuse s",
            "prefill tok/s",
            "generation tok/s",
            "bound tok/s",
            "share of bound",
            "answer s",
        ],
        rows,
    )
    table(
        [
            "cited reader",
            "threads",
            "answer s",
            "prompt tokens",
            "first token s",
            "generation tok/s",
        ],
        [
            [
                cited["model"],
                cited["threads"],
                cited["median_total_s"],
                cited["median_prompt_tokens"],
                cited["median_first_token_s"],
                cited["median_generation_tokens_per_s"],
            ]
        ],
    )
    table(
        ["reranker", "threads", "candidates", "query s", "s a candidate"],
        [
            [
                rerank["model"],
                rerank["threads"],
                rerank["depth"],
                rerank["median_query_s"],
                rerank["median_candidate_s"],
            ]
        ],
    )
    print("targets:")
    if cited["model"] == "qwen2.5-1.5b":
        targets.check(
            "the tool's cited answer with the 1.5B model in at most 8 s",
            cited["median_total_s"] / 8.0,
            1.0,
            detail=(
                f"median {cited['median_total_s']:.2f} s over "
                f"{len(cited['answers'])} questions, {cited['threads']} threads"
            ),
        )
    for r in results:
        if r["model"] == "qwen2.5-1.5b" and r["threads"] == 2:
            targets.check(
                "1.5B, 2 threads: a five-passage answer in at most 4 s",
                r["median_total_s"] / 4.0,
                1.0,
                detail=(
                    f"median {r['median_total_s']:.2f} s over "
                    f"{len(r['answers'])} questions"
                ),
            )
        if r["threads"] == max(args.threads):
            targets.check(
                (
                    f"{r['model']}, {r['threads']} threads: generation at least 70 % "
                    "of the bandwidth bound"
                ),
                0.70 / r["share_of_bound"],
                1.0,
                detail=(
                    f"{r['median_generation_tokens_per_s']:.1f} of "
                    f"{r['bound_tokens_per_s']:.1f} tok/s, "
                    f"{r['share_of_bound']:.0%}"
                ),
            )
    run["load_average_end"] = load_average()
    run["duration_s"] = time.perf_counter() - started
    run["notes"].append(
        f"llama.cpp system info: {llama_cpp.llama_print_system_info().decode().strip()}"
    )
    write_results(
        args.output,
        {
            "run": run,
            "quick": args.quick,
            "results": results,
            "cited": cited,
            "rerank": rerank,
            "targets": targets.records,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
