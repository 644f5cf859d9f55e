"""Model profiles: which checkpoints each profile uses (DESIGN.md "Model profiles")."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..settings import Settings


@dataclass(frozen=True)
class ModelIds:
    """Checkpoint ids (HF ids or local folders) of one profile."""

    siglip: str
    """SigLIP2 for MaSC CP/PF."""
    clip: str
    """CLIP for CLIP-I, CLIP-I-Seg, CLIP-T, CLIPScore."""
    pickscore: str
    """PickScore model."""
    pickscore_processor: str
    """PickScore's processor (the CLIP-ViT-H-14 one)."""
    dino: str
    """DINO ViT for DINO-I."""
    sam_variant: str
    """Segment Anything variant: vit_b, vit_l, vit_h."""
    sam_checkpoint: str | None
    """Local SAM checkpoint path; None = the official download for `sam_variant`."""
    sam3: str
    """SAM 3 (text-prompted segmentation)."""
    vqa: str
    """VQAScore: CLIP-FlanT5 or a chat VLM (`AutoModelForImageTextToText`)."""
    itm: str
    """ITMScore: BLIP-2 `Blip2ForImageTextRetrieval`."""


PAPER = ModelIds(
    siglip="google/siglip2-so400m-patch16-naflex",
    clip="openai/clip-vit-base-patch32",
    pickscore="yuvalkirstain/PickScore_v1",
    pickscore_processor="laion/CLIP-ViT-H-14-laion2B-s32B-b79K",
    dino="facebook/dino-vits16",
    sam_variant="vit_h",
    sam_checkpoint=None,
    sam3="facebook/sam3",
    vqa="zhiqiulin/clip-flant5-xxl",
    itm="Salesforce/blip2-itm-vit-g",
)
FAST = replace(PAPER, siglip="google/siglip2-base-patch16-naflex", sam_variant="vit_b", vqa="zhiqiulin/clip-flant5-xl")
CHAT_VLM_CHOICES = ("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-3B-Instruct")
"""The chat-VLM family of VQAScore (set `vqa_model`): METRICS.md's default and its smaller choice."""

DEMO_NAMES = {
    "siglip": "siglip2-naflex",
    "clip": "clip",
    "pickscore": "clip-h",
    "pickscore_processor": "clip-h",
    "dino": "dino",
    "sam3": "sam3",
    "vqa": "clip-flant5",
    "itm": "blip2-itm",
}
DEMO_SAM = ("vit_tiny", "sam-vit-tiny/sam_vit_tiny.pth")


def demo_ids(weights_dir: Path) -> ModelIds:
    """The tiny random checkpoints that `masc-ui demo-weights` writes under `weights_dir`."""
    paths = {k: str(weights_dir / v) for k, v in DEMO_NAMES.items()}
    return ModelIds(sam_variant=DEMO_SAM[0], sam_checkpoint=str(weights_dir / DEMO_SAM[1]), **paths)


def model_ids(settings: Settings, profile: str | None = None) -> ModelIds:
    """The checkpoints for `profile` (default: settings.profile; `auto` reads as `paper`), with the
    per-model overrides of `settings` applied on top."""
    name = profile or settings.profile
    base = {"paper": PAPER, "auto": PAPER, "fast": FAST}.get(name)
    if base is None:
        base = demo_ids(settings.resolved_demo_weights_dir)
    overrides = {
        "siglip": settings.siglip_model, "clip": settings.clip_model, "pickscore": settings.pickscore_model,
        "pickscore_processor": settings.pickscore_processor, "dino": settings.dino_model,
        "sam_variant": settings.sam_variant, "sam_checkpoint": settings.sam_checkpoint, "sam3": settings.sam3_model,
        "vqa": settings.vqa_model, "itm": settings.itm_model,
    }
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
