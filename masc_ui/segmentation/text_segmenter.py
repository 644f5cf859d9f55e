"""Masks from the subject's name: SAM 3 (transformers' `Sam3Model` / `Sam3Processor`), as the MaSC and
KnowCusBench authors segmented their images.

SAM 3 finds every instance of a noun phrase ("hat", "red backpack"). The mask is the union of the instances
whose score (SAM 3's `sigmoid(pred_logits) * sigmoid(presence_logits)`, as in
`Sam3Processor.post_process_instance_segmentation`) is above a threshold. A result that found nothing, or
whose mask covers less than `min_fraction` of the image, is flagged `doubtful` with a reason: callers must
show it for checking instead of scoring with it silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from PIL import Image

from ..errors import InputError
from ..imaging import InputImage, as_input_image
from ..models.loaded_models import ModelRegistry
from ..models.loading import load_pretrained, pick_device, pick_dtype

DEFAULT_SAM3 = "facebook/sam3"


@dataclass(frozen=True)
class TextSegmentation:
    """The mask of every instance of `text` in one image."""

    mask: np.ndarray = field(repr=False)
    """bool (H, W) at the image's size: union of the kept instances (all False when none was kept)."""
    n_instances: int
    """How many instances scored above the threshold."""
    scores: list[float]
    """Their scores in [0, 1], highest first."""
    fraction: float
    """Share of the image the mask covers, in [0, 1]."""
    doubtful: bool
    """True when nothing was found or the mask is smaller than the minimum fraction: check before using it."""
    reason: str | None
    """Why it is doubtful (None when it is not)."""
    text: str = ""
    """The noun phrase that was segmented."""


def combine_instances(
    instance_masks: np.ndarray,
    scores: Sequence[float],
    *,
    text: str,
    threshold: float,
    min_fraction: float,
    best_score: float | None = None,
    shape: tuple[int, int] | None = None,
) -> TextSegmentation:
    """Union of the instances scoring above `threshold`, flagged doubtful when empty or small.

    `instance_masks` is bool (N, H, W), `scores` the N instance scores; `best_score` (the highest score of
    all candidates, kept or not) only makes the "nothing found" reason more helpful. `shape` (H, W) of the
    image: the mask when nothing is kept has this shape (SAM 3's post-processing returns no instance at the
    model's low resolution then), and kept instances must have it.
    """
    masks = np.asarray(instance_masks, dtype=bool)
    if masks.ndim != 3:
        raise InputError(f"instance masks must be (N, H, W), got shape {masks.shape}")
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(values) != masks.shape[0]:
        raise InputError(f"{masks.shape[0]} instance masks but {len(values)} scores")
    keep = values > threshold
    order = np.argsort(-values[keep], kind="stable")
    kept = values[keep][order]
    if shape is not None and keep.any() and masks.shape[1:] != tuple(shape):
        raise InputError(f"instance masks are {masks.shape[2]}x{masks.shape[1]}, the image {shape[1]}x{shape[0]}")
    empty_shape = masks.shape[1:] if shape is None else tuple(shape)
    union = masks[keep].any(axis=0) if keep.any() else np.zeros(empty_shape, dtype=bool)
    fraction = float(union.mean()) if union.size else 0.0
    reason = None
    if not keep.any():
        best = "" if best_score is None else f" (best {best_score:.2f})"
        reason = (
            f"no instance of {text!r} scored above {threshold:g}{best}; check the image or the subject "
            "name, lower the threshold, or draw the mask"
        )
    elif fraction < min_fraction:
        reason = (
            f"the {text!r} mask covers {fraction:.1%} of the image, less than the {min_fraction:.0%} "
            "minimum; check it, or draw the mask"
        )
    return TextSegmentation(
        mask=union,
        n_instances=int(keep.sum()),
        scores=[float(s) for s in kept],
        fraction=fraction,
        doubtful=reason is not None,
        reason=reason,
        text=text,
    )


