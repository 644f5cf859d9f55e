"""Batch over a dataset of videos and images (an OpenS2V import plus a manifest of images): one resumable run,
per-video provenance (the sampled frames), nothing computed twice, video metrics only for videos, masks per frame
from the subject's name, a video stored without its info."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, write_manifest  # noqa: E402

from masc_ui.datasets import read_layout  # noqa: E402
from masc_ui.imaging import open_image, open_video  # noqa: E402
from masc_ui.metrics.registry import score_metrics  # noqa: E402
from masc_ui.metrics.sample import Sample  # noqa: E402
from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.workbench import build_workbench
from masc_ui.workbench.batch import BatchOptions  # noqa: E402
from masc_ui.workbench.ingest import ingest  # noqa: E402
from storage import open_store  # noqa: E402
from tests.datasets.test_opens2v_import import write_opens2v  # noqa: E402
from tests.video_files import encode_video, synthetic_frames  # noqa: E402


@pytest.fixture()
def store(tmp_path: Path):
    with open_store(None, tmp_path / "data") as s:
        yield s


@pytest.fixture(scope="module")
def models() -> ModelRegistry:
    return ModelRegistry()


@pytest.fixture()
def dataset(store, tmp_path):
    manifest, videos = write_opens2v(tmp_path / "eval")
    summary = ingest(store, "s2v", "opens2v", read_layout("opens2v", manifest, videos=videos))
    assert summary.added_samples == 3
    import_manifest(store, "s2v", write_manifest(tmp_path / "m", subjects=1, outputs=2))
    return {s.external_key: s for s in store.samples.list("s2v")}, videos


def _history(store, sample_id: int) -> dict[str, list]:
    out: dict[str, list] = {}
    for v in store.metrics.history(sample_id):
        out.setdefault(v.metric, []).append(v)
    return out


def test_videos_and_images_in_one_resumable_run(store, dataset, demo_settings, models):
    samples, videos = dataset
    settings = demo_settings.replace(video_frames=3)
    options = dict(batch_size=2)
    first = build_workbench(settings, store=store, models=models).batch.run(
        BatchOptions("s2v", ("clip_i", "gmescore"), limit=3, **options)
    )
    assert first.stopped_early and first.scored_samples == 3
    rest = build_workbench(settings, store=store, models=models).batch.run(
        BatchOptions("s2v", ("clip_i", "gmescore"), **options)
    )
    assert first.scored_samples + rest.scored_samples == 5 and not rest.failures
    assert rest.lacking_inputs["gmescore needs a video output"] == 2
    for key, record in samples.items():
        history = _history(store, record.id)
        assert len(history["clip_i"]) == 1, key
        assert len(history.get("gmescore", [])) == (1 if key.startswith("Phantom/") else 0), key
    one = samples["Phantom/singleobj_1"]
    clip_i = _history(store, one.id)["clip_i"][0]
    indices = [int(i) for i in np.linspace(0, 5, 3, dtype=int)]
    assert clip_i.provenance.params["video_frames"]["indices"] == indices and len(clip_i.extras["per_frame"]) == 3
    direct = score_metrics(
        [Sample(refs=(open_image(store.images.read(one.references[0])),), out=open_video(videos / "singleobj_1.mp4"))],
        ["clip_i"],
        settings,
        ModelRegistry(),
    )["clip_i"][0]
    assert clip_i.value == pytest.approx(direct.value, abs=1e-5)

    again = build_workbench(settings, store=store, models=models).batch.run(BatchOptions("s2v", ("clip_i", "gmescore")))
    assert again.scored_samples == 0 and again.values_written == 0
    assert again.already_done == {"clip_i": 5, "gmescore": 3}
    other = build_workbench(settings.replace(video_frames=2), store=store, models=models).batch.run(
        BatchOptions("s2v", ("clip_i",))
    )
    assert other.scored_samples == 3  # another frame count is another provenance for the videos only
    assert (
        "gmescore"
        in build_workbench(settings, store=store, models=models).batch.run(BatchOptions("s2v", ("all",))).metrics
    )


def test_masks_per_frame_from_the_name_for_videos(store, dataset, demo_settings, models):
    samples, _ = dataset
    # thresholds at 0: the tiny random SAM 3 then finds masks that are not doubtful (doubtful ones are not used)
    settings = demo_settings.replace(video_frames=2, text_seg_threshold=0.0, text_seg_min_fraction=0.0)
    summary = build_workbench(settings, store=store, models=models).batch.run(
        BatchOptions("s2v", ("pf",), masks="text", store_masks=True)
    )
    assert summary.scored_samples == 5 and not summary.failures
    video = samples["Phantom/singleobj_2"]
    pf = _history(store, video.id)["pf"][0]
    assert pf.provenance.params["out_mask_frames"]["method"] == "text" and pf.mask_version_ids == ()
    assert ("output", 0) not in store.masks.current(video.id)  # frame masks are not stored as the slot's mask
    assert summary.masks_made >= 3 * 2
    again = build_workbench(settings, store=store, models=models).batch.run(
        BatchOptions("s2v", ("pf",), masks="text", store_masks=True)
    )
    assert again.scored_samples == 0 and again.already_done == {"pf": 5}
    stored = build_workbench(settings, store=store, models=models).batch.run(
        BatchOptions("s2v", ("pf",), masks="stored")
    )
    assert stored.lacking_inputs["pf needs out_mask"] == 3  # the videos have no stored output mask


def test_a_video_stored_without_its_info_is_still_planned_and_scored(store, demo_settings, models):
    data = encode_video(synthetic_frames(5), "mp4")
    ref = store.images.add(open_image(synthetic_frames(1)[0]).data, media_type="image/png")
    out = store.images.add(data, media_type="video/mp4")
    record = store.samples.add("plain", references=[ref], output=out, prompt="a square", subject="square")
    settings = demo_settings.replace(video_frames=2)
    summary = build_workbench(settings, store=store, models=models).batch.run(
        BatchOptions("plain", ("clip_i", "gmescore"))
    )
    assert summary.values_written == 2 and not summary.failures
    assert _history(store, record.id)["clip_i"][0].provenance.params["video_frames"]["frame_count"] == 5
    assert (
        build_workbench(settings, store=store, models=models)
        .batch.run(BatchOptions("plain", ("clip_i", "gmescore")))
        .scored_samples
        == 0
    )
