"""ImageReward, HPSv2.1, the aesthetic score and FaceSim-Arc through the command line on the demo profile: `masc-ui
score --metrics ...`, then a DreamBench++-shaped dataset of face photos through `import`, `batch`, `export`,
`agreement` and `leaderboard` (nothing in those commands names a metric: the registry and the stored values do)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from PIL import Image, ImageOps
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_dreambench  # noqa: E402

from masc_ui.cli import main  # noqa: E402
from masc_ui.metrics.registry import get_spec  # noqa: E402

NEW = ("imagereward", "hpsv21", "aesthetic", "facesim_arc")


def _demo(demo_weights: Path) -> list[str]:
    return ["--profile", "demo", "--demo-weights-dir", str(demo_weights), "--device", "cpu", "--dtype", "float32"]


def _face(seed: int) -> Image.Image:
    """A 224 px view of scikit-image's astronaut (the packaged MTCNN finds her face), one per seed."""
    photo = Image.fromarray(data.astronaut()).crop((60, 0, 460, 400))
    view = photo.rotate(4 * (seed % 5) - 8)
    return (ImageOps.mirror(view) if seed % 2 else view).resize((224, 224))


def test_score_prints_the_four_metrics(tmp_path: Path, demo_weights: Path, capsys):
    ref, out = tmp_path / "ref.png", tmp_path / "out.png"
    _face(0).save(ref)
    _face(3).save(out)
    argv = ["score", "--ref", str(ref), "--out", str(out), "--prompt", "an astronaut", "--metrics", ",".join(NEW)]
    assert main([*argv, *_demo(demo_weights)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == [get_spec(n).display_name for n in NEW]
    assert main([*argv, "--json", *_demo(demo_weights)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record.pop("profile")["name"] == "demo" and record.pop("notice").startswith("demo weights")
    assert list(record) == list(NEW)
    for name, entry in record.items():
        assert isinstance(entry["value"], float) and entry["reason"] is None, (name, entry["reason"])
    assert 0.0 <= record["facesim_arc"]["value"] <= 1.0


def test_batch_export_agreement_and_leaderboard(tmp_path: Path, demo_weights: Path, capsys):
    root = write_dreambench(tmp_path / "dbpp")
    for k, path in enumerate(sorted(p for p in root.rglob("*") if p.suffix in (".png", ".jpg"))):
        _face(k).save(path)  # same tree, face photos: FaceSim-Arc has a value for every sample
    common = ["--data-dir", str(tmp_path / "data")]
    assert main(["import", str(root), "--dataset", "dbpp", "--format", "dreambench", *common]) == 0
    capsys.readouterr()
    batch = ["batch", "--dataset", "dbpp", "--metrics", ",".join(NEW), *_demo(demo_weights), *common]
    assert main(batch) == 0
    assert "scored now: 12 samples, 48 values written" in capsys.readouterr().out
    assert main(batch) == 0 and "scored now: 0 samples" in capsys.readouterr().out

    target = tmp_path / "export.csv"
    assert main(["export", "-o", str(target), "--dataset", "dbpp", *common]) == 0
    assert "12 samples written" in capsys.readouterr().out
    rows = list(csv.DictReader(target.open()))
    assert len(rows) == 12
    for name in NEW:
        column = next(k for k in rows[0] if name in k and "reason" not in k and "provenance" not in k)
        assert all(row[column] not in ("", None) for row in rows), name

    metrics = ",".join(NEW)
    assert main(["agreement", "--dataset", "dbpp", "--metrics", metrics, "--n-boot", "50", "--json", *common]) == 0
    agreement = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert set(NEW) <= set(agreement) and all(agreement[n]["n"] == 12 for n in NEW)

    assert (
        main(["leaderboard", "--dataset", "dbpp", "--metrics", metrics, "--n-boot", "50", "--format", "csv", *common])
        == 0
    )
    board = capsys.readouterr().out
    header = board.splitlines()[0]
    for name in NEW:
        assert get_spec(name).display_name in header or name in header, (name, header)
    assert "dreambooth_sd" in board and "blip_diffusion" in board
