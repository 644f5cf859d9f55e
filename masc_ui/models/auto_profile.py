"""The `auto` profile: `paper` when its weights can be loaded (online or from the Hugging Face cache), else
`demo`, with a reason a banner can show (DESIGN.md "Model profiles")."""
from __future__ import annotations

from pathlib import Path

from ..errors import ModelUnavailableError
from ..settings import Settings
from .loading import is_local, load_pretrained
from .profiles import DEMO_NAMES, ModelIds, model_ids
from .registry import ModelRegistry

CHECKED = ("siglip", "clip", "pickscore", "pickscore_processor", "dino")
"""The metric backbones whose configs `auto` tries to load; segmentation models are checked by their own loaders."""
_SETTING = {"siglip": "siglip_model", "clip": "clip_model", "pickscore": "pickscore_model",
            "pickscore_processor": "pickscore_processor", "dino": "dino_model", "gme": "gme_model",
            "nexus_detector": "nexus_detector", "facescore": "facescore_model", "face_recognizer": "face_recognizer",
            "artscore": "artscore_checkpoint"}


def resolve_auto_profile(settings: Settings, models: ModelRegistry | None = None) -> tuple[str, str]:
    """(profile, reason). For `auto`: load the config of each `paper` metric backbone (cheap: a JSON file from
    the cache or the Hub); all load -> `paper`, else `demo` with a reason naming the first model that failed.
    Other profiles are returned as they are. With `models`, the answer is computed once per process."""
    if settings.profile != "auto":
        return settings.profile, f"profile {settings.profile!r} chosen in the settings"
    ids = model_ids(settings, "paper")
    key = ("auto-profile",) + tuple(getattr(ids, name) for name in CHECKED)
    if models is None:
        return _probe(ids)
    return models.get(key, lambda: _probe(ids))


def effective_model_ids(settings: Settings, models: ModelRegistry | None = None) -> ModelIds:
    """The checkpoints the settings' profile uses, with `auto` resolved (see `resolve_auto_profile`)."""
    profile, _ = resolve_auto_profile(settings, models)
    return model_ids(settings, profile)


def ensure_demo_checkpoints(settings: Settings, fields: tuple[str, ...], models: ModelRegistry | None = None) -> None:
    """When the profile in use is `demo` (chosen, or `auto` fallen back to it), write the tiny checkpoints of the
    `ModelIds` fields `fields` (e.g. `("clip",)`) that are missing, unless a setting overrides that model."""
    if resolve_auto_profile(settings, models)[0] != "demo":
        return
    from .demo import write_demo_weights

    ids = model_ids(settings, "demo")
    names = [DEMO_NAMES[f] for f in fields
             if getattr(settings, _SETTING[f]) is None and not Path(getattr(ids, f)).exists()]
    if not names:
        return
    names = list(dict.fromkeys(names))

    def write() -> list[str]:
        write_demo_weights(settings.resolved_demo_weights_dir, names)
        return names

    # Through the registry, so that concurrent first uses write each checkpoint once.
    if models is None:
        write()
    else:
        models.get(("demo-checkpoints", str(settings.resolved_demo_weights_dir), tuple(names)), write)


def _probe(ids: ModelIds) -> tuple[str, str]:
    from transformers import AutoConfig

    for name in CHECKED:
        model_id = getattr(ids, name)
        try:
            load_pretrained(AutoConfig, model_id, what=f"{name} backbone")
        except ModelUnavailableError as exc:
            where = "local folder" if is_local(model_id) else "Hugging Face model"
            return "demo", (f"using the demo profile (tiny random weights, numbers mean nothing) because the paper "
                            f"{name} {where} {model_id!r} could not be loaded: {exc}")
    return "paper", "the paper profile's weights are available"
