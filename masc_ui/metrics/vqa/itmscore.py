"""ITMScore (BLIP-2 image-text matching; METRICS.md "The scorer catalogue"): softmax of BLIP-2's ITM head
(`Blip2ForImageTextRetrieval`, default `Salesforce/blip2-itm-vit-g`) for the output image and the full prompt
truncated to 35 tokens, in [0, 1], higher is better. Recipe in `masc_ui.metrics.vqa.blip2_itm`.

Extras per value: `text_tokens` (before truncation, specials included), `truncated`, `max_text_tokens` (35).
A prompt over 35 tokens is scored on its first 35 (t2v_metrics' convention) and `truncated` says so.
"""

from __future__ import annotations

from ...models.loaded_models import ModelRegistry
from ...models.loading import pick_device, pick_dtype
from ...models.profiles import ModelIds
from ...settings import Settings
from .blip2_itm import Blip2Itm, load_blip2_itm
from .pair_scorer import PairScorer

WHAT = "ITMScore model (MASC_ITM_MODEL)"


def shared_itm_engine(models: ModelRegistry, settings: Settings, model_id: str) -> Blip2Itm:
    """The process-wide BLIP-2 ITM engine for (model, device, dtype), loaded on first use."""
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    key = ("itmscore", model_id, settings.device, settings.dtype)
    return models.get(key, lambda: load_blip2_itm(model_id, device=device, dtype=dtype, what=WHAT))


class ITMScoreScorer(PairScorer):
    """ITMScore of each sample's output image and full prompt; see the module docstring."""

    MODEL_FIELDS = ("itm",)

    def _load_backbone(self, ids: ModelIds) -> Blip2Itm:
        return shared_itm_engine(self.models, self.settings, ids.itm)
