"""VQAScore with CLIP-FlanT5 (METRICS.md family (a); t2v_metrics `clip-flant5-xxl`, the paper default).

For an image and a prompt:

1. image: padded to a square with the CLIP mean colour ((122, 116, 104) for CLIP's mean), then the CLIP
   processor of the vision tower (PIL backend as transformers 4.31 had: resize 336 bicubic, centre crop 336,
   CLIP normalization); patch tokens of the second-to-last CLIP layer through the projector -> (576, d_model);
2. text: `Does this figure show "{prompt}"? Please answer yes or no.` in the LLaVA-v1 template
   `{system} USER: <image>\\n{question} ASSISTANT: `; the parts before and after `<image>` are tokenized on their
   own (each ends with `</s>`), the image tokens go between them;
3. score = exp(-mean over the answer tokens of the cross-entropy of `Yes</s>` teacher-forced through the decoder
   (decoder input = start token + answer shifted right)), i.e. the geometric mean of P(Yes) and P(</s> | Yes).
   P(No) in extras is the same with `No</s>`. Log-softmax in float32 over the tokenizer's vocabulary; outside
   float32 the logits are recomputed in float32 from the LM head's input (`models.precision.model_logits`: bfloat16
   logits would be rounded to 0.125 near 30; provenance params `float32_parts`).

Batched: the encoder reads each pair's embeddings right-padded with zeros (attention mask 0 there, as t2v_metrics
pads), once per pair; the decoder runs twice on its output (Yes, No). The image tokens are computed once per
image (cached by content hash), whatever the number of prompts. A question over 2048 tokens (t2v_metrics'
context length, the image counting as one) is not scored: NaN with the reason (t2v_metrics would cut the text
before "ASSISTANT:", which asks another question).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ...imaging import InputImage
from ...models.loading import is_local, load_pretrained
from ...models.nets.clip_flant5 import FLANT5_TOKENIZER, ClipFlanT5, clip_flant5_spec, read_config, vision_tower_source
from ...models.precision import model_logits, precision_params
from ..provenance import checkpoint_revision
from .pair_engine import EngineInfo, PairEngine, PairScore, nan_score
from .questions import (
    ANSWER,
    CLIP_FLANT5_QUESTION,
    LLAVA_V1_TEMPLATE,
    NEGATIVE_ANSWER,
    clip_flant5_question,
    llava_v1_text,
    mean_colour,
    pad_to_square,
)

FAMILY = "clip-flant5"
CONTEXT_TOKENS = 2048
"""t2v_metrics' CONTEXT_LEN (the tokenizer's model_max_length when CLIP-FlanT5 was trained)."""
BATCH_SIZE = 8
IMAGE_CACHE_SIZE = 64
"""Projected image tokens kept (576 x 4096 floats each for the XXL model)."""


class ClipFlanT5Vqa(PairEngine):
    """P("Yes") of CLIP-FlanT5 for (image, prompt) pairs; see the module docstring for the recipe."""

    def __init__(
        self,
        model: ClipFlanT5,
        tokenizer: Any,
        image_processor: Any,
        info: EngineInfo,
        *,
        batch_size: int = BATCH_SIZE,
        image_cache_size: int = IMAGE_CACHE_SIZE,
    ) -> None:
        super().__init__(info, batch_size=batch_size, image_cache_size=image_cache_size)
        self.model = model
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.answer_ids = tokenizer(ANSWER).input_ids
        self.negative_ids = tokenizer(NEGATIVE_ANSWER).input_ids
        self.fill = mean_colour(image_processor.image_mean)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def question(self, prompt: str) -> str:
        return clip_flant5_question(prompt)

    @torch.inference_mode()
    def encode_images(self, images: list[InputImage]) -> list[torch.Tensor]:
        squares = [pad_to_square(image.pixels, self.fill) for image in images]
        pixels = self.image_processor(images=squares, return_tensors="pt", input_data_format="channels_last")[
            "pixel_values"
        ]
        self.count_images(len(images))
        return list(self.model.image_tokens(pixels.to(self.device)))

    @torch.inference_mode()
    def score_batch(self, images: list[InputImage], features: list[torch.Tensor], texts: list[str]) -> list[PairScore]:
        results: list[PairScore | None] = [None] * len(texts)
        rows = []
        for i, text in enumerate(texts):
            question = self.question(text)
            before, after = (self.tokenizer(part, verbose=False).input_ids for part in llava_v1_text(question))
            n_tokens = len(before) + 1 + len(after)
            extras = {
                "question": question,
                "input_tokens": n_tokens,
                "answer_token_id": self.answer_ids[0],
                "answer_token_ids": self.answer_ids,
            }
            if n_tokens > CONTEXT_TOKENS:
                results[i] = nan_score(
                    f"the question is {n_tokens} tokens, over CLIP-FlanT5's {CONTEXT_TOKENS}-token "
                    "context; shorten the prompt",
                    extras,
                )
            else:
                rows.append((i, before, after, extras))
        if rows:
            embeds, mask = self._encoder_inputs([(b, features[i], a) for i, b, a, _ in rows])
            p_yes, p_no = self.answer_probabilities(embeds, mask)
            self.count_forward(len(rows))
            for (i, _, _, extras), yes, no in zip(rows, p_yes.tolist(), p_no.tolist()):
                results[i] = PairScore(yes, None, {**extras, "p_yes": yes, "p_no": no})
        return [r for r in results if r is not None]

    def _encoder_inputs(
        self, rows: list[tuple[list[int], torch.Tensor, list[int]]]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, L, d_model) embeddings [text before | image tokens | text after], right-padded with zeros, and the
        (B, L) attention mask."""
        pieces = []
        for before, image_tokens, after in rows:
            ids = torch.tensor(before + after, device=self.device)
            text = self.model.embed_tokens(ids)
            pieces.append(torch.cat([text[: len(before)], image_tokens.to(text.dtype), text[len(before) :]]))
        length = max(p.shape[0] for p in pieces)
        embeds = pieces[0].new_zeros((len(pieces), length, pieces[0].shape[1]))
        mask = torch.zeros((len(pieces), length), dtype=torch.long, device=self.device)
        for row, piece in enumerate(pieces):
            embeds[row, : piece.shape[0]] = piece
            mask[row, : piece.shape[0]] = 1
        return embeds, mask

    def answer_probabilities(self, embeds: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B,) exp(-mean token cross-entropy) of `Yes</s>` and of `No</s>`, teacher-forced, one encoder pass."""
        language_model: Any = self.model.language_model  # transformers' T5ForConditionalGeneration
        encoded = language_model.get_encoder()(inputs_embeds=embeds, attention_mask=mask)
        out = []
        for answer in (self.answer_ids, self.negative_ids):
            labels = torch.tensor(answer, device=self.device).expand(embeds.shape[0], -1)
            start = torch.full_like(labels[:, :1], language_model.config.decoder_start_token_id)
            decoder_input_ids = torch.cat([start, labels[:, :-1]], dim=1)
            logits = model_logits(
                lambda: language_model(
                    encoder_outputs=encoded, attention_mask=mask, decoder_input_ids=decoder_input_ids
                ),
                language_model.get_output_embeddings(),
            )
            log_probs = logits.float().log_softmax(-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
            out.append(log_probs.mean(-1).exp().cpu())
        return out[0], out[1]


def has_own_tokenizer(model_id: str) -> bool:
    """Whether the checkpoint folder / repo holds a tokenizer (the released ones do not say; the demo does)."""
    if is_local(model_id):
        return (Path(model_id).expanduser() / "tokenizer_config.json").is_file()
    from transformers.utils.hub import cached_file

    found = cached_file(
        model_id,
        "tokenizer_config.json",
        _raise_exceptions_for_missing_entries=False,
        _raise_exceptions_for_connection_errors=False,
    )
    return found is not None


def load_clip_flant5_vqa(model_id: str, *, device: str, dtype: torch.dtype, what: str) -> ClipFlanT5Vqa:
    """Tokenizer (the checkpoint's own, else `google/flan-t5-xxl`), the vision tower's CLIP image processor
    (PIL backend), and the model through `ClipFlanT5.from_pretrained`; `what` names the setting in errors."""
    from transformers import CLIPImageProcessorPil, T5Tokenizer

    tokenizer_id = model_id if has_own_tokenizer(model_id) else FLANT5_TOKENIZER
    tokenizer = load_pretrained(T5Tokenizer, tokenizer_id, what=f"{what} tokenizer", model_max_length=CONTEXT_TOKENS)
    spec = clip_flant5_spec(read_config(model_id))
    vision_source = vision_tower_source(model_id, spec)
    image_processor = load_pretrained(CLIPImageProcessorPil, vision_source, what=f"{what} image processor")
    model = load_pretrained(ClipFlanT5, model_id, what=what, dtype=dtype, vocab_size=len(tokenizer), name=what)
    model = model.to(device).eval()
    params = {
        "family": FAMILY,
        "question_template": CLIP_FLANT5_QUESTION,
        "template": LLAVA_V1_TEMPLATE,
        "answer": ANSWER,
        "score": "exp(-mean token cross-entropy of the answer + </s>, teacher-forced)",
        "answer_token_ids": tokenizer(ANSWER).input_ids,
        "tokenizer": tokenizer_id,
        "vocab_size": len(tokenizer),
        "context_tokens": CONTEXT_TOKENS,
        "vision_tower": spec.vision_tower,
        "vision_weights": model.vision_weights,
        "vision_select_layer": spec.select_layer,
        "projector": spec.projector_type,
        "image_preprocess": (
            f"pad to square with {mean_colour(image_processor.image_mean)}, then "
            f"{type(image_processor).__name__} {dict(image_processor.size)} crop "
            f"{dict(image_processor.crop_size)}"
        ),
        **precision_params(dtype, ["language_model.lm_head"]),
    }
    info = EngineInfo(
        model_id=model_id, revision=checkpoint_revision(model_id), device=device, dtype=dtype, params=params
    )
    return ClipFlanT5Vqa(model, tokenizer, image_processor, info)
