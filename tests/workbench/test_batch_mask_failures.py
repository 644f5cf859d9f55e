"""Batch scoring when text-prompted masks cannot be made: the mask-free metrics are still scored and stored, the
metrics that need a mask get an error value with the reason; the tiny SAM 3 is written when missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, write_manifest  # noqa: E402

from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.workbench import build_workbench  # noqa: E402
from masc_ui.workbench.batch import BatchOptions  # noqa: E402
from storage import open_store  # noqa: E402

METRICS = ("cp", "pf", "clip_i", "dino_i")


@pytest.fixture()
def store(tmp_path: Path):
    with open_store(None, tmp_path / "data") as s:
        yield s


def _latest(store, dataset: str = "d") -> dict[tuple[int, str], object]:
    return {
        (sample.id, v.metric): v for sample in store.samples.list(dataset) for v in store.metrics.history(sample.id)
    }


def test_unavailable_segmenter_costs_only_the_metrics_that_need_masks(store, demo_settings, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=3))
    broken = demo_settings.replace(sam3_model=str(tmp_path / "no-sam3"))
    options = BatchOptions("d", METRICS, masks="text", store_masks=True)
    summary = build_workbench(broken, store=store, models=ModelRegistry()).batch.run(options)

    values = _latest(store)
    assert len(values) == 3 * len(METRICS)
    for (_, metric), value in values.items():
        if metric in ("clip_i", "dino_i"):
            assert value.value is not None and value.reason is None
        else:
            assert value.value is None
            assert value.reason.startswith("error: masks could not be made: ModelUnavailableError")
            assert "no-sam3" in value.reason and value.extras["error"] == "masks"
    assert summary.values_written == 12 and summary.masks_made == 0
    assert len(summary.failures) == 3 and sum(summary.mask_failures.values()) == 3
    text = "\n".join(summary.lines())
    assert "masks could not be made (the metrics that need them stored as errors, the others computed)" in text
    assert all(store.masks.current(s.id) == {} for s in store.samples.list("d"))

    again = build_workbench(broken, store=store, models=ModelRegistry()).batch.run(options)
    assert again.values_written == 0  # the errors count as done until --retry-failed

    confident = demo_settings.replace(text_seg_threshold=0.0, text_seg_min_fraction=0.0)  # no doubtful mask
    fixed = build_workbench(confident, store=store, models=ModelRegistry()).batch.run(
        BatchOptions("d", METRICS, masks="text", store_masks=True, retry_failed=True)
    )
    assert fixed.values_written == 6 and not fixed.failures and fixed.masks_made == 6
    for sample in store.samples.list("d"):
        for metric in ("cp", "pf"):
            assert store.metrics.history(sample.id, metric)[-1].value is not None


def test_a_segmentation_that_raises_keeps_the_mask_free_values(store, demo_settings, tmp_path):
    """Not only loading: a segmenter failing on an image costs that sample's mask-needing metrics alone."""
    from masc_ui.segmentation import build_text_segmenter

    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=2))
    models = ModelRegistry()
    real = build_text_segmenter(demo_settings, models)
    bad_output = store.samples.get_by_key("d", "toy0-1").output

    class FailsOnOneImage:
        model_id = real.model_id
        provenance = real.provenance

        def segment(self, image, text, threshold=0.5, min_fraction=0.05):
            if image.sha256 == bad_output:
                raise RuntimeError("CUDA error: out of memory")
            return real.segment(image, text, threshold, min_fraction)

    summary = build_workbench(demo_settings.replace(text_seg_threshold=0.0), store=store, models=models).batch.run(
        BatchOptions("d", ("pf", "clip_i"), masks="text"), segmenter=FailsOnOneImage()
    )
    values = _latest(store)
    bad = store.samples.get_by_key("d", "toy0-1").id
    assert values[bad, "clip_i"].value is not None
    assert values[bad, "pf"].value is None and "CUDA error: out of memory" in values[bad, "pf"].reason
    good = store.samples.get_by_key("d", "toy0-0").id
    assert values[good, "pf"].value is not None and values[good, "clip_i"].value is not None
    assert [sid for sid, _ in summary.failures] == [bad]


def test_the_demo_sam3_is_written_when_missing(tmp_path):
    """A demo profile on a fresh weights folder: the segmenter writes its tiny checkpoint like every demo model."""
    import numpy as np

    from masc_ui.segmentation import build_text_segmenter
    from masc_ui.settings import Settings

    weights = tmp_path / "fresh-weights"
    settings = Settings(profile="demo", demo_weights_dir=weights, device="cpu", dtype="float32", data_dir=tmp_path)
    seg = build_text_segmenter(settings, ModelRegistry()).segment(np.zeros((32, 32, 3), np.uint8), "dog")
    assert seg.mask.shape == (32, 32) and (weights / "sam3" / "masc-demo.json").is_file()
