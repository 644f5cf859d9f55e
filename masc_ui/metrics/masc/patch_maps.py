"""Patch-level explanation of one MaSC result (METRICS.md "Patch maps for overlays").

Grids are (Hp, Wp) = (rows, columns) of patches; flat patch indices are row-major (`r * Wp + c`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PatchMaps:
    """What the overlays draw: CP per reference patch, best match per output patch, the argmax
    correspondences, and where PF's pooling head looked."""

    ref_grids: list[tuple[int, int]]
    """Patch grid (Hp, Wp) of each reference image, in `refs` order."""
    cp_ref: list[np.ndarray]
    """Per reference, float32 (Hp, Wp): m_i (max cosine to any output patch) on the reference's foreground
    patches (weight > threshold), NaN elsewhere. CP of that reference = nanmean of this map."""
    out_grid: tuple[int, int]
    """Patch grid (Hp, Wp) of the output image."""
    out_best: np.ndarray
    """float32 (Hp, Wp) of the output: max cosine of each output patch to any reference foreground patch over
    all references; all-NaN when no reference has a foreground patch."""
    correspondences: list[tuple[int, int, int, float]]
    """(ref_index, ref_patch_flat_idx, out_patch_flat_idx, cos): for every reference foreground patch, its
    best-matching output patch (the argmax behind m_i)."""
    pf_attention: np.ndarray | None
    """float32 (Hp, Wp) of the output: PF pooling-head attention (probe query over output patches, mean over
    heads; sums to 1), 0 on hidden (foreground) patches; None when PF is NaN or was not computed."""
