"""Give every question of ragbook/data/questions.json a split, once, before measuring.

    python tools/split_questions.py --new-from ID [--test-share 0.7] [--seed 2026]

The questions up to (not including) the question ``ID`` were written and looked at
while the book's earlier defaults were chosen: they all go to dev. The questions from
``ID`` on are new; they are split by stratum (style and kind: one article, two articles,
unanswerable; and the article for single-article ones), each stratum shuffled with a
seeded generator and its first ``round(test_share * n)`` questions sent to test.

A question that already has a split keeps it: the tool refuses to run when any
question has one, so the split is made exactly once and recorded in the file.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "ragbook" / "data" / "questions.json"


def stratum(record: dict) -> str:
    docs = sorted({s["doc"] for piece in record["evidence"] for s in piece})
    if not docs:
        return "unanswerable " + ",".join(sorted(record.get("absent", {})))
    if len(docs) > 1:
        return "two articles"
    return f"{record['style']} {docs[0]}"


def split(records: list[dict], first_new: str, test_share: float, seed: int) -> None:
    ids = [r["id"] for r in records]
    if first_new not in ids:
        raise SystemExit(f"no question has the id {first_new!r}")
    if any("split" in r for r in records):
        raise SystemExit("the questions already have splits; a split is made once")
    start = ids.index(first_new)
    for record in records[:start]:
        record["split"] = "dev"
    strata: dict[str, list[dict]] = defaultdict(list)
    for record in records[start:]:
        strata[stratum(record)].append(record)
    for name in sorted(strata):
        members = sorted(strata[name], key=lambda r: r["id"])
        random.Random(f"{seed} {name}").shuffle(members)
        n_test = round(test_share * len(members))
        for position, record in enumerate(members):
            record["split"] = "test" if position < n_test else "dev"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-from", required=True, metavar="ID")
    parser.add_argument("--test-share", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    if not 0 < args.test_share < 1:
        raise SystemExit("--test-share must lie strictly between 0 and 1")
    data = json.loads(PATH.read_text(encoding="utf-8"))
    split(data["questions"], args.new_from, args.test_share, args.seed)
    data["split"] = (
        f"dev: the {[r['id'] for r in data['questions']].index(args.new_from)} "
        f"questions before {args.new_from} (looked at while earlier defaults were "
        f"chosen) and part of the new ones; test: a share of {args.test_share} of each "
        f"stratum of the new questions (tools/split_questions.py, seed {args.seed}). "
        "Fixed before any measurement on the new questions."
    )
    PATH.write_text(
        json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    counts: dict[str, int] = defaultdict(int)
    for record in data["questions"]:
        counts[record["split"]] += 1
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
