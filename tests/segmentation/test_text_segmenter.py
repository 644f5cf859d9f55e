"""Segmentation by the subject's name: instance union, thresholds, doubtful flags, the tiny SAM 3 end to end."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.segmentation import TextSegmenter, build_text_segmenter, combine_instances, segment_by_text


def _instances() -> tuple[np.ndarray, list[float]]:
    masks = np.zeros((3, 10, 10), dtype=bool)
    masks[0, :5, :5] = True  # 25 px
    masks[1, 3:8, 3:8] = True  # 25 px, overlaps the first by 4
    masks[2, 9, 9] = True  # 1 px
    return masks, [0.9, 0.6, 0.3]


def test_union_of_instances_above_threshold():
    masks, scores = _instances()
    seg = combine_instances(masks, scores, text="hat", threshold=0.5, min_fraction=0.05)
    np.testing.assert_array_equal(seg.mask, masks[0] | masks[1])
    assert seg.mask.dtype == bool and seg.mask.shape == (10, 10)
    assert seg.n_instances == 2 and seg.scores == [0.9, 0.6]
    assert seg.fraction == pytest.approx(46 / 100)
    assert not seg.doubtful and seg.reason is None and seg.text == "hat"


def test_threshold_is_strict_and_scores_are_sorted():
    masks, _ = _instances()
    seg = combine_instances(masks, [0.3, 0.6, 0.9], text="hat", threshold=0.6, min_fraction=0.0)
    assert seg.n_instances == 1 and seg.scores == [0.9]
    seg = combine_instances(masks, [0.3, 0.6, 0.9], text="hat", threshold=0.0, min_fraction=0.0)
    assert seg.scores == [0.9, 0.6, 0.3] and seg.n_instances == 3


def test_small_mask_is_doubtful_not_dropped():
    masks, scores = _instances()
    seg = combine_instances(masks[2:], scores[2:], text="hat", threshold=0.1, min_fraction=0.05)
    assert seg.doubtful and seg.mask.sum() == 1
    assert "1.0% of the image" in seg.reason and "5%" in seg.reason


def test_nothing_found_is_doubtful_with_the_best_score():
    masks, scores = _instances()
    seg = combine_instances(masks, scores, text="hat", threshold=0.95, min_fraction=0.05, best_score=0.9)
    assert seg.doubtful and seg.n_instances == 0 and seg.scores == [] and not seg.mask.any()
    assert seg.fraction == 0.0 and "'hat'" in seg.reason and "0.95" in seg.reason and "best 0.90" in seg.reason
    empty = combine_instances(np.zeros((0, 4, 6), bool), [], text="dog", threshold=0.5, min_fraction=0.05)
    assert empty.mask.shape == (4, 6) and empty.doubtful


def test_inconsistent_instances_are_refused():
    with pytest.raises(InputError, match="N, H, W"):
        combine_instances(np.zeros((4, 4), bool), [0.5], text="x", threshold=0.5, min_fraction=0.05)
    with pytest.raises(InputError, match="2 instance masks but 1 scores"):
        combine_instances(np.zeros((2, 4, 4), bool), [0.5], text="x", threshold=0.5, min_fraction=0.05)


# --- the tiny SAM 3 ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def segmenter(seg_weights) -> TextSegmenter:
    return TextSegmenter(str(seg_weights / "sam3"), "cpu", "float32")


def _reference(seg_weights, image, text, threshold):
    """Instance masks and scores straight from transformers' Sam3Model + Sam3Processor post-processing."""
    from transformers import Sam3Model, Sam3Processor

    path = seg_weights / "sam3"
    model, processor = Sam3Model.from_pretrained(path).eval(), Sam3Processor.from_pretrained(path)
    inputs = processor(images=image, text=text, return_tensors="pt")
    with torch.no_grad():
        outputs = model(
            pixel_values=inputs["pixel_values"], input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]
        )
    found = processor.post_process_instance_segmentation(
        outputs, threshold=threshold, mask_threshold=0.5, target_sizes=[(image.height, image.width)]
    )[0]
    return found["masks"].numpy().astype(bool), found["scores"].numpy()


def test_tiny_sam3_end_to_end(segmenter, seg_weights, make_image):
    image = make_image(96, 64)
    every = segmenter.segment(image, "hat", threshold=0.0, min_fraction=0.0)
    assert every.mask.shape == (64, 96) and every.mask.dtype == bool
    assert every.n_instances == 8 == len(every.scores)  # the tiny model has 8 queries, all scores > 0
    assert every.scores == sorted(every.scores, reverse=True)
    masks, scores = _reference(seg_weights, image, "hat", 0.0)
    np.testing.assert_array_equal(every.mask, masks.any(axis=0))
    np.testing.assert_allclose(every.scores, sorted(scores, reverse=True), rtol=1e-5)
    assert every.fraction == pytest.approx(masks.any(axis=0).mean())

    middle = float(np.median(every.scores))  # keeps exactly the instances scoring above the median
    part = segmenter.segment(image, "hat", threshold=middle, min_fraction=0.0)
    ref_masks, ref_scores = _reference(seg_weights, image, "hat", middle)
    assert part.n_instances == int((np.asarray(every.scores) > middle).sum()) == len(ref_scores)
    np.testing.assert_array_equal(part.mask, ref_masks.any(axis=0))

    none = segmenter.segment(image, "hat", threshold=1.0)
    assert none.n_instances == 0 and none.doubtful and not none.mask.any()
    assert f"best {every.scores[0]:.2f}" in none.reason
    strict = segmenter.segment(image, "hat", threshold=0.0, min_fraction=1.0)
    assert strict.doubtful == (strict.fraction < 1.0)


def test_text_is_normalised_and_validated(segmenter, make_image):
    image = make_image(32, 32)
    assert segmenter.segment(image, "  red   hat ", threshold=0.0).text == "red hat"
    for bad in ("", "   ", None, 3):
        with pytest.raises(InputError, match="noun phrase"):
            segmenter.segment(image, bad)
    with pytest.raises(InputError, match="tokens long, SAM 3 reads at most 32"):
        segmenter.segment(image, "a very long subject name that goes on and on")  # one token per byte here
    with pytest.raises(InputError, match="threshold"):
        segmenter.segment(image, "hat", threshold=1.5)
    with pytest.raises(InputError, match="min_fraction"):
        segmenter.segment(image, "hat", min_fraction=-0.1)


def test_unavailable_checkpoints(tmp_path, make_image):
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        TextSegmenter(str(tmp_path / "no-sam3"), "cpu").segment(make_image(16, 16), "hat")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailableError, match="SAM 3"):
        TextSegmenter(str(tmp_path / "empty"), "cpu").segment(make_image(16, 16), "hat")


def test_hub_id_offline_is_a_clear_error(make_image, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match="facebook/sam3"):
        segment_by_text(make_image(16, 16), "hat", device="cpu")


def test_build_from_demo_settings_shares_the_model(seg_settings, make_image):
    models = ModelRegistry()
    seg = build_text_segmenter(seg_settings, models)
    assert seg is build_text_segmenter(seg_settings, models)
    assert seg.model_id == str(seg_settings.resolved_demo_weights_dir / "sam3")
    result = segment_by_text(make_image(40, 30), "dog", threshold=0.0, segmenter=seg)
    assert result.mask.shape == (30, 40)
    assert sum(1 for key in models.loaded() if key[0] == "sam3") == 1
    assert seg.provenance["model_id"] == seg.model_id
