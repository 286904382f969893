"""The book's recorded generations (ragbook/data/generations/*.jsonl): check them
against the model, or make them anew.

usage:
    python tools/llm_records.py check [--sample 20] [--structured-sample 5]
                                  [--minimum 0.95]
        Regenerate a fixed sample of the recorded chat completions with the real model
        (the cache emptied before each, greedy, the recorded parameters) and compare the
        text byte for byte. Where the two differ, measure the recorded reply against
        the model here (LocalModel.reply_margins): it counts as the model's when every
        token is the model's top choice or within NEAR_TIE logits of it, a tie that
        another CPU's float sums can break the other way (records made on one CPU type
        and checked on another part at such ties). Prints both counts and every
        difference; exits 1 when the share identical or near-tied is below --minimum.
        The sample is spread over every record file: the records with the smallest keys
        (SHA-256 of model and request, so a fixed choice that favours no chapter).
        --structured-sample structured replies (ragbook.generation.cited: a reply under
        a grammar and its token probabilities) are regenerated too and count in the
        share: the same text and the same probabilities, or every probability within
        NEAR_TIE.
    python tools/llm_records.py regenerate
        Delete every record file, then re-execute every chapter that uses the model
        (tools/make_notebook.sh), which computes each request live and records it.
    python tools/llm_records.py forget MODEL --max-tokens N
        Delete the chat records of MODEL made with max_tokens N (e.g. timings measured
        on a busy machine), so that the next run of their chapter makes them again.
    python tools/llm_records.py prune
        Re-execute every chapter that uses the model (replaying only), note which
        records they read, and delete the others (requests no chapter makes any more).
    python tools/llm_records.py summary
        How many records of each kind, per model, and who made them.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ragbook import llm  # noqa: E402

FOLDER = ROOT / "ragbook" / "data" / "generations"
# Seen on records made on other CPUs: the largest margin of a reply that parted from
# the regenerated one was 0.26 logits; one changed date in a reply measured 7.1.
NEAR_TIE = 0.5


def record_files() -> list[Path]:
    return sorted(FOLDER.glob("*.jsonl"))


def summary() -> int:
    for path in record_files():
        entries = llm.Records(path).entries()
        kinds = collections.Counter(e["request"]["kind"] for e in entries)
        makers = collections.Counter(
            f"{e['made_by'].get('runtime')} on {e['made_by'].get('machine')}"
            for e in entries
        )
        print(
            f"{path.name}: {len(entries)} records "
            f"({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})"
        )
        for maker, n in makers.most_common():
            print(f"    {n} made by {maker}")
    return 0


def model_for(models: dict, name: str, request: dict) -> llm.LocalModel:
    """The model that made ``request`` (its context size and seed), loaded once."""
    key = (name, request["n_ctx"], request["seed"])
    if key not in models:
        models[key] = llm.LocalModel(
            name, records=None, n_ctx=request["n_ctx"], seed=request["seed"]
        )
    return models[key]


def check_structured(sample: int, models: dict) -> tuple[int, int, int]:
    """Regenerate ``sample`` recorded structured replies (kind "structured": a reply
    under a grammar and its token probabilities; ragbook.generation.cited) and compare.
    Identical: the same text and the same probabilities. Near: the same text, every
    probability within NEAR_TIE of the recorded one (the last bits of a float sum
    differ across CPU types). A text that differs counts against the share: a grammar
    masks tokens, so the margins of an unconstrained reply do not apply to it."""
    entries = [
        (path.stem, e)
        for path in record_files()
        for e in llm.Records(path).entries()
        if e["request"]["kind"] == "structured"
    ]
    if not entries or sample <= 0:
        return 0, 0, 0
    chosen = sorted(entries, key=lambda item: item[1]["key"])[:sample]
    same = near = 0
    for name, entry in chosen:
        request = entry["request"]
        model = model_for(models, name, request)
        now = model.structured_reply(
            request["messages"],
            request["opening"],
            request["refusal"],
            request["grammar"],
            request["max_tokens"],
            closed=request["closed"],
            answer_ends=request["answer_ends"],
        )
        recorded = entry["result"]

        def numbers(result):
            return [result["refusal_logprob"]] + [
                v for part in ("answer", "closed") for _, v in result[part] or []
            ]

        if now["text"] == recorded["text"] and numbers(now) == numbers(recorded):
            same += 1
            continue
        gap = (
            max(abs(a - b) for a, b in zip(numbers(now), numbers(recorded)))
            if len(numbers(now)) == len(numbers(recorded))
            else float("inf")
        )
        tied = now["text"] == recorded["text"] and gap <= NEAR_TIE
        near += tied
        print(
            f"DIFFERENT {name} {entry['key'][:12]} (structured; made on "
            f"{entry['made_by'].get('machine')}): largest change of a "
            f"log-probability {gap:.3f}; "
            + ("the same text" if tied else "NOT the model's reply")
            + f"\n  recorded: {recorded['text']!r}\n  now:      {now['text']!r}"
        )
    return same, near, len(chosen)


def check(sample: int, minimum: float, structured_sample: int = 5) -> int:
    files = record_files()
    chats = {
        path: [e for e in llm.Records(path).entries() if e["request"]["kind"] == "chat"]
        for path in files
    }
    total = sum(len(v) for v in chats.values())
    if total == 0:
        print("no recorded chat completions to check", file=sys.stderr)
        return 1
    chosen = []
    for (
        path,
        entries,
    ) in chats.items():  # each file's share of the sample, at least one record
        share = max(1, round(sample * len(entries) / total)) if entries else 0
        chosen += [(path.stem, e) for e in entries[:share]]
    same = near = 0
    started = time.perf_counter()
    models: dict[tuple, llm.LocalModel] = {}
    for name, entry in chosen:
        request = entry["request"]
        model = model_for(models, name, request)
        text = model.chat(request["messages"], request["max_tokens"]).text
        recorded = entry["result"]["text"]
        if text == recorded:
            same += 1
            continue
        margins = model.reply_margins(
            request["messages"], recorded, entry["result"]["finish_reason"] == "stop"
        )
        tied = max(margins) <= NEAR_TIE
        near += tied
        print(
            f"DIFFERENT {name} {entry['key'][:12]} (made on "
            f"{entry['made_by'].get('machine')}, instructions "
            f"{entry['made_by'].get('instructions', 'not recorded')}): the recorded "
            "reply's largest margin "
            f"here is {max(margins):.3f} logits, "
            + ("a near tie" if tied else f"above {NEAR_TIE}: NOT the model's reply")
            + f"\n  recorded: {recorded!r}\n  now:      {text!r}"
        )
    structured_same, structured_near, structured = check_structured(
        structured_sample, models
    )
    same, near = same + structured_same, near + structured_near
    share = (same + near) / (len(chosen) + structured)
    runtime = next(iter(models.values())).runtime()
    print(
        f"{same} of {len(chosen) + structured} sampled generations "
        f"({structured} of them structured) regenerated byte-identical and "
        f"{near} more parted only at near ties (within {NEAR_TIE} logits of the top "
        f"choice at every token): {share:.0%}, with {runtime['runtime']} on "
        f"{runtime['machine']} ({runtime['instructions']}) in "
        f"{time.perf_counter() - started:.0f} s "
        f"(minimum {minimum:.0%}; {total} chat records in all)"
    )
    return 0 if share >= minimum else 1


def regenerate() -> int:
    chapters = chapters_using_the_model()
    for path in record_files():
        path.unlink()
    for chapter in chapters:
        print(f"== {chapter.name}", flush=True)
        subprocess.run(
            ["sh", str(ROOT / "tools" / "make_notebook.sh"), str(chapter)],
            check=True,
            cwd=ROOT,
        )
    return summary()


def chapters_using_the_model() -> list[Path]:
    return sorted(
        p for p in (ROOT / "chapters").glob("*.md") if "book_records" in p.read_text()
    )


def prune() -> int:
    import os
    import tempfile

    handle, log = tempfile.mkstemp(prefix="ragbook-used-", suffix=".txt")
    os.close(handle)
    environment = dict(os.environ, RAGBOOK_LLM_USED=log, RAGBOOK_LLM_RECORDS="only")
    try:
        for chapter in chapters_using_the_model():
            print(f"== {chapter.name}", flush=True)
            subprocess.run(
                ["sh", str(ROOT / "tools" / "make_notebook.sh"), str(chapter)],
                check=True,
                cwd=ROOT,
                env=environment,
            )
        used: dict[str, set[str]] = collections.defaultdict(set)
        for line in Path(log).read_text(encoding="utf-8").splitlines():
            name, key = line.split()
            used[name].add(key)
    finally:
        os.unlink(log)
    for path in record_files():
        records = llm.Records(path)
        stale = [e["key"] for e in records.entries() if e["key"] not in used[path.name]]
        print(f"{path.name}: {records.remove(stale)} records no chapter reads, dropped")
    return summary()


def forget(model: str, max_tokens: int) -> int:
    records = llm.Records(FOLDER / f"{model}.jsonl")
    keys = [
        e["key"]
        for e in records.entries()
        if e["request"]["kind"] == "chat" and e["request"]["max_tokens"] == max_tokens
    ]
    dropped = records.remove(keys)
    print(f"dropped {dropped} records of {model} with max_tokens {max_tokens}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    checking = commands.add_parser("check")
    checking.add_argument("--sample", type=int, default=20)
    checking.add_argument("--minimum", type=float, default=0.95)
    checking.add_argument("--structured-sample", type=int, default=5)
    commands.add_parser("regenerate")
    commands.add_parser("summary")
    commands.add_parser("prune")
    forgetting = commands.add_parser("forget")
    forgetting.add_argument("model", choices=sorted(llm.MODELS))
    forgetting.add_argument("--max-tokens", type=int, required=True)
    options = parser.parse_args()
    if options.command == "check":
        if options.sample < 1 or not 0 < options.minimum <= 1:
            parser.error("--sample must be at least 1 and --minimum in (0, 1]")
        return check(options.sample, options.minimum, options.structured_sample)
    if options.command == "prune":
        return prune()
    if options.command == "forget":
        return forget(options.model, options.max_tokens)
    return regenerate() if options.command == "regenerate" else summary()


if __name__ == "__main__":
    sys.exit(main())
