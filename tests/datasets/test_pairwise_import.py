"""`masc-ui import PATH --format pairwise --dataset NAME`: judgments stored as external raters', idempotent, bad
rows reported with file:line and skipped."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.cli import main
from storage import open_store


@pytest.fixture()
def dataset(tmp_path: Path, capsys) -> Path:
    """Dataset `d` with four outputs (methods m1, m2 for references r0, r1) imported through a sample manifest;
    returns the data dir."""
    rows = []
    for r in range(2):
        Image.fromarray(np.full((8, 8, 3), 40 * r, dtype=np.uint8)).save(tmp_path / f"ref{r}.png")
        for m in (1, 2):
            Image.fromarray(np.full((8, 8, 3), 40 * r + 10 * m, dtype=np.uint8)).save(tmp_path / f"out{r}{m}.png")
            rows.append(
                {
                    "ref": f"ref{r}.png",
                    "out": f"out{r}{m}.png",
                    "prompt": "a dog",
                    "subject": "dog",
                    "method": f"m{m}",
                    "key": f"m{m}/dog-{r}",
                }
            )
    manifest = tmp_path / "samples.jsonl"
    manifest.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data = tmp_path / "data"
    assert main(["import", str(manifest), "--format", "manifest", "--dataset", "d", "--data-dir", str(data)]) == 0
    capsys.readouterr()
    return data


def _import(path: Path, data: Path, capsys, dataset: str = "d") -> tuple[int, str, str]:
    code = main(["import", str(path), "--format", "pairwise", "--dataset", dataset, "--data-dir", str(data)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_import_is_idempotent_and_reports_bad_rows(dataset: Path, tmp_path: Path, capsys):
    with open_store(None, dataset) as store:
        store.ratings.ensure_rater("alice")  # logs into the app
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "left,right,criterion,winner,rater,both_bad,time,seconds\n"
        "m1/dog-0,m2/dog-0,cp,left,ann,,2026-02-01T10:15:00Z,4.5\n"  # 2
        "m2/dog-0,m1/dog-0,pf,tie,ann,yes,,\n"  # 3
        "m1/dog-1,m2/dog-1,cp,b,bob,,,\n"  # 4
        "m1/dog-1,m9/dog-1,cp,left,bob,,,\n"  # 5 unknown key
        "m1/dog-0,m2/dog-0,cp,sideways,bob,,,\n"  # 6 bad winner
        "m2/dog-0,m1/dog-0,cp,right,ann,,,\n"  # 7 duplicate of line 2
        "m1/dog-0,m2/dog-0,pf,left,alice,,,\n"
    )  # 8 an app rater
    code, out, _ = _import(votes, dataset, capsys)
    assert code == 0
    assert "pairwise judgments 3 imported, 0 already present" in out and "4 skipped" in out
    assert "votes.csv:5: unknown key: no sample 'm9/dog-1' in dataset 'd'" in out
    assert "votes.csv:6: bad winner 'sideways'" in out
    assert "votes.csv:7: duplicate judgment" in out
    assert "votes.csv:8: rater of this app: 'alice'" in out
    code, out, _ = _import(votes, dataset, capsys)
    assert code == 0 and "pairwise judgments 0 imported, 3 already present" in out
    with open_store(None, dataset) as store:
        keys = {s.id: s.external_key for s in store.samples.list("d")}
        stored = {
            (j.rater, keys[j.left_sample_id], keys[j.right_sample_id], j.criterion): (j.winner, j.both_bad)
            for j in store.pairwise.current(dataset="d")
        }
        assert stored == {
            ("ann", "m1/dog-0", "m2/dog-0", "cp"): ("left", False),
            ("ann", "m2/dog-0", "m1/dog-0", "pf"): ("tie", True),
            ("bob", "m1/dog-1", "m2/dog-1", "cp"): ("right", False),
        }
        first = store.pairwise.current(rater="ann")[0]
        assert first.seconds_spent == 4.5 and first.judged_at.isoformat() == "2026-02-01T10:15:00+00:00"
        assert store.ratings.rater("ann").is_external and not store.ratings.rater("alice").is_external
    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        json.dumps({"left": "m2/dog-0", "right": "m1/dog-0", "criterion": "cp", "winner": "left", "rater": "ann"})
        + "\n"
    )
    code, out, _ = _import(changed, dataset, capsys)
    assert "pairwise judgments 1 imported, 0 already present" in out
    with open_store(None, dataset) as store:
        judgment = next(j for j in store.pairwise.current(rater="ann") if j.criterion == "cp")
        assert judgment.revision == 2 and [h.winner for h in store.pairwise.history(judgment.id)] == ["left", "left"]
        assert judgment.winner_sample_id != store.pairwise.history(judgment.id)[0].left_sample_id


def test_unknown_dataset_and_bad_files_are_clear_errors(dataset: Path, tmp_path: Path, capsys):
    votes = tmp_path / "votes.jsonl"
    votes.write_text(
        json.dumps({"left": "m1/dog-0", "right": "m2/dog-0", "criterion": "cp", "winner": "left", "rater": "ann"})
        + "\n"
    )
    code, _, err = _import(votes, dataset, capsys, dataset="nope")
    assert code == 2 and "dataset 'nope' is not in the database" in err and "import its samples first" in err
    code, _, err = _import(tmp_path / "missing.csv", dataset, capsys)
    assert code == 2 and "file not found" in err
    with open_store(None, dataset) as store:
        assert store.pairwise.current() == [] and "nope" not in [d.name for d in store.samples.datasets()]
