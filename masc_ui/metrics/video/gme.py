"""GME-Qwen2-VL embeddings (`Alibaba-NLP/gme-Qwen2-VL-2B-Instruct` / `-7B-Instruct`), the encoder of OpenS2V's
GmeScore and NexusScore, through transformers' own Qwen2-VL classes (the release's loading code, written for
transformers 4, no longer runs on transformers 5).

Recipe (OpenS2V `eval/utils/gme/gme_model.py`, read, not copied):
- each input is one chat turn, `gme_prompt(instruction, content)`:
  `<|im_start|>system\\n{instruction}<|im_end|>\\n<|im_start|>user\\n{content}<|im_end|>\\n<|im_start|>assistant\\n<|endoftext|>`;
  text queries: instruction `GME_QUERY_INSTRUCTION` ("Find an image that matches the given text."), content = the
  text; images: instruction `GME_DEFAULT_INSTRUCTION` ("You are a helpful assistant."), content = the image alone;
- images: RGB, first resized (Pillow bicubic) so that each side is a multiple of 28 within [4, 16384] x 28^2
  pixels (the release's `fetch_image`; for usual sizes this only rounds the sides to multiples of 28), then
  Qwen2-VL's image processor (Pillow backend, as transformers 4 used) with min_pixels 256 x 28^2 and
  max_pixels 1280 x 28^2 (256..1280 visual tokens);
- texts are truncated to 1800 tokens (the release's `max_length`); right padding;
- embedding = the last layer's hidden state (after the final RMSNorm) at the last real token (`<|endoftext|>`),
  L2-normalized in float32.

Position ids (the one deliberate difference): the release feeds `inputs_embeds` to the language model without
position ids, so every token, image tokens included, gets the 1-D position 0..L-1 on all three M-RoPE axes. Here
the positions are Qwen2-VL's multimodal ones (`Qwen2VLModel.get_rope_index`): image tokens get (t, h, w) grid
positions and the tokens after an image continue from the largest position + 1, as the model was trained. Text-only
inputs get identical positions either way, so text embeddings are unchanged; image embeddings differ, hence
GmeScore and NexusScore values can differ slightly from the reference's (`GME_POSITIONS` is recorded).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image

from ...errors import InputError, ModelUnavailableError
from ...imaging import ImageSource, InputImage, as_input_image
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...settings import Settings
from ..embedding_cache import EmbeddingCache
from ..provenance import checkpoint_revision

GME_QUERY_INSTRUCTION = "Find an image that matches the given text."
GME_DEFAULT_INSTRUCTION = "You are a helpful assistant."
IMAGE_CONTENT = "<|vision_start|><|image_pad|><|vision_end|>"
IMAGE_FACTOR = 28
MIN_PIXELS = 256 * IMAGE_FACTOR * IMAGE_FACTOR
MAX_PIXELS = 1280 * IMAGE_FACTOR * IMAGE_FACTOR
FETCH_MIN_PIXELS = 4 * IMAGE_FACTOR * IMAGE_FACTOR
FETCH_MAX_PIXELS = 16384 * IMAGE_FACTOR * IMAGE_FACTOR
MAX_TEXT_TOKENS = 1800
GME_POSITIONS = "mrope"
"""Position ids used: Qwen2-VL's multimodal (t, h, w) M-RoPE positions (the release: 1-D positions)."""
BATCH_SIZE = 8
CACHE_SIZE = 4096


def gme_prompt(instruction: str, content: str) -> str:
    """The one chat turn GME embeds (see the module docstring); `content` is a text or `IMAGE_CONTENT`."""
    return (
        f"<|im_start|>system\n{instruction}<|im_end|>\n<|im_start|>user\n{content}<|im_end|>\n"
        "<|im_start|>assistant\n<|endoftext|>"
    )


def fetch_resize(image: Image.Image) -> Image.Image:
    """The release's first resize: sides rounded to multiples of 28 within [4, 16384] x 28^2 pixels (bicubic)."""
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

    width, height = image.size
    try:
        new_h, new_w = smart_resize(
            height, width, factor=IMAGE_FACTOR, min_pixels=FETCH_MIN_PIXELS, max_pixels=FETCH_MAX_PIXELS
        )
    except ValueError as exc:
        raise InputError(
            f"GME cannot embed a {width}x{height} image ({exc}); crop it to a saner aspect ratio"
        ) from None
    return image if (new_w, new_h) == (width, height) else image.resize((new_w, new_h), Image.Resampling.BICUBIC)


@dataclass(frozen=True)
class GmeInfo:
    """What a value records about the GME embedder it came from."""

    model_id: str
    revision: str
    device: str
    dtype: torch.dtype


