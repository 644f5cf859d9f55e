"""The provenance dict recorded with every metric value: which weights, which parameters, which code."""

from __future__ import annotations

from typing import Any

import torch

from ..models.loading import is_local
from ..version import code_version
from .value_records import json_safe


def checkpoint_revision(model_id: str, config: Any = None, *, cache_dir: str | None = None) -> str:
    """The commit of a Hub checkpoint, `local` for a folder, `unknown` when neither can be told.

    transformers 5 no longer keeps `config._commit_hash`; the commit is read from the Hugging Face cache
    path of the checkpoint's `config.json` (`.../snapshots/<commit>/config.json`; `cache_dir` None = the default
    Hugging Face cache). No network access.
    """
    legacy = getattr(config, "_commit_hash", None) if config is not None else None
    if legacy:
        return str(legacy)
    if is_local(model_id):
        return "local"
    try:
        from huggingface_hub import try_to_load_from_cache
        from transformers.utils.hub import extract_commit_hash

        path = try_to_load_from_cache(model_id, "config.json", cache_dir=cache_dir)
        commit = extract_commit_hash(path, None) if isinstance(path, str) else None
    except (ImportError, ValueError, OSError):
        commit = None
    return commit or "unknown"


def make_provenance(
    *,
    model_id: str | None,
    revision: str | None,
    params: dict[str, Any],
    device: str | None,
    dtype: torch.dtype | str | None,
    **more: Any,
) -> dict[str, Any]:
    """`{model_id, revision, params, device, dtype, code_version}`, JSON-able (tuples become lists).

    Anything else that identifies the computation (`more`, e.g. PickScore's `processor_id`, DINO's `preprocess`)
    goes into `params`, so storage keeps exactly these six keys and every such detail is part of the provenance key.
    """
    if isinstance(dtype, torch.dtype):
        dtype = str(dtype).removeprefix("torch.")
    return {
        "model_id": model_id,
        "revision": revision,
        "params": json_safe({**params, **more}),
        "device": device,
        "dtype": dtype,
        "code_version": code_version(),
    }
