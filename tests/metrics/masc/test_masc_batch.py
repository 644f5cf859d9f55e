"""Batched scoring: equal to one-at-a-time, padding never leaks, the encoding caches save vision passes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.metrics import MaSC
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry

TOL = 1e-5


def _image(seed: int, w: int, h: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))


def _mask(h: int, w: int, top: float = 0.2, left: float = 0.3) -> np.ndarray:
    m = np.zeros((h, w), dtype=np.uint8)
    m[int(top * h) : int(0.8 * h), int(left * w) : int(0.7 * w)] = 255
    return m


def _sample(ref: Image.Image, out: Image.Image, prompt: str = "a photo of a kitten on a beach") -> Sample:
    return Sample(
        refs=(ref,),
        out=out,
        prompt=prompt,
        subject="kitten",
        ref_masks=(_mask(ref.height, ref.width),),
        out_mask=_mask(out.height, out.width, 0.4, 0.1),
    )


@pytest.fixture(scope="module")
def naflex_dir(demo_weights: Path) -> str:
    return str(demo_weights / "siglip2-naflex")


@pytest.fixture(scope="module")
def scorer(naflex_dir: str) -> MaSC:
    return MaSC(naflex_dir, device="cpu", naflex_max_patches=256)


class VisionCounter:
    """Counts vision-tower calls and the images that went through them (a forward pre-hook)."""

    def __init__(self, masc: MaSC) -> None:
        self.calls = self.images = 0
        self._handle = masc.model.vision_model.register_forward_pre_hook(self._hook, with_kwargs=True)

    def _hook(self, module, args, kwargs) -> None:
        pixels = kwargs.get("pixel_values", args[0] if args else None)
        self.calls += 1
        self.images += int(pixels.shape[0])

    def close(self) -> None:
        self._handle.remove()


def test_batched_equals_one_at_a_time(scorer: MaSC) -> None:
    refs = [_image(1, 200, 120), _image(2, 64, 300)]
    samples = [
        _sample(refs[k % 2], _image(10 + k, 40 + 37 * k, 90 + 11 * k), f"a kitten {k} on a beach") for k in range(7)
    ]
    scorer.clear_caches()
    batched = scorer.score_many(samples, batch_size=5)
    for s, got in zip(samples, batched):
        scorer.clear_caches()
        single = scorer.score(s.refs[0], s.ref_masks[0], s.out, s.out_mask, s.prompt, s.subject)
        assert abs(got.cp - single.cp) <= TOL and abs(got.pf - single.pf) <= TOL
        assert got.extras["pf_n_bg_pooled"] == single.extras["pf_n_bg_pooled"]


def test_padding_never_leaks(scorer: MaSC) -> None:
    """A small image's encoding and scores are the same alone and padded next to a much larger image."""
    small, big = _image(3, 32, 48), _image(4, 400, 400)
    alone = scorer.backbone.encode_images([small])[0]
    padded = scorer.backbone.encode_images([small, big])[0]
    assert alone.grid == padded.grid and alone.patches.shape == padded.patches.shape
    assert torch.allclose(alone.patches, padded.patches, atol=TOL)
    s = _sample(_image(5, 100, 100), small)
    scorer.clear_caches()
    one = scorer.score_many([s], batch_size=1)[0]
    scorer.clear_caches()
    many = scorer.score_many([_sample(big, big), s, _sample(big, _image(6, 390, 410))], batch_size=3)[1]
    assert abs(one.cp - many.cp) <= TOL and abs(one.pf - many.pf) <= TOL


def test_shared_reference_costs_n_plus_one_vision_passes(naflex_dir: str) -> None:
    masc = MaSC(naflex_dir, device="cpu", naflex_max_patches=64)
    ref = _image(7, 120, 90)
    samples = [_sample(ref, _image(20 + k, 80, 60 + 5 * k)) for k in range(5)]
    counter = VisionCounter(masc)
    try:
        masc.score_many(samples, batch_size=2)
        assert counter.images == len(samples) + 1
        masc.score_many(samples, batch_size=2)  # everything cached now
        assert counter.images == len(samples) + 1
        masc.clear_caches()
        counter.calls = counter.images = 0
        masc.score_many(samples, batch_size=1)  # one image per forward
        assert counter.calls == counter.images == len(samples) + 1
    finally:
        counter.close()


def test_without_cache_each_batch_encodes_its_reference(naflex_dir: str) -> None:
    masc = MaSC(naflex_dir, device="cpu", naflex_max_patches=64, cache_size=0)
    ref = _image(8, 70, 70)
    samples = [_sample(ref, _image(30 + k, 50, 50)) for k in range(4)]
    counter = VisionCounter(masc)
    try:
        masc.score_many(samples, batch_size=1)
        assert counter.images == 2 * len(samples)
    finally:
        counter.close()


