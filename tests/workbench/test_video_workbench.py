"""Video outputs through the use cases: Run, Save (the video blob, its info, the mask drawn on one frame, the
sampled frames in every value's provenance; one transaction; idempotent), open, stored scores, poster, the rater's
task, per-frame series, Explain of one frame, masks per frame from the subject's name."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.imaging import InputImage, InputVideo, open_image, open_video, read_frames
from masc_ui.metrics.sample import MetricValue
from masc_ui.metrics.video.frame_masks import FrameMasks
from masc_ui.workbench import Workbench, build_workbench
from masc_ui.workbench.recorder import NewSample, ScoredSample
from tests.video_files import encode_video, synthetic_frames

METRICS = ["cp", "pf", "clip_i", "gmescore"]


@pytest.fixture()
def wb(demo_settings):
    bench = build_workbench(demo_settings.replace(video_frames=4))
    yield bench
    bench.close()


@pytest.fixture()
def files(tmp_path):
    frames = synthetic_frames(8)
    video, ref = tmp_path / "generated.mp4", tmp_path / "reference.png"
    video.write_bytes(encode_video(frames, "mp4"))
    Image.fromarray(frames[0]).save(ref)
    mask = np.zeros((64, 96), bool)
    mask[20:36, 0:40] = True
    return video, ref, mask


def _sample(wb: Workbench, files, frame: int = 2):
    video, ref, mask = files
    return wb.scoring.make_sample(
        [wb.scoring.load_image(str(ref), "reference image 1")],
        wb.scoring.load_output(str(video)),
        "a green square moving right",
        "square",
        [mask],
        mask,
        out_mask_frame=frame,
    )


def test_save_a_video_sample_and_find_it_again(wb, files):
    sample = _sample(wb, files)
    assert isinstance(sample.out, InputVideo) and sample.out_mask.params == {"frame": 2}
    report = wb.scoring.score(sample, METRICS, user="alice")
    assert [r.metric for r in report.rows] == METRICS and all(r.value is not None for r in report.rows)
    saved = wb.saving.save(sample, user="alice", dataset="videos", names=METRICS)
    assert saved.new_values == len(METRICS) and saved.new_masks == 2

    store = wb.database.store
    record = store.samples.get(saved.sample_id)
    assert record.output == sample.out.sha256 and store.images.media_type(record.output) == "video/mp4"
    assert store.images.read(record.output) == files[0].read_bytes()  # the file as uploaded
    assert record.info["video"]["frame_count"] == 8 and record.info["video"]["codec"] == "h264"
    out_mask = store.masks.current(saved.sample_id)["output", 0]
    assert out_mask.params == {"frame": 2, "propagation": "static"} and out_mask.source == "drawn"
    stored = {v.metric: v for v in store.metrics.history(saved.sample_id)}
    assert stored["pf"].mask_version_ids == (out_mask.id,) and stored["clip_i"].mask_version_ids == ()
    assert stored["cp"].provenance.params["video_frames"]["indices"] == [0, 2, 4, 7]
    assert stored["gmescore"].provenance.params["video_frames"]["count"] == 32
    assert stored["pf"].provenance.params["out_mask_frames"]["method"] == "static"
    assert stored["cp"].extras["per_frame"] == pytest.approx(report.values["cp"].extras["per_frame"])
    again = wb.saving.save(sample, user="alice", dataset="videos", names=METRICS)
    assert again.new_values == again.new_masks == 0 and "nothing changed" in again.message

    opened = wb.samples.open(saved.sample_id, user="bob")
    assert opened.out == sample.out and isinstance(opened.out, InputVideo)
    assert isinstance(opened.out_mask, FrameMasks) and opened.out_mask.params["frame"] == 2
    rows = {r.metric: r for r in wb.samples.stored_report(saved.sample_id, user="bob").rows}
    assert rows["gmescore"].value == pytest.approx(report.values["gmescore"].value) and "nexusscore" in rows
    poster = wb.samples.poster(saved.sample_id, user="bob")
    assert isinstance(poster, InputImage) and poster.size == (96, 64)
    assert poster == wb.videos.poster(sample.out) == wb.videos.sampled_frames(sample.out)[0].image


def test_the_rater_gets_the_video_to_play(wb, files):
    saved = wb.saving.save(_sample(wb, files), user="alice", dataset="videos", names=["clip_i"])
    wb.samples.set_for_rating("videos", True, user="alice")  # raters' tasks come from datasets marked for rating
    task = wb.ratings.next_task("rita")
    assert task.sample_id == saved.sample_id and task.is_video
    assert task.out_media_type == "video/mp4" and task.out_video.suffix == ".mp4"
    played, stored = open_video(task.out_video), open_video(files[0])
    every = range(stored.frame_count)  # every frame as stored, the file without its metadata (test_blind_files.py)
    assert played.frame_count == stored.frame_count and all(
        np.array_equal(np.asarray(a.image.pixels), np.asarray(b.image.pixels))
        for a, b in zip(read_frames(played, every), read_frames(stored, every))
    )
    assert task.out.suffix == ".png" and Image.open(task.out).size == (96, 64)  # the poster frame
    wb.ratings.submit("rita", task.sample_id, {"cp": 3, "pf": 2}, seconds_spent=4.0)
    assert wb.ratings.progress("rita").rated == 1


def test_frame_series_strip_and_explain_one_frame(wb, files):
    sample = _sample(wb, files)
    report = wb.scoring.score(sample, ["cp", "pf", "clip_i"], user="alice")
    strip = wb.videos.sampled_frames(sample.out)
    assert [f.index for f in strip] == [0, 2, 4, 7]
    series = {s.metric: s for s in wb.videos.frame_series(report.values, sample.out)}
    assert set(series) == {"cp", "pf", "clip_i"}
    cp = series["cp"]
    assert cp.frames == [0, 2, 4, 7] and cp.times_s == pytest.approx([i / 24 for i in cp.frames])
    assert cp.value == pytest.approx(np.mean(cp.values)) and cp.rows()[1] == {
        "metric": "MaSC CP",
        "frame": 2,
        "time_s": pytest.approx(2 / 24),
        "value": cp.values[1],
    }
    explained = wb.scoring.explain_frame(sample, 4, user="alice")
    assert explained.cp == pytest.approx(cp.values[2], abs=1e-5) and explained.out_best is not None
    assert explained.pf == pytest.approx(series["pf"].values[2], abs=1e-5)
    with pytest.raises(InputError, match="frame 8 does not exist: the video has frames 0..7"):
        wb.scoring.explain_frame(sample, 8, user="alice")
    with pytest.raises(InputError, match="choose one of its frames"):
        wb.scoring.explain(sample, user="alice")


def test_masks_per_frame_from_the_subject_name_are_described_not_stored(wb, files):
    sample = _sample(wb, files)
    masks = wb.segmentation.segment_frames_by_name(sample.out, "square", user="alice")
    assert masks.method == "text" and sorted(masks.masks) == [0, 2, 4, 7] and masks.params["text"] == "square"
    by_name = wb.scoring.make_sample(
        list(sample.refs), sample.out, sample.prompt, sample.subject, sample.ref_masks, masks
    )
    saved = wb.saving.save(by_name, user="alice", dataset="videos", names=["pf"])
    store = wb.database.store
    assert ("output", 0) not in store.masks.current(saved.sample_id)  # one mask per frame: not a slot's mask
    pf = store.metrics.history(saved.sample_id)[0]
    assert pf.mask_version_ids == () and pf.provenance.params["out_mask_frames"]["method"] == "text"
    assert pf.provenance.params["out_mask_frames"]["model_id"] == masks.params["model_id"]


def test_a_video_sample_is_recorded_in_one_transaction(wb, files):
    sample = _sample(wb, files)
    value = MetricValue("clip_i", 0.5, provenance={"model_id": "m", "params": {}, "code_version": "t"})
    with pytest.raises(Exception, match="999999"):
        wb.recorder.record(
            [ScoredSample(NewSample(sample, "videos"), [value]), ScoredSample(999_999, [value])], user="alice"
        )
    store = wb.database.store
    assert not store.images.known(sample.out.sha256)  # the video's blob row went with the failed transaction
    assert "videos" not in [d.name for d in store.samples.datasets()]
    recorded = wb.recorder.record([ScoredSample(NewSample(sample, "videos"), [value])], user="alice")
    assert recorded[0].new_values == 1 and store.images.known(sample.out.sha256)


def test_bad_video_inputs_are_refused_clearly(wb, files, tmp_path):
    video, ref, mask = files
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(video.read_bytes()[: len(video.read_bytes()) // 3])
    with pytest.raises(InputError, match="broken.mp4"):
        wb.scoring.load_output(str(broken))
    out = wb.scoring.load_output(str(video))
    with pytest.raises(InputError, match="it was drawn on frame 9, but the video has frames 0..7"):
        wb.scoring.make_sample([open_image(str(ref))], out, "p", "s", [mask], mask, out_mask_frame=9)
    image = wb.scoring.make_sample([open_image(str(ref))], open_image(str(ref)), "p", "s")
    with pytest.raises(InputError, match=r"unknown metric\(s\) \['gmescore'\]"):
        wb.scoring.score(image, ["gmescore"], user="a")
    with pytest.raises(InputError, match="frame masks belong to a video output"):
        wb.scoring.make_sample([open_image(str(ref))], open_image(str(ref)), "p", "s", [], FrameMasks.static(mask))
