"""What the status line and the demo banner show: the profile in use, device, dtype (and why the precision policy
chose it), the models loaded so far."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Hashable, Iterable

from .profile import ResolvedProfile

DEMO_BANNER = ("demo weights: numbers are not meaningful. These are tiny random checkpoints built offline so "
               "that the app runs anywhere. To load real weights, start with `--profile paper` (or `fast`) "
               "where the Hugging Face Hub is reachable, or point MASC_SIGLIP_MODEL, MASC_CLIP_MODEL, ... at "
               "local checkpoint folders (see README, 'Model profiles and offline use').")
SERVICE_KEYS = ("sam-service", "text-segmenter", "masc-engine", "auto-profile", "demo-checkpoints")
"""Model registry keys of wrappers (their models appear under their own keys), left out of the status line."""


@dataclass(frozen=True)
class Status:
    """What the status line shows."""

    profile: ResolvedProfile
    device: str
    dtype: str
    loaded: tuple[str, ...]
    dtype_reason: str = ""
    """Why the precision policy chose `dtype`, e.g. `auto: the CPU has AVX-512-BF16 (kernels: AVX512)`."""

    @property
    def is_demo(self) -> bool:
        return self.profile.name == "demo"

    def line(self) -> str:
        loaded = ", ".join(self.loaded) if self.loaded else "none yet (loaded on first use)"
        asked = f" (asked: {self.profile.requested})" if self.profile.requested != self.profile.name else ""
        why = f" ({self.dtype_reason})" if self.dtype_reason else ""
        return (f"profile: {self.profile.name}{asked} · device: {self.device} · dtype: {self.dtype}{why} · "
                f"models loaded: {loaded}")


def loaded_models(keys: Iterable[Hashable]) -> tuple[str, ...]:
    """`kind: checkpoint name` of each loaded model among model registry `keys`, without the wrappers."""
    return tuple(dict.fromkeys(_key_text(k) for k in keys if not _is_service_key(k)))


def _is_service_key(key: object) -> bool:
    return isinstance(key, tuple) and bool(key) and key[0] in SERVICE_KEYS


def _key_text(key: object) -> str:
    """`kind: checkpoint folder/id name` of a model registry key such as ("siglip", "/x/siglip2-naflex", "cpu")."""
    if isinstance(key, tuple) and len(key) >= 2 and isinstance(key[1], str):
        return f"{key[0]}: {Path(key[1]).name or key[1]}"
    return str(key)
