"""What the status line and the banners show: the profile in use, device, dtype (and why the precision policy chose
it), the models loaded so far; the demo banner; on a Hugging Face Space without persistent storage, the storage
banner."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..settings import Settings
from ..space_storage import SPACE_DATA_SUBDIR, storage_problem
from .profile import ResolvedProfile

DEMO_BANNER = (
    "demo weights: numbers are not meaningful. These are tiny random checkpoints built offline so "
    "that the app runs anywhere. To load real weights, start with `--profile paper` (or `fast`) "
    "where the Hugging Face Hub is reachable, or point MASC_SIGLIP_MODEL, MASC_CLIP_MODEL, ... at "
    "local checkpoint folders (see README, 'Model profiles and offline use')."
)
DEMO_NOTICE = (
    "demo weights: these numbers mean nothing (tiny random checkpoints built offline); for real scores use "
    "--profile paper or fast where the Hugging Face Hub is reachable, or point MASC_SIGLIP_MODEL, MASC_CLIP_MODEL, "
    "... at local checkpoint folders"
)
"""The demo banner in one line, for the command line (standard error, and the `notice` of `--json` outputs)."""
SPACE_STORAGE_BANNER = "this Space has no persistent storage: samples and ratings are lost on restart"
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
    storage_warning: str | None = None
    """`persistence_warning`: the permanent storage banner's text on a Space that would lose its data, else None."""

    @property
    def is_demo(self) -> bool:
        return self.profile.name == "demo"

    @property
    def notice(self) -> str | None:
        """`DEMO_NOTICE` in the demo profile, else None."""
        return DEMO_NOTICE if self.is_demo else None

    def line(self) -> str:
        loaded = ", ".join(self.loaded) if self.loaded else "none yet (loaded on first use)"
        asked = f" (asked: {self.profile.requested})" if self.profile.requested != self.profile.name else ""
        why = f" ({self.dtype_reason})" if self.dtype_reason else ""
        return (
            f"profile: {self.profile.name}{asked} · device: {self.device} · dtype: {self.dtype}{why} · "
            f"models loaded: {loaded}"
        )

    def startup_line(self) -> str:
        """The one log line printed at start: which profile and why, device and dtype."""
        asked = f" (asked: {self.profile.requested})" if self.profile.requested != self.profile.name else ""
        why = f": {self.profile.why}" if self.profile.why else ""
        return f"profile: {self.profile.name}{asked}{why} · device: {self.device} · dtype: {self.dtype}"


def persistence_warning(settings: Settings) -> str | None:
    """On a Hugging Face Space (`settings.space_id`) whose data directory is not on a usable persistent storage
    (`settings.space_storage_dir`), the banner text: `SPACE_STORAGE_BANNER`, why, and what to do. None elsewhere.
    With a PostgreSQL `database_url` the rows survive a restart but the images (blob store in the data dir) do not,
    and the text says so."""
    if not settings.space_id:
        return None
    storage = settings.space_storage_dir
    problem = storage_problem(storage)
    if problem is None and _inside(settings.data_dir, storage):
        return None
    if problem:
        fix = (
            f"{problem}: attach persistent storage in the Space's settings and the app keeps its data in "
            f"{storage / SPACE_DATA_SUBDIR} by itself (MASC_DATA_DIR, when set, still decides)."
        )
    else:
        fix = (
            f"The data directory {settings.data_dir} is outside the persistent storage {storage}: unset "
            f"MASC_DATA_DIR (the app then uses {storage / SPACE_DATA_SUBDIR}) or point it inside {storage}."
        )
    if settings.database_url and not settings.database_url.startswith("sqlite"):
        scheme = settings.database_url.split(":")[0]
        return (
            f"this Space has no persistent storage: the database ({scheme}) keeps samples and ratings, but "
            f"their images in {settings.data_dir} are lost on restart. {fix}"
        )
    return f"{SPACE_STORAGE_BANNER}. {fix}"


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
    except ValueError:
        return False
    return True


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
