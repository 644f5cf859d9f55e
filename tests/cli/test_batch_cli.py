"""The dataset commands end to end through `masc_ui.cli.main`: import, batch, agreement, export."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_dreambench, write_manifest  # noqa: E402

from masc_ui.cli import main  # noqa: E402


def _common(tmp_path: Path) -> list[str]:
    return ["--data-dir", str(tmp_path / "data")]


def test_import_twice_then_export(tmp_path: Path, capsys):
    root = write_dreambench(tmp_path / "dbpp")
    assert (
        main(
            ["import", str(root), "--dataset", "dbpp", "--format", "dreambench", "--judge", "gpt4o", *_common(tmp_path)]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "samples 12 imported, 0 already present; ratings 48 imported" in out and "metric values 24 imported" in out
    assert main(["import", str(root), "--dataset", "dbpp", "--format", "dreambench", *_common(tmp_path)]) == 0
    assert "samples 0 imported, 12 already present; ratings 0 imported, 48 already present" in capsys.readouterr().out

    target = tmp_path / "export.csv"
    assert main(["export", "-o", str(target), "--dataset", "dbpp", *_common(tmp_path)]) == 0
    assert "12 samples written" in capsys.readouterr().out
    rows = list(csv.DictReader(target.open()))
    assert len(rows) == 12 and any("gpt4o_cp" in k for k in rows[0])
    assert main(["export", "-o", "-", "--format", "jsonl", "--dataset", "dbpp", *_common(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 12 and json.loads(lines[0])


def test_import_reports_bad_rows(tmp_path: Path, capsys):
    manifest = write_manifest(tmp_path / "m", subjects=1, outputs=2)
    with manifest.open("a") as fh:
        fh.write(json.dumps({"ref": "ref0.png", "out": "gone.png", "prompt": "p", "subject": "toy0"}) + "\n")
    assert main(["import", str(manifest), "--dataset", "m", "--format", "manifest", *_common(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "samples 2 imported" in out and "1 skipped" in out
    assert f"skipped manifest.jsonl:3: missing file: {tmp_path / 'm' / 'gone.png'}" in out


def test_import_marks_the_datasets_it_creates_for_rating(tmp_path: Path, capsys):
    from storage import open_store

    manifest = write_manifest(tmp_path / "m", subjects=1, outputs=2)
    assert main(["import", str(manifest), "--dataset", "m", "--format", "manifest", *_common(tmp_path)]) == 0
    assert "note: dataset 'm' is marked for rating" in capsys.readouterr().out
    assert main(["db", "for-rating", "m", "--off", *_common(tmp_path)]) == 0
    assert main(["import", str(manifest), "--dataset", "m", "--format", "manifest", *_common(tmp_path)]) == 0
    assert "'m' is not marked for rating" in capsys.readouterr().out  # a re-import keeps an admin's choice
    assert (
        main(
            ["import", str(manifest), "--dataset", "m2", "--format", "manifest", "--no-for-rating", *_common(tmp_path)]
        )
        == 0
    )
    assert (
        main(["import", str(manifest), "--dataset", "m", "--format", "manifest", "--for-rating", *_common(tmp_path)])
        == 0
    )
    with open_store(None, tmp_path / "data") as store:
        assert {d.name: d.for_rating for d in store.samples.datasets()} == {"m": True, "m2": False}


def test_agreement_table_and_json(tmp_path: Path, capsys):
    root = write_dreambench(tmp_path / "dbpp")
    main(["import", str(root), "--dataset", "dbpp", "--format", "dreambench", *_common(tmp_path)])
    capsys.readouterr()
    assert (
        main(
            [
                "agreement",
                "--dataset",
                "dbpp",
                "--criterion",
                "cp",
                "--by",
                "method",
                "--n-boot",
                "50",
                *_common(tmp_path),
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "dbpp_cp" in table and "human-human" in table and "blip_diffusion" in table
    assert (
        main(["agreement", "--dataset", "dbpp", "--metrics", "dbpp_cp", "--n-boot", "0", "--json", *_common(tmp_path)])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    rows = {r["metric"]: r for r in data["rows"]}
    assert rows["dbpp_cp"]["n"] == 12 and rows["dbpp_cp"]["n_raters"] == 2


def test_batch_command(tmp_path: Path, demo_weights: Path, capsys):
    manifest = write_manifest(tmp_path / "m", subjects=1, outputs=2)
    main(["import", str(manifest), "--dataset", "m", "--format", "manifest", *_common(tmp_path)])
    args = [
        "batch",
        "--dataset",
        "m",
        "--metrics",
        "cp,clip_i",
        "--profile",
        "demo",
        "--device",
        "cpu",
        "--demo-weights-dir",
        str(demo_weights),
        *_common(tmp_path),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "scored now: 2 samples, 4 values written" in out
    assert main(args) == 0 and "scored now: 0 samples" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["batch", "--dataset", "nope", "--profile", "demo"], "dataset 'nope' is not in the database"),
        (["agreement", "--dataset", "nope"], "dataset 'nope' is not in the database"),
        (["export", "-o", "-", "--dataset", "nope"], "dataset 'nope' is not in the database"),
        (
            ["import", "missing.jsonl", "--dataset", "x", "--format", "manifest"],
            "manifest missing.jsonl: file not found",
        ),
        (["batch", "--dataset", "x", "--store-masks"], "store_masks only applies"),
    ],
)
def test_errors_are_one_line(argv, message, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, *_common(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
