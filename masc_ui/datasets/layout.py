"""Small helpers shared by the folder-layout importers."""

from __future__ import annotations

import re
from pathlib import Path

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")
"""File types the layout importers take as images (case-insensitive)."""

_OUTPUT_NAME = re.compile(r"^(?P<idx>\d+)(?:_(?P<seed>-?\d+))?$")


def is_image(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES and not path.name.startswith(".")


def images_in(folder: Path) -> list[Path]:
    """Image files directly inside `folder`, sorted by name; [] when the folder is absent."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if is_image(p))


def find_image(stem: Path) -> Path | None:
    """The image `stem.<any image suffix>` (e.g. `images/animal/00` -> `images/animal/00.jpg`), or None."""
    if not stem.parent.is_dir():
        return None
    for p in sorted(stem.parent.iterdir()):
        if p.stem == stem.name and is_image(p):
            return p
    return None


def output_index(path: Path) -> tuple[int, int | None] | None:
    """`<prompt_idx>_<seed>.<ext>` (or `<prompt_idx>.<ext>`) -> (prompt_idx, seed); None for other names."""
    m = _OUTPUT_NAME.match(path.stem)
    if m is None:
        return None
    return int(m["idx"]), (int(m["seed"]) if m["seed"] is not None else None)


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root` (POSIX separators) when inside it, else the full path."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
