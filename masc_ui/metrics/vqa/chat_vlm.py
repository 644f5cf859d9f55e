"""VQAScore with a chat VLM (METRICS.md family (b)): any checkpoint `AutoModelForImageTextToText` loads whose
processor has a chat template; default `Qwen/Qwen2.5-VL-7B-Instruct` (`-3B-Instruct` smaller).

For an image and a prompt: one user message holding the image, then the text
`Does this figure show "{prompt}"? Please answer Yes or No.`, rendered by the model's own chat template with the
generation prompt (no system message beyond the template's default); the processor (its image processor on the
PIL backend, as transformers 4.x ran it for t2v_metrics) turns text and image into the model's inputs; ONE plain
forward pass (no `generate`, so no logits processor, temperature or repetition penalty of the generation config
can touch the numbers); score = softmax over the full vocabulary (float32) of the last position's logits, at the
first token of "Yes" tokenized without special tokens. P(No) in extras: the same softmax at "No"'s first token.
Precision: the model runs in the precision policy's dtype (pixels cast to it). Outside float32 the last position's
logits are recomputed in float32 from the input of the language-model head, with its weights upcast a slice at a
time (`models.precision.model_logits`; bfloat16 logits would be rounded to 0.125 near 30, moving P(Yes) by
percents); the softmax is float32 (provenance params `float32_parts`).

What is shared between prompts of one image, and what is not:

- shared: the image's preprocessing and encoding. The image processor runs once per image and the vision tower +
  merger (`get_image_features`) once per image (the new images of a batch in one call), both kept in the cache by
  content hash; the encoding goes back into the forward as `mm_encoder_outputs`, and the text inputs are rebuilt
  from the image's cached layout (e.g. `image_grid_thw`) with the processor's own placeholder expansion (checked
  once, on the first batch, to equal the processor's full output; the full processor is called every time if not);
- not shared: the language model's forward over the whole sequence (template, image tokens, question). The image
  tokens sit before the question in a causal sequence, so a prefix cache could in principle be reused, but it
  would change the padded-batch numerics; every (image, prompt) pair is one row of one padded forward.
- Models whose forward takes no `mm_encoder_outputs` or that have no `get_image_features` (e.g. Mllama, Idefics,
  Fuyu in transformers 5) are still scored, without sharing: the pixels go into every forward
  (provenance `image_encoding_shared` says which).

Batches are left-padded so that the last column is every row's last token (only its logits are computed where the
model takes `logits_to_keep`). A sequence longer than the language model's `max_position_embeddings` is not
scored: NaN with the reason.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import torch

from ...imaging import InputImage
from ...models.loading import load_pretrained
from ...models.precision import model_logits, precision_params
from ..provenance import checkpoint_revision
from .pair_engine import EngineInfo, PairEngine, PairScore, Refusal, nan_score
from .questions import ANSWER, CHAT_VLM_QUESTION, NEGATIVE_ANSWER, chat_vlm_question

FAMILY = "chat-vlm"
BATCH_SIZE = 8
IMAGE_CACHE_SIZE = 64
PIXEL_KEYS = ("pixel_values", "pixel_attention_mask", "image_sizes")
"""Processor outputs that only the vision tower reads: left out of the forward when the encoding is shared."""


@dataclass(frozen=True)
class ChatImage:
    """What the engine keeps per image: the image processor's outputs other than pixels (its `layout`, e.g. Qwen's
    `image_grid_thw`, from which the processor expands the image placeholder) and the image's `encoding` as
    `get_image_features` returns it for that image alone (None when the model cannot take it back)."""

    layout: dict[str, torch.Tensor]
    encoding: Any


def shares_image_encodings(model: Any) -> bool:
    """Whether `model` takes precomputed image encodings (`mm_encoder_outputs`, transformers 5) and can make them."""
    return hasattr(model, "get_image_features") and "mm_encoder_outputs" in inspect.signature(model.forward).parameters


def text_config(model: Any) -> Any:
    """The language model's config (the model's own when it has no separate text config)."""
    return model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config


def max_positions(model: Any) -> int | None:
    """The language model's trained length, or None when the config does not say."""
    return getattr(text_config(model), "max_position_embeddings", None)


