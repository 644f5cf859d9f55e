"""A functional forward of the BLIP reward model (ImageReward's, FaceScore's) written from the released key names
with plain torch calls: the independent computation the FaceScore and ImageReward tests compare with."""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

HEAD_LAYERS = ("0", "2", "4", "6", "7")
"""The Linear layers of the reward MLP `mlp.layers.*` (dropouts between, no activations)."""


def _ln(x, sd, p, eps):
    return F.layer_norm(x, x.shape[-1:], sd[p + ".weight"], sd[p + ".bias"], eps)


def _lin(x, sd, p):
    return F.linear(x, sd[p + ".weight"], sd[p + ".bias"])


def _attention(q, k, v, heads, mask=None):
    b, n, d = q.shape
    split = lambda t: t.reshape(b, t.shape[1], heads, d // heads).transpose(1, 2)  # noqa: E731
    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(d // heads)
    if mask is not None:
        scores = scores + mask
    return (scores.softmax(-1) @ split(v)).transpose(1, 2).reshape(b, n, d)


def _vit(sd, x):
    p = "blip.visual_encoder."
    w = sd[p + "patch_embed.proj.weight"]
    t = F.conv2d(x, w, sd[p + "patch_embed.proj.bias"], stride=w.shape[-1]).flatten(2).transpose(1, 2)
    t = torch.cat([sd[p + "cls_token"].expand(len(x), -1, -1), t], 1) + sd[p + "pos_embed"]
    d, i = t.shape[-1], 0
    while f"{p}blocks.{i}.norm1.weight" in sd:
        b = f"{p}blocks.{i}."
        q, k, v = _lin(_ln(t, sd, b + "norm1", 1e-6), sd, b + "attn.qkv").chunk(3, -1)
        t = t + _lin(_attention(q, k, v, d // 64), sd, b + "attn.proj")
        t = t + _lin(F.gelu(_lin(_ln(t, sd, b + "norm2", 1e-6), sd, b + "mlp.fc1")), sd, b + "mlp.fc2")
        i += 1
    return _ln(t, sd, p + "norm", 1e-6)


def _bert(sd, cfg, ids, mask, image):
    p = "blip.text_encoder."
    h = (
        sd[p + "embeddings.word_embeddings.weight"][ids]
        + sd[p + "embeddings.position_embeddings.weight"][: ids.shape[1]]
    )
    h = _ln(h, sd, p + "embeddings.LayerNorm", 1e-12)
    ext = (1.0 - mask[:, None, None, :].float()) * -10000.0
    heads = cfg["num_attention_heads"]
    for i in range(cfg["num_hidden_layers"]):
        b = f"{p}encoder.layer.{i}."
        a = _attention(
            _lin(h, sd, b + "attention.self.query"),
            _lin(h, sd, b + "attention.self.key"),
            _lin(h, sd, b + "attention.self.value"),
            heads,
            ext,
        )
        h = _ln(_lin(a, sd, b + "attention.output.dense") + h, sd, b + "attention.output.LayerNorm", 1e-12)
        c = _attention(
            _lin(h, sd, b + "crossattention.self.query"),
            _lin(image, sd, b + "crossattention.self.key"),
            _lin(image, sd, b + "crossattention.self.value"),
            heads,
        )
        h = _ln(_lin(c, sd, b + "crossattention.output.dense") + h, sd, b + "crossattention.output.LayerNorm", 1e-12)
        m = F.gelu(_lin(h, sd, b + "intermediate.dense"))
        h = _ln(_lin(m, sd, b + "output.dense") + h, sd, b + "output.LayerNorm", 1e-12)
    return h[:, 0]


def reward(sd, cfg, ids, mask, pixels):
    """(B,) head outputs of the state dict `sd` (released keys) for (B, 3, 224, 224) pixels and (B, L) tokens."""
    cls = _bert(sd, cfg, ids, mask, _vit(sd, pixels))
    for layer in HEAD_LAYERS:
        cls = _lin(cls, sd, f"mlp.layers.{layer}")
    return cls[:, 0]
