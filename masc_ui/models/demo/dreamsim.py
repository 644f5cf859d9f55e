"""A tiny random DreamSim ensemble release folder, laid out as the real one is after the `dreamsim` package's first
use (`dreamsim(pretrained=True, cache_dir=...)`): the extracted `dreamsim_ensemble_checkpoint.zip` plus the DINO
backbone that `torch.hub` downloads into `checkpoints/`. Its numbers mean nothing.

- `checkpoints/dino_vitbase16_pretrain.pth`: a plain state dict of a DINO-layout ViT;
- `clip_vitb16_pretrain.pth.tar`, `open_clip_vitb16_pretrain.pth.tar`: `{"state_dict": ...}` of CLIP-as-DINO ViTs
  (with `pos_drop` = `ln_pre` and the projection `proj`);
- `dino_vitb16_pretrain.pth`: `{"student": ...}` holding a tiny DINO projection head (the package reads it; the
  "cls" feature does not use it);
- `ensemble_lora/`: a peft LoRA adapter on every `attn.qkv` (`adapter_config.json`, `adapter_model.safetensors`),
  with random (non-zero) A and B so that the merge matters.

Each ViT is 12 blocks deep like ViT-B/16 (the package reads DINO's block 11), 32 wide (one attention head), patch 16
at 224 px; the projections are 32 -> 16.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from ..nets.dreamsim import DINO_HEAD_FILE, ENSEMBLE, IMAGE_SIZE, LORA_DIR, Vit, VitShape

WIDTH = 32
DEPTH = 12
PATCH = 16
PROJECTION = 16
LORA_RANK = 4
LORA_ALPHA = 2.0
"""Scale alpha / r = 0.5, as the release's (r 16, alpha 8)."""
HEAD = (24, 24, 8, 40)
"""Tiny DINO projection head: hidden, hidden, bottleneck, output sizes (the real one: 2048, 2048, 256, 65536)."""


def build(
    out_dir: Path,
    seed: int,
    *,
    width: int = WIDTH,
    projection: int = PROJECTION,
    lora_rank: int = LORA_RANK,
    lora_alpha: float = LORA_ALPHA,
) -> None:
    """Write the release folder into `out_dir`: tiny by default; `width=768, projection=512, lora_rank=16,
    lora_alpha=8` is the real release's shape (ViT-B/16 x 3, about 1 GB)."""
    from safetensors.torch import save_file

    generator = torch.Generator().manual_seed(seed)
    shape = VitShape(width=width, depth=DEPTH, mlp=4 * width, patch=PATCH, positions=(IMAGE_SIZE // PATCH) ** 2 + 1)
    lora: dict[str, torch.Tensor] = {}
    for i, member in enumerate(ENSEMBLE):
        proj = None if member.feature == "cls" else _random((width, projection), generator, width**-0.5)
        vit = _randomized(Vit(shape, member, proj), generator)
        state = {k: v.contiguous() for k, v in vit.state_dict().items()}
        path = out_dir / member.file
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save(state if member.feature == "cls" else {"state_dict": state}, path)
        for b in range(DEPTH):
            name = f"base_model.model.extractor_list.{i}.model.blocks.{b}.attn.qkv"
            lora[f"{name}.lora_A.weight"] = _random((lora_rank, width), generator, 0.2)
            lora[f"{name}.lora_B.weight"] = _random((3 * width, lora_rank), generator, 0.2)
    hidden, hidden2, bottleneck, out = HEAD
    head = {
        "module.head.mlp.0.weight": (hidden, width),
        "module.head.mlp.0.bias": (hidden,),
        "module.head.mlp.2.weight": (hidden2, hidden),
        "module.head.mlp.2.bias": (hidden2,),
        "module.head.mlp.4.weight": (bottleneck, hidden2),
        "module.head.mlp.4.bias": (bottleneck,),
        "module.head.last_layer.weight": (out, bottleneck),
    }
    torch.save({"student": {k: _random(s, generator, 0.1) for k, s in head.items()}}, out_dir / DINO_HEAD_FILE)
    adapter = out_dir / LORA_DIR
    adapter.mkdir()
    save_file(lora, str(adapter / "adapter_model.safetensors"))
    (adapter / "adapter_config.json").write_text(json.dumps(_adapter_config(lora_rank, lora_alpha), indent=2))


def _random(shape: tuple[int, ...], generator: torch.Generator, scale: float) -> torch.Tensor:
    return torch.randn(shape, generator=generator) * scale


def _randomized(vit: Vit, generator: torch.Generator) -> Vit:
    """`vit` with every parameter drawn at random (LayerNorm scales around 1), so outputs depend on the input."""
    with torch.no_grad():
        for module in vit.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.copy_(1 + _random(module.weight.shape, generator, 0.1))
                module.bias.copy_(_random(module.bias.shape, generator, 0.1))
            elif isinstance(module, (nn.Linear, nn.Conv2d)):
                fan_in = module.weight[0].numel()
                module.weight.copy_(_random(tuple(module.weight.shape), generator, fan_in**-0.5))
                if module.bias is not None:
                    module.bias.copy_(_random(tuple(module.bias.shape), generator, 0.02))
        vit.cls_token.copy_(_random(tuple(vit.cls_token.shape), generator, 0.5))
        vit.pos_embed.copy_(_random(tuple(vit.pos_embed.shape), generator, 0.5))
    return vit


def _adapter_config(rank: int, alpha: float) -> dict[str, object]:
    """The adapter config as peft's `LoraConfig.save_pretrained` writes it (no base model name: the release's is a
    custom module too)."""
    return {
        "alpha_pattern": {},
        "base_model_name_or_path": None,
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "init_lora_weights": True,
        "layers_pattern": None,
        "layers_to_transform": None,
        "lora_alpha": alpha,
        "lora_dropout": 0.3,
        "modules_to_save": None,
        "peft_type": "LORA",
        "r": rank,
        "rank_pattern": {},
        "revision": None,
        "target_modules": ["qkv"],
        "task_type": None,
    }
