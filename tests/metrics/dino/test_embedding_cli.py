"""DINO-I-Seg, DINOv2-I(-Seg) and DreamSim(-Seg) through the CLI on the demo profile: `masc-ui score --metrics ...`
(with the checkpoint flags), then a dataset end to end: import, `masc-ui batch --metrics ...`, export, agreement and
the leaderboard (DreamSim as a distance: lower is better)."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "datasets"))
from dataset_trees import write_dreambench, write_manifest  # noqa: E402

from masc_ui.cli import main  # noqa: E402

NEW = ("dino_i_seg", "dinov2_i", "dinov2_i_seg", "dreamsim", "dreamsim_seg")
WHOLE = ("dino_i", "dinov2_i", "dreamsim")
"""The metrics a dataset without masks can have."""


def _demo(demo_weights: Path, tmp_path: Path) -> list[str]:
    return [
        "--profile",
        "demo",
        "--demo-weights-dir",
        str(demo_weights),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--data-dir",
        str(tmp_path / "data"),
    ]


def test_score_with_the_new_metrics_and_their_checkpoint_flags(demo_weights, tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = {}
    for name in ("ref", "out"):
        paths[name] = tmp_path / f"{name}.png"
        Image.fromarray(rng.integers(0, 256, (64, 80, 3), dtype=np.uint8)).save(paths[name])
    mask = np.zeros((64, 80), np.uint8)
    mask[10:50, 20:60] = 255
    Image.fromarray(mask).save(tmp_path / "mask.png")
    dreamsim = tmp_path / "my-dreamsim"
    shutil.copytree(demo_weights / "dreamsim", dreamsim)
    argv = ["score", "--ref", str(paths["ref"]), "--out", str(paths["out"]), "--out-mask", str(tmp_path / "mask.png")]
    argv += ["--metrics", ",".join(NEW), "--json", "--dreamsim-weights", str(dreamsim)]
    argv += ["--dinov2-model", str(demo_weights / "dinov2"), *_demo(demo_weights, tmp_path)]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert record.pop("profile")["name"] == "demo" and record.pop("notice").startswith("demo weights")
    assert list(record) == list(NEW)
    for name, entry in record.items():
        assert isinstance(entry["value"], float) and entry["reason"] is None, name
    assert record["dreamsim"]["provenance"]["model_id"] == str(dreamsim)
    assert record["dinov2_i"]["provenance"]["model_id"] == str(demo_weights / "dinov2")
    assert 0 <= record["dreamsim"]["value"] <= 2 and record["dreamsim_seg"]["extras"]["out_box"] == [18, 8, 62, 52]
    plain = [a for a in argv if a != "--json"]
    assert main(plain) == 0
    lines = {line.split("\t")[0]: line.split("\t") for line in capsys.readouterr().out.strip().splitlines()}
    assert lines["DreamSim"][2:4] == ["[0, 2]", "lower is better"]
    assert lines["DINOv2-I"][2:4] == ["[-1, 1]", "higher is better"]


def test_batch_export_agreement_and_leaderboard(demo_weights, tmp_path, capsys):
    common = _demo(demo_weights, tmp_path)
    root = write_dreambench(tmp_path / "dbpp")
    assert main(["import", str(root), "--dataset", "dbpp", "--format", "dreambench", *common]) == 0
    assert main(["batch", "--dataset", "dbpp", "--metrics", ",".join(WHOLE), *common]) == 0
    assert "scored now: 12 samples, 36 values written" in capsys.readouterr().out

    target = tmp_path / "export.csv"
    assert main(["export", "-o", str(target), "--dataset", "dbpp", *common]) == 0
    rows = list(csv.DictReader(target.open()))
    columns = {c for c in rows[0] if any(m in c for m in WHOLE)}
    assert {m for m in WHOLE if any(m in c for c in columns)} == set(WHOLE), sorted(columns)
    capsys.readouterr()

    agreement = ["agreement", "--dataset", "dbpp", "--criterion", "cp", "--n-boot", "50", "--json", *common]
    assert main(agreement) == 0
    table = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    for metric in WHOLE:
        assert table[metric]["n"] == 12 and table[metric]["spearman"]["value"] is not None, metric

    board = ["leaderboard", "--dataset", "dbpp", "--metrics", ",".join(WHOLE), "--n-boot", "50", *common]
    assert main(board) == 0
    text = capsys.readouterr().out
    assert "dreamsim ↓" in text and "dinov2_i ↑" in text and "dino_i ↑" in text


def test_batch_of_the_seg_metrics_on_masked_samples(demo_weights, tmp_path, capsys):
    common = _demo(demo_weights, tmp_path)
    manifest = write_manifest(tmp_path / "m", subjects=1, outputs=2)
    assert main(["import", str(manifest), "--dataset", "m", "--format", "manifest", *common]) == 0
    seg = "dino_i_seg,dinov2_i_seg,dreamsim_seg"
    assert main(["batch", "--dataset", "m", "--metrics", seg, *common]) == 0
    assert "scored now: 2 samples, 6 values written" in capsys.readouterr().out
    assert main(["batch", "--dataset", "m", "--metrics", seg, *common]) == 0
    assert "scored now: 0 samples" in capsys.readouterr().out