class TextSegmenter:
    """SAM 3 behind one method: `segment(image, text)`.

    Args:
        model_id: Hugging Face id (default `facebook/sam3`) or a local `save_pretrained` folder holding the
            model and its processor.
        device: `auto` (cuda > mps > cpu) or a torch device string.
        dtype: `auto` (the policy of `models.precision`: bfloat16 where the hardware computes it fast -- CUDA with
            native bf16, CPUs with AMX or AVX-512-BF16 -- float32 elsewhere), `float32`, `bfloat16`, `float16`.
        models: registry that owns the loaded model (shared); None = this object owns it.
        mask_threshold: probability above which an instance's mask pixel is foreground.

    Loading happens on first use and raises `ModelUnavailableError` (offline, wrong id, incomplete folder).
    """

    def __init__(
        self,
        model_id: str = DEFAULT_SAM3,
        device: str | None = "auto",
        dtype: str | None = "auto",
        *,
        models: ModelRegistry | None = None,
        mask_threshold: float = 0.5,
    ) -> None:
        self.model_id = model_id
        self.device = pick_device(device)
        self.dtype = pick_dtype(dtype, self.device)
        self.mask_threshold = _check_unit("mask_threshold", mask_threshold)
        self._models = models if models is not None else ModelRegistry()

    def _loaded(self) -> tuple[Any, Any]:
        key = ("sam3", self.model_id, self.device, str(self.dtype))
        return self._models.get(key, self._load)

    def _load(self) -> tuple[Any, Any]:
        from transformers import Sam3Model, Sam3Processor

        what = "SAM 3 (segmentation by the subject's name)"
        processor = load_pretrained(Sam3Processor, self.model_id, what=what)
        model = load_pretrained(Sam3Model, self.model_id, what=what, dtype=self.dtype)
        return model.to(self.device).eval(), processor

    @property
    def provenance(self) -> dict[str, Any]:
        return {
            "model": "sam3",
            "model_id": self.model_id,
            "device": self.device,
            "dtype": str(self.dtype).removeprefix("torch."),
            "mask_threshold": self.mask_threshold,
        }

    def segment(
        self,
        image: InputImage | Image.Image | np.ndarray,
        text: str,
        threshold: float = 0.5,
        min_fraction: float = 0.05,
    ) -> TextSegmentation:
        """Mask of every instance of `text` (a short noun phrase, e.g. the subject's name) in `image`.

        Instances with score > `threshold` are united; a result with none, or covering less than
        `min_fraction` of the image, comes back `doubtful` with a `reason`.
        """
        phrase = _check_text(text)
        threshold = _check_unit("threshold", threshold)
        min_fraction = _check_unit("min_fraction", min_fraction)
        rgb = as_input_image(image, name="image").pixels
        model, processor = self._loaded()
        n_tokens = len(processor.tokenizer(phrase)["input_ids"])
        limit = model.config.text_config.max_position_embeddings
        if n_tokens > limit:
            raise InputError(
                f"text to segment {phrase!r} is {n_tokens} tokens long, SAM 3 reads at most {limit}; "
                "give a short noun phrase such as the subject's name"
            )
        inputs = processor(images=rgb, text=phrase, return_tensors="pt")
        target = [(rgb.height, rgb.width)]
        with torch.inference_mode():
            outputs = model(
                pixel_values=inputs["pixel_values"].to(self.device, self.dtype),
                input_ids=inputs["input_ids"].to(self.device),
                attention_mask=inputs["attention_mask"].to(self.device),
            )
            every = processor.post_process_object_detection(outputs, threshold=-1.0)[0]["scores"]
            found = processor.post_process_instance_segmentation(
                outputs, threshold=threshold, mask_threshold=self.mask_threshold, target_sizes=target
            )[0]
        best = float(every.max()) if every.numel() else None
        return combine_instances(
            found["masks"].bool().cpu().numpy(),
            found["scores"].float().cpu().numpy(),
            text=phrase,
            threshold=threshold,
            min_fraction=min_fraction,
            best_score=best,
            shape=(rgb.height, rgb.width),
        )


def segment_by_text(
    image: InputImage | Image.Image | np.ndarray,
    text: str,
    *,
    model_id: str = DEFAULT_SAM3,
    device: str | None = "auto",
    threshold: float = 0.5,
    min_fraction: float = 0.05,
    segmenter: TextSegmenter | None = None,
) -> TextSegmentation:
    """One-call form of `TextSegmenter(model_id, device).segment(image, text, threshold, min_fraction)`.
    Pass `segmenter` to reuse a loaded model (loading SAM 3 takes far longer than segmenting an image)."""
    seg = segmenter if segmenter is not None else TextSegmenter(model_id, device)
    return seg.segment(image, text, threshold=threshold, min_fraction=min_fraction)


def _check_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            f"text to segment must be a non-empty noun phrase such as the subject's name (e.g. 'hat'), got {text!r}"
        )
    return " ".join(text.split())


def _check_unit(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.floating, np.integer))
        or not 0.0 <= float(value) <= 1.0
    ):
        raise InputError(f"{name} must be a number within [0, 1], got {value!r}")
    return float(value)