class GmeEmbedder:
    """A loaded GME-Qwen2-VL: `text_embeddings` / `image_embeddings` -> (N, D) float32 unit vectors, cached by
    content (texts by (instruction, text), images by `InputImage.sha256`). Thread-safe; batches of `batch_size`.

    `text_forwards` / `image_forwards` count the inputs that went through the model (not the cached ones).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        image_processor: Any,
        info: GmeInfo,
        *,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.info = info
        self.batch_size = batch_size
        self.image_token_id = int(model.config.image_token_id)
        self.merge_size = int(image_processor.merge_size)
        self.text_cache = EmbeddingCache(cache_size)
        self.image_cache = EmbeddingCache(cache_size)
        self.text_forwards = 0
        self.image_forwards = 0
        self._count_lock = threading.Lock()

    def text_embeddings(self, texts: Sequence[str], instruction: str = GME_QUERY_INSTRUCTION) -> np.ndarray:
        """(N, D) unit vectors of `texts` embedded as queries with `instruction`."""
        keys = [("text", instruction, t) for t in texts]
        return self.text_cache.get_or_compute_many(
            keys, [gme_prompt(instruction, t) for t in texts], self._encode_texts
        )

    def image_embeddings(self, images: Sequence[ImageSource | InputImage]) -> np.ndarray:
        """(N, D) unit vectors of `images` (`InputImage`s, or anything `as_input_image` accepts)."""
        inputs = [as_input_image(img, name=f"image {i + 1}") for i, img in enumerate(images)]
        return self.image_cache.get_or_compute_many([img.sha256 for img in inputs], inputs, self._encode_images)

    @torch.inference_mode()
    def _encode_texts(self, prompts: list[str]) -> np.ndarray:
        chunks = []
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start : start + self.batch_size]
            tokens = self.tokenizer(
                batch,
                padding=True,
                padding_side="right",
                truncation=True,
                max_length=MAX_TEXT_TOKENS,
                return_tensors="pt",
            )
            chunks.append(self._forward(tokens["input_ids"], tokens["attention_mask"]))
            with self._count_lock:
                self.text_forwards += len(batch)
        return np.concatenate(chunks)

    @torch.inference_mode()
    def _encode_images(self, images: list[InputImage]) -> np.ndarray:
        chunks = []
        for start in range(0, len(images), self.batch_size):
            batch = [fetch_resize(img.pixels) for img in images[start : start + self.batch_size]]
            pixels = self.image_processor(images=batch, return_tensors="pt")
            grid = pixels["image_grid_thw"]
            prompts = [
                gme_prompt(
                    GME_DEFAULT_INSTRUCTION,
                    IMAGE_CONTENT.replace("<|image_pad|>", "<|image_pad|>" * (int(thw.prod()) // self.merge_size**2)),
                )
                for thw in grid
            ]
            tokens = self.tokenizer(prompts, padding=True, padding_side="right", return_tensors="pt")
            chunks.append(self._forward(tokens["input_ids"], tokens["attention_mask"], pixels["pixel_values"], grid))
            with self._count_lock:
                self.image_forwards += len(batch)
        return np.concatenate(chunks)

    def _forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        pixel_values: torch.Tensor | None = None,
        image_grid_thw: torch.Tensor | None = None,
    ) -> np.ndarray:
        device = self.info.device
        input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
        grid = None if image_grid_thw is None else image_grid_thw.to(device)
        # Explicit M-RoPE positions: the model's own fallback would cache `rope_deltas` on the shared module.
        position_ids, _ = self.model.get_rope_index(
            input_ids,
            mm_token_type_ids=(input_ids == self.image_token_id).int(),
            image_grid_thw=grid,
            attention_mask=attention_mask,
        )
        extra = (
            {}
            if pixel_values is None
            else {"pixel_values": pixel_values.to(device, self.info.dtype), "image_grid_thw": grid}
        )
        hidden = self.model(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False, **extra
        ).last_hidden_state
        last = attention_mask.sum(dim=1) - 1
        emb = hidden[torch.arange(hidden.shape[0], device=hidden.device), last].float()
        return torch.nn.functional.normalize(emb, p=2, dim=-1).cpu().numpy()


def load_gme(model_id: str, settings: Settings) -> GmeEmbedder:
    """Load a GME-Qwen2-VL checkpoint (HF id or local folder) on the settings' device/dtype."""
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoTokenizer

    what = "GME embedder (gme_model, env MASC_GME_MODEL)"
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    config = load_pretrained(AutoConfig, model_id, what=what)
    if getattr(config, "model_type", None) != "qwen2_vl":
        raise ModelUnavailableError(
            f"{what}: {model_id!r} is a {getattr(config, 'model_type', '?')} checkpoint; GME "
            "needs a Qwen2-VL one, e.g. Alibaba-NLP/gme-Qwen2-VL-2B-Instruct"
        )
    model = load_pretrained(AutoModel, model_id, what=what, dtype=dtype).to(device).eval()
    tokenizer = load_pretrained(AutoTokenizer, model_id, what=f"{what} tokenizer")
    image_processor = load_pretrained(
        AutoImageProcessor,
        model_id,
        what=f"{what} image processor",
        backend="pil",
        size={"shortest_edge": MIN_PIXELS, "longest_edge": MAX_PIXELS},
    )
    info = GmeInfo(model_id=model_id, revision=checkpoint_revision(model_id), device=device, dtype=dtype)
    return GmeEmbedder(model, tokenizer, image_processor, info)


def shared_gme(models: ModelRegistry, settings: Settings, model_id: str) -> GmeEmbedder:
    """The process-wide GME embedder for (model, device, dtype), loaded on first use (GmeScore and NexusScore
    share it, and so its caches)."""
    key = ("gme", model_id, settings.device, settings.dtype)
    return models.get(key, lambda: load_gme(model_id, settings))


def gme_info_fields(info: GmeInfo) -> dict[str, Any]:
    """The provenance fields of an embedder (for `make_provenance`)."""
    return {
        "model_id": info.model_id,
        "revision": info.revision,
        "device": info.device,
        "dtype": info.dtype,
        "gme_positions": GME_POSITIONS,
        "gme_min_pixels": MIN_PIXELS,
        "gme_max_pixels": MAX_PIXELS,
    }


def batched(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    """Consecutive lists of `size` items (the last one shorter)."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
