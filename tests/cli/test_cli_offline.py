"""The command line on a machine without the Hugging Face Hub (issue 28): every command that loads models decides the
profile once by the app's quick rule (`auto` -> demo at once, no download retried), says which profile and why in
one line, writes the demo checkpoints it needs on a fresh data folder, and says that demo numbers mean nothing.

Each command runs in a fresh process with an empty Hugging Face cache: with `HF_HUB_OFFLINE=1`, and without it with
`HF_ENDPOINT` on a closed loopback port (so the one probe fails at once). No huggingface_hub retry line may appear."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.cli import main
from masc_ui.ui.launch import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_manifest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO_LINE = "profile: demo (asked: auto): using the demo profile"
NOTICE = "warning: demo weights: these numbers mean nothing"


def _env(tmp_path: Path, *, offline: bool) -> dict[str, str]:
    drop = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "MASC_PROFILE", "SPACE_ID", "PYTHONWARNINGS")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("MASC_")}
    env |= {"HF_HOME": str(tmp_path / "hf-home"), "PYTHONPATH": str(ROOT), "MASC_DEVICE": "cpu"}
    if offline:
        env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    else:
        env |= {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "masc_ui", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )


def _said_once(err: str) -> None:
    """One profile line (demo, asked auto, and why), one demo notice, no retry of a download, no traceback."""
    lines = err.splitlines()
    assert [ln for ln in lines if ln.startswith("profile:")] == [next(ln for ln in lines if ln.startswith(DEMO_LINE))]
    assert sum(ln.startswith(NOTICE) for ln in lines) == 1, err
    assert "Retrying" not in err and "Traceback" not in err and "processor: could not load" not in err, err


def _image(path: Path, seed: int, size: tuple[int, int] = (96, 80)) -> Path:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path)
    return path


def _mask(path: Path, size: tuple[int, int] = (96, 80)) -> Path:
    mask = np.zeros((size[1], size[0]), np.uint8)
    mask[20:60, 20:70] = 255
    Image.fromarray(mask).save(path)
    return path


@pytest.fixture()
def pair(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "pair"
    folder.mkdir()
    return {
        "ref": _image(folder / "00.jpg", 0),
        "out": _image(folder / "01.jpg", 1),
        "ref_mask": _mask(folder / "m.png"),
        "out_mask": _mask(folder / "m2.png"),
    }


@pytest.mark.slow
def test_score_offline_falls_back_to_demo_and_writes_its_checkpoints(pair, tmp_path):
    data = tmp_path / "data"
    args = ["score", "--ref", str(pair["ref"]), "--ref-mask", str(pair["ref_mask"]), "--out", str(pair["out"])]
    args += ["--out-mask", str(pair["out_mask"]), "--prompt", "a dog on the grass", "--object", "dog"]
    done = _run([*args, "--data-dir", str(data), "--json"], _env(tmp_path, offline=True))
    assert done.returncode == 0, done.stderr[-3000:]
    _said_once(done.stderr)
    assert "HF_HUB_OFFLINE is set" in done.stderr
    record = json.loads(done.stdout)
    assert record["profile"]["name"] == "demo" and record["profile"]["requested"] == "auto"
    assert "HF_HUB_OFFLINE" in record["profile"]["why"] and record["notice"].startswith("demo weights")
    assert record["extras"]["provenance"]["model_id"].startswith(str(data / "demo-weights"))


@pytest.mark.slow
def test_segment_without_a_profile_and_without_network_uses_the_demo_sam(tmp_path):
    image = _image(tmp_path / "teapot.jpg", 2, (120, 100))
    data = tmp_path / "data"
    done = _run(
        ["segment", str(image), "--box", "10,10,80,70", "-o", str(tmp_path / "m.png"), "--data-dir", str(data)],
        _env(tmp_path, offline=False),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    _said_once(done.stderr)
    assert "unreachable" in done.stderr and "sam_vit_h" not in done.stderr
    assert (data / "demo-weights" / "sam-vit-tiny" / "sam_vit_tiny.pth").is_file()
    assert Image.open(tmp_path / "m.png").size == (120, 100)


@pytest.mark.slow
def test_batch_with_text_masks_offline_segments_with_the_demo_sam3(tmp_path, demo_weights):
    data = tmp_path / "data"
    manifest = write_manifest(tmp_path / "m", subjects=1, outputs=2, masks=False)
    common = ["--data-dir", str(data), "--demo-weights-dir", str(demo_weights)]
    assert main(["import", "manifest", str(manifest), "--dataset", "d", *common]) == 0
    done = _run(
        ["batch", "--dataset", "d", "--metrics", "cp,pf,clip_i", "--masks", "text", *common],
        _env(tmp_path, offline=True),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    _said_once(done.stderr)
    assert "facebook/sam3" not in done.stderr
    assert "text-prompted masks made: 4" in done.stdout and "failed" not in done.stdout


def test_a_demo_command_on_a_fresh_data_folder_writes_the_checkpoint_it_needs(tmp_path, capsys):
    """`MASC_PROFILE=demo masc-ui segment ...` before the app ever ran: the tiny SAM is written, not asked for."""
    image = _image(tmp_path / "teapot.jpg", 3, (120, 100))
    data = tmp_path / "data"
    args = ["segment", str(image), "--point", "60,50,1", "-o", str(tmp_path / "m.png"), "--profile", "demo"]
    assert main([*args, "--data-dir", str(data), "--device", "cpu"]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert err.startswith("profile: demo: chosen in the settings · device: cpu")
    assert NOTICE in err and "download" not in err
    assert (data / "demo-weights" / "sam-vit-tiny" / "sam_vit_tiny.pth").is_file()
