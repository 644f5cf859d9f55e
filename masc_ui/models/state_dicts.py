"""Strict loading of released state dicts into modules rebuilt here: a missing, unexpected or mis-shaped key
is a `ModelUnavailableError` that names the key, never silently ignored (METRICS.md, scorer catalogue).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from ..errors import ModelUnavailableError

OPTIONAL_SUFFIXES = ("num_batches_tracked",)
"""Keys a released file may or may not hold without changing any output: BatchNorm's training step counter
(absent from files saved by old torch versions; torch itself accepts either)."""


def read_state_dict(path: Path, *, what: str, wrapper_key: str | None = None) -> dict[str, torch.Tensor]:
    """The tensors of a `torch.save`d state dict (`weights_only`: no code from the file is run). With
    `wrapper_key`, a file holding `{wrapper_key: state dict, ...}` is unwrapped."""
    try:
        loaded = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle/zip errors come in many types; all mean "not a readable state dict"
        raise ModelUnavailableError(
            f"{what}: {path} is not a readable torch state dict ({exc}); re-download it"
        ) from exc
    if wrapper_key is not None and isinstance(loaded, Mapping) and isinstance(loaded.get(wrapper_key), Mapping):
        loaded = loaded[wrapper_key]
    if not isinstance(loaded, Mapping) or not all(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise ModelUnavailableError(f"{what}: {path} does not hold a plain state dict (name -> tensor)")
    return dict(loaded)


def check_keys(
    expected: Mapping[str, tuple[int, ...]],
    found: Mapping[str, torch.Tensor],
    *,
    what: str,
    optional: tuple[str, ...] = OPTIONAL_SUFFIXES,
) -> None:
    """Raise `ModelUnavailableError` naming the first missing, unexpected or mis-shaped key of `found` against
    `expected` (key -> shape). Keys ending in one of `optional` may be absent from `found`."""
    missing = sorted(k for k in expected if k not in found and not k.endswith(optional))
    unexpected = sorted(k for k in found if k not in expected)
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ModelUnavailableError(
            f"{what}: the checkpoint lacks the key {missing[0]!r}{more}; it is not the released file this model expects"
        )
    if unexpected:
        more = f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else ""
        raise ModelUnavailableError(
            f"{what}: the checkpoint has the unexpected key {unexpected[0]!r}{more}; it is "
            "not the released file this model expects"
        )
    for key, shape in expected.items():
        if key in found and tuple(found[key].shape) != tuple(shape):
            raise ModelUnavailableError(
                f"{what}: key {key!r} has shape {tuple(found[key].shape)}, expected {tuple(shape)}"
            )


def load_strict(module: torch.nn.Module, state_dict: Mapping[str, torch.Tensor], *, what: str) -> torch.nn.Module:
    """Load `state_dict` into `module` after `check_keys` against the module's own state dict."""
    expected = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    check_keys(expected, state_dict, what=what)
    module.load_state_dict(dict(state_dict), strict=False)
    return module
