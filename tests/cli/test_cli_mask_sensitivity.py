"""`masc-ui score --mask-sensitivity`: the mask-dependent metrics asked, rescored on eroded, dilated and
subject-name masks, as a table or under `mask_sensitivity` in --json; a bad shift refused before anything heavy."""

from __future__ import annotations

import json

import pytest

from masc_ui.cli import main
from masc_ui.workbench.examples import EXAMPLES_DIR
from tests.cli.test_cli_arguments import _refused

CAT = EXAMPLES_DIR / "cat-on-grass"
FILES = ["--ref", str(CAT / "ref.jpg"), "--ref-mask", str(CAT / "ref_mask.png"), "--out", str(CAT / "out.jpg")]
FILES += ["--out-mask", str(CAT / "out_mask.png"), "--prompt", "a cat on the grass"]


def _demo(tmp_path, demo_weights):
    return ["--profile", "demo", "--demo-weights-dir", str(demo_weights), "--device", "cpu"] + [
        "--data-dir",
        str(tmp_path / "data"),
    ]


def test_json_holds_each_variant_and_the_spread(tmp_path, capsys, demo_weights):
    args = ["score", *FILES, "--metrics", "cp,clip_i,clip_i_seg", "--mask-sensitivity", "0,2", "--json"]
    assert main([*args, *_demo(tmp_path, demo_weights)]) == 0
    printed = json.loads(capsys.readouterr().out)
    sens = printed["mask_sensitivity"]
    assert sens["variants"] == ["0 px", "eroded 2 px", "dilated 2 px"]
    assert set(sens["metrics"]) == {"cp", "clip_i_seg"}  # clip_i needs no mask
    for name, got in sens["metrics"].items():
        assert got["stored"] == printed[name]["value"] == got["values"]["0 px"]
        assert got["spread"] == pytest.approx(got["high"] - got["low"])
    assert sens["skipped"] == {}  # no --object: no subject-name variant asked


def test_the_table_follows_the_scores_and_the_subject_name_variant_comes_with_object(tmp_path, capsys, demo_weights):
    args = ["score", *FILES, "--object", "cat", "--mask-sensitivity", *_demo(tmp_path, demo_weights)]
    assert main(args) == 0
    out = capsys.readouterr().out
    table = out.split("\nmask sensitivity\n", 1)[1].splitlines()
    assert table[0] == "metric\town masks\teroded 3 px\tdilated 3 px\tsubject name\tspread"
    assert table[1].startswith("MaSC CP\t") and table[2].startswith("MaSC PF\t")
    assert out.index("CP\t") < out.index("mask sensitivity")


@pytest.mark.parametrize("shift", ["-1", "x", "65", ","])
def test_a_bad_shift_is_refused_before_any_heavy_import(tmp_path, shift):
    rc, err, heavy = _refused(["score", *FILES, f"--mask-sensitivity={shift}", "--data-dir", str(tmp_path)])
    assert rc == 2 and "give whole pixel counts from 0 to 64" in err and heavy == [], err


def test_no_mask_metric_asked_is_a_clear_error(tmp_path, capsys, demo_weights):
    args = ["score", *FILES, "--metrics", "clip_i", "--mask-sensitivity", *_demo(tmp_path, demo_weights)]
    assert main(args) == 2
    assert "none of the chosen metrics uses a mask" in capsys.readouterr().err