def test_text_encodings_are_cached(naflex_dir: str) -> None:
    masc = MaSC(naflex_dir, device="cpu", naflex_max_patches=64)
    calls = []
    handle = masc.model.text_model.register_forward_pre_hook(
        lambda m, a, k: calls.append(k["input_ids"].shape), with_kwargs=True
    )
    try:
        ref = _image(9, 60, 60)
        masc.score_many([_sample(ref, _image(40 + k, 60, 60)) for k in range(3)], batch_size=3)
        masc.score_many([_sample(ref, _image(50, 60, 60))], batch_size=1)
    finally:
        handle.remove()
    assert calls == [torch.Size([1, 64])]  # one distinct stripped prompt, padded to the trained 64 tokens


def test_cache_is_bounded(naflex_dir: str) -> None:
    masc = MaSC(naflex_dir, device="cpu", naflex_max_patches=64, cache_size=3)
    masc.score_many([_sample(_image(60 + k, 40, 40), _image(70 + k, 40, 40)) for k in range(4)], batch_size=2)
    assert len(masc._encodings) == 3


def test_several_references(scorer: MaSC) -> None:
    refs = (_image(11, 90, 120), _image(12, 150, 100))
    out = _image(13, 110, 110)
    masks = tuple(_mask(r.height, r.width) for r in refs)
    om = _mask(110, 110, 0.5)
    sample = Sample(refs=refs, out=out, prompt="a kitten in the snow", subject="kitten", ref_masks=masks, out_mask=om)
    result = scorer.score_many([sample], return_maps=True)[0]
    singles = [scorer.score(r, m, out, om, "a kitten in the snow", "kitten") for r, m in zip(refs, masks)]
    assert result.extras["cp_per_ref"] == pytest.approx([s.cp for s in singles], abs=TOL)
    assert result.cp == pytest.approx(np.mean([s.cp for s in singles]), abs=TOL)
    assert result.pf == pytest.approx(singles[0].pf, abs=TOL)
    assert result.extras["cp_n_ref_fg"] == sum(s.extras["cp_n_ref_fg"] for s in singles)
    assert len(result.maps.cp_ref) == 2 and result.maps.ref_grids == [s.maps.ref_grids[0] for s in singles]
    expected_best = np.fmax(singles[0].maps.out_best, singles[1].maps.out_best)
    np.testing.assert_allclose(result.maps.out_best, expected_best, atol=TOL)


def test_missing_pieces_give_nan_with_reason(scorer: MaSC) -> None:
    ref, out = _image(14, 64, 64), _image(15, 64, 64)
    no_masks = Sample(refs=(ref,), out=out, prompt="a kitten")
    no_prompt = Sample(refs=(ref, ref), out=out, ref_masks=(_mask(64, 64), None), out_mask=_mask(64, 64))
    a, b = scorer.score_many([no_masks, no_prompt])
    assert math.isnan(a.cp) and "no reference mask" in a.extras["cp_reason"]
    assert math.isnan(a.pf) and "no output mask" in a.extras["pf_reason"]
    assert b.extras["cp_per_ref"][0] is not None and b.extras["cp_per_ref"][1] is None
    assert math.isnan(b.cp) and "no reference mask (reference 2)" in b.extras["cp_reason"]  # mean of both refs
    assert math.isnan(b.pf) and "no prompt" in b.extras["pf_reason"]


def test_progress_is_reported(scorer: MaSC) -> None:
    seen = []
    ref = _image(16, 50, 50)
    scorer.score_many(
        [_sample(ref, _image(80 + k, 50, 50)) for k in range(5)],
        batch_size=2,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(2, 5), (4, 5), (5, 5)]


def test_models_registry_shares_one_backbone(naflex_dir: str) -> None:
    registry = ModelRegistry()
    a = MaSC(naflex_dir, device="cpu", models=registry)
    b = MaSC(naflex_dir, device="cpu", naflex_max_patches=64, stripper="none", models=registry)
    assert a.model is b.model and len(registry.loaded()) == 1


def test_changing_the_patch_budget_after_construction_re_encodes(demo_weights):
    """masc-metric lets users set `naflex_max_patches` on the instance; the cache and provenance follow it."""
    masc = MaSC(model_id=str(demo_weights / "siglip2-naflex"), device="cpu", naflex_max_patches=64)
    img = Image.fromarray(np.random.default_rng(0).integers(0, 255, (96, 160, 3), dtype=np.uint8))
    mask = np.zeros((96, 160), np.uint8)
    mask[20:70, 40:120] = 255
    first = masc.score(img, mask, img, mask, "a photo")
    masc.naflex_max_patches = 16
    second = masc.score(img, mask, img, mask, "a photo")
    assert second.extras["cp_n_ref_total"] < first.extras["cp_n_ref_total"] <= 64
    assert masc.provenance["params"]["naflex_max_patches"] == 16
    with pytest.raises(InputError, match="naflex_max_patches"):
        masc.naflex_max_patches = 0
