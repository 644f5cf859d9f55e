"""Fixtures of the importer tests (the tree builders live in dataset_trees.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dataset_trees import write_dreambench


@pytest.fixture()
def dreambench_tree(tmp_path: Path) -> Path:
    return write_dreambench(tmp_path / "dreambench_plus")
