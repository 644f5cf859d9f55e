"""Explain a MaSC score with pictures: CP heat map over each reference, best-match heat map over the output,
the top correspondences as lines, and PF's pooling attention over the output's background."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from .. import overlays
from ..metrics.sample import Sample


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
    extras: dict = field(default_factory=dict)
    """MaSC's diagnostics of the explained sample (`MaSCResult.extras`: patch counts, the stripped prompt, ...)."""
    top_k: int = 0
    """How many correspondences the lines picture draws at most."""


def explain_sample(masc, sample: Sample, *, top_k: int = 24, opacity: float = 0.6) -> Explanation:
    """Run `masc` (a `masc_ui.metrics.MaSC`) with patch maps on `sample` and draw them."""
    result = masc.score_many([sample], batch_size=2, return_maps=True)[0]
    maps = result.maps
    notes: list[str] = []
    if maps is None:
        reason = result.extras.get("cp_reason") or result.extras.get("reason") or "no patch maps were produced"
        return Explanation([None] * len(sample.refs), None, None, None, result.cp, result.pf, [str(reason)],
                           dict(result.extras), top_k)
    cp_imgs: list[Image.Image | None] = []
    for i, (ref, grid) in enumerate(zip(sample.refs, maps.cp_ref)):
        if grid is None or not np.isfinite(grid).any():
            cp_imgs.append(None)
            notes.append(f"reference {i + 1}: no foreground patch (draw a mask on it) -> no CP map")
            continue
        cp_imgs.append(overlays.heatmap(ref, grid, lo=_lo(grid), hi=_hi(grid), opacity=opacity,
                                        title=f"CP over reference {i + 1}: best cosine of each subject patch"))
    out_best = None
    if np.isfinite(maps.out_best).any():
        out_best = overlays.heatmap(sample.out, maps.out_best, lo=_lo(maps.out_best), hi=_hi(maps.out_best),
                                    opacity=opacity, title="output: best cosine to any reference subject patch")
    lines = None
    if maps.correspondences:
        cos = np.array([m[3] for m in maps.correspondences], dtype=np.float32)
        lines = overlays.correspondences(sample.refs[0], sample.out, maps.correspondences,
                                         ref_grid=maps.ref_grids[0], out_grid=maps.out_grid, top_k=top_k,
                                         lo=float(cos.min()), hi=float(cos.max()))
    pf_img = None
    if maps.pf_attention is not None:
        att = np.asarray(maps.pf_attention, dtype=np.float32)
        pf_img = overlays.heatmap(sample.out, att, lo=0.0, hi=float(att.max()) or 1.0, opacity=opacity,
                                  title="PF: pooling attention over the output's background (subject hidden)")
    else:
        notes.append("PF attention: not available (PF needs the output's mask and a prompt)")
    return Explanation(cp_imgs, out_best, lines, pf_img, float(result.cp), float(result.pf), notes,
                       dict(result.extras), top_k)


def _lo(grid: np.ndarray) -> float:
    return float(np.nanmin(grid))


def _hi(grid: np.ndarray) -> float:
    lo, hi = float(np.nanmin(grid)), float(np.nanmax(grid))
    return hi if hi > lo else lo + 1e-6
