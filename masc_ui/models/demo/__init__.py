"""Tiny random checkpoints built locally (seeded), saved the way real ones are, loaded back through the
same code path as real weights. Used by tests and by the offline `demo` profile; their numbers mean nothing.

Each area registers one builder: `DEMO_BUILDERS[name] = build(out_dir: Path, seed: int) -> None`, which writes
a complete checkpoint into `out_dir` (= `<weights dir>/<name>`).
"""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

DEMO_SEED = 0
_MARKER = "masc-demo.json"

# name -> "module:function"; imported lazily so that building one kind never imports the others' deps.
DEMO_BUILDERS: dict[str, str] = {
    "siglip2-naflex": "masc_ui.models.demo.siglip:build_naflex",
    "siglip2-fixed": "masc_ui.models.demo.siglip:build_fixed",
    "clip": "masc_ui.models.demo.clip:build_clip",
    "clip-h": "masc_ui.models.demo.clip:build_clip_h",
    "dino": "masc_ui.models.demo.dino:build",
    "dinov2": "masc_ui.models.demo.dino:build_v2",
    "dreamsim": "masc_ui.models.demo.dreamsim:build",
    "sam-vit-tiny": "masc_ui.models.demo.sam:build",
    "sam3": "masc_ui.models.demo.sam3:build",
    "face-recognizer": "masc_ui.models.demo.faces:build_recognizer",
    "retinaface": "masc_ui.models.demo.faces:build_retinaface",
    "facescore": "masc_ui.models.demo.catalogue:build_facescore",
    "artscore": "masc_ui.models.demo.catalogue:build_artscore",
    "gme-qwen2-vl": "masc_ui.models.demo.gme:build",
    "owlv2": "masc_ui.models.demo.owlv2:build",
    "clip-flant5": "masc_ui.models.demo.clip_flant5:build",
    "qwen2.5-vl": "masc_ui.models.demo.qwen_vl:build",
    "blip2-itm": "masc_ui.models.demo.blip2_itm:build",
    "imagereward": "masc_ui.models.demo.catalogue:build_imagereward",
    "hpsv2": "masc_ui.models.demo.preference:build_hps",
    "aesthetic": "masc_ui.models.demo.preference:build_aesthetic",
    "arcface": "masc_ui.models.demo.faces:build_arcface",
}


def list_demo_weights() -> list[str]:
    return list(DEMO_BUILDERS)


def write_demo_weights(
    weights_dir: Path, names: Iterable[str] | None = None, *, seed: int = DEMO_SEED, force: bool = False
) -> dict[str, Path]:
    """Write the tiny checkpoints `names` (default: all) under `weights_dir`; returns name -> folder.

    Idempotent: a folder with a completion marker for the same seed is kept unless `force`.
    Each is written into a temporary sibling and renamed into place, so a crash leaves no half checkpoint.
    Written quietly: no progress bars, no transformers warnings about its own default configs (`..quiet`).
    """
    from ..quiet import drop_default_config_warnings, quiet_progress

    drop_default_config_warnings()
    weights_dir = Path(weights_dir)
    weights_dir.mkdir(parents=True, exist_ok=True)
    wanted = list(DEMO_BUILDERS) if names is None else list(names)
    unknown = [n for n in wanted if n not in DEMO_BUILDERS]
    if unknown:
        raise KeyError(f"unknown demo checkpoint(s) {unknown}; known: {list(DEMO_BUILDERS)}")
    written: dict[str, Path] = {}
    for name in wanted:
        target = weights_dir / name
        marker = target / _MARKER
        if not force and marker.exists() and json.loads(marker.read_text()).get("seed") == seed:
            written[name] = target
            continue
        tmp = weights_dir / f".{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            with quiet_progress():
                _builder(name)(tmp, seed)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        (tmp / _MARKER).write_text(json.dumps({"name": name, "seed": seed, "demo": True}))
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        written[name] = target
    return written


def _builder(name: str) -> Callable[[Path, int], None]:
    module, func = DEMO_BUILDERS[name].split(":")
    return getattr(importlib.import_module(module), func)
