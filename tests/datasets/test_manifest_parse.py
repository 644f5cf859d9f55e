"""Manifest parsing (JSONL and CSV): columns, several refs, relative paths, bad rows with line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dataset_trees import tiny_image, tiny_mask

from masc_ui.datasets.manifest import parse_manifest
from masc_ui.errors import InputError


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    for name in ("r1.png", "r2.png", "o1.png", "o2.jpg"):
        tiny_image(tmp_path / "img" / name, seed=len(name) + ord(name[1]))
    tiny_mask(tmp_path / "img" / "m1.png")
    return tmp_path


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_jsonl_rows(files: Path):
    m = _jsonl(
        files / "m.jsonl",
        [
            {
                "ref": ["img/r1.png", "img/r2.png"],
                "ref_mask": ["img/m1.png", None],
                "out": "img/o1.png",
                "out_mask": "img/m1.png",
                "prompt": "a dog on the beach",
                "subject": "dog",
                "method": "m1",
                "seed": "7",
                "key": "k1",
                "category": "animal",
            },
            "",
            {"ref": "img/r1.png", "out": "img/o2.jpg", "prompt": "a dog", "subject": "dog", "seed": 3.0},
        ],
    )
    parsed = parse_manifest(m)
    assert parsed.problems == []
    a, b = parsed.samples
    assert a.refs == (files / "img/r1.png", files / "img/r2.png")
    assert a.ref_masks == (files / "img/m1.png", None)
    assert a.out_mask == files / "img/m1.png" and a.seed == 7 and a.key == "k1" and a.category == "animal"
    assert a.where == "m.jsonl:1" and b.where == "m.jsonl:3"
    assert b.key is None and b.seed == 3 and b.method is None and b.ref_masks == ()


def test_csv_rows_and_multi_refs(files: Path):
    m = files / "m.csv"
    m.write_text(
        "ref,ref_mask,out,prompt,subject,seed\n"
        'img/r1.png|img/r2.png,|img/m1.png,img/o1.png,"a dog, running",dog,1\n'
        "img/r1.png,,img/o2.jpg,a cat,cat,\n"
    )
    parsed = parse_manifest(m)
    assert parsed.problems == []
    a, b = parsed.samples
    assert a.prompt == "a dog, running" and a.ref_masks == (None, files / "img/m1.png") and a.seed == 1
    assert b.where == "m.csv:3" and b.seed is None


def test_bad_rows_reported_with_line_and_skipped(files: Path):
    good = {"ref": "img/r1.png", "out": "img/o1.png", "prompt": "p", "subject": "dog"}
    m = _jsonl(
        files / "m.jsonl",
        [
            {**good, "key": "a"},
            {**good, "out": "img/missing.png"},
            {**good, "colour": "red"},
            {"ref": "img/r1.png", "out": "img/o1.png"},
            "{broken",
            {**good, "seed": "seven"},
            {**good, "key": "a"},
            {**good, "ref_mask": ["img/m1.png", "img/m1.png"]},
            "[1, 2]",
            {**good, "key": "b"},
        ],
    )
    parsed = parse_manifest(m)
    assert [s.key for s in parsed.samples] == ["a", "b"]
    got = [str(p) for p in parsed.problems]
    assert got[0] == f"m.jsonl:2: missing file: {files / 'img/missing.png'}"
    assert got[1].startswith("m.jsonl:3: unknown key(s) ['colour']")
    assert got[2] == "m.jsonl:4: missing field(s) ['prompt', 'subject']"
    assert got[3].startswith("m.jsonl:5: not valid JSON")
    assert got[4] == "m.jsonl:6: bad seed: 'seven' is not an integer"
    assert got[5] == "m.jsonl:7: duplicate key: 'a' was already used at m.jsonl:1"
    assert got[6].startswith("m.jsonl:8: ref_mask lists 2 path(s) for 1 ref(s)")
    assert got[7].startswith("m.jsonl:9: not valid JSON object")
    assert len(got) == 8


def test_csv_header_errors(tmp_path: Path):
    bad = tmp_path / "bad.csv"
    bad.write_text("ref,out,prompt,subjectt\n")
    with pytest.raises(
        InputError, match=r"unknown column\(s\) \['subjectt'\]; missing required column\(s\) \['subject'\]"
    ):
        parse_manifest(bad)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="no header row"):
        parse_manifest(empty)


def test_csv_too_many_cells(files: Path):
    m = files / "m.csv"
    m.write_text("ref,out,prompt,subject\nimg/r1.png,img/o1.png,p,dog,extra\n")
    parsed = parse_manifest(m)
    assert [str(p) for p in parsed.problems] == ["m.csv:2: too many cells: 5 for 4 columns"]


def test_file_errors(tmp_path: Path):
    with pytest.raises(InputError, match="file not found"):
        parse_manifest(tmp_path / "nope.jsonl")
    other = tmp_path / "m.yaml"
    other.write_text("x")
    with pytest.raises(InputError, match="unknown file type '.yaml'"):
        parse_manifest(other)
