"""The scorer catalogue's checkpoint flags of `masc-ui score` and `masc-ui batch` reach `Settings`, override the
environment, and (for one of them, end to end) the scorer that loads the checkpoint."""

from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image
from skimage import data

from masc_ui.cli import CATALOGUE_FLAGS, build_parser, main, settings_from_args
from masc_ui.settings import Settings

FLAGS = {
    "--vqa-model": "vqa_model",
    "--itm-model": "itm_model",
    "--facescore-model": "facescore_model",
    "--face-detector-dir": "face_detector_dir",
    "--face-recognizer": "face_recognizer",
    "--retinaface-weights": "retinaface_weights",
    "--artscore-checkpoint": "artscore_checkpoint",
    "--dbpp-judge": "dbpp_judge",
    "--dbpp-local-model": "dbpp_local_model",
    "--imagereward-model": "imagereward_model",
    "--hps-model": "hps_model",
    "--aesthetic-head": "aesthetic_head",
    "--aesthetic-clip-model": "aesthetic_clip_model",
    "--dinov2-model": "dinov2_model",
    "--dreamsim-weights": "dreamsim_weights",
}
CHOICES = {"dbpp_judge": ("local", "api")}
"""(given by the flag, set in the environment) for a setting with a fixed set of values."""
REQUIRED = {"score": ["--ref", "r.png", "--out", "o.png"], "batch": ["--dataset", "d"]}


def test_the_flags_are_the_catalogue_settings():
    assert {flag: dest for flag, dest, _, _ in CATALOGUE_FLAGS} == FLAGS


@pytest.mark.parametrize("command", ["score", "batch"])
@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_each_flag_reaches_settings_and_beats_the_environment(command, flag, monkeypatch):
    field = FLAGS[flag]
    given, environment = CHOICES.get(field, (f"/given/{field}", "/from/the/environment"))
    for other in FLAGS.values():
        monkeypatch.delenv(f"MASC_{other.upper()}", raising=False)
    monkeypatch.setenv(f"MASC_{field.upper()}", environment)
    settings = settings_from_args(build_parser().parse_args([command, *REQUIRED[command], flag, given]))
    assert getattr(settings, field) == given
    defaults = Settings()
    assert all(getattr(settings, other) == getattr(defaults, other) for other in FLAGS.values() if other != field)
    unset = settings_from_args(build_parser().parse_args([command, *REQUIRED[command]]))
    assert getattr(unset, field) == environment


def test_score_loads_the_checkpoint_named_by_the_flag(demo_weights, tmp_path, capsys):
    """`--artscore-checkpoint` points at a copy of the demo ArtScore file; the value's model id is that copy."""
    from masc_ui.models.nets.artscore import RELEASED_FILE

    copy = tmp_path / "art" / RELEASED_FILE
    copy.parent.mkdir()
    shutil.copy(demo_weights / "artscore" / RELEASED_FILE, copy)
    out = tmp_path / "out.png"
    Image.fromarray(data.astronaut()).resize((128, 128)).save(out)
    assert (
        main(
            [
                "score",
                "--ref",
                str(out),
                "--out",
                str(out),
                "--metrics",
                "artscore",
                "--json",
                "--artscore-checkpoint",
                str(copy),
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
        )
        == 0
    )
    record = json.loads(capsys.readouterr().out)["artscore"]
    assert record["provenance"]["model_id"] == str(copy)
