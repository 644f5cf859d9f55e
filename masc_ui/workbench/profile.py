"""Which model profile the app really runs (`auto` -> paper or demo), as the status line and banner show it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..models.auto_profile import resolve_auto_profile
from ..models.loaded_models import ModelRegistry
from ..settings import Settings


@dataclass(frozen=True)
class ResolvedProfile:
    """The profile in use and, when it differs from the one asked for, why."""

    name: str
    """`paper`, `fast` or `demo`."""
    requested: str
    """What settings asked for (`auto`, `paper`, `fast`, `demo`)."""
    reason: str | None
    """Why `auto` became `demo` (None otherwise)."""
    why: str = field(default="", compare=False)
    """Why this profile is in use, for the start-up log line (filled for every profile by `resolve_profile`)."""


def resolve_profile(settings: Settings, models: ModelRegistry | None = None) -> ResolvedProfile:
    """`auto` -> `paper` when every paper metric backbone's config loads (local folder, Hugging Face cache, or
    the Hub; `HF_HUB_OFFLINE=1` keeps it local), else `demo` with the reason
    (`masc_ui.models.auto_profile.resolve_auto_profile`). Other profiles are returned as they are."""
    if settings.profile != "auto":
        return ResolvedProfile(settings.profile, settings.profile, None, "chosen in the settings")
    name, reason = resolve_auto_profile(settings, models)
    return ResolvedProfile(name, "auto", reason if name == "demo" else None, reason)
