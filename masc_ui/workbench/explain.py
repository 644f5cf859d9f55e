"""Explain a MaSC score with pictures: CP heat map over each reference, best-match heat map over the output,
the top correspondences as lines, and PF's pooling attention over the output's background.

Colour scales: by default each map spans its own values (min..max of the map). To compare two outputs, draw both
with one `MapScales` (`shared_scales` of their results): every cosine map (CP over the references, best match over
the output, the correspondence lines) on one range, and PF attention on another, so equal colours mean equal
values across the two."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from .. import overlays
from ..errors import InputError
from ..imaging import InputImage
from ..metrics.sample import Sample

if TYPE_CHECKING:
    from ..metrics.masc.engine import MaSC, MaSCResult


@dataclass
class Explanation:
    """RGB images with legends (None when that map does not exist for the sample) and notes saying why."""

    cp_ref: list[Image.Image | None]
    """Per reference: each foreground patch coloured by its best cosine to the output (CP's m_i)."""
    out_best: Image.Image | None
    """Output: each patch coloured by its best cosine to any reference foreground patch."""
    lines: Image.Image | None
    """Reference 1 and output side by side with the strongest correspondences drawn."""
    pf_attention: Image.Image | None
    """Output: PF pooling-head attention over the visible (background) patches."""
    cp: float = math.nan
    pf: float = math.nan
    notes: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    """MaSC's diagnostics of the explained sample (`MaSCResult.extras`: patch counts, the stripped prompt, ...)."""
    top_k: int = 0
    """How many correspondences the lines picture draws at most."""


@dataclass(frozen=True)
class MapScales:
    """Colour ranges (lo, hi) shared by several explanations."""

    cosine: tuple[float, float]
    """CP over the references, best match over the output, correspondence lines (cosine similarities)."""
    pf: tuple[float, float]
    """PF pooling attention (lo = 0)."""


def explain_sample(masc: MaSC, sample: Sample, *, top_k: int = 24, opacity: float = 0.6) -> Explanation:
    """Run `masc` with patch maps on `sample` (an image output) and draw them."""
    result = masc.score_many([sample], batch_size=2, return_maps=True)[0]
    return draw_explanation(sample, result, top_k=top_k, opacity=opacity)


def shared_scales(results: Sequence[MaSCResult]) -> MapScales | None:
    """One `MapScales` spanning the maps of every `MaSCResult` in `results` (None when none has a finite map)."""
    cosines: list[np.ndarray] = []
    attention: list[np.ndarray] = []
    for maps in (r.maps for r in results if r.maps is not None):
        cosines += [np.asarray(g, dtype=np.float32).ravel() for g in maps.cp_ref if g is not None]
        cosines.append(np.asarray(maps.out_best, dtype=np.float32).ravel())
        cosines.append(np.array([m[3] for m in maps.correspondences], dtype=np.float32))
        if maps.pf_attention is not None:
            attention.append(np.asarray(maps.pf_attention, dtype=np.float32).ravel())
    cos = np.concatenate(cosines) if cosines else np.zeros(0, dtype=np.float32)
    cos = cos[np.isfinite(cos)]
    if cos.size == 0:
        return None
    att = np.concatenate(attention) if attention else np.zeros(0, dtype=np.float32)
    att = att[np.isfinite(att)]
    top = float(att.max()) if att.size else 0.0
    return MapScales(_span(cos), (0.0, top or 1.0))


def draw_explanation(
    sample: Sample, result: MaSCResult, *, scales: MapScales | None = None, top_k: int = 24, opacity: float = 0.6
) -> Explanation:
    """Draw the patch maps of `result` (a `MaSCResult` with maps, of `sample`, an image output); `scales` None =
    each map on its own range."""
    out = image_output(sample)
    maps = result.maps
    notes: list[str] = []
    if maps is None:
        reason = result.extras.get("cp_reason") or result.extras.get("reason") or "no patch maps were produced"
        return Explanation(
            [None] * len(sample.refs), None, None, None, result.cp, result.pf, [str(reason)], dict(result.extras), top_k
        )
    cp_imgs: list[Image.Image | None] = []
    for i, (ref, grid) in enumerate(zip(sample.refs, maps.cp_ref)):
        if grid is None or not np.isfinite(grid).any():
            cp_imgs.append(None)
            notes.append(f"reference {i + 1}: no foreground patch (draw a mask on it) -> no CP map")
            continue
        lo, hi = scales.cosine if scales else (_lo(grid), _hi(grid))
        cp_imgs.append(
            overlays.heatmap(
                ref,
                grid,
                lo=lo,
                hi=hi,
                opacity=opacity,
                title=f"CP over reference {i + 1}: best cosine of each subject patch",
            )
        )
    out_best = None
    if np.isfinite(maps.out_best).any():
        lo, hi = scales.cosine if scales else (_lo(maps.out_best), _hi(maps.out_best))
        out_best = overlays.heatmap(
            out,
            maps.out_best,
            lo=lo,
            hi=hi,
            opacity=opacity,
            title="output: best cosine to any reference subject patch",
        )
    lines = None
    if maps.correspondences:
        cos = np.array([m[3] for m in maps.correspondences], dtype=np.float32)
        lo, hi = scales.cosine if scales else (float(cos.min()), float(cos.max()))
        lines = overlays.correspondences(
            sample.refs[0],
            out,
            maps.correspondences,
            ref_grid=maps.ref_grids[0],
            out_grid=maps.out_grid,
            top_k=top_k,
            lo=lo,
            hi=hi,
        )
    pf_img = None
    if maps.pf_attention is not None:
        att = np.asarray(maps.pf_attention, dtype=np.float32)
        lo, hi = scales.pf if scales else (0.0, float(att.max()) or 1.0)
        pf_img = overlays.heatmap(
            out,
            att,
            lo=lo,
            hi=hi,
            opacity=opacity,
            title="PF: pooling attention over the output's background (subject hidden)",
        )
    else:
        notes.append("PF attention: not available (PF needs the output's mask and a prompt)")
    return Explanation(
        cp_imgs, out_best, lines, pf_img, float(result.cp), float(result.pf), notes, dict(result.extras), top_k
    )


def image_output(sample: Sample) -> InputImage:
    """`sample`'s output image; InputError for a video output (its frames are explained one at a time)."""
    if not isinstance(sample.out, InputImage):
        raise InputError("the output is a video: choose one of its frames to explain")
    return sample.out


def _lo(grid: np.ndarray) -> float:
    return float(np.nanmin(grid))


def _span(values: np.ndarray) -> tuple[float, float]:
    lo, hi = float(values.min()), float(values.max())
    return lo, (hi if hi > lo else lo + 1e-6)


def _hi(grid: np.ndarray) -> float:
    lo, hi = float(np.nanmin(grid)), float(np.nanmax(grid))
    return hi if hi > lo else lo + 1e-6
