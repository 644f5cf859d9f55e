"""What every command shares: the settings flags and `settings_from_args`, bounded argument types, the acting user,
the workbench of a command (`open_workbench`: which profile and why, said once), one-line errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..settings import MAX_NAFLEX_PATCHES, PROFILES, Settings

if TYPE_CHECKING:
    from ..workbench import Workbench

CLI_USER: str | None = None
"""The acting user the CLI passes to the use cases (a local process: no login)."""


def bounded(kind: type, lo: float, hi: float) -> Callable[[str], float]:
    """argparse type: a `kind` (int or float) within [lo, hi], finite; a one-line error otherwise."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(
                f"expected {'a whole number' if kind is int else 'a number'}, got {text!r}"
            ) from None
        if not (lo <= value <= hi):  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be within [{lo:g}, {hi:g}], got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


POSITIVE = bounded(int, 1, 1_000_000)

COUNT = bounded(int, 0, 1_000_000)

FRACTION = bounded(float, 0.0, 1.0)

PATCHES = bounded(int, 1, MAX_NAFLEX_PATCHES)

SEED = bounded(int, 0, 2**32 - 1)

PORT = bounded(int, 1, 65_535)


def add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("settings (default: MASC_* environment variables, then built-in defaults)")
    g.add_argument("--profile", choices=PROFILES, help="model profile (default auto)")
    g.add_argument("--device", help="auto, cpu, cuda, cuda:N, mps")
    g.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"))
    g.add_argument("--data-dir", type=Path, help="database + blob store folder")
    g.add_argument("--db", dest="database_url", help="database URL (default: SQLite in the data dir)")
    g.add_argument("--demo-weights-dir", type=Path, help="folder of the tiny demo checkpoints")


CATALOGUE_FLAGS = (
    ("--vqa-model", "vqa_model", "ID|DIR", "VQAScore model: a CLIP-FlanT5 checkpoint or any chat VLM (MASC_VQA_MODEL)"),
    ("--itm-model", "itm_model", "ID|DIR", "ITMScore model, Blip2ForImageTextRetrieval (MASC_ITM_MODEL)"),
    (
        "--facescore-model",
        "facescore_model",
        "DIR|FILE|REPO",
        "FaceScore FS_model.pt + med_config.json (MASC_FACESCORE_MODEL)",
    ),
    (
        "--face-detector-dir",
        "face_detector_dir",
        "DIR",
        "FaceSim's SCRFD: an insightface buffalo_l folder (MASC_FACE_DETECTOR_DIR)",
    ),
    (
        "--face-recognizer",
        "face_recognizer",
        "FILE|DIR|REPO",
        "FaceSim's IR-101 CurricularFace weights (MASC_FACE_RECOGNIZER)",
    ),
    (
        "--retinaface-weights",
        "retinaface_weights",
        "FILE|URL|REPO",
        "FaceScore's RetinaFace mobilenet0.25_Final.pth (MASC_RETINAFACE_WEIGHTS)",
    ),
    (
        "--artscore-checkpoint",
        "artscore_checkpoint",
        "FILE|DIR|URL|REPO",
        "ArtScore's ResNet-50 state dict (MASC_ARTSCORE_CHECKPOINT)",
    ),
    (
        "--dbpp-judge",
        "dbpp_judge",
        "api|local",
        "who answers dbpp_cp / dbpp_pf: the judge API or a local chat VLM (MASC_DBPP_JUDGE)",
    ),
    (
        "--dbpp-local-model",
        "dbpp_local_model",
        "ID|DIR",
        "the local DreamBench++ judge, a chat VLM (MASC_DBPP_LOCAL_MODEL)",
    ),
    (
        "--imagereward-model",
        "imagereward_model",
        "DIR|FILE|REPO",
        "ImageReward.pt + med_config.json (MASC_IMAGEREWARD_MODEL)",
    ),
    ("--hps-model", "hps_model", "FILE|DIR|REPO", "HPSv2.1's HPS_v2.1_compressed.pt (MASC_HPS_MODEL)"),
    (
        "--aesthetic-head",
        "aesthetic_head",
        "FILE|DIR|URL|REPO",
        "LAION aesthetic predictor v2 MLP (MASC_AESTHETIC_HEAD)",
    ),
    (
        "--aesthetic-clip-model",
        "aesthetic_clip_model",
        "ID|DIR",
        "CLIP ViT-L/14 the aesthetic head reads (MASC_AESTHETIC_CLIP_MODEL)",
    ),
    ("--dinov2-model", "dinov2_model", "ID|DIR", "DINOv2-I / DINOv2-I-Seg backbone, a Dinov2Model (MASC_DINOV2_MODEL)"),
    (
        "--dreamsim-weights",
        "dreamsim_weights",
        "DIR|ZIP|URL",
        "DreamSim ensemble release: its extracted folder, or the release zip or its URL (MASC_DREAMSIM_WEIGHTS)",
    ),
)
"""The scorer catalogue's checkpoint settings: (flag, Settings field, metavar, help); default: the profile's."""


def add_catalogue_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scorer catalogue checkpoints (default: MASC_* environment variables, then the profile's)")
    for flag, dest, metavar, text in CATALOGUE_FLAGS:
        g.add_argument(flag, dest=dest, metavar=metavar, help=text)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from env vars, overridden by whichever settings flags the command has and were given."""
    names = (
        "profile",
        "device",
        "dtype",
        "data_dir",
        "database_url",
        "demo_weights_dir",
        "siglip_model",
        "naflex_max_patches",
        "fg_threshold",
        "stripper",
        "clip_model",
        *(dest for _, dest, _, _ in CATALOGUE_FLAGS),
    )
    return Settings.from_env(**{n: getattr(args, n, None) for n in names})


def open_workbench(settings: Settings, *, loads_models: bool = False, announce: bool = True) -> Workbench:
    """The workbench of one command (`masc_ui.workbench.factory.build_workbench`, the app's composition root). The
    local operator acts as admin: the users file's logins are the web app's. A command that `loads_models` has the
    profile resolved by the app's quick rule (`auto`: paper or demo, demo checkpoints written when missing) and, when
    `announce`, says on standard error which profile and why (`say_profile`: one line, and the demo notice in the demo
    profile); a command that still checks its arguments against the database announces after that."""
    from ..workbench.factory import build_workbench
    from ..workbench.users import Accounts

    wb = build_workbench(settings, accounts=Accounts(), resolve=loads_models)
    if loads_models and announce:
        say_profile(wb)
    return wb


def say_profile(wb: Workbench) -> None:
    """Which profile is in use and why (one line on standard error), then the demo notice in the demo profile."""
    status = wb.status()
    print(status.startup_line(), file=sys.stderr)
    if status.notice:
        print(f"warning: {status.notice}", file=sys.stderr)


def profile_record(wb: Workbench) -> dict[str, Any]:
    """What `--json` outputs carry about the models: `profile` (name, requested, why) and `notice` (the demo notice,
    or None)."""
    status = wb.status()
    return {"profile": status.profile.to_dict(), "notice": status.notice}


def metric_names_arg(text: str | None) -> list[str] | None:
    """A comma-separated list of names; None when the flag was not given ('' = an empty list)."""
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]


def one_line(text: str) -> str:
    return " ".join(text.split())
