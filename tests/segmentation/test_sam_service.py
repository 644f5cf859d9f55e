"""SamService on the tiny demo SAM: shapes, caching, coordinates, refinement, errors, threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from segment_anything import SamPredictor

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.segmentation import SamService, build_sam_service


@pytest.fixture()
def service(tiny_sam_checkpoint) -> SamService:
    return SamService("vit_tiny", tiny_sam_checkpoint, "cpu", cache_size=2, dtype="float32")  # the exact mode


def _count_encoder_runs(service: SamService) -> list[int]:
    runs: list[int] = []
    service.model.image_encoder.register_forward_hook(lambda *_: runs.append(1))
    return runs


def test_prediction_shapes_and_types(service, make_image):
    image = make_image(140, 90)  # W=140, H=90: not square, so H/W mix-ups show
    pred = service.predict(image, points=[(20, 30, 1)])
    assert len(pred.masks) == len(pred.scores) == 3
    for mask in pred.masks:
        assert mask.shape == (90, 140) and mask.dtype == bool
    assert all(isinstance(s, float) for s in pred.scores)
    assert pred.best == int(np.argmax(pred.scores))
    assert pred.mask is pred.masks[pred.best] and pred.score == max(pred.scores)
    assert pred.low_res_logits.shape == (3, 64, 64) and pred.low_res_logits.dtype == np.float32
    assert pred.best_low_res_logits.shape == (1, 64, 64)
    single = service.predict(image, points=[(20, 30, 1)], multimask=False)
    assert len(single.masks) == 1 and single.best == 0


def test_encoder_runs_once_per_image(service, make_image):
    runs = _count_encoder_runs(service)
    image = make_image(120, 80, seed=1)
    service.predict(image, points=[(10, 10, 1)])
    service.predict(image, points=[(10, 10, 1), (50, 40, 0)])
    service.predict(image, box=(5, 5, 60, 70))
    service.predict(image.copy(), points=[(1, 1, 1)])  # another object, same pixels: same cache entry
    service.predict(np.asarray(image), points=[(1, 1, 1)])
    assert len(runs) == 1
    service.predict(make_image(120, 80, seed=2), points=[(10, 10, 1)])
    assert len(runs) == 2
    info = service.cache_info()
    assert (info.misses, info.hits, info.size) == (2, 4, 2)


def test_lru_eviction_reencodes_the_oldest_image(service, make_image):
    runs = _count_encoder_runs(service)
    a, b, c = (make_image(64, 48, seed=s) for s in (10, 11, 12))
    for image in (a, b, c):  # cache_size=2: c evicts a
        service.predict(image, points=[(5, 5, 1)])
    assert len(runs) == 3 and service.cache_info().evictions == 1
    service.predict(c, points=[(6, 6, 1)])
    assert len(runs) == 3
    service.predict(a, points=[(5, 5, 1)])
    assert len(runs) == 4


def test_matches_official_predictor(service, make_image):
    """Same model, same prompts: identical masks, scores and logits to segment_anything's SamPredictor
    (which takes XY points and XYXY boxes), for points, box, points + box, and refinement."""
    image = make_image(150, 100, seed=3)
    predictor = SamPredictor(service.model)
    predictor.set_image(np.asarray(image))
    cases = [
        dict(points=[(30, 20, 1), (120, 70, 0)]),
        dict(box=(10, 5, 90, 60)),
        dict(points=[(40, 40, 1)], box=(10, 5, 90, 60)),
    ]
    for case in cases:
        ours = service.predict(image, **case)
        pts = np.asarray([p[:2] for p in case.get("points", [])], dtype=np.float32)
        labels = np.asarray([p[2] for p in case.get("points", [])])
        masks, scores, logits = predictor.predict(
            point_coords=pts if len(pts) else None,
            point_labels=labels if len(pts) else None,
            box=np.asarray(case["box"]) if "box" in case else None,
            multimask_output=True,
        )
        np.testing.assert_array_equal(np.stack(ours.masks), masks)
        np.testing.assert_allclose(ours.scores, scores, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours.low_res_logits, logits, rtol=1e-5, atol=1e-5)
    first = service.predict(image, points=[(30, 20, 1)])
    refined = service.predict(
        image, points=[(30, 20, 1), (100, 80, 0)], multimask=False, prev_low_res_logits=first.best_low_res_logits
    )
    masks, scores, _ = predictor.predict(
        point_coords=np.asarray([[30, 20], [100, 80]], dtype=np.float32),
        point_labels=np.asarray([1, 0]),
        mask_input=first.best_low_res_logits,
        multimask_output=False,
    )
    np.testing.assert_array_equal(np.stack(refined.masks), masks)
    np.testing.assert_allclose(refined.scores, scores, rtol=1e-5, atol=1e-6)
    unrefined = service.predict(image, points=[(30, 20, 1), (100, 80, 0)], multimask=False)
    assert not np.allclose(unrefined.low_res_logits, refined.low_res_logits)  # the previous mask is used


def test_coordinates_are_xy_pixels_of_the_original_image(service, make_image):
    """A point (x, y) and a box (x0, y0, x1, y1) reach the prompt encoder in model-input pixels, x first:
    the 200x100 image is scaled by 256/200 so its long side fits the tiny model's 256-pixel input."""
    seen = {}

    def capture(module, args, kwargs):
        seen.update(kwargs)

    service.model.prompt_encoder.register_forward_pre_hook(capture, with_kwargs=True)
    image = make_image(200, 100, seed=4)
    service.predict(image, points=[(150, 20, 1), (10, 90, 0)], box=(20, 10, 180, 60))
    scale = 256 / 200
    coords, labels = seen["points"]
    np.testing.assert_allclose(coords[0].numpy(), [[150 * scale, 20 * scale], [10 * scale, 90 * scale]], rtol=1e-5)
    assert labels[0].tolist() == [1, 0]
    np.testing.assert_allclose(seen["boxes"].numpy(), [[20 * scale, 10 * scale, 180 * scale, 60 * scale]], rtol=1e-5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(points=[(141, 10, 1)]), "outside the 140x90 image"),
        (dict(points=[(-1, 10, 1)]), "outside"),
        (dict(points=[(10, 91, 1)]), "outside"),
        (dict(points=[(10, 10, 2)]), "label must be 1"),
        (dict(points=[(10, 10, "1")]), "label must be 1"),
        (dict(points=[(10, float("nan"), 1)]), "finite"),
        (dict(points=[(10,)]), "a point is"),
        (dict(points=[("a", 2, 1)]), "must be a number"),
        (dict(box=(50, 10, 20, 40)), "inverted"),
        (dict(box=(10, 40, 50, 10)), "inverted"),
        (dict(box=(10, 10, 10, 40)), "inverted or empty"),
        (dict(box=(0, 0, 141, 90)), "outside"),
        (dict(box=(0, 0, 50)), "four numbers"),
        (dict(), "at least one point"),
        (dict(points=[(5, 5, 1)], prev_low_res_logits=np.zeros((3, 64, 64))), r"\(64, 64\)"),
        (dict(points=[(5, 5, 1)], prev_low_res_logits=np.zeros((256, 256))), "shape"),
    ],
)
def test_bad_prompts_are_input_errors(service, make_image, kwargs, message):
    with pytest.raises(InputError, match=message):
        service.predict(make_image(140, 90), **kwargs)


