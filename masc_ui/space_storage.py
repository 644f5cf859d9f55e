"""Hugging Face Spaces' persistent storage: a Space's own disk is wiped on every restart; the persistent storage
volume, when the owner attached one, is mounted at `/data` (`Settings.space_storage_dir`). Settings put the data
directory there by themselves (`<storage>/masc`) when it is a writable directory; `storage_problem` says why not."""

from __future__ import annotations

import tempfile
from pathlib import Path

SPACE_DATA_SUBDIR = "masc"
"""Folder inside the persistent storage that holds the database and the blob store."""


def storage_problem(path: Path) -> str | None:
    """None when `path` is a directory this process can create files in, else why not (one phrase). Checked
    by creating (and removing) a temporary file, not by permission bits: they say nothing for root, and a
    read-only mount refuses writes whatever its bits."""
    path = Path(path)
    if not path.exists():
        return f"{path} does not exist"
    if not path.is_dir():
        return f"{path} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".masc-write-check-"):
            pass
    except OSError as exc:
        return f"{path} is not writable ({exc.strerror or exc})"
    return None


def space_data_dir(storage: Path) -> Path | None:
    """`<storage>/masc` when the persistent storage at `storage` is usable, else None."""
    return None if storage_problem(storage) else Path(storage) / SPACE_DATA_SUBDIR
