"""How big each metric's model is, before it is loaded: what the Score tab shows beside the metric choices, and
what the progress message says while a model loads (first use only).

The size of a checkpoint (`checkpoint_size`) is, in this order:
- its bytes on disk when it is on this machine: a local file or folder (the demo checkpoints always are; they are
  labelled `demo checkpoint`), a URL's file already downloaded into `settings.resolved_cache_dir`, or a Hugging
  Face repo id found in the local Hugging Face cache (the repo's cached files);
- else its published parameter count (`PUBLISHED_PARAMETERS`, rounded figures of the model cards/papers),
  labelled `not downloaded yet`;
- else unknown (`size shown once downloaded`).
Nothing here touches the network or loads a model.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..models.profiles import ModelIds, model_ids
from ..settings import Settings

if TYPE_CHECKING:
    from ..metrics.base import MetricSpec

CHECKPOINT_FIELDS: dict[str, str] = {
    "siglip_model": "siglip",
    "clip_model": "clip",
    "pickscore_model": "pickscore",
    "dino_model": "dino",
    "vqa_model": "vqa",
    "itm_model": "itm",
    "gme_model": "gme",
    "nexus_detector": "nexus_detector",
    "facescore_model": "facescore",
    "face_recognizer": "face_recognizer",
    "face_detector_dir": "face_detector_dir",
    "retinaface_weights": "retinaface",
    "artscore_checkpoint": "artscore",
    "dbpp_local_model": "dbpp_judge",
    "imagereward_model": "imagereward",
    "hps_model": "hps",
    "aesthetic_head": "aesthetic_head",
    "aesthetic_clip_model": "aesthetic_clip",
    "dinov2_model": "dinov2",
    "dreamsim_weights": "dreamsim",
}
"""`MetricSpec.backbone_settings` entry -> the `ModelIds` field of the checkpoint it chooses. Backbone settings
that choose no checkpoint of their own (`pickscore_processor`: a processor; `naflex_max_patches`, `stripper`, the
judge's API settings: parameters) are not listed."""
PUBLISHED_PARAMETERS: dict[str, str] = {
    "zhiqiulin/clip-flant5-xxl": "11B",
    "zhiqiulin/clip-flant5-xl": "3B",
    "Qwen/Qwen2.5-VL-7B-Instruct": "8.3B",
    "Qwen/Qwen2.5-VL-3B-Instruct": "3.8B",
    "Salesforce/blip2-itm-vit-g": "1.2B",
    "google/siglip2-so400m-patch16-naflex": "1.1B",
    "google/siglip2-base-patch16-naflex": "0.4B",
    "openai/clip-vit-base-patch32": "151M",
    "yuvalkirstain/PickScore_v1": "986M",
    "facebook/dino-vits16": "22M",
    "facebook/dinov2-base": "86M",
    "facebook/dinov2-small": "22M",
    "https://github.com/ssundaram21/dreamsim/releases/download/v0.2.0-checkpoints/dreamsim_ensemble_checkpoint.zip": (
        "0.26B (three ViT-B image encoders)"
    ),
    "THUDM/ImageReward": "0.45B",
    "xswu/HPSv2": "986M",
    "openai/clip-vit-large-patch14": "428M",
    "Alibaba-NLP/gme-Qwen2-VL-7B-Instruct": "8.3B",
    "Alibaba-NLP/gme-Qwen2-VL-2B-Instruct": "2.2B",
    "BestWishYsh/OpenS2V-Weight": "65M (IR-101)",
}
"""Published parameter counts (rounded) of the `paper` and `fast` checkpoints, shown before they are downloaded."""
DEMO_LABEL = "demo checkpoint"


@dataclass(frozen=True)
class CheckpointSize:
    """The size of one checkpoint as the Score tab shows it."""

    ref: str
    """The checkpoint as configured: local path, URL or Hugging Face repo id."""
    bytes_on_disk: int | None
    """Total bytes of its files on this machine; None when it is not here."""
    parameters: str | None
    """Published parameter count (e.g. `11B`) when it is not on this machine and the count is known."""
    demo: bool = False

    def text(self) -> str:
        """e.g. `demo checkpoint 2.1 MB`, `4.4 GB on disk`, `11B parameters, not downloaded yet`."""
        if self.bytes_on_disk is not None:
            size = human_bytes(self.bytes_on_disk)
            return f"{DEMO_LABEL} {size}" if self.demo else f"{size} on disk"
        if self.parameters:
            return f"{self.parameters} parameters, not downloaded yet"
        return "size shown once downloaded"


def human_bytes(n: int) -> str:
    """`n` bytes in kB/MB/GB (powers of 1000, one decimal)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def checkpoint_size(ref: str, settings: Settings, *, demo: bool = False) -> CheckpointSize:
    """The size of checkpoint `ref` (see the module docstring); `demo` labels it as a demo checkpoint."""
    on_disk = _bytes_on_disk(ref, settings)
    return CheckpointSize(ref, on_disk, None if on_disk is not None else PUBLISHED_PARAMETERS.get(ref), demo)


def metric_checkpoints(spec: MetricSpec, ids: ModelIds) -> list[str]:
    """The configured checkpoints (distinct, in declaration order) of metric `spec` under `ids`; unset ones (a face
    detector left to the packaged fallback) are left out."""
    refs = [getattr(ids, CHECKPOINT_FIELDS[s]) for s in spec.backbone_settings if s in CHECKPOINT_FIELDS]
    return list(dict.fromkeys(r for r in refs if r))


def metric_sizes(spec: MetricSpec, settings: Settings) -> list[CheckpointSize]:
    """The size of each checkpoint of metric `spec` in the settings' profile (`auto` read as `paper`)."""
    demo = settings.profile == "demo"
    return [checkpoint_size(ref, settings, demo=demo) for ref in metric_checkpoints(spec, model_ids(settings))]


def metric_size_text(spec: MetricSpec, settings: Settings) -> str:
    """One short text of the sizes of metric `spec`'s checkpoints: the sum when all are on disk, else each one's
    distinct text joined with ` + `; empty for a metric without a checkpoint."""
    sizes = metric_sizes(spec, settings)
    if sizes and all(s.bytes_on_disk is not None for s in sizes):
        return CheckpointSize("", sum(s.bytes_on_disk or 0 for s in sizes), None, sizes[0].demo).text()
    return " + ".join(dict.fromkeys(s.text() for s in sizes))


def load_message(key: Hashable, settings: Settings) -> str:
    """The progress message while model registry entry `key` (e.g. `("vqascore", "/w/clip-flant5", "cpu", ...)`)
    loads: what, which checkpoint and how big, and that it happens once."""
    from .status import loaded_models

    what = loaded_models([key])
    name = what[0] if what else str(key)
    ref = key[1] if isinstance(key, tuple) and len(key) > 1 and isinstance(key[1], str) else None
    size = ""
    if ref is not None:
        found = checkpoint_size(ref, settings, demo=settings.profile == "demo")
        size = f" ({found.text()})" if found.bytes_on_disk is not None or found.parameters else ""
    return f"loading {name}{size}: first use only, it stays loaded"


def _bytes_on_disk(ref: str, settings: Settings) -> int | None:
    path = Path(ref).expanduser()
    if ref.startswith(("http://", "https://", "file://")):
        path = settings.resolved_cache_dir / ref.rstrip("/").rsplit("/", 1)[-1]
    elif not path.exists() and ref.count("/") == 1 and not ref.startswith((".", "/", "~")):
        path = _hub_cache_dir(ref)
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        # Hugging Face snapshots are symlinks to blobs: count each file once, through what it links to.
        files = {f.resolve() for f in path.rglob("*") if f.is_file()}
        return sum(f.stat().st_size for f in files) if files else None
    return None


def _hub_cache_dir(repo_id: str) -> Path:
    """The local Hugging Face cache folder of model repo `repo_id` (it may not exist)."""
    from huggingface_hub.constants import HF_HUB_CACHE

    return Path(HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--")) / "snapshots"
