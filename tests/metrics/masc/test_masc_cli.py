"""`masc-ui score`: CP, PF and extras on the demo checkpoint, as text and JSON; clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.cli import main
from masc_ui.imaging import load_image, load_mask_file
from masc_ui.metrics import MaSC


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("score-cli")
    rng = np.random.default_rng(0)
    paths = {}
    for name, (h, w) in {"ref": (100, 140), "out": (120, 90)}.items():
        paths[name] = root / f"{name}.png"
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(paths[name])
        mask = np.zeros((h, w), dtype=np.uint8)
        mask[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4] = 255
        paths[f"{name}_mask"] = root / f"{name}_mask.png"
        Image.fromarray(mask).save(paths[f"{name}_mask"])
    return paths


def _args(files: dict[str, Path], demo_weights: Path, *extra: str) -> list[str]:
    return [
        "score",
        "--ref",
        str(files["ref"]),
        "--ref-mask",
        str(files["ref_mask"]),
        "--out",
        str(files["out"]),
        "--out-mask",
        str(files["out_mask"]),
        "--prompt",
        "a photo of a kitten on the beach",
        "--object",
        "kitten",
        "--profile",
        "demo",
        "--demo-weights-dir",
        str(demo_weights),
        "--device",
        "cpu",
        *extra,
    ]


def test_json_output_matches_the_library(files, demo_weights: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(_args(files, demo_weights, "--json", "--naflex-max-patches", "64", "--dtype", "float32")) == 0
    record = json.loads(capsys.readouterr().out)
    masc = MaSC(str(demo_weights / "siglip2-naflex"), device="cpu", naflex_max_patches=64)  # float32 checkpoint
    expected = masc.score(
        load_image(files["ref"]),
        load_mask_file(files["ref_mask"]),
        load_image(files["out"]),
        load_mask_file(files["out_mask"]),
        "a photo of a kitten on the beach",
        "kitten",
    )
    assert record["cp"] == pytest.approx(expected.cp, abs=1e-6)
    assert record["pf"] == pytest.approx(expected.pf, abs=1e-6)
    assert record["extras"]["prompt_text"] == "a photo of on the beach"
    assert record["extras"]["provenance"]["params"]["naflex_max_patches"] == 64


def test_text_output(files, demo_weights: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(_args(files, demo_weights, "--stripper", "none")) == 0
    out = capsys.readouterr().out
    lines = dict(line.split("\t", 1) for line in out.splitlines())
    assert -1 <= float(lines["CP"]) <= 1 and -1 <= float(lines["PF"]) <= 1
    assert lines["prompt_text"] == "a photo of a kitten on the beach" and lines["stripper"] == "none"
    assert "provenance.model_id" in lines


def test_nan_is_reported_with_its_reason(
    files, demo_weights: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    full = tmp_path / "full.png"
    Image.fromarray(np.full((120, 90), 255, dtype=np.uint8)).save(full)
    args = _args(files, demo_weights, "--json")
    args[args.index("--out-mask") + 1] = str(full)
    assert main(args) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["pf"] is None and "foreground" in record["extras"]["pf_reason"]


def test_errors_are_clear(files, demo_weights: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(_args(files, demo_weights, "--ref", str(files["ref"]))) == 2
    assert "--ref-mask" in capsys.readouterr().err
    args = _args(files, demo_weights)
    args[args.index("--out") + 1] = str(tmp_path / "missing.png")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not found" in err
    args = _args(files, demo_weights, "--model", str(tmp_path / "nowhere"))
    assert main(args) == 2
    assert "does not exist" in capsys.readouterr().err
