"""Hugging Face Spaces keep their data on the persistent storage (`/data`, here a stand-in folder given by
`MASC_SPACE_STORAGE_DIR`) without configuration; without one, a permanent banner says the data is lost on restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from space_dirs import read_only_dir

from masc_ui.settings import Settings
from masc_ui.space_storage import storage_problem
from masc_ui.workbench.status import SPACE_STORAGE_BANNER, persistence_warning

DEFAULT_DATA_DIR = Settings().data_dir


def _space(storage: Path, **more: str) -> dict[str, str]:
    return {"SPACE_ID": "someone/masc", "MASC_SPACE_STORAGE_DIR": str(storage), **more}


def test_writable_storage_becomes_the_data_dir(tmp_path):
    storage = tmp_path / "data"
    storage.mkdir()
    s = Settings.from_env(_space(storage))
    assert s.space_id == "someone/masc" and s.data_dir == storage / "masc"
    assert persistence_warning(s) is None


def test_explicit_data_dir_wins(tmp_path):
    storage = tmp_path / "data"
    storage.mkdir()
    assert Settings.from_env(_space(storage, MASC_DATA_DIR=str(tmp_path / "mine"))).data_dir == tmp_path / "mine"
    assert Settings.from_env(_space(storage), data_dir=tmp_path / "flag").data_dir == tmp_path / "flag"
    inside = Settings.from_env(_space(storage, MASC_DATA_DIR=str(storage / "elsewhere")))
    assert persistence_warning(inside) is None  # still on the persistent storage
    outside = Settings.from_env(_space(storage, MASC_DATA_DIR=str(tmp_path / "mine")))
    warning = persistence_warning(outside)
    assert warning.startswith(SPACE_STORAGE_BANNER) and "outside the persistent storage" in warning
    assert "unset MASC_DATA_DIR" in warning and "attach" not in warning


@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_unusable_storage_keeps_the_default_and_warns(tmp_path, kind):
    storage = tmp_path / "data"
    if kind == "a file":
        storage.write_text("not a folder")
    s = Settings.from_env(_space(storage))
    assert s.data_dir == DEFAULT_DATA_DIR
    warning = persistence_warning(s)
    assert warning.startswith(SPACE_STORAGE_BANNER + ". ") and str(storage) in warning
    assert ("does not exist" if kind == "missing" else "is not a directory") in warning
    assert "attach persistent storage" in warning and str(storage / "masc") in warning


def test_read_only_storage_warns(tmp_path):
    storage = read_only_dir(tmp_path)
    assert "not writable" in storage_problem(storage)
    s = Settings.from_env(_space(storage))
    assert s.data_dir == DEFAULT_DATA_DIR
    assert persistence_warning(s).startswith(f"{SPACE_STORAGE_BANNER}. {storage} is not writable")


def test_off_spaces_nothing_changes(tmp_path):
    storage = tmp_path / "data"
    storage.mkdir()
    s = Settings.from_env({"MASC_SPACE_STORAGE_DIR": str(storage)})
    assert s.space_id is None and s.data_dir == DEFAULT_DATA_DIR and persistence_warning(s) is None


def test_postgres_keeps_rows_and_says_images_are_lost(tmp_path):
    s = Settings.from_env(_space(tmp_path / "missing", DATABASE_URL="postgresql+psycopg://u:secret@db/masc"))
    warning = persistence_warning(s)
    assert "keeps samples and ratings" in warning and "images" in warning and "secret" not in warning
