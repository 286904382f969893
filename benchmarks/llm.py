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

Generation is bounded by memory: every new token reads every weight matrix once, so
tokens/s cannot exceed read bandwidth / (bytes read per token). The read bandwidth is
measured here as numpy sums over 1 GiB (bytes read per second), run on as many threads
as the model uses; the bytes read per token are the GGUF file's tensors, less the token
embedding table when the model has a separate output matrix (a lookup reads one row of
it). STREAM's copy bandwidth (bytes read plus bytes written) is recorded beside it for
comparison. Each row also gives the weights a thread reads per second while
generating: when that is well below what one thread's sum reads, the kernels'
arithmetic, not memory, limits generation. The CPU's instruction sets and
llama.cpp's build are in the run's notes. Results go to benchmarks/results/llm.json,
which chapters 8 and 15 read.

Targets: a five-passage answer within 4 s with the 1.5B model on 2 threads (the median
over the questions), generation at 60 % or more of the read-bandwidth bound, and the
tool's cited answer with the 1.5B model within 6 s (the median over the questions).

``--quick`` runs every part on the 0.5B model, one thread, one question and 8 new
tokens: it proves the script runs on the committed code and writes every key, and its
timings say nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import struct
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


def _best_concurrent(tasks: list[tuple], repeats: int) -> float:
    """The shortest wall time, over ``repeats`` runs, of the calls ``(function,
    *args)`` of ``tasks`` run in one thread each, at once."""
    best = float("inf")
    for _ in range(repeats):
        workers = [threading.Thread(target=f, args=args) for f, *args in tasks]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = min(best, time.perf_counter() - start)
    return best


def copy_bandwidth(threads: int, megabytes: int = 512, repeats: int = 5) -> float:
    """Bytes per second moved by ``threads`` concurrent numpy copies (read + write),
    best of ``repeats``."""
    n = megabytes * (1 << 20) // 8 // threads
    tasks = [(np.copyto, np.empty(n), np.ones(n)) for _ in range(threads)]
    return 2 * n * 8 * threads / _best_concurrent(tasks, repeats)


def read_bandwidth(threads: int, megabytes: int = 1024, repeats: int = 5) -> float:
    """Bytes per second read by ``threads`` concurrent numpy sums, best of
    ``repeats``."""
    n = megabytes * (1 << 20) // 8 // threads
    tasks = [(np.sum, np.ones(n)) for _ in range(threads)]
    return n * 8 * threads / _best_concurrent(tasks, repeats)


_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?"}
_GGUF_SCALARS.update({10: "Q", 11: "q", 12: "d"})


def tensor_bytes(path: str) -> dict[str, int]:
    """{tensor name: bytes} of a GGUF file, from its header (version 2 or 3): each
    tensor's size is the distance from its offset to the next one's."""
    with open(path, "rb") as f:

        def read(code):
            return struct.unpack("<" + code, f.read(struct.calcsize("<" + code)))[0]

        def value(kind):
            if kind == 8:  # a string
                return f.read(read("Q")).decode("utf-8", "replace")
            if kind == 9:  # an array
                item, count = read("I"), read("Q")
                if item in _GGUF_SCALARS:
                    f.seek(struct.calcsize("<" + _GGUF_SCALARS[item]) * count, 1)
                else:
                    for _ in range(count):
                        value(item)
                return None
            return read(_GGUF_SCALARS[kind])

        if f.read(4) != b"GGUF" or read("I") < 2:
            raise ValueError(f"{path} is not a GGUF file of version 2 or later")
        n_tensors, n_values = read("Q"), read("Q")
        alignment = 32
        for _ in range(n_values):
            key = value(8)
            found = value(read("I"))
            if key == "general.alignment":
                alignment = found
        offsets = {}
        for _ in range(n_tensors):
            name = value(8)
            f.seek(8 * read("I") + 4, 1)  # the dimensions, the type
            offsets[name] = read("Q")
        start = -(-f.tell() // alignment) * alignment
    end = os.path.getsize(path) - start
    ordered = sorted(offsets.items(), key=lambda item: item[1])
    return {
        name: (ordered[i + 1][1] if i + 1 < len(ordered) else end) - offset
        for i, (name, offset) in enumerate(ordered)
    }


def bytes_per_token(path: str) -> int:
    """The weights one generated token reads: every tensor but the token embedding
    table, which a separate output matrix leaves to one row's lookup."""
    sizes = tensor_bytes(path)
    if "output.weight" in sizes:
        return sum(sizes.values()) - sizes.get("token_embd.weight", 0)
    return sum(sizes.values())


def cpu_flags() -> str:
    """The vector instruction sets /proc/cpuinfo lists (AVX, AVX-512, AMX ...)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            line = next(x for x in handle if x.startswith("flags"))
    except (OSError, StopIteration):
        return "unknown"
    wanted = ("avx", "amx", "fma", "f16c", "vnni", "bf16")
    return " ".join(f for f in line.split(":", 1)[1].split() if f.startswith(wanted))


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
    bandwidth = {t: read_bandwidth(t) for t in sorted(set(args.threads))}
    copying = {t: copy_bandwidth(t) for t in sorted(set(args.threads))}
    for t, b in bandwidth.items():
        print(
            f"with {t} thread(s): read bandwidth {b / 1e9:.1f} GB/s, copy "
            f"{copying[t] / 1e9:.1f} GB/s"
        )
    targets, results, rows = Targets(), [], []
    for name in args.models:
        path = str(llm.model_file(name, locate=True).path)
        size = bytes_per_token(path)
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
                    "bytes_per_token": size,
                    "bandwidth_bytes_per_s": bandwidth[threads],
                    "copy_bandwidth_bytes_per_s": copying[threads],
                    "bound_tokens_per_s": bound,
                    "share_of_bound": gen / bound,
                    "weights_bytes_per_s_a_thread": gen * size / threads,
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
                    r["weights_bytes_per_s_a_thread"] / 1e9,
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
            "GB/s a thread",
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
            "the tool's cited answer with the 1.5B model in at most 6 s",
            cited["median_total_s"] / 6.0,
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
                    f"{r['model']}, {r['threads']} threads: generation at least 60 % "
                    "of the read-bandwidth bound"
                ),
                0.60 / r["share_of_bound"],
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
    run["notes"].append(f"CPU instruction sets: {cpu_flags()}")
    for r in results:
        alone = bandwidth[1] if 1 in bandwidth else r["bandwidth_bytes_per_s"]
        a_thread = r["weights_bytes_per_s_a_thread"]
        run["notes"].append(
            f"{r['model']}, {r['threads']} thread(s): a generating thread reads "
            f"{a_thread / 1e9:.1f} GB/s of weights, where one thread's sum reads "
            f"{alone / 1e9:.1f} GB/s: "
            + (
                "the kernels' arithmetic limits generation, not memory"
                if a_thread < 0.8 * alone and r["share_of_bound"] < 0.8
                else "memory limits generation"
            )
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
