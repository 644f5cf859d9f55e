"""The code version recorded with every stored metric value."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from . import __version__


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """`masc_ui.__version__`, plus `+g<short sha>[.dirty]` when running from a git checkout."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return __version__
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return __version__
    return f"{__version__}+g{sha}{'.dirty' if dirty else ''}" if sha else __version__
