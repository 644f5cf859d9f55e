"""The `auto` profile: `paper` when its weights can be loaded (online or from the Hugging Face cache), else
`demo`, with a reason a banner can show (DESIGN.md "Model profiles").

Deciding costs no network when it can: local folders and the local Hugging Face cache are looked at first; a
config missing from the cache under `HF_HUB_OFFLINE=1` means `demo` at once; otherwise ONE short connectivity
probe (`hub_probe.hub_unreachable`, at most `PROBE_TIMEOUT_S` seconds, no retries) decides whether the Hub is
asked at all. So an offline machine picks `demo` in about a second instead of waiting through
huggingface_hub's five retries with backoff.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelUnavailableError
from ..settings import Settings
from .hub_probe import PROBE_TIMEOUT_S, cached_config, hub_endpoint, hub_offline, hub_unreachable
from .loaded_models import ModelRegistry
from .loading import is_local, load_pretrained
from .profiles import DEMO_NAMES, ModelIds, model_ids

CHECKED = ("siglip", "clip", "pickscore", "pickscore_processor", "dino")
"""The metric backbones whose configs `auto` tries to load; segmentation models are checked by their own loaders."""
_SETTING = {
    "siglip": "siglip_model",
    "clip": "clip_model",
    "pickscore": "pickscore_model",
    "pickscore_processor": "pickscore_processor",
    "dino": "dino_model",
    "dinov2": "dinov2_model",
    "dreamsim": "dreamsim_weights",
    "gme": "gme_model",
    "nexus_detector": "nexus_detector",
    "facescore": "facescore_model",
    "face_recognizer": "face_recognizer",
    "artscore": "artscore_checkpoint",
    "imagereward": "imagereward_model",
    "hps": "hps_model",
    "aesthetic_head": "aesthetic_head",
    "aesthetic_clip": "aesthetic_clip_model",
    "arcface": "face_detector_dir",
    "vqa": "vqa_model",
    "itm": "itm_model",
    "dbpp_judge": "dbpp_local_model",
    "sam3": "sam3_model",
}


def resolve_auto_profile(settings: Settings, models: ModelRegistry | None = None) -> tuple[str, str]:
    """(profile, reason). For `auto`: load the config of each `paper` metric backbone (cheap: a JSON file from a
    local folder, the local Hugging Face cache, or the Hub when the one probe found it reachable); all load ->
    `paper`, else `demo` with a reason naming the first model that could not be loaded and why. Other profiles
    are returned as they are. With `models`, the answer is computed once per process."""
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
    names = [
        DEMO_NAMES[f] for f in fields if getattr(settings, _SETTING[f]) is None and not Path(getattr(ids, f)).exists()
    ]
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


DEMO_BECAUSE = "using the demo profile (tiny random weights, numbers mean nothing) because "


def _probe(ids: ModelIds) -> tuple[str, str]:
    """Local folders and cached configs first (no network), then at most one Hub probe, then the Hub."""
    from transformers import AutoConfig

    remote: list[tuple[str, str]] = []
    for name in CHECKED:
        model_id = getattr(ids, name)
        if is_local(model_id):
            failure = _load_config(AutoConfig, name, model_id)
        elif cached_config(model_id) is not None:
            failure = _load_config(AutoConfig, name, model_id, local_files_only=True)
        else:
            remote.append((name, model_id))
            continue
        if failure:
            return "demo", failure
    if not remote:
        return "paper", (
            "the paper profile's backbone configs are all on this machine (local folders or the Hugging Face cache)"
        )
    name, model_id = remote[0]
    missing = (
        f"the paper {name} Hugging Face model {model_id!r} could not be loaded: it is not in the local "
        "Hugging Face cache"
    )
    if hub_offline():
        return "demo", f"{DEMO_BECAUSE}{missing} and HF_HUB_OFFLINE is set"
    problem = hub_unreachable(PROBE_TIMEOUT_S)
    if problem:
        return "demo", f"{DEMO_BECAUSE}{missing} and the Hub ({hub_endpoint()}) is unreachable ({problem})"
    for name, model_id in remote:
        failure = _load_config(AutoConfig, name, model_id)
        if failure:
            return "demo", failure
    return "paper", "the paper profile's backbone configs load from the Hugging Face Hub"


def _load_config(auto_cls: type, name: str, model_id: str, **kwargs: object) -> str | None:
    """None when the config loads, else the demo reason naming the model."""
    try:
        load_pretrained(auto_cls, model_id, what=f"{name} backbone", **kwargs)
    except ModelUnavailableError as exc:
        where = "local folder" if is_local(model_id) else "Hugging Face model"
        return f"{DEMO_BECAUSE}the paper {name} {where} {model_id!r} could not be loaded: {exc}"
    return None
