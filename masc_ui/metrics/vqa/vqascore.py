"""VQAScore (Lin et al., ECCV 2024; METRICS.md "The scorer catalogue"): P("Yes" | image, "Does this figure show
"{prompt}"? Please answer yes or no.") for the full prompt, in [0, 1], higher is better.

The family is read from the checkpoint's config.json, never from its name, so any local folder works:

- `model_type` `clip_t5` -> CLIP-FlanT5 (`zhiqiulin/clip-flant5-xxl`, the paper default; `-xl` smaller):
  teacher-forced "Yes</s>", score = exp(-mean token cross-entropy) (`masc_ui.metrics.vqa.clip_flant5`);
- a `model_type` that `AutoModelForImageTextToText` loads, with a chat template -> chat VLM
  (`Qwen/Qwen2.5-VL-7B-Instruct`, `-3B-Instruct` smaller): one plain forward, softmax at "Yes"'s first token,
  question ending "Please answer Yes or No." (`masc_ui.metrics.vqa.chat_vlm`);
- anything else: `ModelUnavailableError` naming `MASC_VQA_MODEL`.

Extras per value: the exact `question`, `p_yes` (= the value), `p_no`, `answer_token_id` (CLIP-FlanT5 also
`answer_token_ids`, the teacher-forced tokens), `input_tokens`. Provenance params: family, template, answer and
its token id(s), question template, preprocessing; the dtype is the provenance's own field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import ModelUnavailableError
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...models.nets.clip_flant5 import MODEL_TYPE, read_config
from ...models.profiles import ModelIds
from ...settings import Settings
from .chat_vlm import FAMILY as CHAT_VLM
from .chat_vlm import load_chat_vlm_vqa
from .clip_flant5 import FAMILY as CLIP_FLANT5
from .clip_flant5 import load_clip_flant5_vqa
from .pair_engine import PairEngine
from .pair_scorer import PairScorer

WHAT = "VQAScore model (MASC_VQA_MODEL)"
LOADERS: dict[str, Callable[..., PairEngine]] = {CLIP_FLANT5: load_clip_flant5_vqa, CHAT_VLM: load_chat_vlm_vqa}


class CheckpointConfig:
    """A checkpoint's config.json as a plain dict (CLIP-FlanT5's `model_type` is unknown to transformers)."""

    @staticmethod
    def from_pretrained(model_id: str, **kwargs: Any) -> dict[str, Any]:
        return read_config(model_id)


def vqa_family(config: dict[str, Any], model_id: str) -> str:
    """`clip-flant5` or `chat-vlm` from the config's `model_type`."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    model_type = config.get("model_type")
    if model_type == MODEL_TYPE:
        return CLIP_FLANT5
    if model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return CHAT_VLM
    raise ModelUnavailableError(
        f"{WHAT}: {model_id} is a {model_type!r} checkpoint, neither CLIP-FlanT5 (model_type {MODEL_TYPE!r}, e.g. "
        "zhiqiulin/clip-flant5-xxl) nor a chat VLM that AutoModelForImageTextToText loads (e.g. "
        "Qwen/Qwen2.5-VL-7B-Instruct); set MASC_VQA_MODEL to one of those"
    )


def load_vqa_engine(model_id: str, settings: Settings) -> PairEngine:
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    config = load_pretrained(CheckpointConfig, model_id, what=WHAT)
    return LOADERS[vqa_family(config, model_id)](model_id, device=device, dtype=dtype, what=WHAT)


def shared_vqa_engine(models: ModelRegistry, settings: Settings, model_id: str) -> PairEngine:
    """The process-wide VQAScore engine for (model, device, dtype), loaded on first use."""
    key = ("vqascore", model_id, settings.device, settings.dtype)
    return models.get(key, lambda: load_vqa_engine(model_id, settings))


class VQAScoreScorer(PairScorer):
    """VQAScore of each sample's output image and full prompt; see the module docstring."""

    MODEL_FIELDS = ("vqa",)

    def _load_backbone(self, ids: ModelIds) -> PairEngine:
        return shared_vqa_engine(self.models, self.settings, ids.vqa)
