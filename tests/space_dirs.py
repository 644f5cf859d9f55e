"""Stand-ins for a Space's persistent storage volume in tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from masc_ui.space_storage import storage_problem


def read_only_dir(tmp_path: Path) -> Path:
    """A directory this process cannot create files in: a chmod 555 folder, or for root (whom permission bits do
    not stop) the kernel's /sys, which refuses new files even to root."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    sys_dir = Path("/sys")
    if not sys_dir.is_dir() or "not writable" not in (storage_problem(sys_dir) or ""):
        pytest.skip("running as root without a read-only /sys: no read-only directory to stand in for /data")
    return sys_dir
