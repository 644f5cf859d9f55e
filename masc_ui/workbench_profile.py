"""Which model profile the app really runs (`auto` -> paper or demo), and the demo weights it needs."""
from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

from .models.profiles import model_ids
from .settings import Settings

HUB_HOST = ("huggingface.co", 443)


@dataclass(frozen=True)
class ResolvedProfile:
    """The profile in use and, when it differs from the one asked for, why."""

    name: str
    """`paper`, `fast` or `demo`."""
    requested: str
    """What settings asked for (`auto`, `paper`, `fast`, `demo`)."""
    reason: str | None
    """Why `auto` became `demo` (None otherwise)."""


def resolve_profile(settings: Settings, *, offline: bool = False, probe_timeout_s: float = 2.0) -> ResolvedProfile:
    """`auto` -> `paper` when the paper SigLIP2 checkpoint is a local folder, is in the Hugging Face cache, or
    the Hub answers within `probe_timeout_s`; else `demo` with the reason. Other profiles are returned as is."""
    if settings.profile != "auto":
        return ResolvedProfile(settings.profile, settings.profile, None)
    siglip = model_ids(settings, "paper").siglip
    if Path(siglip).expanduser().is_dir() or _in_hf_cache(siglip):
        return ResolvedProfile("paper", "auto", None)
    if not offline and _hub_reachable(probe_timeout_s):
        return ResolvedProfile("paper", "auto", None)
    why = "offline mode is set" if offline else "the Hugging Face Hub cannot be reached"
    return ResolvedProfile("demo", "auto", f"{siglip} is not in the local cache and {why}")


def ensure_demo_weights(settings: Settings) -> Path:
    """Write the tiny demo checkpoints into `settings.resolved_demo_weights_dir` if missing; return that dir."""
    from .models.demo import write_demo_weights

    target = settings.resolved_demo_weights_dir
    write_demo_weights(target)
    return target


def _in_hf_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # malformed ids are "not cached", the loader reports them properly later
        return False
    return isinstance(found, str)


def _hub_reachable(timeout_s: float) -> bool:
    try:
        with socket.create_connection(HUB_HOST, timeout=timeout_s):
            return True
    except OSError:
        return False
