"""DINOv2-I = cos of the DINOv2 CLS embeddings of the output and each reference; several references: their mean
(`extras["per_ref"]` lists them). DINOv2-I-Seg = DINOv2-I by the -Seg rule (`masc_ui.metrics.segmented_subject`).

Model: transformers `Dinov2Model` (`facebook/dinov2-base` in the paper profile, `-small` in fast; set
`dinov2_model`). Embedding: `last_hidden_state[:, 0]`, the CLS token after the final LayerNorm, which is exactly
what `Dinov2Model` returns as `pooler_output` (DreamBench++'s `Dinov2Score` reads `last_hidden_state[:, 0, :]`);
L2-normalized in float32.

Preprocessing: the checkpoint's own image processor on its PIL backend (for `facebook/dinov2-*`: a
`BitImageProcessor` with the shorter side resized to 256, bicubic, the longer one to int(256 * long / short),
centre crop 224, x / 255, ImageNet mean/std) -- what `BitImageProcessor.from_pretrained` did in transformers 4,
the version the DreamBench++ numbers were computed with.
"""

from __future__ import annotations

from typing import Any

import torch
from PIL import Image

from ...errors import ModelUnavailableError
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...models.profiles import ModelIds
from ...settings import Settings
from ..provenance import checkpoint_revision
from ..segmented_subject import SegmentedSubjectScorer
from .dino_i import DinoBackbone, DinoImageScorer, DinoInfo, Preprocess

DINOV2_MODEL_TYPES = ("dinov2", "dinov2_with_registers")
"""transformers model types read as DINOv2 (both put the layer-normed CLS token first)."""


def processor_preprocess(processor: Any) -> Preprocess:
    """The batch `Preprocess` of a transformers image processor: its `pixel_values`, float32 (N, 3, H, W)."""

    def preprocess(images: list[Image.Image]) -> torch.Tensor:
        return torch.as_tensor(processor(images=images, return_tensors="pt")["pixel_values"], dtype=torch.float32)

    return preprocess


def describe_processor(processor: Any) -> str:
    """The geometry and normalization of an image processor in words, e.g. `BitImageProcessorPil: resize shortest
    edge 256 bicubic, centre crop 224x224, x / 255, mean [...], std [...]`."""
    from transformers.image_utils import PILImageResampling

    size = {k: v for k, v in dict(processor.size).items() if v is not None}
    resize = " ".join(f"{k.replace('_', ' ')} {v}" for k, v in size.items())
    resample = PILImageResampling(processor.resample).name.lower()
    parts = [f"resize {resize} {resample}"] if processor.do_resize else []
    if processor.do_center_crop:
        crop = dict(processor.crop_size)
        parts.append(f"centre crop {crop['height']}x{crop['width']}")
    if processor.do_rescale:
        parts.append(f"x * {processor.rescale_factor:.6g}")
    if processor.do_normalize:
        parts.append(f"mean {list(processor.image_mean)}, std {list(processor.image_std)}")
    return f"{type(processor).__name__}: " + ", ".join(parts)


def load_dinov2_backbone(model_id: str, settings: Settings) -> DinoBackbone:
    """`Dinov2Model` + its image processor (PIL backend) from `model_id`, as a `DinoBackbone`."""
    from transformers import AutoConfig, AutoImageProcessor, AutoModel

    what = "DINOv2 backbone (dinov2_model)"
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    config = load_pretrained(AutoConfig, model_id, what=f"{what} config")
    if config.model_type not in DINOV2_MODEL_TYPES:
        raise ModelUnavailableError(
            f"{what}: {model_id} is a {config.model_type!r} checkpoint, not DINOv2 (model types "
            f"{', '.join(DINOV2_MODEL_TYPES)}). Set MASC_DINOV2_MODEL to a DINOv2 checkpoint such as "
            "facebook/dinov2-base."
        )
    model = load_pretrained(AutoModel, model_id, what=what, dtype=dtype).to(device).eval()
    processor = load_pretrained(AutoImageProcessor, model_id, what=f"{what} image processor", backend="pil")
    info = DinoInfo(
        model_id=model_id,
        revision=checkpoint_revision(model_id),
        device=device,
        dtype=dtype,
        mean=tuple(float(v) for v in processor.image_mean),
        std=tuple(float(v) for v in processor.image_std),
        preprocess=describe_processor(processor),
    )
    return DinoBackbone(model, info, preprocess=processor_preprocess(processor))


def shared_dinov2_backbone(models: ModelRegistry, settings: Settings, model_id: str) -> DinoBackbone:
    key = ("dinov2-backbone", model_id, settings.device, settings.dtype)
    backbone: DinoBackbone = models.get(key, lambda: load_dinov2_backbone(model_id, settings))
    return backbone


class Dinov2ImageScorer(DinoImageScorer):
    """DINOv2-I = mean over references r of cos(CLS(out), CLS(r)) with a DINOv2 backbone."""

    MODEL_FIELDS = ("dinov2",)

    def _load_backbone(self, ids: ModelIds) -> DinoBackbone:
        return shared_dinov2_backbone(self.models, self.settings, ids.dinov2)


class Dinov2SegScorer(SegmentedSubjectScorer, Dinov2ImageScorer):
    """DINOv2-I-Seg; parameters and extras as CLIP-I-Seg's (`fill`, `margin`, `segment_reference`; `per_ref`,
    `out_box`, `ref_boxes`)."""
