"""The example pairs shipped in `assets/examples/` (written by `scripts/make_assets.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..imaging import load_mask_file

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "assets" / "examples"


@dataclass(frozen=True)
class Example:
    name: str
    title: str
    ref: Path
    out: Path
    prompt: str
    subject: str
    ref_mask: np.ndarray
    """bool (H, W) of the reference."""
    out_mask: np.ndarray
    """bool (H, W) of the output."""


def list_examples(root: Path = EXAMPLES_DIR) -> list[tuple[str, str]]:
    """(title, name) of every example pair, sorted by name."""
    out = []
    for meta in sorted(root.glob("*/meta.json")):
        out.append((json.loads(meta.read_text())["title"], meta.parent.name))
    return out


def load_example(name: str, root: Path = EXAMPLES_DIR) -> Example:
    folder = root / name
    if not name or "/" in name or "\\" in name or name.startswith(".") or not (folder / "meta.json").is_file():
        known = [n for _, n in list_examples(root)]
        raise InputError(f"example {name!r} does not exist; choose one of {known}")
    meta = json.loads((folder / "meta.json").read_text())
    return Example(
        name,
        meta["title"],
        folder / "ref.jpg",
        folder / "out.jpg",
        meta["prompt"],
        meta["subject"],
        load_mask_file(folder / "ref_mask.png", name=f"{name}/ref_mask.png"),
        load_mask_file(folder / "out_mask.png", name=f"{name}/out_mask.png"),
    )
