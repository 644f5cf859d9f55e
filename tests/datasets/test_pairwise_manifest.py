"""Pairwise judgments file (JSONL and CSV): columns, aliases, identity, bad rows with file:line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from masc_ui.analysis.pairwise_data import PairwiseData
from masc_ui.datasets.pairwise_manifest import parse_pairwise_manifest
from masc_ui.errors import InputError


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_jsonl_rows_aliases_and_optional_fields(tmp_path: Path):
    f = _jsonl(
        tmp_path / "votes.jsonl",
        [
            {
                "left": "m1/dog-0",
                "right": "m2/dog-0",
                "criterion": "cp",
                "winner": "a",
                "rater": "ann",
                "both_bad": True,
                "time": "2026-02-01T10:15:00Z",
                "seconds": 4.5,
            },
            "",
            {
                "left": "m2/dog-0",
                "right": "m1/dog-0",
                "criterion": "PF",
                "winner": "Tie",
                "rater": "ann",
                "time": "2026-02-01T10:16:00",
            },
            {"left": 7, "right": 8, "criterion": "cp", "winner": "b", "rater": "bob", "both_bad": "no"},
        ],
    )
    parsed = parse_pairwise_manifest(f)
    assert parsed.problems == [] and len(parsed.judgments) == 3
    a, b, c = parsed.judgments
    assert (a.where, a.winner, a.winner_key, a.both_bad, a.seconds) == ("votes.jsonl:1", "left", "m1/dog-0", True, 4.5)
    assert a.judged_at == dt.datetime(2026, 2, 1, 10, 15, tzinfo=dt.timezone.utc)
    assert (b.where, b.criterion, b.winner, b.winner_key) == ("votes.jsonl:3", "pf", "tie", None)
    assert b.judged_at.tzinfo is not None  # no zone given: UTC
    assert (c.left, c.right, c.winner_key, c.both_bad) == ("7", "8", "8", False)
    assert a.key == ("ann", "m1/dog-0", "m2/dog-0", "cp")
    data = PairwiseData.from_records([j.judgment() for j in parsed.judgments])
    assert data.criteria == ["cp", "pf"]


def test_csv(tmp_path: Path):
    f = tmp_path / "votes.csv"
    f.write_text("left,right,criterion,winner,rater,seconds\ns1,s2,cp,right,ann,\ns1,s2,pf,left,ann,2\n")
    parsed = parse_pairwise_manifest(f)
    assert parsed.problems == []
    assert [(j.where, j.winner_key, j.seconds) for j in parsed.judgments] == [
        ("votes.csv:2", "s2", None),
        ("votes.csv:3", "s1", 2.0),
    ]


def test_bad_rows_are_reported_with_their_line_and_skipped(tmp_path: Path):
    good = {"left": "s1", "right": "s2", "criterion": "cp", "winner": "left", "rater": "ann"}
    f = _jsonl(
        tmp_path / "v.jsonl",
        [
            good,
            {**good, "left": "s2", "right": "s1", "winner": "right"},  # 2: same answer, other order
            {**good, "winner": "right"},  # 3: conflicting
            {**good, "criterion": "sc"},  # 4
            {**good, "winner": "both"},  # 5
            {**good, "right": "s1"},  # 6
            {**good, "rater": ""},  # 7
            {**good, "extra": 1},  # 8
            "{not json",  # 9
            {**good, "criterion": "pf", "time": "yesterday"},  # 10
            {**good, "criterion": "pf", "seconds": -1},  # 11
            {**good, "criterion": "pf", "both_bad": "maybe"},  # 12
            [1, 2],  # 13
            {**good, "rater": "bob"},  # 14: fine
        ],
    )
    parsed = parse_pairwise_manifest(f)
    assert [j.where for j in parsed.judgments] == ["v.jsonl:1", "v.jsonl:14"]
    got = {p.where.split(":")[1]: p.reason for p in parsed.problems}
    assert got["2"].startswith("duplicate judgment: 'ann' already judged this pair for 'cp' at v.jsonl:1")
    assert got["3"].startswith("conflicting judgment") and "'s1'" in got["3"] and "'s2'" in got["3"]
    assert got["4"] == "bad criterion 'sc'; use cp or pf"
    assert got["5"].startswith("bad winner 'both'")
    assert got["6"].startswith("left and right are the same sample 's1'")
    assert got["7"] == "missing field(s) ['rater']"
    assert got["8"].startswith("unknown key(s) ['extra']")
    assert got["9"].startswith("not valid JSON")
    assert got["10"].startswith("bad time 'yesterday'")
    assert got["11"].startswith("bad seconds -1")
    assert got["12"].startswith("bad both_bad flag 'maybe'")
    assert got["13"].startswith("not valid JSON object")


def test_file_errors(tmp_path: Path):
    with pytest.raises(InputError, match="file not found"):
        parse_pairwise_manifest(tmp_path / "none.jsonl")
    (tmp_path / "v.txt").write_text("x")
    with pytest.raises(InputError, match="unknown file type"):
        parse_pairwise_manifest(tmp_path / "v.txt")
    (tmp_path / "v.csv").write_text("left,right,criterion,verdict,rater\ns1,s2,cp,left,ann\n")
    with pytest.raises(
        InputError, match=r"unknown column\(s\) \['verdict'\]; missing required column\(s\) \['winner'\]"
    ):
        parse_pairwise_manifest(tmp_path / "v.csv")
    (tmp_path / "e.jsonl").write_text("\n")
    assert parse_pairwise_manifest(tmp_path / "e.jsonl").notes == ["e.jsonl holds no rows"]


def test_export_rows_that_are_no_judgment_to_import_are_left_out_and_counted(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text(
        "dataset,rater,external,criterion,status,left,right,winner,both_bad,gold,left_sample_id,right_sample_id,current\n"
        "d,ann,True,cp,rated,k1,k2,left,False,,1,2,True\n"
        "d,ann,True,pf,rated,,k2,tie,False,,7,2,True\n"  # no key on the left: its id
        "d,ann,True,cp,rated,k1,k3,left,False,attention,1,3,True\n"
        "d,bob,False,cp,flagged,k1,k2,,False,,1,2,True\n"
        "d,bob,False,pf,rated,k1,k2,right,False,,1,2,False\n"
    )
    parsed = parse_pairwise_manifest(path)
    assert parsed.problems == []
    assert [(j.left, j.right, j.criterion, j.winner) for j in parsed.judgments] == [
        ("k1", "k2", "cp", "left"),
        ("#7", "k2", "pf", "tie"),
    ]
    assert [n.split(" (")[0] for n in parsed.notes] == [
        "export.csv: 1 judgment(s) of a gold pair or a pair attention check",
        "export.csv: 1 skipped or flagged answer(s)",
        "export.csv: 1 earlier revision(s) of a judgment",
    ]
