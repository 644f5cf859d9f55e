"""The command line with videos: `masc-ui score --out VIDEO` (JSON and text, bad files), and a database holding
video samples through `masc-ui export` and `masc-ui db dump` / `restore` (blobs included)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.cli import main
from masc_ui.imaging import open_image, open_video
from masc_ui.metrics.registry import score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.workbench import build_workbench
from tests.video_files import encode_video, synthetic_frames


@pytest.fixture()
def files(tmp_path: Path):
    frames = synthetic_frames(7)
    video, webm, ref, mask = (tmp_path / n for n in ("out.mp4", "out.webm", "ref.png", "mask.png"))
    video.write_bytes(encode_video(frames, "mp4"))
    webm.write_bytes(encode_video(frames, "webm"))
    Image.fromarray(frames[0]).save(ref)
    arr = np.zeros((64, 96), np.uint8)
    arr[20:36, 0:40] = 255
    Image.fromarray(arr).save(mask)
    return video, webm, ref, mask


def _settings_args(demo_weights: Path, tmp_path: Path) -> list[str]:
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


def test_score_a_video_from_the_command_line(files, demo_weights, demo_settings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MASC_VIDEO_FRAMES", "3")
    video, webm, ref, mask = files
    args = [
        "score",
        "--ref",
        str(ref),
        "--ref-mask",
        str(mask),
        "--out",
        str(video),
        "--out-mask",
        str(mask),
        "--out-mask-frame",
        "2",
        "--prompt",
        "a green square moving right",
        "--object",
        "square",
        *_settings_args(demo_weights, tmp_path),
    ]
    assert main([*args, "--metrics", "cp,pf,clip_i,gmescore", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record.pop("profile")["name"] == "demo" and record.pop("notice")
    assert set(record) == {"cp", "pf", "clip_i", "gmescore"}
    assert record["cp"]["extras"]["frames"]["indices"] == [0, 3, 6]
    assert record["pf"]["provenance"]["params"]["out_mask_frames"]["method"] == "static"
    mask_arr = np.asarray(Image.open(mask)) > 127
    sample = Sample(
        refs=(open_image(ref),),
        out=open_video(video),
        prompt="a green square moving right",
        subject="square",
        ref_masks=(mask_arr,),
        out_mask=mask_arr,
    )
    direct = score_metrics([sample], ["cp", "clip_i"], demo_settings.replace(video_frames=3), ModelRegistry())
    assert record["cp"]["value"] == pytest.approx(direct["cp"][0].value, abs=1e-6)
    assert record["clip_i"]["value"] == pytest.approx(direct["clip_i"][0].value, abs=1e-6)

    assert main([*args[:6], str(webm), *args[7:]]) == 0  # default cp,pf on a WebM
    out = capsys.readouterr().out
    assert out.startswith(f"video\t{webm}\t7 frames\t24 fps\t96x64\timage metrics: mean over 3 sampled frames")
    assert "MaSC CP\t" in out and "MaSC PF\t" in out


def test_bad_video_files_are_one_line_errors(files, demo_weights, tmp_path, capsys):
    video, _, ref, mask = files
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(video.read_bytes()[:200])
    common = ["--ref", str(ref), "--metrics", "clip_i", *_settings_args(demo_weights, tmp_path)]
    assert main(["score", *common, "--out", str(cut)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out {cut} (cut.mp4): ") and len(err.strip().splitlines()) == 1
    assert main(["score", *common, "--out", str(video), "--out-mask", str(mask), "--out-mask-frame", "7"]) == 2
    assert "it was drawn on frame 7, but the video has frames 0..6" in capsys.readouterr().err
    assert main(["score", *common, "--out", str(video), "--label", "a", "--label", "b"]) == 2
    assert "1 --ref image(s) but 2 --label(s)" in capsys.readouterr().err


def test_export_dump_and_restore_keep_video_samples(files, demo_settings, tmp_path, capsys):
    video, _, ref, mask = files
    settings = demo_settings.replace(video_frames=2, data_dir=tmp_path / "data")
    wb = build_workbench(settings)
    mask_arr = np.asarray(Image.open(mask)) > 127
    sample = wb.scoring.make_sample(
        [wb.scoring.load_image(str(ref), "reference image 1")],
        wb.scoring.load_output(str(video)),
        "a green square",
        "square",
        [mask_arr],
        mask_arr,
        out_mask_frame=1,
    )
    report = wb.scoring.score(sample, ["cp", "pf", "gmescore"], user="alice")
    saved = wb.saving.save(sample, user="alice", dataset="vids", names=["cp", "pf", "gmescore"])
    wb.samples.set_for_rating("vids", True, user="alice")  # raters' tasks come from datasets marked for rating
    assert wb.ratings.next_task("rita").sample_id == saved.sample_id
    wb.ratings.submit("rita", saved.sample_id, {"cp": 3, "pf": 1})
    wb.close()
    common = ["--data-dir", str(tmp_path / "data")]

    target = tmp_path / "export.csv"
    assert main(["export", "-o", str(target), "--dataset", "vids", *common]) == 0
    rows = list(csv.DictReader(target.open()))
    assert len(rows) == 1 and rows[0]["output_sha256"] == sample.out.sha256
    assert float(rows[0]["metric:gmescore"]) == pytest.approx(report.values["gmescore"].value)
    assert rows[0]["rating:rita:cp"] == "3"

    dump, again = tmp_path / "dump.json", tmp_path / "again.json"
    assert main(["db", "dump", str(dump), "--with-blobs", *common]) == 0
    assert main(["db", "restore", str(dump), "--data-dir", str(tmp_path / "fresh")]) == 0
    assert main(["db", "dump", str(again), "--with-blobs", "--data-dir", str(tmp_path / "fresh")]) == 0
    assert json.loads(dump.read_text()) == json.loads(again.read_text())
    from storage import open_store

    with open_store(None, tmp_path / "fresh") as store:
        restored = store.samples.get(saved.sample_id)
        assert store.images.read(restored.output, verify=True) == video.read_bytes()
        assert store.images.media_type(restored.output) == "video/mp4"
        assert store.masks.current(saved.sample_id)["output", 0].params["frame"] == 1
        pf = next(v for v in store.metrics.history(saved.sample_id) if v.metric == "pf")
        assert pf.provenance.params["video_frames"]["indices"] == [0, 6]
