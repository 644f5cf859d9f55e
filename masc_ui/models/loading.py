"""Loading checkpoints through transformers' Auto classes, with one clear error when they are unavailable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..errors import InputError, ModelUnavailableError
from .precision import HardwareReport, precision_policy


def pick_device(preference: str | None = "auto") -> str:
    """`auto`/None -> cuda > mps > cpu; anything else is returned as given after a sanity check."""
    if preference in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    try:
        torch.device(preference)
    except (RuntimeError, TypeError):
        raise InputError(f"device {preference!r} is not a torch device; use auto, cpu, cuda, cuda:1 or mps") from None
    if preference.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device {preference!r} was asked for but CUDA is not available here; use --device cpu")
    return preference


def pick_dtype(
    preference: str | torch.dtype | None, device: str, hardware: HardwareReport | None = None
) -> torch.dtype:
    """The dtype of the precision policy (`models.precision`): `auto`/None -> bfloat16 where the device computes
    it fast (CUDA with native bf16, CPUs with AMX or AVX-512-BF16), float32 elsewhere; a name -> that dtype."""
    return precision_policy(preference, device, hardware).dtype


def is_local(model_id: str) -> bool:
    return Path(model_id).expanduser().exists() or model_id.startswith(("/", "./", "../", "~"))


def load_pretrained(auto_cls: Any, model_id: str, *, what: str, **kwargs: Any) -> Any:
    """`auto_cls.from_pretrained(model_id, **kwargs)`, turning every "cannot get the weights" failure into
    `ModelUnavailableError` that names `what` and `model_id`, says why, and what to do."""
    from .quiet import drop_default_config_warnings

    drop_default_config_warnings()
    path = Path(model_id).expanduser()
    if is_local(model_id) and not path.exists():
        raise ModelUnavailableError(
            f"{what}: local checkpoint folder {model_id} does not exist. Pass an existing folder, "
            "a Hugging Face model id, or run `masc-ui demo-weights DIR` for tiny offline weights."
        )
    try:
        return auto_cls.from_pretrained(str(path) if path.exists() else model_id, **kwargs)
    except ModelUnavailableError:
        raise  # already says which model, why and what to do (e.g. a checkpoint key that does not fit)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailableError(_explain(what, model_id, exc)) from exc
    except Exception as exc:  # network stacks raise their own types (requests/httpx) on offline machines
        if type(exc).__module__.split(".")[0] in ("requests", "httpx", "huggingface_hub", "urllib3"):
            raise ModelUnavailableError(_explain(what, model_id, exc)) from exc
        raise


def _explain(what: str, model_id: str, exc: BaseException) -> str:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if Path(model_id).expanduser().exists():
        return (
            f"{what}: could not load the checkpoint in {model_id} ({reason}). Check that the folder holds a "
            "complete save_pretrained() checkpoint (config, weights, processor files)."
        )
    return (
        f"{what}: could not load {model_id!r} ({reason}). The weights are neither in the local Hugging Face "
        "cache nor downloadable (offline, or the id is wrong). Download them on a machine with internet "
        f"(`huggingface-cli download {model_id}`) and copy the cache, pass a local folder, or use the offline "
        "demo profile (`--profile demo`, tiny random weights whose numbers mean nothing)."
    )
