"""Building a MaSC scorer from `Settings`, and its results as JSON-able records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...models.loaded_models import ModelRegistry
from ...models.profiles import DEMO_NAMES, model_ids
from ...settings import Settings
from ..value_records import json_safe
from .engine import MaSC, MaSCResult


def build_masc(settings: Settings, models: ModelRegistry | None = None) -> MaSC:
    """A `MaSC` on the settings' SigLIP2 checkpoint (profile or `siglip_model` override), device, dtype, patch
    budget, threshold and stripper. In the `demo` profile the tiny demo checkpoint is written first if missing."""
    model_id = model_ids(settings).siglip
    if settings.profile == "demo" and settings.siglip_model is None and not Path(model_id).exists():
        from ...models.demo import write_demo_weights

        write_demo_weights(settings.resolved_demo_weights_dir, [DEMO_NAMES["siglip"]])
    return MaSC(
        model_id,
        device=settings.device,
        naflex_max_patches=settings.naflex_max_patches,
        fg_threshold=settings.fg_threshold,
        dtype=settings.dtype,
        stripper=settings.stripper,
        models=models,
    )


def result_record(result: MaSCResult) -> dict[str, Any]:
    """`{"cp", "pf", "extras"}` with NaN as None, safe for `json.dumps(..., allow_nan=False)`."""
    return {"cp": json_safe(result.cp), "pf": json_safe(result.pf), "extras": json_safe(result.extras)}
