"""`masc-ui import PATH --format pair-gold --dataset NAME`: gold pairs marked with their accepted answers, idempotent,
bad rows and unknown samples reported with file:line; and the pairwise judgments export imported again with
`--format pairwise`, judgments of gold pairs left out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.cli import main
from storage import open_store
from storage.repo.pair_exports import pair_export_columns


def _samples(folder: Path) -> Path:
    """A sample manifest of four outputs (methods m1, m2 for references r0, r1), keys m<m>/dog-<r>; its path."""
    rows = []
    for r in range(2):
        Image.fromarray(np.full((8, 8, 3), 40 * r, dtype=np.uint8)).save(folder / f"ref{r}.png")
        for m in (1, 2):
            Image.fromarray(np.full((8, 8, 3), 40 * r + 10 * m, dtype=np.uint8)).save(folder / f"out{r}{m}.png")
            rows.append(
                {"ref": f"ref{r}.png", "out": f"out{r}{m}.png", "prompt": "a dog", "subject": "dog"}
                | {"method": f"m{m}", "key": f"m{m}/dog-{r}"}
            )
    manifest = folder / "samples.jsonl"
    manifest.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return manifest


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def data(tmp_path: Path, capsys) -> Path:
    """The data dir of a database holding dataset `d` (the four samples of `_samples`)."""
    data = tmp_path / "data"
    manifest = _samples(tmp_path)
    assert (
        _run(capsys, "import", str(manifest), "--format", "manifest", "--dataset", "d", "--data-dir", str(data))[0] == 0
    )
    return data


def _gold(store, dataset: str = "d") -> dict[tuple[str, str, str], tuple[str, str, str | None]]:
    """(key a, key b, criterion) -> (accepted, kind, note) of the stored gold pairs, canonical order."""
    keys = {s.id: s.external_key or f"#{s.id}" for s in store.samples.list(dataset)}
    return {
        (keys[g.sample_a_id], keys[g.sample_b_id], g.criterion): (g.accepted, g.kind, g.note)
        for g in store.pair_gold.answers(dataset)
    }


def test_gold_pairs_import_idempotently_with_bad_rows_reported(data: Path, tmp_path: Path, capsys):
    with open_store(None, data) as store:
        first = store.samples.get_by_key("d", "m1/dog-1")
        assert first is not None
    pairs = tmp_path / "gold.csv"
    pairs.write_text(
        "left,right,gold_cp,gold_pf,kind,note\n"
        "m1/dog-0,m2/dog-0,a,tie,,m1 keeps the dog\n"  # 2
        f"m2/dog-1,#{first.id},b,,attention,\n"  # 3: b = right (m1/dog-1) is better
        "m1/dog-0,m9/dog-0,a,,,\n"  # 4 unknown key
        "m1/dog-1,m2/dog-1,sideways,,,\n"  # 5 bad answer
        "m2/dog-0,m1/dog-0,b,,,\n"  # 6 duplicate of line 2 (b = m1/dog-0 better)
        "m2/dog-0,m1/dog-0,,a,,\n"  # 7 conflicting with line 2 (pf tie)
        "m1/dog-0,m1/dog-0,a,,,\n"  # 8 the same sample twice
        "m1/dog-0,m2/dog-1,,,,\n"  # 9 no answer
    )
    argv = ("import", str(pairs), "--format", "pair-gold", "--dataset", "d", "--data-dir", str(data))
    code, out, _ = _run(capsys, *argv)
    assert code == 0, out
    assert "gold pair answers 3 marked, 0 already marked as given" in out and "6 skipped" in out
    assert "gold.csv:4: unknown key: no sample 'm9/dog-0' in dataset 'd'" in out
    assert "gold.csv:5: bad gold_cp 'sideways'" in out
    assert "gold.csv:6: duplicate answer" in out and "gold.csv:7: conflicting answer" in out
    assert "gold.csv:8: left and right are the same sample" in out and "gold.csv:9: no accepted answer" in out
    with open_store(None, data) as store:
        assert _gold(store) == {
            ("m1/dog-0", "m2/dog-0", "cp"): ("a", "gold", "m1 keeps the dog"),
            ("m1/dog-0", "m2/dog-0", "pf"): ("tie", "gold", "m1 keeps the dog"),
            ("m1/dog-1", "m2/dog-1", "cp"): ("a", "attention", None),
        }
    code, out, _ = _run(capsys, *argv)
    assert code == 0 and "gold pair answers 0 marked, 3 already marked as given" in out
    changed = tmp_path / "changed.jsonl"
    changed.write_text(json.dumps({"left": "m2/dog-0", "right": "m1/dog-0", "gold_cp": "a"}) + "\n")
    code, out, _ = _run(
        capsys, "import", str(changed), "--format", "pair-gold", "--dataset", "d", "--data-dir", str(data)
    )
    assert code == 0 and "gold pair answers 1 marked, 0 already marked as given" in out
    with open_store(None, data) as store:
        assert _gold(store)[("m1/dog-0", "m2/dog-0", "cp")] == ("b", "gold", "m1 keeps the dog")


def test_gold_pairs_need_the_dataset_and_known_columns(data: Path, tmp_path: Path, capsys):
    pairs = tmp_path / "gold.jsonl"
    pairs.write_text(json.dumps({"left": "m1/dog-0", "right": "m2/dog-0", "gold_cp": "a"}) + "\n")
    argv = ("import", str(pairs), "--format", "pair-gold", "--data-dir", str(data))
    code, _, err = _run(capsys, *argv, "--dataset", "nope")
    assert code == 2 and "dataset 'nope' is not in the database; gold pairs name samples" in err
    pairs.write_text(json.dumps({"left": "m1/dog-0", "right": "m2/dog-0", "gold_cp": "a", "winner": "left"}) + "\n")
    code, _, err = _run(capsys, *argv, "--dataset", "d")
    assert code == 2 and "gold.jsonl:1: unknown key(s) ['winner']" in err
    with open_store(None, data) as store:
        assert store.pair_gold.answers("d") == []


def test_the_pairwise_parser_knows_every_export_column():
    from masc_ui.datasets.pairwise_manifest import COLUMNS, EXPORT_COLUMNS

    assert set(pair_export_columns(history=True)) == set(COLUMNS) | set(EXPORT_COLUMNS)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_pairwise_export_imports_again_without_its_gold_pairs(data: Path, tmp_path: Path, capsys, fmt: str):
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "left,right,criterion,winner,rater,seconds\n"
        "m1/dog-0,m2/dog-0,cp,left,ann,3.5\n"
        "m1/dog-1,m2/dog-1,cp,right,ann,\n"
        "m1/dog-1,m2/dog-1,pf,tie,bob,\n"
    )
    d = ("--dataset", "d", "--data-dir", str(data))
    assert _run(capsys, "import", str(votes), "--format", "pairwise", *d)[0] == 0
    assert _run(capsys, "gold", "pair", "--pair", "m1/dog-1,m2/dog-1", "--criterion", "cp", "--accept", "b", *d)[0] == 0
    exported = tmp_path / f"export.{fmt}"
    assert _run(capsys, "export", "--pairwise", "--history", "-o", str(exported), *d)[0] == 0
    assert "gold" in exported.read_text()
    again = tmp_path / "again"
    assert (
        _run(
            capsys,
            "import",
            str(_samples(tmp_path)),
            "--format",
            "manifest",
            "--dataset",
            "d",
            "--data-dir",
            str(again),
        )[0]
        == 0
    )
    code, out, err = _run(
        capsys, "import", str(exported), "--format", "pairwise", "--dataset", "d", "--data-dir", str(again)
    )
    assert code == 0, err
    assert "pairwise judgments 1 imported, 0 already present" in out and "0 skipped" in out
    assert f"export.{fmt}: 2 judgment(s) of a gold pair or a pair attention check (column gold" in out
    with open_store(None, again) as store:
        keys = {s.id: s.external_key for s in store.samples.list("d")}
        stored = [
            (j.rater, keys[j.left_sample_id], keys[j.right_sample_id], j.criterion, j.winner, j.seconds_spent)
            for j in store.pairwise.current(dataset="d")
        ]
        assert stored == [("ann", "m1/dog-0", "m2/dog-0", "cp", "left", 3.5)]
    code, out, _ = _run(capsys, "import", str(exported), "--format", "pairwise", *d)
    assert code == 0 and "pairwise judgments 0 imported, 1 already present" in out
