"""BLIP-2 image-text matching (ITMScore; BLIP-2, Li et al., ICML 2023; t2v_metrics `blip2-itm`) on
`Blip2ForImageTextRetrieval` (default `Salesforce/blip2-itm-vit-g`).

For an image and a prompt:

1. image: the checkpoint's image processor on the PIL backend (for blip2-itm-vit-g: 224 x 224 bicubic, squashed,
   CLIP mean/std, as t2v_metrics' torchvision transform on PIL images); the ViT's last hidden state (after its
   final LayerNorm, LAVIS' `ln_vision`) -> (257, 1408), computed once per image (cached by content hash);
2. text: the checkpoint's BERT tokenizer, `[CLS] ... [SEP]`, truncated to 35 tokens (specials included) and
   padded to 35, as t2v_metrics; a longer prompt is truncated and extras say so (`truncated`, `text_tokens`);
3. the Q-Former reads the 32 learned queries followed by the text (attention mask: queries 1, then the text's),
   cross-attending to the image; the ITM head maps each query's output to 2 logits, averaged over the 32
   queries (as the model's own forward with `use_image_text_matching_head=True`);
   score = softmax(logits)[1] in float32 (not the ITC cosine, not BLIP-1).

Precision: the ViT and the Q-Former run in the precision policy's dtype (pixels cast to it); the ITM head
(Linear(768, 2)) always runs in float32 with the checkpoint's own weights (the model is read in float32, then cast:
float32 memory for a moment while loading, as PickScore), so the two logits whose softmax is the score are not
rounded to bfloat16 (provenance params `float32_parts` in bfloat16/float16).
"""

from __future__ import annotations

from typing import Any

import torch

from ...imaging import InputImage
from ...models.loading import load_pretrained
from ...models.precision import cast_model, float32_parts, precision_params
from ..provenance import checkpoint_revision
from .pair_engine import EngineInfo, PairEngine, PairScore

MAX_TEXT_TOKENS = 35
"""t2v_metrics' max_length for the ITM text (LAVIS' Blip2Qformer default)."""
BATCH_SIZE = 8
IMAGE_CACHE_SIZE = 256


class Blip2Itm(PairEngine):
    """P(match) of BLIP-2's ITM head for (image, prompt) pairs; see the module docstring."""

    def __init__(
        self,
        model: Any,
        processor: Any,
        info: EngineInfo,
        *,
        batch_size: int = BATCH_SIZE,
        image_cache_size: int = IMAGE_CACHE_SIZE,
    ) -> None:
        super().__init__(info, batch_size=batch_size, image_cache_size=image_cache_size)
        self.model = model
        self.image_processor = processor.image_processor
        self.tokenizer = processor.tokenizer

    @property
    def device(self) -> torch.device:
        param: torch.nn.Parameter = next(self.model.parameters())
        return param.device

    @torch.inference_mode()
    def encode_images(self, images: list[InputImage]) -> list[torch.Tensor]:
        pixels = self.image_processor(
            images=[image.pixels for image in images], return_tensors="pt", input_data_format="channels_last"
        )["pixel_values"]
        self.count_images(len(images))
        vision = self.model.vision_model(pixel_values=pixels.to(self.device, self.model.vision_model.dtype))
        return list(vision[0])

    @torch.inference_mode()
    def score_batch(self, images: list[InputImage], features: list[torch.Tensor], texts: list[str]) -> list[PairScore]:
        counts = [len(ids) for ids in self.tokenizer(texts, verbose=False)["input_ids"]]
        tokens = self.tokenizer(
            texts, padding="max_length", truncation=True, max_length=MAX_TEXT_TOKENS, return_tensors="pt"
        ).to(self.device)
        probs = itm_probabilities(self.model, torch.stack(features), tokens["input_ids"], tokens["attention_mask"])
        self.count_forward(len(texts))
        return [
            PairScore(p, None, {"text_tokens": n, "truncated": n > MAX_TEXT_TOKENS, "max_text_tokens": MAX_TEXT_TOKENS})
            for p, n in zip(probs.tolist(), counts)
        ]


def itm_probabilities(
    model: Any, image_embeds: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor
) -> torch.Tensor:
    """(B,) softmax(ITM logits averaged over the queries)[:, 1] for (B, P, D) image embeddings and (B, T) text
    tokens: the ITM branch of `Blip2ForImageTextRetrieval.forward` after its vision tower."""
    queries = model.query_tokens.expand(image_embeds.shape[0], -1, -1)
    query_mask = torch.ones(queries.shape[:-1], dtype=torch.long, device=queries.device)
    embeds = model.embeddings(input_ids=input_ids, query_embeds=queries)
    out = model.qformer(
        query_embeds=embeds,
        query_length=queries.shape[1],
        attention_mask=torch.cat([query_mask, attention_mask], dim=1),
        encoder_hidden_states=image_embeds,
        encoder_attention_mask=torch.ones(image_embeds.shape[:-1], dtype=torch.long, device=image_embeds.device),
    )
    logits: torch.Tensor = model.itm_head(out[0][:, : queries.shape[1]]).mean(dim=1)
    return logits.float().softmax(-1)[:, 1].cpu()


def load_blip2_itm(model_id: str, *, device: str, dtype: torch.dtype, what: str) -> Blip2Itm:
    """`Blip2ForImageTextRetrieval` and its processor (image processor on the PIL backend) from `model_id`."""
    from transformers import AutoImageProcessor, AutoProcessor, Blip2ForImageTextRetrieval

    processor = load_pretrained(AutoProcessor, model_id, what=f"{what} processor")
    processor.image_processor = load_pretrained(
        AutoImageProcessor, model_id, what=f"{what} image processor", backend="pil"
    )
    model = load_pretrained(Blip2ForImageTextRetrieval, model_id, what=what, dtype=torch.float32)
    model = cast_model(model, device, dtype, float32_parts=("itm_head",)).eval()
    image_processor = processor.image_processor
    params = {
        "head": "itm",
        "max_text_tokens": MAX_TEXT_TOKENS,
        "queries": int(model.config.num_query_tokens),
        "score": "softmax(ITM logits averaged over the queries)[1]",
        "image_processor": type(image_processor).__name__,
        "image_size": dict(image_processor.size),
        **precision_params(dtype, float32_parts(model)),
    }
    info = EngineInfo(
        model_id=model_id, revision=checkpoint_revision(model_id), device=device, dtype=dtype, params=params
    )
    return Blip2Itm(model, processor, info)
