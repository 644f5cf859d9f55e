"""A full disk: Save and `masc-ui import` say what happened in one line and store nothing half."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_manifest  # noqa: E402
from small_disk import fill, small_disk  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _noise(path: Path, seed: int, side: int = 400) -> Path:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (side, side, 3), dtype=np.uint8)).save(path)
    return path


def test_save_on_a_full_disk_says_so_and_saves_nothing(demo_settings, tmp_path):
    from masc_ui.workbench import build_workbench
    from masc_ui.workbench.database import StoreError

    ref, out = _noise(tmp_path / "ref.png", 1), _noise(tmp_path / "out.png", 2)  # ~480 KB each
    with small_disk(tmp_path / "disk") as disk:
        wb = build_workbench(demo_settings.replace(data_dir=disk / "data"))
        try:
            assert wb.database.datasets() == []  # the database exists before the disk fills up
            fill(disk, leave_kib=300)
            sample = wb.scoring.make_sample([ref], out, "a toy", "toy")
            with pytest.raises(StoreError) as caught:
                wb.saving.save(sample, user=None, dataset="d", names=["clip_i"])
            assert str(caught.value) == (
                "no space left on the disk holding the data directory (MASC_DATA_DIR); free space and Save again "
                "— nothing was saved"
            )
            assert str(disk / "data") in caught.value.detail
            (disk / "filler").unlink()
            assert wb.database.samples.count() == 0
            saved = wb.saving.save(sample, user=None, dataset="d", names=["clip_i"])
            assert saved.new_values == 1 and wb.database.samples.count() == 1
        finally:
            wb.close()


@pytest.mark.parametrize(("side", "outputs", "leave_kib", "full"), [(256, 3, 150, "blobs"), (8, 40, 120, "database")])
def test_import_on_a_full_disk_is_one_line_without_traceback(tmp_path, side, outputs, leave_kib, full):
    """Full while writing an image (`blobs`), or while SQLite commits (`database`): one line, status 2."""
    manifest = write_manifest(tmp_path / "m", subjects=4, outputs=outputs, size=(side, side))
    with small_disk(tmp_path / "disk") as disk:
        data = disk / "data"
        common = [sys.executable, "-m", "masc_ui"]
        subprocess.run([*common, "db", "upgrade", "--data-dir", str(data)], check=True, capture_output=True, cwd=ROOT)
        fill(disk, leave_kib=leave_kib)
        done = subprocess.run(
            [*common, "import", "manifest", str(manifest), "--dataset", "m", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
    errors = [line for line in done.stderr.splitlines() if not line.startswith("import:") and line.strip()]
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(errors) == 1, done.stderr[-2000:]
    assert errors[0].startswith("error: no space left on the disk holding ")
    assert errors[0].endswith("free space there and try again (the write that failed stored nothing)")
    assert ("blobs" in errors[0]) == (full == "blobs")
