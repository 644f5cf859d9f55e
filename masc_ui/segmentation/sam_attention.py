"""SAM's image-encoder attention through `torch.nn.functional.scaled_dot_product_attention`.

segment_anything's `Attention` materialises the (heads, N, N) scores, adds the decomposed relative-position bias
to them in two broadcast passes, and runs softmax and the value product as separate kernels: memory-bound passes
over 800 MB per global-attention block of ViT-B at 1024 px (N = 4096). `SdpaAttention` computes the same function
(the bias q . R_h[h_q - h_k] + q . R_w[w_q - w_k], written once, is SDPA's additive mask) with the fused kernel.
The speed-up is measured on the Performance page ("Segment Anything clicks"); the encoder's output agrees with the
original within float32 rounding (tests/segmentation).

`use_sdpa_attention(encoder)` swaps the modules in place; parameters are shared and keep their names, so state
dicts load either way.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from segment_anything.modeling.image_encoder import Attention, get_rel_pos


class SdpaAttention(torch.nn.Module):
    """The forward of `segment_anything...image_encoder.Attention` on its own weights, with SDPA.

    Input and output (B, H, W, C): B images or windows of H x W tokens.
    """

    def __init__(self, attention: Attention) -> None:
        super().__init__()
        self.num_heads = attention.num_heads
        self.scale = attention.scale
        self.qkv = attention.qkv
        self.proj = attention.proj
        self.use_rel_pos = attention.use_rel_pos
        if self.use_rel_pos:
            self.rel_pos_h = attention.rel_pos_h
            self.rel_pos_w = attention.rel_pos_w

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, _ = x.shape
        qkv = self.qkv(x).reshape(b, h * w, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.reshape(3, b * self.num_heads, h * w, -1).unbind(0)
        bias = self._relative_position_bias(q, h, w) if self.use_rel_pos else None
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=self.scale)
        out = out.reshape(b, self.num_heads, h, w, -1).permute(0, 2, 3, 1, 4).reshape(b, h, w, -1)
        return self.proj(out)

    def _relative_position_bias(self, q: torch.Tensor, h: int, w: int) -> torch.Tensor:
        """(B*heads, h*w, h*w): bias[i, j] = q_i . R_h[h_i - h_j] + q_i . R_w[w_i - w_j] (SAM's decomposition)."""
        r_q = q.reshape(q.shape[0], h, w, -1)
        rel_h = torch.einsum("bhwc,hkc->bhwk", r_q, get_rel_pos(h, h, self.rel_pos_h))
        rel_w = torch.einsum("bhwc,wkc->bhwk", r_q, get_rel_pos(w, w, self.rel_pos_w))
        bias = torch.empty(q.shape[0], h, w, h, w, dtype=q.dtype, device=q.device)
        torch.add(rel_h[:, :, :, :, None], rel_w[:, :, :, None, :], out=bias)
        return bias.view(q.shape[0], h * w, h * w)


def use_sdpa_attention(encoder: torch.nn.Module) -> int:
    """Replace every `Attention` of SAM's image encoder `encoder` by an `SdpaAttention` on the same weights; returns
    how many were replaced (0 when already done)."""
    replaced = 0
    for block in getattr(encoder, "blocks", ()):
        if isinstance(block.attn, Attention):
            block.attn = SdpaAttention(block.attn)
            replaced += 1
    return replaced