class ChatVlmVqa(PairEngine):
    """P("Yes") of a chat VLM for (image, prompt) pairs; see the module docstring for the recipe."""

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
        self.processor = processor
        self.answer_id = first_token(processor.tokenizer, ANSWER)
        self.negative_id = first_token(processor.tokenizer, NEGATIVE_ANSWER)
        self.limit = max_positions(model)
        self.shared = shares_image_encodings(model)
        self.keeps_last_logits = "logits_to_keep" in inspect.signature(model.forward).parameters
        self.head = model.get_output_embeddings()
        self.softcap = getattr(text_config(model), "final_logit_softcapping", None)
        self._layout_reuse: bool | None = None
        """Whether the text inputs can be rebuilt from cached image layouts (None: not checked yet)."""

    @property
    def device(self) -> torch.device:
        param: torch.nn.Parameter = next(self.model.parameters())
        return param.device

    def question(self, prompt: str) -> str:
        return chat_vlm_question(prompt)

    def chat_text(self, question: str) -> str:
        """The templated text of one user turn [image, question] with the generation prompt."""
        messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}]
        text: str = self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return text

    @torch.inference_mode()
    def encode_images(self, images: list[InputImage]) -> list[ChatImage | Refusal]:
        """Per image: its `ChatImage`, or a `Refusal` when the image processor refuses it. The accepted images'
        pixels go through one vision call when the model's inputs and outputs allow it (one per image otherwise)."""
        prepared = [self._image_inputs(image) for image in images]
        accepted = [p for p in prepared if not isinstance(p, Refusal)]
        encodings = iter(self._encode(accepted) if self.shared else [None] * len(accepted))
        out: list[ChatImage | Refusal] = []
        for p in prepared:
            if isinstance(p, Refusal):
                out.append(p)
            else:
                out.append(ChatImage({k: v for k, v in p.items() if k not in PIXEL_KEYS}, next(encodings)))
        return out

    def _image_inputs(self, image: InputImage) -> dict[str, torch.Tensor] | Refusal:
        try:
            inputs = self.processor.image_processor(
                images=[image.pixels], return_tensors="pt", input_data_format="channels_last"
            )
        except ValueError as exc:
            width, height = image.size
            return Refusal(f"the model's image processor cannot take this {width}x{height} image ({exc})")
        return {k: self._on_model(v) for k, v in inputs.items()}

    def _on_model(self, value: Any) -> Any:
        """A tensor moved to the model's device, floating ones (pixels) cast to its dtype (the precision policy's)."""
        if not isinstance(value, torch.Tensor):
            return value
        return value.to(self.device, self.model.dtype) if value.is_floating_point() else value.to(self.device)

    def _encode(self, inputs: list[dict[str, torch.Tensor]]) -> list[Any]:
        if len(inputs) > 1:
            try:
                together = {k: torch.cat([p[k] for p in inputs]) for k in inputs[0]}
            except (RuntimeError, KeyError):  # e.g. images tiled into different numbers of crops
                together = None
            if together is not None:
                pooled = self.model.get_image_features(**together, return_dict=True).pooler_output
                parts = split_per_image(pooled, len(inputs))
                if parts is not None:
                    self.count_images(len(inputs))
                    return parts
        self.count_images(len(inputs))
        return [self.model.get_image_features(**p, return_dict=True).pooler_output for p in inputs]

    @torch.inference_mode()
    def score_batch(self, images: list[InputImage], features: list[ChatImage], texts: list[str]) -> list[PairScore]:
        questions = [self.question(text) for text in texts]
        inputs = self._model_inputs([self.chat_text(question) for question in questions], images, features)
        lengths = inputs["attention_mask"].sum(1).tolist()
        over = [i for i, n in enumerate(lengths) if self.limit is not None and n > self.limit]
        if over:
            return self._without(over, images, features, texts, lengths)
        kwargs = {k: self._on_model(v) for k, v in inputs.items() if not (self.shared and k in PIXEL_KEYS)}
        if self.shared:
            from transformers.modeling_outputs import BaseModelOutputWithPooling

            encodings = join_images([f.encoding for f in features])
            kwargs["mm_encoder_outputs"] = {"image": BaseModelOutputWithPooling(pooler_output=encodings)}
        if self.keeps_last_logits:
            kwargs["logits_to_keep"] = 1
        logits = model_logits(
            lambda: self.model(**kwargs, use_cache=False), self.head, last_only=True, softcap=self.softcap
        )
        self.count_forward(len(texts))
        if not self.shared:
            self.count_images(len(images))  # the vision tower ran inside the forward, once per row
        probs = logits.float().softmax(-1)
        p_yes = probs[:, self.answer_id].cpu().tolist()
        p_no = probs[:, self.negative_id].cpu().tolist()
        return [
            PairScore(
                yes,
                None,
                {"question": q, "input_tokens": int(n), "answer_token_id": self.answer_id, "p_yes": yes, "p_no": no},
            )
            for q, n, yes, no in zip(questions, lengths, p_yes, p_no)
        ]

    def _model_inputs(self, chats: list[str], images: list[InputImage], features: list[ChatImage]) -> dict[str, Any]:
        """The processor's outputs for the batch (left-padded). When the encodings are shared, the text part is
        rebuilt from each image's cached layout with the processor's own placeholder expansion, so images are not
        preprocessed again; the first batch checks that this gives exactly the processor's outputs, and the
        processor is called in full from then on if it does not (some processors expand placeholders their own
        way)."""
        rebuilt = None
        if self.shared and self._layout_reuse is not False:
            try:
                rebuilt = self._inputs_from_layouts(chats, features)
            except (KeyError, TypeError, AttributeError, ValueError, IndexError, NotImplementedError):
                self._layout_reuse = False
            if rebuilt is not None and self._layout_reuse:
                return rebuilt
        full = dict(
            self.processor(
                text=chats,
                images=[image.pixels for image in images],
                padding=True,
                padding_side="left",
                return_tensors="pt",
                input_data_format="channels_last",
            )
        )
        if rebuilt is not None:
            self._layout_reuse = same_inputs(rebuilt, full)
        return full

    def _inputs_from_layouts(self, chats: list[str], features: list[ChatImage]) -> dict[str, Any]:
        processor = self.processor
        replacements = [processor.replace_image_token(f.layout, image_idx=0) for f in features]
        texts, _ = processor.get_text_with_replacements(list(chats), replacements, [], [])  # it edits the list
        data = dict(processor.tokenizer(texts, padding=True, padding_side="left", return_tensors="pt"))
        if getattr(processor, "return_mm_token_type_ids", False):
            data["mm_token_type_ids"] = torch.as_tensor(processor.create_mm_token_type_ids(data["input_ids"]))
        for key in features[0].layout:
            data[key] = torch.cat([f.layout[key].cpu() for f in features])
        return data

    def _without(
        self, over: list[int], images: list[InputImage], features: list[Any], texts: list[str], lengths: list[int]
    ) -> list[PairScore]:
        """Scores of a batch where the rows `over` exceed the model's length: NaN for those, the others scored."""
        keep = [i for i in range(len(texts)) if i not in over]
        kept = iter(
            self.score_batch([images[i] for i in keep], [features[i] for i in keep], [texts[i] for i in keep])
            if keep
            else []
        )
        return [
            nan_score(
                f"the question and image are {lengths[i]} tokens, over the model's {self.limit}; shorten the prompt",
                {"question": self.question(texts[i]), "input_tokens": lengths[i]},
            )
            if i in over
            else next(kept)
            for i in range(len(texts))
        ]