def test_edge_points_and_full_box_are_accepted(service, make_image):
    pred = service.predict(make_image(140, 90), points=[(0, 0, 1), (140, 90, 0)], box=(0, 0, 140, 90))
    assert pred.masks[0].shape == (90, 140)


def test_threads_share_one_encoding(service, make_image):
    runs = _count_encoder_runs(service)
    image = make_image(100, 100, seed=5)
    results = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(service.predict(image, points=[(10 + i, 10, 1)])))
        for i in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and len(runs) == 1


def test_bad_construction_and_missing_weights(tmp_path, make_image):
    with pytest.raises(InputError, match="unknown"):
        SamService("vit_giant", None, "cpu")
    with pytest.raises(InputError, match="cache_size"):
        SamService("vit_tiny", None, "cpu", cache_size=0)
    missing = SamService("vit_tiny", tmp_path / "missing.pth", "cpu")
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        missing.predict(make_image(32, 32), points=[(1, 1, 1)])


def test_build_from_demo_settings_shares_one_service(seg_settings, make_image):
    models = ModelRegistry()
    service = build_sam_service(seg_settings, models)
    assert service is build_sam_service(seg_settings, models)
    assert service.variant == "vit_tiny" and service.device == "cpu"
    assert models.loaded() == [
        ("sam-service", "vit_tiny", str(service.checkpoint), "cpu", str(seg_settings.resolved_cache_dir), "float32")
    ]
    service.predict(make_image(40, 30), points=[(3, 3, 1)])
    assert ("sam", "vit_tiny", str(service.checkpoint), "cpu", "float32") in models.loaded()
    assert service.provenance["variant"] == "vit_tiny"


def test_model_is_not_loaded_until_used(tiny_sam_checkpoint):
    models = ModelRegistry()
    SamService("vit_tiny", tiny_sam_checkpoint, "cpu", models=models)
    assert models.loaded() == []
    assert isinstance(SamService("vit_tiny", tiny_sam_checkpoint, "cpu", models=models).model, torch.nn.Module)


def test_an_input_image_is_keyed_by_its_hash_without_encoding_again(service, make_image, monkeypatch):
    """Clicks on an image decoded at the edge (an InputImage) neither re-encode nor re-hash it: its sha256 keys
    the embedding; the same file's bytes decoded again give the same key (one identity)."""
    import io

    import masc_ui.imaging.images as imaging
    from masc_ui.imaging import open_image

    buf = io.BytesIO()
    make_image(80, 60, seed=8).save(buf, format="JPEG")
    image = open_image(buf.getvalue(), name="output image")
    runs = _count_encoder_runs(service)
    encoded = []
    real = imaging.encode_png
    monkeypatch.setattr(imaging, "encode_png", lambda img: encoded.append(1) or real(img))
    first = [service.predict(image, points=[(5, 5, 1)]) for _ in range(3)]
    again = service.predict(open_image(buf.getvalue()), points=[(5, 5, 1)])
    assert len(runs) == 1 and encoded == []
    np.testing.assert_array_equal(again.mask, first[0].mask)
    with pytest.raises(InputError, match="outside the 80x60 image"):
        service.predict(image, points=[(85, 5, 1)])


def test_bad_prompts_do_not_run_the_encoder(service, make_image):
    runs = _count_encoder_runs(service)
    with pytest.raises(InputError):
        service.predict(make_image(50, 50, seed=9), points=[(60, 5, 1)])
    assert runs == []
