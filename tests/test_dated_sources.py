"""Dated documents in the tool (ragbook.corpus.orgdocs.read_current_folder): the
current version of each document, the access levels a reader holds, the version and
date in each source's label; and the cited reader settling a disagreement between
dated sources by the newer (ragbook.generation.dated.newest), with a stand-in
model whose reply is set by hand."""

from __future__ import annotations

import datetime
import io

import pytest

from ragbook.cli.ask import read_documents
from ragbook.cli.options import build_parser
from ragbook.corpus.orgdocs import (
    has_metadata,
    label_date,
    plain_title,
    read_current_folder,
)
from ragbook.generation.cited import CitedReader
from ragbook.generation.conflicts import DISAGREE
from ragbook.generation.dated import OLDER
from ragbook.generation.verification import check_answer
from ragbook.generation.prompts import build_prompt
from test_cited import StandIn

OLD = "access: public\nversion: 1\ndate: 2025-09-01\n\n# Refund policy\n\n" + (
    "Unused products may be returned within 30 days of delivery.\n"
)
NEW = "access: public\nversion: 2\ndate: 2026-03-01\n\n# Refund policy\n\n" + (
    "Unused products may be returned within 14 days of delivery.\n"
)


def write(folder, files):
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_the_current_version_is_indexed_under_a_title_with_its_version_and_date(
    tmp_path,
):
    write(
        tmp_path,
        {
            "policy-v1.md": "id: policy\n" + OLD,
            "policy-v2.md": "id: policy\n" + NEW,
            "notes.md": "# Notes\n\nPlain Markdown, readable by anyone.\n",
            "margins.md": OLD.replace("public", "finance").replace(
                "Refund policy", "Margins"
            ),
        },
    )
    folder = read_current_folder(tmp_path)
    assert [(d.id, d.title) for d in folder.documents] == [
        ("notes", "Notes"),
        ("policy", "Refund policy (version 2, 2026-03-01)"),
    ]
    assert "14 days" in folder.documents[1].text and "version" not in (
        folder.documents[1].text
    )
    assert [(d.id, d.meta.version) for d in folder.superseded] == [("policy", 1)]
    assert [(d.id, d.meta.access) for d in folder.withheld] == [("margins", "finance")]
    readable = read_current_folder(tmp_path, ["public", "finance"])
    assert [d.id for d in readable.documents] == ["margins", "notes", "policy"]


def test_labels_and_titles_give_back_the_date_and_the_plain_title():
    label = "Refund policy (version 2, 2026-03-01), Return window"
    assert label_date(label) == datetime.date(2026, 3, 1)
    assert label_date("Venus, Orbit") is None
    assert plain_title("Refund policy (version 2, 2026-03-01)") == "Refund policy"
    assert has_metadata(NEW) and not has_metadata("# Title\n\nA note: with a colon.")


def test_a_folder_that_cannot_be_read_as_it_says_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown access level 'secret'"):
        read_current_folder(tmp_path, ["secret"])
    with pytest.raises(TypeError, match="collection"):
        read_current_folder(tmp_path, "public")
    write(tmp_path, {"a.md": "id: b\n" + OLD, "b.md": "# B\n\nText.\n"})
    with pytest.raises(ValueError, match="two documents with the id 'b'"):
        read_current_folder(tmp_path)
    write(tmp_path, {"a.md": "id: b\n" + OLD.replace("2025-09-01", "2025-09-31")})
    with pytest.raises(ValueError, match="date"):
        read_current_folder(tmp_path)


def test_the_tool_names_each_document_it_leaves_out(tmp_path):
    write(
        tmp_path,
        {
            "policy-v1.md": "id: policy\n" + OLD,
            "policy-v2.md": "id: policy\n" + NEW,
            "staff.md": NEW.replace("public", "staff").replace("Refund", "Staff"),
        },
    )
    args = build_parser().parse_args(["ask", "Q?", "--documents", str(tmp_path)])
    out = io.StringIO()
    documents = read_documents(args, out)
    assert [d.id for d in documents] == ["policy"]
    assert out.getvalue().splitlines() == [
        "left out: policy version 1 of 2025-09-01 (a later version is indexed)",
        "left out: staff (access staff; --access staff to read it)",
    ]
    args = build_parser().parse_args(
        ["ask", "Q?", "--documents", str(tmp_path), "--access", "public", "staff"]
    )
    assert [d.id for d in read_documents(args, io.StringIO())] == ["policy", "staff"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ask", "Q?", "--access", "secret"])


QUESTION = "How many days do I have to return an unused product?"


def dated_prompt(first_date: str, second_date: str):
    return build_prompt(
        QUESTION,
        [
            (
                f"Refund policy (version 1, {first_date}), Return window",
                "Unused products may be returned within 30 days of delivery.",
            ),
            (
                f"Returns (version 1, {second_date}), Return window",
                "Unused products may be returned within 14 days of delivery.",
            ),
        ],
    )


def test_an_answer_from_the_older_source_gives_way_to_the_newer_and_says_so():
    reader = CitedReader(
        StandIn(" 30 days\nEvidence: [1.1]"), closed_book=False, quote_unsupported=False
    )
    prompt = dated_prompt("2025-09-01", "2026-03-01")
    result = reader.read(prompt)
    assert result.answer == (
        "Unused products may be returned within 14 days of delivery [2]. "
        f"{OLDER} Unused products may be returned within 30 days of delivery [1]."
    )
    assert result.followed == "2026-03-01" and result.quoted
    assert [s.id for s in result.evidence] == ["2.1"]
    assert [s.id for s in result.disagree] == ["1.1"]
    # the note is read by the grounding checks as any answer is: every claim holds
    assert all(
        c.supported
        for c in check_answer(result.answer, [s.text for s in prompt.sources])
    )


def test_an_answer_from_the_newer_source_keeps_its_words_and_names_the_older():
    reader = CitedReader(
        StandIn(" 14 days\nEvidence: [2.1]"), closed_book=False, quote_unsupported=False
    )
    result = reader.read(dated_prompt("2025-09-01", "2026-03-01"))
    assert result.answer == (
        f"14 days [2]. {OLDER} Unused products may be returned within 30 days of "
        "delivery [1]."
    )
    assert result.followed == "2026-03-01" and not result.quoted


def test_sources_of_one_date_or_undated_are_left_to_the_user():
    reader = CitedReader(
        StandIn(" 30 days\nEvidence: [1.1]"),
        closed_book=False,
        quote_unsupported=False,
    )
    same_day = reader.read(dated_prompt("2026-03-01", "2026-03-01"))
    assert same_day.answer == (
        f"30 days [1]. {DISAGREE} Unused products may be returned within 14 days of "
        "delivery [2]."
    )
    assert same_day.followed == ""
    undated = build_prompt(
        QUESTION,
        [
            (
                "Refund policy, Return window",
                "Unused products may be returned within 30 days of delivery.",
            ),
            (
                "Returns (version 1, 2026-03-01), Return window",
                "Unused products may be returned within 14 days of delivery.",
            ),
        ],
    )
    assert reader.read(undated).followed == ""