def first_token(tokenizer: Any, text: str) -> int:
    """The first token id of `text` tokenized without special tokens."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    if not ids:
        raise ValueError(f"the tokenizer turns {text!r} into no token")
    return int(ids[0])


def split_per_image(pooled: Any, n_images: int) -> list[Any] | None:
    """`get_image_features(...).pooler_output` of `n_images` images -> one item per image, in the form the model
    returns for one image alone: a 1-tuple for a tuple/list of per-image tensors (Qwen2-VL, LLaVA), a 1-row tensor
    for a tensor with one row per image (Gemma 3); None when it cannot be told apart per image."""
    if isinstance(pooled, (tuple, list)) and len(pooled) == n_images:
        return [(item,) for item in pooled]
    if isinstance(pooled, torch.Tensor) and pooled.shape[0] == n_images:
        return [pooled[i : i + 1] for i in range(n_images)]
    return None


def same_inputs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two processor outputs hold the same non-pixel tensors."""
    keys = set(a) | set(b)
    return all(
        k in a and k in b and torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k]))
        for k in keys
        if k not in PIXEL_KEYS
    )


def join_images(features: list[Any]) -> Any:
    """The encodings of a batch's images (each as `get_image_features` returned it for that image alone), as it
    would have returned them for all of them in row order: tuples/lists of per-image tensors are concatenated
    (Qwen2-VL, LLaVA), tensors are stacked along their first axis (Gemma 3: one row per image; InternVL: one
    row per tile)."""
    if all(isinstance(f, (tuple, list)) for f in features):
        return tuple(item for f in features for item in f)
    if all(isinstance(f, torch.Tensor) for f in features):
        return torch.cat(features)
    raise TypeError(f"image encodings of mixed types: {sorted({type(f).__name__ for f in features})}")


