"""DreamSim's "ensemble" embedding (Fu et al., NeurIPS 2023; package `dreamsim` 0.2.1, `dreamsim/model.py`,
`feature_extraction/`), rebuilt in plain torch and loaded from the release files with every key checked.

Three ViTs in the layout of `facebookresearch/dino`'s `vision_transformer.py` (which the package uses for all three:
`patch_embed.proj`, `cls_token`, `pos_embed`, `pos_drop`, `blocks.{i}.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1,
mlp.fc2}`, `norm`), each with the release's LoRA merged into its `attn.qkv` layers:

| backbone | weights file in the release folder | normalization | LayerNorm eps | feature |
|---|---|---|---|---|
| `dino_vitb16` | `checkpoints/dino_vitbase16_pretrain.pth` (what `torch.hub.load("facebookresearch/dino:main", "dino_vitb16")` downloads) | ImageNet | 1e-6 | CLS token of the last block's output, before the final LayerNorm (the package hooks block 11 of 12) |
| `clip_vitb16` | `clip_vitb16_pretrain.pth.tar` (`{"state_dict": ...}` with `proj`) | OpenAI CLIP | 1e-5 | final-LayerNorm CLS @ `proj`; QuickGELU; `pos_drop` is CLIP's `ln_pre` |
| `open_clip_vitb16` | `open_clip_vitb16_pretrain.pth.tar` (same layout) | OpenAI CLIP | 1e-5 | final-LayerNorm CLS @ `proj`; GELU; `pos_drop` is `ln_pre` |

The LoRA adapter is `ensemble_lora/` (peft's layout; module names `extractor_list.{i}.model.<ViT module>`, i in the
order above). Input: RGB in [0, 1], (N, 3, 224, 224) (the package's `preprocess`: 224x224 bicubic, `ToTensor`);
each backbone normalizes it with its own mean/std. Embedding = the three features concatenated (768 + 512 + 512 for
the release), then `normalize_embeds` (the `dreamsim()` default): minus its mean over the dimensions, divided by its
L2 norm. DreamSim distance = 1 - cos of two embeddings.

Heads: ViT width / 64 (the head width of every ViT of the release; one head below 64). The release's
`dino_vitb16_pretrain.pth` (DINO's training checkpoint, of which the package reads only the projection head, unused
by the "cls" feature) is not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from ...errors import ModelUnavailableError
from ..lora import merge_lora
from ..state_dicts import load_strict, read_state_dict

IMAGE_SIZE = 224
HEAD_WIDTH = 64
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
LORA_DIR = "ensemble_lora"
DINO_HEAD_FILE = "dino_vitb16_pretrain.pth"
"""In the release (the package reads DINO's projection head from it); not read here."""
DINO_BACKBONE_FILE = "checkpoints/dino_vitbase16_pretrain.pth"
DINO_BACKBONE_URL = "https://dl.fbaipublicfiles.com/dino/dino_vitbase16_pretrain/dino_vitbase16_pretrain.pth"
"""Where `torch.hub.load("facebookresearch/dino:main", "dino_vitb16")` gets the DINO backbone the package adapts."""


@dataclass(frozen=True)
class EnsembleMember:
    """One backbone of the ensemble: its package name, weights file, normalization and architecture options."""

    name: str
    file: str
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    feature: str
    """`cls`: the CLS token of the last block's output; `embedding`: final-LayerNorm CLS @ `proj`."""
    eps: float
    quick_gelu: bool
    pre_norm: bool
    """A LayerNorm (`pos_drop`) between the position embedding and the blocks (CLIP's `ln_pre`)."""


ENSEMBLE = (
    EnsembleMember("dino_vitb16", DINO_BACKBONE_FILE, IMAGENET_MEAN, IMAGENET_STD, "cls", 1e-6, False, False),
    EnsembleMember(
        "clip_vitb16", "clip_vitb16_pretrain.pth.tar", OPENAI_CLIP_MEAN, OPENAI_CLIP_STD, "embedding", 1e-5, True, True
    ),
    EnsembleMember(
        "open_clip_vitb16",
        "open_clip_vitb16_pretrain.pth.tar",
        OPENAI_CLIP_MEAN,
        OPENAI_CLIP_STD,
        "embedding",
        1e-5,
        False,
        True,
    ),
)
RELEASE_FILES = (LORA_DIR, *(m.file for m in ENSEMBLE))
"""What a release folder must hold for this loader."""


@dataclass(frozen=True)
class VitShape:
    """A DINO-layout ViT's sizes, as read from its weights."""

    width: int
    depth: int
    mlp: int
    patch: int
    positions: int

    @property
    def heads(self) -> int:
        return max(1, self.width // HEAD_WIDTH)


class QuickGELU(nn.Module):
    """x * sigmoid(1.702 x), OpenAI CLIP's activation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)


class PatchEmbed(nn.Module):
    def __init__(self, width: int, patch: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, width, kernel_size=patch, stride=patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).flatten(2).transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(x).reshape(batch, tokens, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(batch, tokens, width))


class Mlp(nn.Module):
    def __init__(self, width: int, hidden: int, quick_gelu: bool) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.act: nn.Module = QuickGELU() if quick_gelu else nn.GELU()
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, shape: VitShape, member: EnsembleMember) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(shape.width, eps=member.eps)
        self.attn = Attention(shape.width, shape.heads)
        self.norm2 = nn.LayerNorm(shape.width, eps=member.eps)
        self.mlp = Mlp(shape.width, shape.mlp, member.quick_gelu)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Vit(nn.Module):
    """A DINO-layout ViT; `proj` (width, D) is the CLIP projection of `embedding` members (None for `cls`)."""

    def __init__(self, shape: VitShape, member: EnsembleMember, proj: torch.Tensor | None = None) -> None:
        super().__init__()
        self.member = member
        self.patch_embed = PatchEmbed(shape.width, shape.patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, shape.width))
        self.pos_embed = nn.Parameter(torch.zeros(1, shape.positions, shape.width))
        self.pos_drop: nn.Module = nn.LayerNorm(shape.width, eps=member.eps) if member.pre_norm else nn.Identity()
        self.blocks = nn.ModuleList(Block(shape, member) for _ in range(shape.depth))
        self.norm = nn.LayerNorm(shape.width, eps=member.eps)
        self.proj = nn.Parameter(proj, requires_grad=False) if proj is not None else None

    def feature(self, pixels: torch.Tensor) -> torch.Tensor:
        """(N, D) feature of normalized pixels (N, 3, 224, 224), in the model's dtype."""
        x = self.patch_embed(pixels)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.pos_drop(x)
        for block in self.blocks:
            x = block(x)
        if self.member.feature == "cls":
            return x[:, 0]
        assert self.proj is not None
        return self.norm(x)[:, 0] @ self.proj


class DreamSimEnsemble(nn.Module):
    """The three ViTs; `forward(pixels)` (N, 3, 224, 224) RGB in [0, 1] -> (N, D) float32 normalized embeddings."""

    def __init__(self, backbones: list[Vit]) -> None:
        super().__init__()
        self.backbones = nn.ModuleList(backbones)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        features = []
        for vit in self.backbones:
            member = vit.member
            mean = torch.tensor(member.mean, device=pixels.device).view(1, 3, 1, 1)
            std = torch.tensor(member.std, device=pixels.device).view(1, 3, 1, 1)
            x = ((pixels.float() - mean) / std).to(vit.cls_token.dtype)
            features.append(vit.feature(x).float())
        return normalize_embedding(torch.cat(features, dim=-1))


def normalize_embedding(embed: torch.Tensor) -> torch.Tensor:
    """The package's `normalize_embedding`: each row minus its mean, divided by its L2 norm."""
    centred = embed - embed.mean(dim=-1, keepdim=True)
    return centred / centred.norm(dim=-1, keepdim=True)


def vit_shape(state: dict[str, torch.Tensor], *, what: str) -> VitShape:
    """The sizes of the DINO-layout ViT whose weights are `state`."""
    try:
        width = int(state["cls_token"].shape[-1])
        patch = int(state["patch_embed.proj.weight"].shape[-1])
        mlp = int(state["blocks.0.mlp.fc1.weight"].shape[0])
        positions = int(state["pos_embed"].shape[1])
    except KeyError as exc:
        raise ModelUnavailableError(
            f"{what}: the weights lack {exc.args[0]!r}; they are not a ViT in the DINO layout DreamSim uses"
        ) from None
    depth = len({k.split(".")[1] for k in state if k.startswith("blocks.")})
    expected = (IMAGE_SIZE // patch) ** 2 + 1
    if positions != expected:
        raise ModelUnavailableError(
            f"{what}: the ViT has {positions} position embeddings; DreamSim's {IMAGE_SIZE}x{IMAGE_SIZE} input with "
            f"patch {patch} needs {expected}"
        )
    return VitShape(width=width, depth=depth, mlp=mlp, patch=patch, positions=positions)


def load_member(folder: Path, member: EnsembleMember, *, what: str) -> Vit:
    """The ViT of `member` with the weights of its file in the release `folder` (keys checked strictly)."""
    path = folder / member.file
    label = f"{what}: {member.name} weights {path}"
    if not path.is_file():
        raise ModelUnavailableError(f"{label} do not exist; {release_hint(folder)}")
    state = read_state_dict(path, what=label, wrapper_key=None if member.feature == "cls" else "state_dict")
    proj = state.pop("proj", None)
    if member.feature == "embedding" and proj is None:
        raise ModelUnavailableError(f"{label}: the file lacks the CLIP projection 'proj'")
    vit = Vit(vit_shape(state, what=label), member, proj.float() if proj is not None else None)
    load_strict(vit, {**state, **({"proj": proj} if proj is not None else {})}, what=label)
    return vit


def load_dreamsim_ensemble(folder: Path, *, what: str) -> tuple[DreamSimEnsemble, dict[str, Any]]:
    """The ensemble of the release `folder` with its LoRA merged, in float32 on the CPU, eval mode; and the adapter's
    settings (for provenance)."""
    folder = Path(folder)
    backbones = [load_member(folder, member, what=what) for member in ENSEMBLE]
    linear = {
        f"extractor_list.{i}.model.{name}": module
        for i, vit in enumerate(backbones)
        for name, module in vit.named_modules()
        if isinstance(module, nn.Linear)
    }
    if not (folder / LORA_DIR).is_dir():
        raise ModelUnavailableError(f"{what}: {folder / LORA_DIR} does not exist; {release_hint(folder)}")
    adapter = merge_lora(linear, folder / LORA_DIR, what=f"{what}: {folder / LORA_DIR}")
    return DreamSimEnsemble(backbones).eval(), adapter


def release_hint(folder: Path) -> str:
    """What a DreamSim release folder must hold and where its parts come from."""
    return (
        f"a DreamSim release folder holds {', '.join(RELEASE_FILES[1:])} and {LORA_DIR}/ (extract the release "
        "dreamsim_ensemble_checkpoint.zip into it, and download the DINO backbone "
        f"{DINO_BACKBONE_URL} into {folder / DINO_BACKBONE_FILE}; the dreamsim package's cache_dir holds both "
        "after its first use), or set MASC_DREAMSIM_WEIGHTS to the release zip's URL"
    )
