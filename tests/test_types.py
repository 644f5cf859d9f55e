"""The strict type check (pyproject `[tool.mypy]`) passes on the packages it covers so far."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("masc_ui/metrics", "masc_ui/workbench", "storage")
"""The packages held to `mypy --strict` (pyproject's config) by this test."""


@pytest.mark.slow
def test_mypy_strict_passes():
    run = subprocess.run(
        [sys.executable, "-m", "mypy", *CHECKED], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, f"mypy {' '.join(CHECKED)} found type errors:\n{run.stdout}{run.stderr}"
