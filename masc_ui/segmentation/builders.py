"""Segmentation services built from `Settings`, owned by the process-wide `ModelRegistry`."""

from __future__ import annotations

from ..models.loaded_models import ModelRegistry
from ..models.profiles import model_ids
from ..settings import Settings
from .sam_service import SamService
from .text_segmenter import TextSegmenter


def build_sam_service(settings: Settings, models: ModelRegistry | None = None, *, cache_size: int = 8) -> SamService:
    """The SAM service of `settings`' profile (variant, checkpoint; `sam_variant`/`sam_checkpoint` override), its
    image encoder in the precision of `settings.dtype` (the policy of `models.precision` for `auto`).

    With `models`, one service (and so one embedding cache and one loaded model) is shared by every caller
    asking with the same settings. Nothing is loaded until the first prompt.
    """
    ids = model_ids(settings)
    models = models if models is not None else ModelRegistry()
    key = (
        "sam-service",
        ids.sam_variant,
        ids.sam_checkpoint,
        settings.device,
        str(settings.resolved_cache_dir),
        settings.dtype,
    )
    return models.get(
        key,
        lambda: SamService(
            ids.sam_variant,
            ids.sam_checkpoint,
            settings.device,
            settings.resolved_cache_dir,
            cache_size,
            models=models,
            dtype=settings.dtype,
        ),
    )


def build_text_segmenter(settings: Settings, models: ModelRegistry | None = None) -> TextSegmenter:
    """The SAM 3 segmenter of `settings`' profile (`sam3_model` overrides), on `settings.device`/`dtype`.
    Thresholds are per call: `settings.text_seg_threshold` and `settings.text_seg_min_fraction`. In the demo
    profile the tiny SAM 3 checkpoint is written when missing, as for every other demo model."""
    from ..models.auto_profile import ensure_demo_checkpoints

    models = models if models is not None else ModelRegistry()
    ensure_demo_checkpoints(settings, ("sam3",), models)
    ids = model_ids(settings)
    key = ("text-segmenter", ids.sam3, settings.device, settings.dtype)
    return models.get(key, lambda: TextSegmenter(ids.sam3, settings.device, settings.dtype, models=models))
