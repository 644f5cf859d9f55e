"""Patch maps: shapes, and consistency with the scores and with a direct computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from masc_ui.metrics import MaSC, PatchMaps


@pytest.fixture(scope="module", params=["siglip2-naflex", "siglip2-fixed"])
def scorer(request, demo_weights: Path) -> MaSC:
    return MaSC(str(demo_weights / request.param), device="cpu", naflex_max_patches=128)


@pytest.fixture(scope="module")
def result(scorer: MaSC):
    rng = np.random.default_rng(3)
    ref = Image.fromarray(rng.integers(0, 256, (120, 200, 3), dtype=np.uint8))
    out = Image.fromarray(rng.integers(0, 256, (160, 90, 3), dtype=np.uint8))
    rm = np.zeros((120, 200), dtype=np.uint8)
    rm[20:100, 50:170] = 255
    om = np.zeros((160, 90), dtype=bool)
    om[40:150, 10:70] = True
    return ref, out, rm, om, scorer.score(ref, rm, out, om, "a kitten on a beach", "kitten")


def test_shapes(scorer: MaSC, result) -> None:
    *_, r = result
    maps = r.maps
    assert isinstance(maps, PatchMaps)
    (hr, wr), (ho, wo) = maps.ref_grids[0], maps.out_grid
    assert maps.cp_ref[0].shape == (hr, wr) and maps.cp_ref[0].dtype == np.float32
    assert maps.out_best.shape == (ho, wo) and maps.pf_attention.shape == (ho, wo)
    assert r.extras["cp_n_ref_total"] == hr * wr and r.extras["pf_n_total"] == ho * wo
    if scorer.is_naflex:
        assert wr > hr and ho > wo  # NaFlex keeps the aspect ratio


def test_maps_agree_with_the_scores(result) -> None:
    *_, r = result
    maps = r.maps
    assert np.nanmean(maps.cp_ref[0]) == pytest.approx(r.cp, abs=1e-6)
    assert int(np.isfinite(maps.cp_ref[0]).sum()) == r.extras["cp_n_ref_fg"] == len(maps.correspondences)
    flat = maps.cp_ref[0].ravel()
    for ref_index, ref_idx, out_idx, cos in maps.correspondences:
        assert ref_index == 0 and flat[ref_idx] == pytest.approx(cos)
        assert maps.out_best.ravel()[out_idx] >= cos - 1e-6
    assert maps.pf_attention.sum() == pytest.approx(1.0, abs=1e-5)
    assert (maps.pf_attention >= 0).all()
    assert int((maps.pf_attention > 0).sum()) <= r.extras["pf_n_bg_pooled"]


def test_maps_match_a_direct_computation(scorer: MaSC, result) -> None:
    ref, out, rm, om, r = result
    ref_enc, out_enc = scorer.backbone.encode_images([ref, out])
    sims = F.normalize(ref_enc.patches, dim=-1) @ F.normalize(out_enc.patches, dim=-1).T
    w = (
        F.interpolate(
            torch.from_numpy(rm.astype(np.float32) / 255)[None, None],
            size=ref_enc.grid,
            mode="bilinear",
            align_corners=False,
        )
        .clamp(0, 1)
        .flatten()
        > 0.5
    )
    np.testing.assert_allclose(r.maps.out_best.ravel(), sims[w].max(0).values.numpy(), atol=1e-5)
    hidden = (
        F.interpolate(
            torch.from_numpy(om.astype(np.float32))[None, None], size=out_enc.grid, mode="bilinear", align_corners=False
        )
        .clamp(0, 1)
        .flatten()
        >= 0.5
    )
    attention = r.maps.pf_attention.ravel()
    assert (attention[hidden.numpy()] == 0).all() and (attention[~hidden.numpy()] > 0).all()


def test_maps_can_be_left_out(scorer: MaSC, result) -> None:
    ref, out, rm, om, _ = result
    assert scorer.score(ref, rm, out, om, "a kitten", "kitten", return_maps=False).maps is None
