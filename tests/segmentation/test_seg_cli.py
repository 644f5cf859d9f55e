"""`masc-ui segment`: thin CLI over the SAM service and the SAM 3 segmenter, on the demo weights."""

from __future__ import annotations

import numpy as np
import pytest

from masc_ui.cli import main
from masc_ui.segmentation import mask_from_file


@pytest.fixture()
def run(seg_weights, tmp_path, make_image, monkeypatch):
    monkeypatch.delenv("MASC_PROFILE", raising=False)
    image = tmp_path / "photo.png"
    make_image(70, 50, seed=7).save(image)
    out = tmp_path / "out" / "mask.png"

    def run_cli(*args: str) -> int:
        return main(
            [
                "segment",
                str(image),
                *args,
                "-o",
                str(out),
                "--profile",
                "demo",
                "--demo-weights-dir",
                str(seg_weights),
                "--device",
                "cpu",
                "--dtype",
                "float32",
                "--cache-dir",
                str(tmp_path),
            ]
        )

    run_cli.out = out
    return run_cli


def test_points_and_box_write_a_mask_of_the_image_size(run, capsys):
    assert run("--point", "10,20", "--point", "40,30,0", "--box", "5,5,60,45") == 0
    mask = mask_from_file(run.out)
    assert mask.shape == (50, 70)
    printed = capsys.readouterr().out
    assert str(run.out) in printed and "70x50" in printed and "SAM: score" in printed


def test_clean_up_flags_apply(run):
    assert run("--box", "5,5,60,45", "--keep-largest", "--fill-holes") == 0
    from scipy import ndimage

    assert ndimage.label(mask_from_file(run.out), structure=np.ones((3, 3)))[1] <= 1


def test_text_writes_mask_and_flags_doubtful(run, capsys):
    assert run("--text", "hat", "--threshold", "0.0") == 0
    assert mask_from_file(run.out).shape == (50, 70)
    assert "8 instance(s) of 'hat'" in capsys.readouterr().out
    assert run("--text", "hat", "--threshold", "1.0") == 3  # nothing found: written, but flagged
    assert "doubtful: no instance of 'hat'" in capsys.readouterr().err
    nothing = mask_from_file(run.out)
    assert nothing.shape == (50, 70) and not nothing.any()  # the image's size, not SAM 3's low resolution


@pytest.mark.parametrize(
    "args, message",
    [
        (("--point", "500,20"), "outside the 70x50 image"),
        (("--box", "50,0,10,10"), "inverted"),
        (("--text", "hat", "--point", "1,1"), "not both"),
        ((), "nothing to segment with"),
    ],
)
def test_bad_prompts_exit_2_with_a_message(run, capsys, args, message):
    assert run(*args) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (("--point", "10"), "argument --point: a point must be X,Y or X,Y,L"),
        (("--point", "1,2,5"), "argument --point: a point's label must be 1"),
        (("--box", "1,2,3"), "argument --box: a box must be X0,Y0,X1,Y1"),
        (("--point", "a,b"), "argument --point"),
    ],
)
def test_malformed_arguments_are_usage_errors(run, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        run(*args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