def load_chat_vlm(model_id: str, *, device: str, dtype: torch.dtype, what: str, user: str) -> tuple[Any, Any]:
    """(model, processor) of the chat VLM `model_id`: `AutoModelForImageTextToText` on `device` in `dtype`, and
    `AutoProcessor` with its image processor on the PIL backend where the model has one. `what` names the setting
    and `user` the metric in errors (`ModelUnavailableError` for a checkpoint without a chat template)."""
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoProcessor

    processor = load_pretrained(AutoProcessor, model_id, what=f"{what} processor")
    if not getattr(processor, "chat_template", None):
        from ...errors import ModelUnavailableError

        raise ModelUnavailableError(
            f"{what}: {model_id} has no chat template, so it is not a chat VLM that "
            f"{user} can ask; use a chat model such as Qwen/Qwen2.5-VL-7B-Instruct"
        )
    processor.image_processor = load_pretrained(
        AutoImageProcessor, model_id, what=f"{what} image processor", backend="pil"
    )
    model = load_pretrained(AutoModelForImageTextToText, model_id, what=what, dtype=dtype).to(device).eval()
    return model, processor


def load_chat_vlm_vqa(model_id: str, *, device: str, dtype: torch.dtype, what: str) -> ChatVlmVqa:
    """The VQAScore engine of the chat VLM `model_id` (`load_chat_vlm`); `what` names the setting in errors."""
    model, processor = load_chat_vlm(model_id, device=device, dtype=dtype, what=what, user="VQAScore")
    image_processor = processor.image_processor
    params = {
        "family": FAMILY,
        "model_class": type(model).__name__,
        "question_template": CHAT_VLM_QUESTION,
        "answer": ANSWER,
        "answer_token_id": first_token(processor.tokenizer, ANSWER),
        "score": "softmax over the full vocabulary of the last position's logits of one plain forward, at the "
        "answer's first token",
        "image_processor": type(image_processor).__name__,
        "image_size": dict(getattr(image_processor, "size", None) or {}),
        "image_encoding_shared": shares_image_encodings(model),
        **precision_params(
            dtype, [name for name, module in model.named_modules() if module is model.get_output_embeddings()]
        ),
    }
    engine = ChatVlmVqa(
        model,
        processor,
        EngineInfo(
            model_id=model_id, revision=checkpoint_revision(model_id), device=device, dtype=dtype, params=params
        ),
    )
    params["template"] = engine.chat_text(engine.question("{prompt}"))
    return engine
