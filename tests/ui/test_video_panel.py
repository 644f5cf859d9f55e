"""The video pieces of the app, called directly: the Score tab's video panel (load, frame strip, select, brush mask
reused on every frame, masks by name per frame, explain a frame, per-frame plot, table notes, metric list), the
upload box's path check, the rater's player, Browse's poster and Open; and the role gate on the video endpoints."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.imaging import InputVideo
from masc_ui.ui import video_media, video_panel
from masc_ui.ui.score_table import score_table_html
from masc_ui.ui.upload import UploadRefused
from masc_ui.ui.video_panel import VideoState
from masc_ui.workbench import Workbench
from tests.video_files import encode_video, synthetic_frames

METRICS = ["cp", "pf", "clip_i"]


@pytest.fixture()
def wb(demo_settings, tmp_path):
    bench = Workbench(demo_settings.replace(video_frames=4, data_dir=tmp_path / "data"))
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
    layer[box[1]:box[3], box[0]:box[2]] = (255, 42, 120, 255)
    return {"background": np.zeros((size[1], size[0], 3), np.uint8), "layers": [layer], "composite": None}


def _loaded(wb, files) -> VideoState:
    state, note = video_panel.load_video(wb, VideoState(), str(files[0]))
    assert "8 frames at 24 fps" in note and "4 frames below" in note
    return state


def test_load_a_video_gives_the_sampled_frame_strip(wb, files):
    state = _loaded(wb, files)
    assert isinstance(state.video, InputVideo) and [f.index for f in state.frames] == [0, 2, 4, 7]
    items = video_panel.strip_items(state)
    assert [caption for _, caption in items] == ["#0 · 0.00 s", "#2 · 0.08 s", "#4 · 0.17 s", "#7 · 0.29 s"]
    assert items[2][0].size == (96, 64)
    state.masks, state.mask_source = object(), "drawn"  # type: ignore[assignment]
    kept, _ = video_panel.load_video(wb, state, str(files[0]))  # the same video again keeps its mask
    assert kept.mask_source == "drawn"
    cleared, note = video_panel.load_video(wb, state, None)
    assert cleared.video is None and cleared.masks is None and note == ""


def test_bad_files_in_the_video_box_get_clear_errors(wb, files, tmp_path):
    with pytest.raises(InputError, match="holds an image"):
        video_panel.load_video(wb, VideoState(), str(files[1]))
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(files[0].read_bytes()[:300])
    with pytest.raises(InputError, match="output video"):
        video_panel.load_video(wb, VideoState(), str(broken))


def test_a_brush_mask_drawn_on_one_frame_is_reused_on_every_frame(wb, files):
    state = _loaded(wb, files)
    with pytest.raises(InputError, match="click a frame of the strip first"):
        video_panel.brush_mask(wb, state, _brush())
    video_panel.select_frame(state, 2)
    assert state.selected == 4
    with pytest.raises(InputError, match="brush layer is empty"):
        video_panel.brush_mask(wb, state, _brush(box=(0, 0, 0, 0)))
    video_panel.brush_mask(wb, state, _brush())
    assert state.masks.method == "static" and state.masks.params == {"frame": 4} and state.mask_source == "drawn"
    note = video_panel.mask_note(state)
    assert "drawn on frame 4 (0.17 s) is reused unchanged on every frame" in note
    for index in (0, 7):
        assert state.masks.for_frame(index)[20:36, 0:40].all() and state.masks.for_frame(index).sum() == 16 * 40
    assert video_panel.mask_view(state).size == (96, 64)
    assert video_panel.mask_sources(state) == {"out": "drawn"}
    with pytest.raises(InputError, match="no frame at position 9"):
        video_panel.select_frame(state, 9)


def test_masks_by_name_give_one_mask_per_sampled_frame(wb, files):
    state = _loaded(wb, files)
    with pytest.raises(InputError, match="subject name is empty"):
        video_panel.name_masks(wb, state, " ", user="alice")
    video_panel.name_masks(wb, state, "square", user="alice")
    assert state.masks.method == "text" and sorted(state.masks.masks) == [0, 2, 4, 7]
    assert "each of the 4 sampled frames has its own mask, segmented from the subject's name 'square'" in \
        video_panel.mask_note(state)
    assert video_panel.mask_sources(state) == {"out": "text-prompted"}


def test_run_with_a_video_notes_the_frame_mean_plots_each_metric_and_explains_a_frame(wb, files):
    state = _loaded(wb, files)
    video_panel.select_frame(state, 1)
    video_panel.brush_mask(wb, state, _brush())
    ref = wb.load_image(str(files[1]), "reference image 1")
    ref_mask = np.zeros((64, 96), bool)
    ref_mask[20:36, 0:16] = True
    sample = video_panel.video_sample(wb, state, [ref], "a green square moving right", "square", [ref_mask])
    assert sample.out is state.video and sample.out_mask is state.masks
    report = wb.score(sample, METRICS, user="alice")
    notes = video_panel.row_notes(report)
    assert notes == {name: "mean over 4 sampled frames" for name in METRICS}
    html = score_table_html(report, notes=notes)
    assert html.count("mean over 4 sampled frames") == 3
    fig = video_panel.plot_of(wb, state, report)
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 3 and titles[0].startswith("MaSC CP")
    assert list(fig.axes[0].lines[0].get_xdata()) == pytest.approx([0, 2 / 24, 4 / 24, 7 / 24])
    assert list(fig.axes[0].lines[0].get_ydata()) == pytest.approx(report.values["cp"].extras["per_frame"])
    assert video_panel.plot_of(wb, state, None) is None
    cp_map, best, lines, pf_map, title, note = video_panel.explain_frame(wb, state, sample, user="alice")
    assert title == "### Frame 2 (0.08 s)" and best.size[0] > 0 and cp_map is not None
    per_frame = report.values["cp"].extras["per_frame"]
    assert f"CP {per_frame[1]:.4f}" in note


def test_the_metric_list_offers_the_video_metrics_while_a_video_is_loaded(wb, files):
    state = _loaded(wb, files)
    choices, chosen = video_panel.metric_choices(wb, state, ["cp", "clip_i"])
    names = [n for _, n in choices]
    assert {"gmescore", "nexusscore"} <= set(names) and chosen[:2] == ["cp", "clip_i"] and "gmescore" in chosen
    state.reset()
    choices, chosen = video_panel.metric_choices(wb, state, ["cp", "gmescore"])
    assert "gmescore" not in [n for _, n in choices] and chosen == ["cp"]


def test_the_video_box_opens_only_files_uploaded_to_gradio(tmp_path):
    from gradio.data_classes import FileData

    box = video_panel.build_upload()
    with pytest.raises(UploadRefused):
        box.preprocess(FileData(path="/etc/passwd"))
    assert box.preprocess(None) is None


def test_rater_player_browse_poster_and_open(wb, files):
    state = _loaded(wb, files)
    ref = wb.load_image(str(files[1]), "reference image 1")
    video_panel.select_frame(state, 1)
    video_panel.brush_mask(wb, state, _brush())
    sample = video_panel.video_sample(wb, state, [ref], "a square", "square", [None])
    saved = wb.save_sample(sample, user="alice", dataset="videos", names=["clip_i"],
                           mask_sources=video_panel.mask_sources(state))

    task = wb.ratings.next_task("rita")
    image, player = video_media.task_media(task)
    assert image["visible"] is False and player["visible"] is True and player["value"] == str(task.out_video)
    image, player = video_media.task_media(None)
    assert player["visible"] is False

    picture, caption = video_media.poster_preview(wb, saved.sample_id, user="alice")
    assert picture.size == (96, 64) and "poster (first) frame of the output video" in caption
    assert video_media.poster_preview(wb, None, user="alice") == (None, "")

    opened = wb.samples.open(saved.sample_id, user="alice")
    fresh = VideoState()
    path = video_media.open_video(wb, opened, fresh)
    assert open(path, "rb").read() == files[0].read_bytes() and fresh.video == sample.out
    assert fresh.masks.params == {"frame": 2} and fresh.mask_source == "drawn" and len(fresh.frames) == 4
    reopened, _ = video_panel.load_video(wb, fresh, path)  # the box hands the file back: the mask stays
    assert reopened.masks is fresh.masks


def test_the_video_use_cases_are_for_admins(demo_settings, files, tmp_path):
    bench = Workbench(demo_settings.replace(video_frames=4, data_dir=tmp_path / "d",
                                            users="root:pw-root-123:admin,rita:pw-rita-123:rater"))
    try:
        state = _loaded(bench, files)
        ref = bench.load_image(str(files[1]), "reference image 1")
        sample = video_panel.video_sample(bench, state, [ref], "a square", "square", [None])
        video_panel.select_frame(state, 0)
        with pytest.raises(Exception, match="admin"):
            video_panel.explain_frame(bench, state, sample, user="rita")
        with pytest.raises(Exception, match="admin"):
            video_panel.name_masks(bench, state, "square", user="rita")
        with pytest.raises(Exception, match="admin"):
            video_media.poster_preview(bench, 1, user="rita")
    finally:
        bench.close()
