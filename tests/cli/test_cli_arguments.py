"""Argument errors of the command line come first (issue 28): before torch (or transformers, gradio) is imported and
before the profile is decided, naming the flag each metric needs; a mask of another size than its image is refused as
Save refuses it; a prompt that subject stripping leaves empty is said (PF then says nothing about the prompt)."""

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

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "gradio")


def _refused(args: list[str]) -> tuple[int, str, list[str]]:
    """(exit status, stderr, the heavy modules imported) of `masc-ui ARGS` in a fresh process."""
    code = (
        "import sys, json; from masc_ui.cli import main; rc = main(json.loads(sys.argv[1])); "
        f"print(json.dumps([rc, [m for m in {HEAVY!r} if m in sys.modules]]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    rc, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    return rc, done.stderr, heavy


def _image(path: Path, size: tuple[int, int], seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path)
    return path


def _mask(path: Path, size: tuple[int, int]) -> Path:
    mask = np.zeros((size[1], size[0]), np.uint8)
    mask[: size[1] // 2, : size[0] // 2] = 255
    Image.fromarray(mask).save(path)
    return path


@pytest.mark.parametrize(
    "args, said",
    [
        (
            ["score", "--ref", "00.jpg", "--out", "01.jpg", "--prompt", "a dog"],
            "cp needs --ref-mask; pf needs --out-mask",
        ),
        (
            ["score", "--ref", "00.jpg", "--ref-mask", "m.png", "--out", "01.jpg", "--out-mask", "m2.png"],
            "pf needs --prompt",
        ),
        (["score", "--ref", "00.jpg", "--out", "01.jpg", "--metrics", "clip_x"], "unknown metric 'clip_x'"),
        (["segment", "teapot.jpg", "-o", "m.png"], "nothing to segment with"),
        (["batch", "--dataset", "d", "--metrics", "cpp"], "unknown metric 'cpp'"),
        (["export", "-o", "s.csv", "--history"], "--history is for the pairwise judgments export; add --pairwise"),
    ],
    ids=[
        "score without masks",
        "pf without prompt",
        "unknown metric",
        "segment without prompts",
        "batch metric",
        "export history without pairwise",
    ],
)
def test_argument_errors_come_before_any_heavy_import(args, said, tmp_path):
    rc, err, heavy = _refused([*args, "--data-dir", str(tmp_path / "data")])
    assert rc == 2 and said in err, err
    assert heavy == [], f"{heavy} imported before saying: {err}"
    assert "profile:" not in err  # refused before the profile is decided


def test_a_command_that_loads_no_model_imports_no_torch(tmp_path):
    rc, err, heavy = _refused(["db", "datasets", "--data-dir", str(tmp_path / "data")])
    assert rc == 0 and heavy == [], err


def test_each_metric_names_the_flag_it_lacks(tmp_path, capsys):
    common = ["score", "--ref", "00.jpg", "--out", "01.jpg", "--profile", "demo", "--data-dir", str(tmp_path)]
    assert main([*common, "--ref-mask", "m.png", "--prompt", "a dog"]) == 2
    err = capsys.readouterr().err
    assert "pf needs --out-mask: give it" in err and "cp needs" not in err and "MaSC CP and PF" not in err
    assert main([*common, "--metrics", "clip_i_seg,clip_t,clip_i"]) == 2
    err = capsys.readouterr().err
    assert "clip_i_seg needs --out-mask; clip_t needs --prompt: give them" in err and "clip_i needs" not in err


def test_a_mask_of_another_size_is_refused_before_scoring(tmp_path, capsys, demo_weights):
    ref, out = _image(tmp_path / "00.jpg", (780, 780)), _image(tmp_path / "01.jpg", (780, 780), 1)
    args = ["score", "--ref", str(ref), "--ref-mask", str(_mask(tmp_path / "tiny.png", (1, 1)))]
    args += ["--out", str(out), "--out-mask", str(_mask(tmp_path / "m2.png", (780, 780))), "--prompt", "a dog"]
    assert main([*args, "--profile", "demo", "--demo-weights-dir", str(demo_weights), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert f"--ref-mask {tmp_path / 'tiny.png'} is 1x1 pixels but its image is 780x780" in err
    assert "profile:" not in err


def test_a_prompt_left_empty_by_the_stripper_is_said(tmp_path, capsys, demo_weights):
    size = (96, 80)
    args = [
        "score",
        "--ref",
        str(_image(tmp_path / "00.jpg", size)),
        "--ref-mask",
        str(_mask(tmp_path / "m.png", size)),
    ]
    args += ["--out", str(_image(tmp_path / "01.jpg", size, 1)), "--out-mask", str(_mask(tmp_path / "m2.png", size))]
    demo = ["--profile", "demo", "--demo-weights-dir", str(demo_weights), "--device", "cpu", "--json"]
    assert main([*args, "--prompt", "a dog", "--object", "dog", *demo]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["extras"]["prompt_text"] == ""
    assert "warning: pf: the prompt 'a dog' is empty once the subject's name is removed" in printed.err
    assert main([*args, "--prompt", "a dog on the grass", "--object", "dog", *demo]) == 0
    assert "is empty once the subject's name is removed" not in capsys.readouterr().err
