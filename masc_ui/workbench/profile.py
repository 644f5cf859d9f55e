"""Which model profile a process really runs (`auto` -> paper or demo), as the status line and banner show it, and
the demo checkpoints that profile needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..settings import Settings

if TYPE_CHECKING:
    from ..models.loaded_models import ModelRegistry


@dataclass(frozen=True)
class ResolvedProfile:
    """The profile in use and, when it differs from the one asked for, why."""

    name: str
    """`paper`, `fast` or `demo` (`auto` only for a workbench that loads no model: `factory.build_workbench`'s
    `resolve=False`)."""
    requested: str
    """What settings asked for (`auto`, `paper`, `fast`, `demo`)."""
    reason: str | None
    """Why `auto` became `demo` (None otherwise)."""
    why: str = field(default="", compare=False)
    """Why this profile is in use, for the start-up log line (filled for every profile by `resolve_profile`)."""

    def to_dict(self) -> dict[str, str | None]:
        """`{"name", "requested", "why"}`, as `--json` outputs carry it."""
        return {"name": self.name, "requested": self.requested, "why": self.why or None}


def resolve_profile(settings: Settings, models: ModelRegistry | None = None) -> ResolvedProfile:
    """`auto` -> `paper` when every paper metric backbone's config loads (local folder, Hugging Face cache, or
    the Hub after one short probe; `HF_HUB_OFFLINE=1` keeps it local), else `demo` with the reason
    (`masc_ui.models.auto_profile.resolve_auto_profile`). Other profiles are returned as they are."""
    if settings.profile != "auto":
        return ResolvedProfile(settings.profile, settings.profile, None, "chosen in the settings")
    from ..models.auto_profile import resolve_auto_profile

    name, reason = resolve_auto_profile(settings, models)
    return ResolvedProfile(name, "auto", reason if name == "demo" else None, reason)


def unresolved_profile(settings: Settings) -> ResolvedProfile:
    """The profile as asked, not looked into (a process that loads no model)."""
    return ResolvedProfile(settings.profile, settings.profile, None, "not resolved: no model is loaded")


def write_demo_checkpoints(folder: Path, only: list[str] | None = None, *, force: bool = False) -> dict[str, Path]:
    """Write the tiny random demo checkpoints (`only`: those names; `force`: again even if present) into `folder`;
    name -> path of each (`masc-ui demo-weights`)."""
    from ..models.demo import write_demo_weights

    return write_demo_weights(folder, only, force=force)
