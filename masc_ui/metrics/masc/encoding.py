"""The SigLIP2 side of MaSC: batched image/text encoding (the caches are `masc_ui.caching.LruCache`s owned by `MaSC`).

`SiglipBackbone` wraps one loaded checkpoint (model + processor). NaFlex is detected from the image
processor (it returns `spatial_shapes`), never from the checkpoint's name.

How the vision forward is run (the same math as `vision_model(...).last_hidden_state`, measured in
`bench/mfu.py` and `bench/masc_throughput.py`):
- images are sorted by token count, so a batch carries little padding (transformers builds no attention mask
  at all for a batch of equal lengths);
- on CPU a forward carries at most `CPU_FORWARD_TOKENS` tokens: one 1024-patch image already keeps the matmul
  units busy, and larger forwards only push the activations (GELU, bias, residual passes) out of cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image

from ...errors import InputError
from ...models.compiling import CompiledForward

CPU_FORWARD_TOKENS = 2048
"""Most tokens (images x patches) per vision forward on CPU; the batch size caps it on every device."""


@dataclass(frozen=True)
class ImageEncoding:
    """One image through the vision tower."""

    patches: torch.Tensor
    """(Hp * Wp, D) `last_hidden_state` at the valid positions, row-major over the grid, model dtype, on the
    model's device (SigLIP has no CLS token)."""
    grid: tuple[int, int]
    """Patch grid (Hp, Wp)."""


class SiglipBackbone:
    """A loaded SigLIP/SigLIP2 checkpoint: encodes images to patch tokens and texts to pooled embeddings.

    `model` is a `SiglipModel`/`Siglip2Model` (`.vision_model` with the attention-pooling `.head`,
    `.text_model`); `processor` its `AutoProcessor`.
    """

    def __init__(self, model: Any, processor: Any, *, naflex_max_patches: int, compile: bool = False) -> None:
        self.model = model
        self.processor = processor
        self.vision = CompiledForward(model.vision_model, str(self.device), enabled=compile)
        """The vision tower's forward: eager, or through torch.compile when asked (eager again if that fails)."""
        self.naflex_max_patches = int(naflex_max_patches)
        image_processor = processor.image_processor
        self.is_naflex = "spatial_shapes" in getattr(image_processor, "model_input_names", ())
        vision_cfg = model.vision_model.config
        self.patch_size = int(vision_cfg.patch_size)
        self.text_length = int(model.config.text_config.max_position_embeddings)
        if not self.is_naflex:
            size = int(getattr(vision_cfg, "image_size", 0) or 0)
            if size <= 0 or size % self.patch_size:
                raise InputError(
                    f"fixed-size checkpoint has image_size={size}, not a multiple of its patch_size={self.patch_size}"
                )
            self.fixed_grid = (size // self.patch_size, size // self.patch_size)

    @property
    def device(self) -> torch.device:
        param: torch.nn.Parameter = next(self.model.parameters())
        return param.device

    @property
    def dtype(self) -> torch.dtype:
        param: torch.nn.Parameter = next(self.model.parameters())
        return param.dtype

    @torch.inference_mode()
    def encode_images(self, images: Sequence[Image.Image], batch_size: int | None = None) -> list[ImageEncoding]:
        """Encode `images` (RGB PIL) through the vision tower, `batch_size` at a time (None = all at once);
        one encoding per image, in the order given.

        NaFlex: the processor resizes each image to at most `naflex_max_patches` patches keeping its aspect
        ratio; images are grouped by patch count (so batches carry little padding), each batch is padded to its
        longest image, the padding hidden from attention by `pixel_attention_mask` and dropped from the result.
        """
        if not images:
            return []
        size = batch_size or len(images)
        if not self.is_naflex:
            per_forward = self._images_per_forward(size, self.fixed_grid[0] * self.fixed_grid[1])
            encodings: list[ImageEncoding] = []
            for start in range(0, len(images), per_forward):
                encodings.extend(self._encode_fixed(images[start : start + per_forward]))
            return encodings
        inputs = self.processor.image_processor(
            images=list(images), max_num_patches=self.naflex_max_patches, return_tensors="pt"
        )
        lengths = (inputs["pixel_attention_mask"] > 0).sum(1).tolist()
        order = sorted(range(len(images)), key=lambda i: lengths[i])
        by_index: dict[int, ImageEncoding] = {}
        start = 0
        while start < len(order):
            per_forward = self._images_per_forward(size, lengths[order[min(start + size, len(order)) - 1]])
            chunk = order[start : start + per_forward]
            for i, enc in zip(chunk, self._encode_naflex({k: v[chunk] for k, v in inputs.items()})):
                by_index[i] = enc
            start += len(chunk)
        return [by_index[i] for i in range(len(images))]

    def _images_per_forward(self, batch_size: int, tokens_per_image: int) -> int:
        """`batch_size`, lowered on CPU so that a forward carries at most `CPU_FORWARD_TOKENS` tokens (>= 1)."""
        if self.device.type != "cpu":
            return batch_size
        return max(1, min(batch_size, CPU_FORWARD_TOKENS // max(1, tokens_per_image)))

    def _encode_naflex(self, inputs: dict[str, torch.Tensor]) -> list[ImageEncoding]:
        valid = inputs["pixel_attention_mask"] > 0
        length = int(valid.sum(1).max())
        shapes = inputs["spatial_shapes"]
        out = self.vision(
            pixel_values=inputs["pixel_values"][:, :length].to(self.device, self.dtype),
            pixel_attention_mask=inputs["pixel_attention_mask"][:, :length].to(self.device),
            spatial_shapes=shapes.to(self.device),
        ).last_hidden_state
        valid = valid[:, :length].to(out.device)
        result = []
        for i, (h, w) in enumerate(shapes.tolist()):
            patches = out[i][valid[i]]
            if patches.shape[0] != h * w:
                raise RuntimeError(f"NaFlex image {i}: {patches.shape[0]} valid tokens for grid {(h, w)}")
            result.append(ImageEncoding(patches=patches, grid=(int(h), int(w))))
        return result

    def _encode_fixed(self, images: Sequence[Image.Image]) -> list[ImageEncoding]:
        inputs = self.processor.image_processor(images=list(images), return_tensors="pt")
        out = self.vision(pixel_values=inputs["pixel_values"].to(self.device, self.dtype)).last_hidden_state
        n = self.fixed_grid[0] * self.fixed_grid[1]
        if out.shape[1] != n:
            raise RuntimeError(f"fixed-size checkpoint returned {out.shape[1]} tokens for grid {self.fixed_grid}")
        return [ImageEncoding(patches=out[i].clone(), grid=self.fixed_grid) for i in range(out.shape[0])]

    @torch.inference_mode()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """(len(texts), D) pooled text embeddings (`pooler_output`), model dtype.

        Tokenized with `padding="max_length"` to the text tower's trained length (64 for SigLIP2), truncated,
        and encoded without an attention mask, as SigLIP was trained.
        """
        ids = self.processor.tokenizer(
            list(texts), padding="max_length", truncation=True, max_length=self.text_length, return_tensors="pt"
        )["input_ids"]
        pooled: torch.Tensor = self.model.text_model(input_ids=ids.to(self.device)).pooler_output
        return pooled
