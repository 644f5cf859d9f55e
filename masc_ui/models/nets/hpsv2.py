"""HPSv2.1's network: OpenCLIP's ViT-H-14 (open-clip-torch) with the weights of the released
`HPS_v2.1_compressed.pt`, loaded by OpenCLIP's own loader.

Release layout (Hugging Face repo xswu/HPSv2, the file `hpsv2.score(..., hps_version="v2.1")` loads): a
`torch.save`d dict whose `state_dict` holds OpenCLIP's CLIP keys (`visual.*`, `transformer.*`,
`token_embedding.weight`, `positional_embedding`, `ln_final.*`, `text_projection`, `logit_scale`).
`open_clip.create_model(ARCHITECTURE, pretrained=<file>)` unwraps `state_dict`, strips a `module.` prefix and loads
strictly (a missing, unexpected or mis-shaped key is an error naming it). The architecture is OpenCLIP's built-in
`ViT-H-14` unless an `open_clip_config.json` (OpenCLIP's Hub config format, `{"model_cfg": {"embed_dim",
"vision_cfg", "text_cfg"}}`) lies beside the file: then its sizes (how the tiny demo checkpoint is described). The
tokenizer is `open_clip.get_tokenizer(ARCHITECTURE)`: OpenCLIP's bundled CLIP BPE, 77 tokens (no download).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch import nn

from ...errors import ModelUnavailableError

ARCHITECTURE = "ViT-H-14"
RELEASED_FILE = "HPS_v2.1_compressed.pt"
CONFIG_FILE = "open_clip_config.json"
"""Beside the checkpoint: the OpenCLIP sizes of a checkpoint that is not ViT-H-14 (the demo's)."""
CONFIG_KEYS = ("embed_dim", "vision_cfg", "text_cfg")


def model_config(model_file: Path, *, what: str) -> dict[str, Any]:
    """The OpenCLIP sizes of `model_file`'s `open_clip_config.json` (those keys of its `model_cfg`), or {} when the
    file has none beside it (the built-in ViT-H-14)."""
    path = Path(model_file).parent / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        cfg = json.loads(path.read_text()).get("model_cfg")
    except (OSError, ValueError, AttributeError) as exc:
        raise ModelUnavailableError(f"{what}: {path} is not a readable OpenCLIP config ({exc})") from exc
    if not isinstance(cfg, dict) or any(k not in cfg for k in CONFIG_KEYS):
        raise ModelUnavailableError(
            f"{what}: {path} has no model_cfg with {', '.join(CONFIG_KEYS)}; it is not an OpenCLIP config"
        )
    return {k: cfg[k] for k in CONFIG_KEYS}


def load_hps_model(model_file: Path, *, what: str) -> tuple[nn.Module, Callable[..., Any], str]:
    """(OpenCLIP model in float32 on the CPU, eval mode; its tokenizer; a label of the architecture) of the HPS
    checkpoint `model_file` (see the module docstring)."""
    import open_clip

    sizes = model_config(model_file, what=what)
    label = f"OpenCLIP {ARCHITECTURE}" + (" (sizes of open_clip_config.json)" if sizes else "")
    try:
        model = open_clip.create_model(
            ARCHITECTURE, pretrained=str(model_file), precision="fp32", device="cpu", **sizes
        )
    except (RuntimeError, ValueError, KeyError, TypeError, OSError, AssertionError, pickle.UnpicklingError) as exc:
        # OpenCLIP's loader asserts on some mismatches (position tables) and raises torch's RuntimeError on others
        reason = " ".join(str(exc).split())
        raise ModelUnavailableError(
            f"{what}: {model_file} does not load into {label}: {reason[:400]}; it is not HPSv2's {RELEASED_FILE}"
        ) from exc
    return model.eval(), open_clip.get_tokenizer(ARCHITECTURE), label
