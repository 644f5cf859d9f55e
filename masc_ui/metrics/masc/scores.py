"""The math of MaSC on encoded patches (METRICS.md "MaSC"): pure functions, no model loading.

All cosines are float32 on L2-normalized vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F


def patch_weights(mask: np.ndarray, grid: tuple[int, int], device: torch.device | str = "cpu") -> torch.Tensor:
    """(Hp * Wp,) float32 weights: `mask` (float32 (H, W) in [0, 1]) bilinearly resized to `grid` (Hp, Wp)
    with align_corners=False, clamped to [0, 1], flattened row-major."""
    m = torch.from_numpy(np.ascontiguousarray(mask, dtype=np.float32))[None, None]
    m = F.interpolate(m, size=grid, mode="bilinear", align_corners=False)
    return m[0, 0].clamp(0.0, 1.0).flatten().to(device)


@dataclass(frozen=True)
class ConceptMatch:
    """CP of one reference against one output."""

    cp: float
    """Mean of `best` over `fg` (NaN when `fg` is empty)."""
    best: torch.Tensor
    """(N_ref,) float32: m_i = max cosine of each reference patch to any output patch."""
    argmax: torch.Tensor
    """(N_ref,) int64: the output patch achieving m_i (flat, row-major)."""
    fg: torch.Tensor
    """(N_ref,) bool: reference patches with weight > threshold."""
    out_best: torch.Tensor
    """(N_out,) float32: max cosine of each output patch to a reference foreground patch (-inf when none)."""


def concept_preservation(
    ref_patches: torch.Tensor, ref_weights: torch.Tensor, out_patches: torch.Tensor, threshold: float
) -> ConceptMatch:
    """CP = mean over reference patches with weight > `threshold` of max_j cos(ref_i, out_j).

    ref_patches (N_ref, D), ref_weights (N_ref,) float32 in [0, 1], out_patches (N_out, D).
    """
    sims = F.normalize(ref_patches.float(), dim=-1) @ F.normalize(out_patches.float(), dim=-1).T
    best, argmax = sims.max(dim=-1)
    fg = ref_weights > threshold
    cp = float(best[fg].mean()) if bool(fg.any()) else float("nan")
    if bool(fg.any()):
        out_best = sims[fg].max(dim=0).values
    else:
        out_best = torch.full((sims.shape[1],), float("-inf"), device=sims.device)
    return ConceptMatch(cp=cp, best=best, argmax=argmax, fg=fg, out_best=out_best)


class PoolingHead(Protocol):
    """SigLIP's attention-pooling head (transformers' `SiglipMultiheadAttentionPoolingHead`): what `pool_visible`
    runs."""

    probe: torch.Tensor
    """(1, 1, D) the learned query token."""
    attention: torch.nn.MultiheadAttention
    layernorm: torch.nn.Module
    mlp: torch.nn.Module


def pool_visible(head: PoolingHead, patches: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """SigLIP's attention-pooling head over the patches NOT hidden, batched.

    patches (B, N, D) in the head's dtype; hidden (B, N) bool, True = invisible to the probe (foreground
    patches and padding); every row must keep at least one visible patch.
    Returns pooled (B, D) = h + MLP(LayerNorm(h)) with h = attn(probe, X, X) at the probe token, and the
    attention weights (B, N) float32 of the probe over the patches (mean over heads, 0 where hidden).
    """
    probe = head.probe.expand(patches.shape[0], -1, -1)
    h, weights = head.attention(
        probe, patches, patches, key_padding_mask=hidden, need_weights=True, average_attn_weights=True
    )
    pooled = h + head.mlp(head.layernorm(h))
    return pooled[:, 0], weights[:, 0].float()


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise cosine of (B, D) tensors in float32 -> (B,)."""
    return (F.normalize(a.float(), dim=-1) * F.normalize(b.float(), dim=-1)).sum(-1)
