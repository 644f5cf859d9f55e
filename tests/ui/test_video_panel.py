"""The video pieces of the app, called directly: the Score tab's video panel (load, frame strip, select, brush mask
reused on every frame, masks by name per frame, offered and undoable like the images' masks), the sample on screen
with a video output (Run's table notes and per-frame plot, Explain of the selected frame, Save's mask source), the
upload box's path check, the rater's player, Browse's poster and Open; and the role checks of the video use cases."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.imaging import InputVideo
from masc_ui.metrics.video.frame_masks import FrameMasks
from masc_ui.ui import score_actions, video_media, video_panel
from masc_ui.ui.score_table import frame_notes, score_table_html
from masc_ui.ui.upload import UploadRefused
from masc_ui.workbench import build_workbench
from masc_ui.workbench.masks import MaskSession
from masc_ui.workbench.video_session import VideoSession
from tests.video_files import encode_video, synthetic_frames

METRICS = ["cp", "pf", "clip_i"]


@pytest.fixture()
def wb(demo_settings, tmp_path):
    bench = build_workbench(demo_settings.replace(video_frames=4, data_dir=tmp_path / "data"))
    yield bench
    bench.close()


@pytest.fixture()
def files(tmp_path):
    frames = synthetic_frames(8)
    video, ref = tmp_path / "generated.mp4", tmp_path / "reference.png"
    video.write_bytes(encode_video(frames, "mp4"))
    Image.fromarray(frames[0]).save(ref)
    return video, ref


def _brush(size=(96, 64), box=(0, 20, 40, 36)) -> dict:
    """An ImageEditor value whose brush layer paints `box` (x0, y0, x1, y1)."""
    layer = np.zeros((size[1], size[0], 4), np.uint8)
    layer[box[1] : box[3], box[0] : box[2]] = (255, 42, 120, 255)
    return {"background": np.zeros((size[1], size[0], 3), np.uint8), "layers": [layer], "composite": None}


def _loaded(wb, files) -> VideoSession:
    vs = VideoSession()
    note = video_panel.load_video(wb, vs, str(files[0]))
    assert "8 frames at 24 fps" in note and "4 frames below" in note
    return vs


def _per_frame(doubtful=()) -> FrameMasks:
    masks = {i: np.ones((64, 96), bool) for i in (0, 2, 4, 7)}
    return FrameMasks.per_frame(masks, "text", {"text": "square", "model_id": "sam3-demo", "doubtful": list(doubtful)})


def test_load_a_video_gives_the_sampled_frame_strip(wb, files):
    vs = _loaded(wb, files)
    assert isinstance(vs.video, InputVideo) and [f.index for f in vs.frames] == [0, 2, 4, 7]
    items = video_panel.strip_items(vs)
    assert [caption for _, caption in items] == ["#0 · 0.00 s", "#2 · 0.08 s", "#4 · 0.17 s", "#7 · 0.29 s"]
    assert items[2][0].size == (96, 64)
    vs.set_masks(_per_frame(), "text-prompted")
    video_panel.load_video(wb, vs, str(files[0]))  # the same video again (an opened sample) keeps its mask
    assert vs.source == "text-prompted"
    assert video_panel.load_video(wb, vs, None) == ""
    assert vs.video is None and vs.masks is None and vs.history == []


def test_bad_files_in_the_video_box_get_clear_errors(wb, files, tmp_path):
    with pytest.raises(InputError, match=r"this is an image \(PNG\), not a video: put images in the output image box"):
        video_panel.load_video(wb, VideoSession(), str(files[1]))
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(files[0].read_bytes()[:300])
    noise = tmp_path / "noise.mp4"
    noise.write_bytes(np.random.default_rng(1).bytes(20_000))
    for bad in (broken, noise):
        with pytest.raises(InputError, match=rf"^output video \({bad.name}\): not a video FFmpeg can read") as refused:
            video_panel.load_video(wb, VideoSession(), str(bad))
        words = str(refused.value)
        assert "Pillow" not in words and "Errno" not in words and "upload an MP4 (H.264) or WebM (VP9)" in words


def test_a_refused_upload_is_said_once_by_the_emptied_box():
    vs = VideoSession(refused="⚠ output video (x.mp4): not a video")
    assert video_panel.refusal_note(vs, None) == "⚠ output video (x.mp4): not a video"  # the box emptied after it
    assert video_panel.refusal_note(vs, None) == ""  # the user's own ✕ later: nothing to say
    vs.refused = "⚠ old"
    assert video_panel.refusal_note(vs, "/tmp/next.mp4") == "" and vs.refused is None


def test_a_brush_mask_drawn_on_one_frame_is_reused_on_every_frame(wb, files):
    vs = _loaded(wb, files)
    assert vs.selected == 0 and "Selected: frame 0" in video_panel.frame_label(vs)  # a new video: its first frame
    vs.selected = None
    with pytest.raises(InputError, match="click a frame of the strip first"):
        video_panel.brush_mask(wb, vs, _brush())
    video_panel.select_frame(vs, 2)
    assert vs.selected == 4 and "frame 4" in video_panel.frame_label(vs)
    with pytest.raises(InputError, match="brush layer is empty"):
        video_panel.brush_mask(wb, vs, _brush(box=(0, 0, 0, 0)))
    msg = video_panel.brush_mask(wb, vs, _brush())
    assert "drawn on frame 4: 640 px, reused on every frame" in msg and "replaced" not in msg
    assert vs.masks.method == "static" and vs.masks.params == {"frame": 4} and vs.source == "drawn"
    assert "drawn on frame 4 (0.17 s) is reused unchanged on every frame" in video_panel.mask_rule(vs)
    for index in (0, 7):
        assert vs.masks.for_frame(index)[20:36, 0:40].all() and vs.masks.for_frame(index).sum() == 16 * 40
    assert video_panel.mask_view(vs).size == (96, 64)
    assert vs.mask_sources() == {"out": "drawn"}
    with pytest.raises(InputError, match="no frame at position 9"):
        video_panel.select_frame(vs, 9)


def test_the_videos_mask_is_never_replaced_silently(wb, files, monkeypatch):
    vs = _loaded(wb, files)
    offered = {"masks": _per_frame()}
    monkeypatch.setattr(wb.segmentation, "segment_frames_by_name", lambda video, subject, user: offered["masks"])
    msg = video_panel.name_masks(wb, vs, "square", user="alice")  # no mask yet: applied
    assert "subject-name masks applied" in msg and vs.source == "text-prompted" and vs.pending is None
    assert (
        "each of the 4 sampled frames has its own mask, segmented from the subject's name 'square'"
        in video_panel.mask_rule(vs)
    )
    video_panel.select_frame(vs, 0)
    video_panel.brush_mask(wb, vs, _brush())
    assert vs.source == "drawn"
    msg = video_panel.name_masks(wb, vs, "square", user="alice")  # would replace the brush mask: offered
    assert "would replace the current brush mask" in msg and vs.source == "drawn" and vs.pending is not None
    assert video_panel.proposal_view(vs).size == (96, 64)
    assert vs.discard_pending() == "proposed mask discarded; the video's mask is unchanged" and vs.source == "drawn"
    offered["masks"] = _per_frame(doubtful=[2, 7])
    vs.clear()
    msg = video_panel.name_masks(wb, vs, "square", user="alice")  # doubtful frames: offered, even without a mask
    assert "doubtful" in msg and "frame(s) 2, 7 of 4" in msg and vs.masks is None
    assert "applied" in vs.apply_pending() and vs.source == "text-prompted"
    assert "doubtful on frame(s) 2, 7" in video_panel.mask_rule(vs)
    assert vs.undo() == "mask change undone: the video has no mask again"  # the clear before
    assert vs.undo() == "mask change undone: back to the brush mask" and vs.masks.method == "static"
    session = MaskSession(video=vs)
    session.sources["out"] = "sam"  # an output image's mask left over: the video's mask is the one saved
    assert score_actions.mask_sources(session) == {"out": "drawn"}
    session.reset()
    assert not session.video.loaded and score_actions.mask_sources(session) == {}


def test_masks_by_name_with_the_demo_segmenter(wb, files):
    vs = _loaded(wb, files)
    with pytest.raises(InputError, match="subject name is empty"):
        video_panel.name_masks(wb, vs, " ", user="alice")
    msg = video_panel.name_masks(wb, vs, "square", user="alice")
    made = vs.masks if vs.pending is None else vs.pending.masks
    assert made.method == "text" and sorted(made.masks) == [0, 2, 4, 7] and "'square' in 4 frames" in msg
    assert (vs.pending is not None) == bool(made.params.get("doubtful")), msg


def test_run_with_a_video_notes_the_frame_mean_plots_each_metric_and_explains_a_frame(wb, files):
    session = MaskSession(video=_loaded(wb, files))
    vs = session.video
    video_panel.select_frame(vs, 1)
    video_panel.brush_mask(wb, vs, _brush())
    ref_mask = np.zeros((64, 96), bool)
    ref_mask[20:36, 0:16] = True
    ref = session.uploads.get(str(files[1]), "reference image 1", wb.scoring.load_image)
    session.set_mask("ref0", ref_mask, "drawn", ref)
    sample = score_actions.sample_on_screen(
        wb, session, str(files[1]), None, None, "a green square moving right", "square"
    )
    assert sample.out is vs.video and sample.out_mask is vs.masks and sample.ref_masks[0].sum() == 16 * 16
    report = wb.scoring.score(sample, METRICS, user="alice")
    notes = frame_notes(report)
    assert notes == {name: "mean over 4 sampled frames" for name in METRICS}
    assert score_table_html(report).count("mean over 4 sampled frames") == 3
    fig = video_panel.plot_of(wb, vs, report)
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 3 and titles[0].startswith("MaSC CP")
    assert list(fig.axes[0].lines[0].get_xdata()) == pytest.approx([0, 2 / 24, 4 / 24, 7 / 24])
    assert list(fig.axes[0].lines[0].get_ydata()) == pytest.approx(report.values["cp"].extras["per_frame"])
    assert video_panel.plot_of(wb, vs, None) is None
    frame, ex = video_panel.explain_frame(wb, vs, sample, user="alice")
    assert frame.index == 2 and ex.out_best.size[0] > 0 and any(m is not None for m in ex.cp_ref)
    assert ex.cp == pytest.approx(report.values["cp"].extras["per_frame"][1], abs=1e-4)
    vs.selected = None  # nothing selected: Explain draws the first sampled frame
    assert video_panel.explain_frame(wb, vs, sample, user="alice")[0].index == 0


def test_the_metric_list_offers_the_video_metrics_while_a_video_is_loaded(wb, files):
    vs = _loaded(wb, files)
    choices, chosen = video_panel.metric_choices(wb, vs, ["cp", "clip_i"])
    names = [n for _, n in choices]
    assert {"gmescore", "nexusscore"} <= set(names) and chosen[:2] == ["cp", "clip_i"] and "gmescore" in chosen
    assert any("GmeScore" in label for label, _ in choices)
    vs.reset()
    choices, chosen = video_panel.metric_choices(wb, vs, ["cp", "gmescore"])
    assert "gmescore" not in [n for _, n in choices] and chosen == ["cp"]


def test_the_video_box_opens_only_files_uploaded_to_gradio():
    from gradio.data_classes import FileData

    box = video_panel.build_upload()
    with pytest.raises(UploadRefused):
        box.preprocess(FileData(path="/etc/passwd"))
    assert box.preprocess(None) is None


def test_rater_player_browse_poster_and_open(wb, files):
    vs = _loaded(wb, files)
    ref = wb.scoring.load_image(str(files[1]), "reference image 1")
    video_panel.select_frame(vs, 1)
    video_panel.brush_mask(wb, vs, _brush())
    sample = wb.scoring.make_sample([ref], vs.video, "a square", "square", [None], vs.masks)
    saved = wb.saving.save(sample, user="alice", dataset="videos", names=["clip_i"], mask_sources=vs.mask_sources())
    wb.samples.set_for_rating("videos", True, user="alice")

    task = wb.ratings.next_task("rita")
    image, player = video_media.task_media(task)
    assert image["visible"] is False and player["visible"] is True and player["value"] == str(task.out_video)
    image, player = video_media.task_media(None)
    assert player["visible"] is False
    # The same kind of output as on screen: plain values, no update (Gradio rebuilds a component per update).
    assert video_media.task_media(task, "video") == (None, str(task.out_video))
    assert video_media.task_media(None, "none") == (None, None)
    assert video_media.task_media(task, "image")[1]["visible"] is True  # the kind changes: the boxes swap

    picture, caption = video_media.poster_preview(wb, saved.sample_id, user="alice")
    assert picture.size == (96, 64) and "poster (first) frame of the output video" in caption
    assert video_media.poster_preview(wb, None, user="alice") == (None, "")
    with pytest.raises(InputError, match="not in the database"):
        video_media.poster_preview(wb, 999, user="alice")

    opened = wb.samples.open(saved.sample_id, user="alice")
    fresh = VideoSession()
    path = video_media.open_video(wb, opened, fresh)
    assert open(path, "rb").read() == files[0].read_bytes() and fresh.video == sample.out
    assert fresh.masks.params == {"frame": 2} and fresh.source == "drawn" and len(fresh.frames) == 4
    assert fresh.history == []  # the stored mask is where the opened sample starts, not a change to undo
    video_panel.load_video(wb, fresh, path)  # the box hands the file back: the mask stays
    assert fresh.masks is opened.out_mask


def test_the_video_use_cases_are_for_admins(demo_settings, files, tmp_path):
    bench = build_workbench(
        demo_settings.replace(
            video_frames=4, data_dir=tmp_path / "d", users="root:pw-root-123:admin,rita:pw-rita-123:rater"
        )
    )
    try:
        vs = _loaded(bench, files)
        ref = bench.scoring.load_image(str(files[1]), "reference image 1")
        sample = bench.scoring.make_sample([ref], vs.video, "a square", "square", [None])
        video_panel.select_frame(vs, 0)
        with pytest.raises(Exception, match="admin"):
            video_panel.explain_frame(bench, vs, sample, user="rita")
        with pytest.raises(Exception, match="admin"):
            video_panel.name_masks(bench, vs, "square", user="rita")
        with pytest.raises(Exception, match="admin"):
            video_media.poster_preview(bench, 1, user="rita")
    finally:
        bench.close()


def test_a_video_starting_at_one_second_shows_one_time_base_everywhere(wb, files, tmp_path):
    """A cut whose first timestamp is 1.0 s: the strip, the plot's axis, the selected-frame marker and the mask's note
    all count seconds from the first frame (frame i at i / fps), never the file's own timestamps."""
    late = tmp_path / "late.mp4"
    late.write_bytes(encode_video(synthetic_frames(8), "mp4", fps=24, start_s=1.0))
    session = MaskSession()
    vs = session.video
    video_panel.load_video(wb, vs, str(late))
    times = [0, 2 / 24, 4 / 24, 7 / 24]
    assert [c for _, c in video_panel.strip_items(vs)] == ["#0 · 0.00 s", "#2 · 0.08 s", "#4 · 0.17 s", "#7 · 0.29 s"]
    video_panel.select_frame(vs, 3)
    assert "**Selected: frame 7** (0.29 s)" in video_panel.frame_label(vs)
    video_panel.brush_mask(wb, vs, _brush())
    assert "drawn on frame 7 (0.29 s)" in video_panel.mask_rule(vs)
    sample = score_actions.sample_on_screen(wb, session, str(files[1]), None, None, "a green square", "square")
    fig = video_panel.plot_of(wb, vs, wb.scoring.score(sample, ["clip_i"], user="alice"))
    assert list(fig.axes[0].lines[0].get_xdata()) == pytest.approx(times)  # the axis: the strip's times
    marker = [line for line in fig.axes[0].lines if line.get_color() == "#d1495b"]
    assert [line.get_xdata()[0] for line in marker] == pytest.approx([7 / 24])  # on the selected frame
