"""ImageReward (Xu et al., NeurIPS 2023; THUDM/ImageReward, PyPI `image-reward` 1.5) of the output and the full prompt:
what the package's `ImageReward.score(prompt, image)` returns, i.e. the BLIP reward head's output standardised with
the mean and standard deviation of the rewards of its training set.

Recipe (image-reward 1.5, `ImageReward.py`): the image resized to 224 on its short side (bicubic), centre-cropped to
224, RGB, CLIP mean/std; the prompt tokenized by BLIP's BERT tokenizer (bert-base-uncased + `[DEC]`, `[ENC]`),
truncated and padded to 35 tokens (its `[CLS]` kept, not replaced by `[ENC]`); the BLIP ViT-L/16 tokens; the BERT
text encoder cross-attending to them (bidirectional); the reward MLP (768-1024-128-64-16-1, no activations) on the
`[CLS]` output gives r; ImageReward = (r - 0.16717362830052426) / 1.0333394966054072 (`MEAN`, `STD`; the package's
`score` and `inference_rank` both standardise). Higher = preferred by people for this prompt; about N(0, 1) over
ImageReward's training images.

Network and loader: FaceScore's (`masc_ui.models.nets.blip_reward`; FaceScore is a fine-tune of this model, with the
same key layout). Released files: `ImageReward.pt` + `med_config.json` (Hugging Face repo THUDM/ImageReward); the
tokenizer is the model folder's when it holds one, else `bert-base-uncased`.
Extras: `raw` (r, before standardisation). Precision: as FaceScore (the BLIP towers in the precision policy's dtype,
the reward head in float32 with the checkpoint's float32 weights). Values are cached by (image sha256, prompt); pairs
go through the model in batches of `BATCH_SIZE`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ...caching import LruCache
from ...errors import InputError
from ...imaging import InputImage
from ...models.loading import pick_device, pick_dtype
from ...models.nets.blip_reward import IMAGEREWARD_FILE, FaceScoreModel, load_reward_model
from ...models.precision import cast_model, float32_parts, precision_params
from ...models.profiles import ModelIds
from ...settings import Settings
from ..backbone_scorer import BackboneScorer, Computed
from ..faces.facescore import FACE_TRANSFORM, TEXT_LENGTH, load_tokenizer, reward_files, tokenize_texts
from ..input_images import input_images
from ..sample import Sample

MEAN = 0.16717362830052426
STD = 1.0333394966054072
"""ImageReward's standardisation of the head output (`ImageReward.mean`, `ImageReward.std` in image-reward 1.5)."""
BATCH_SIZE = 16
CACHE_SIZE = 4096
IMAGE_TRANSFORM = FACE_TRANSFORM
"""Resize 224 (short side, bicubic), centre crop 224, CLIP mean/std: ImageReward's `_transform(224)`, the one
FaceScore inherited for its face crops."""


@dataclass(frozen=True)
class ImageRewardInfo:
    model_id: str
    revision: str
    device: str
    dtype: torch.dtype
    tokenizer: str
    float32_parts: tuple[str, ...] = ()
    """Parts kept in float32 whatever `dtype` is (the reward head)."""


def standardise(raw: float) -> float:
    """ImageReward's value of head output `raw`: (raw - MEAN) / STD."""
    return (raw - MEAN) / STD


class ImageRewardBackbone:
    """The reward model, its tokenizer and the per-(image, prompt) cache of head outputs; `forwards` counts the pairs
    that went through the model (not the cached ones)."""

    def __init__(
        self,
        model: FaceScoreModel,
        tokenizer: Any,
        info: ImageRewardInfo,
        *,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.info = info
        self.batch_size = batch_size
        self.cache: LruCache[float] = LruCache(cache_size)
        self.forwards = 0
        self._count_lock = threading.Lock()

    def raw_rewards(self, images: Sequence[InputImage], prompts: Sequence[str]) -> list[float]:
        """The head output r of each (image, prompt) pair, in order; each distinct pair computed once."""
        keys = [(img.sha256, prompt) for img, prompt in zip(images, prompts)]
        return self.cache.get_many_or_compute(keys, list(zip(images, prompts)), self._forward)

    @torch.inference_mode()
    def _forward(self, pairs: list[Any]) -> list[float]:
        vocab = int(self.model.sizes.text_config["vocab_size"])
        out: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            pixels = torch.stack([IMAGE_TRANSFORM(img.pixels.convert("RGB")) for img, _ in batch])
            text = tokenize_texts(self.tokenizer, [prompt for _, prompt in batch], vocab, what="ImageReward")
            rewards = self.model(
                pixels.to(self.info.device, self.info.dtype),
                text["input_ids"].to(self.info.device),
                text["attention_mask"].to(self.info.device),
            )
            out += [float(r) for r in rewards.float().cpu().numpy()]
            with self._count_lock:
                self.forwards += len(batch)
        return out


def load_imagereward_backbone(settings: Settings, ids: ModelIds) -> ImageRewardBackbone:
    if not ids.imagereward:
        raise InputError("ImageReward needs its checkpoint: set MASC_IMAGEREWARD_MODEL")
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    model_file, config_file = reward_files(
        ids.imagereward, settings, filename=IMAGEREWARD_FILE, setting="imagereward_model", what="ImageReward"
    )
    what = f"ImageReward checkpoint {model_file} (MASC_IMAGEREWARD_MODEL)"
    model = load_reward_model(model_file, config_file, what=what)
    cast_model(model, device, dtype, float32_parts=("head",))  # in place
    tokenizer, source = load_tokenizer(model_file.parent, what="ImageReward")
    info = ImageRewardInfo(
        model_id=str(model_file),
        revision="local",
        device=device,
        dtype=dtype,
        tokenizer=source,
        float32_parts=tuple(float32_parts(model)),
    )
    return ImageRewardBackbone(model, tokenizer, info)


class ImageRewardScorer(BackboneScorer):
    """ImageReward of each sample's output and full prompt; see the module docstring."""

    MODEL_FIELDS = ("imagereward",)

    def _load_backbone(self, ids: ModelIds) -> ImageRewardBackbone:
        key = ("imagereward", ids.imagereward, self.settings.device, self.settings.dtype)
        backbone: ImageRewardBackbone = self.models.get(key, lambda: load_imagereward_backbone(self.settings, ids))
        return backbone

    def _compute(self, samples: list[Sample], backbone: ImageRewardBackbone) -> list[Computed]:
        outs = input_images([s.out for s in samples], ["output"] * len(samples))
        raw = backbone.raw_rewards(outs, [s.prompt or "" for s in samples])
        return [(standardise(r), None, {"raw": r}) for r in np.asarray(raw, np.float64).tolist()]

    def _extra_provenance(self, info: ImageRewardInfo) -> dict[str, Any]:
        return {
            "text_length": TEXT_LENGTH,
            "tokenizer": info.tokenizer,
            "preprocess": "resize short side 224 bicubic, centre crop 224, RGB, CLIP norm",
            "output": f"(head output - {MEAN}) / {STD}, as ImageReward.score",
            **precision_params(info.dtype, list(info.float32_parts)),
        }
