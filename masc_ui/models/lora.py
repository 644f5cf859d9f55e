"""Merging a peft LoRA adapter folder (`adapter_config.json` + `adapter_model.safetensors` or `adapter_model.bin`,
as `PeftModel.save_pretrained` writes it) into the `nn.Linear` weights of a module rebuilt here, without peft.

For each adapted linear layer W (out, in) with `lora_A.weight` A (r, in) and `lora_B.weight` B (out, r):
W <- W + s * B @ A, s = lora_alpha / r (`use_rslora`: lora_alpha / sqrt(r)); in eval mode this is exactly peft's
forward `W x + s * B (A x)` (its LoRA dropout is off in eval). The layers adapted are those whose module name matches
`target_modules` as peft matches them (a list: the name equals an entry or ends with "." + the entry; a string:
a regular expression matching the whole name). Strict: every targeted layer must have both matrices in the file,
every matrix of the file must belong to a targeted layer, and shapes must fit; options that change the maths in ways
not written here (DoRA, `fan_in_fan_out`, per-layer rank or alpha patterns, layer subsets, trained biases) are
refused, never ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..errors import ModelUnavailableError
from .state_dicts import read_state_dict

CONFIG_FILE = "adapter_config.json"
WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin")
"""peft's adapter weight files, in the order peft looks for them."""
SAVED_PREFIX = "base_model.model."
"""What peft puts before a module's name in the saved adapter keys."""
_KEY = re.compile(r"^(?P<module>.+)\.lora_(?P<part>[AB])(?:\.default)?\.weight$")
_REFUSED = {
    "use_dora": lambda v: bool(v),
    "fan_in_fan_out": lambda v: bool(v),
    "rank_pattern": lambda v: bool(v),
    "alpha_pattern": lambda v: bool(v),
    "layers_to_transform": lambda v: v is not None,
}
"""Config options whose non-default values change the maths; an adapter that sets one is refused."""


def merge_lora(modules: Mapping[str, nn.Module], folder: Path, *, what: str) -> dict[str, Any]:
    """Merge the adapter in `folder` into the linear layers of `modules` (name -> linear layer, named as the module
    the adapter was trained on names them, without peft's `base_model.model.` prefix). Returns the adapter's
    settings (`r`, `lora_alpha`, `scale`, `target_modules`, `layers`: how many layers it changed) for provenance.
    Raises `ModelUnavailableError` naming `what` and the problem."""
    config = read_adapter_config(folder, what=what)
    for option, refused in _REFUSED.items():
        if refused(config.get(option)):
            raise ModelUnavailableError(f"{what}: the LoRA adapter sets {option}={config[option]!r}, not supported")
    if config.get("bias", "none") != "none":
        raise ModelUnavailableError(f"{what}: the LoRA adapter trains biases (bias={config['bias']!r}), not supported")
    try:
        rank, alpha, targets = int(config["r"]), float(config["lora_alpha"]), config["target_modules"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelUnavailableError(
            f"{what}: {folder / CONFIG_FILE} lacks a valid r / lora_alpha / target_modules"
        ) from exc
    scale = alpha / math.sqrt(rank) if config.get("use_rslora") else alpha / rank
    targeted = {name for name in modules if is_target(name, targets)}
    matrices = _matrices(folder, what=what)
    strangers = sorted(set(matrices) - targeted)
    if strangers:
        raise ModelUnavailableError(
            f"{what}: the LoRA adapter holds weights for {strangers[0]!r}, which is not a targeted layer of this model"
        )
    for name in sorted(targeted):
        parts = matrices.get(name, {})
        if set(parts) != {"A", "B"}:
            raise ModelUnavailableError(f"{what}: the LoRA adapter lacks lora_A/lora_B weights for {name!r}")
        layer = modules[name]
        if not isinstance(layer, nn.Linear):
            raise ModelUnavailableError(f"{what}: LoRA target {name!r} is a {type(layer).__name__}, not a Linear")
        a, b = parts["A"].float(), parts["B"].float()
        out_features, in_features = layer.weight.shape
        if a.shape != (rank, in_features) or b.shape != (out_features, rank):
            raise ModelUnavailableError(
                f"{what}: LoRA weights of {name!r} have shapes {tuple(a.shape)} and {tuple(b.shape)}, expected "
                f"{(rank, in_features)} and {(out_features, rank)}"
            )
        with torch.no_grad():
            merged = layer.weight.float() + scale * (b @ a)
            layer.weight.copy_(merged.to(layer.weight.dtype))
    return {"r": rank, "lora_alpha": alpha, "scale": scale, "target_modules": targets, "layers": len(targeted)}


def read_adapter_config(folder: Path, *, what: str) -> dict[str, Any]:
    """The JSON object of `folder/adapter_config.json`."""
    path = Path(folder) / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelUnavailableError(f"{what}: {path} does not exist; the LoRA adapter folder is incomplete") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelUnavailableError(f"{what}: {path} is not readable JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ModelUnavailableError(f"{what}: {path} does not hold a JSON object")
    if str(config.get("peft_type", "LORA")).upper() != "LORA":
        raise ModelUnavailableError(f"{what}: {path} describes a {config['peft_type']} adapter, not LoRA")
    return config


def is_target(name: str, targets: Any) -> bool:
    """Whether peft adapts the module `name` for `target_modules` = `targets` (a list of names or a regex)."""
    if isinstance(targets, str):
        return re.fullmatch(targets, name) is not None
    return any(name == t or name.endswith(f".{t}") for t in targets)


def _matrices(folder: Path, *, what: str) -> dict[str, dict[str, torch.Tensor]]:
    """Module name -> {"A": lora_A weight, "B": lora_B weight} of the adapter weight file in `folder`."""
    path = next((Path(folder) / f for f in WEIGHT_FILES if (Path(folder) / f).is_file()), None)
    if path is None:
        raise ModelUnavailableError(f"{what}: {folder} holds neither of {', '.join(WEIGHT_FILES)}")
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            state = load_file(str(path))
        except (SafetensorError, OSError) as exc:
            raise ModelUnavailableError(f"{what}: {path} is not a readable safetensors file ({exc})") from exc
    else:
        state = read_state_dict(path, what=what)
    matrices: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in state.items():
        match = _KEY.match(key.removeprefix(SAVED_PREFIX))
        if match is None:
            raise ModelUnavailableError(f"{what}: {path} holds {key!r}, which is not a LoRA matrix")
        matrices.setdefault(match["module"], {})[match["part"]] = tensor
    return matrices
