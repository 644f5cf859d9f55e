"""A real full disk for tests: a small tmpfs mounted under the test's folder (needs the right to mount, as root in
the project's containers; elsewhere the tests that use it are skipped with that reason)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(folder: Path, size_kib: int = 2048) -> Iterator[Path]:
    """A tmpfs of `size_kib` KiB mounted at `folder` (created), unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill up ({mounted.stderr.strip() or 'mount failed'})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path, leave_kib: int) -> None:
    """Fill the disk holding `folder` until `leave_kib` KiB are free."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    (folder / "filler").write_bytes(b"\0" * max(0, free - leave_kib * 1024))
