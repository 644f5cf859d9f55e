"""An import that stores nothing creates no dataset, marks nothing and says what was missing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_manifest  # noqa: E402

from masc_ui.cli import main  # noqa: E402
from storage import open_store  # noqa: E402


def _datasets(data: Path) -> list[str]:
    with open_store(None, data) as store:
        return [d.name for d in store.samples.datasets()]


def test_dreambooth_without_outputs_creates_nothing_and_names_the_flag(shared_data: Path, tmp_path: Path, capsys):
    data = tmp_path / "data"
    args = ["import", "dreambooth", str(shared_data / "dreambooth"), "--dataset", "db", "--data-dir", str(data)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: nothing imported into dataset 'db' (dreambooth): ") and len(err.splitlines()) == 1
    assert "no outputs folder given" in err and "--outputs DIR" in err
    assert "no dataset was created or marked for rating" in err
    assert _datasets(data) == []


def test_every_row_skipped_creates_no_dataset(tmp_path: Path, capsys):
    folder = tmp_path / "m"
    folder.mkdir()
    rows = [{"ref": "r.png", "out": f"gone{i}.png", "prompt": "a dog", "subject": "dog"} for i in range(2)]
    (folder / "manifest.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    data = tmp_path / "data"
    assert main(["import", "manifest", str(folder / "manifest.jsonl"), "--dataset", "m", "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert "nothing imported into dataset 'm' (manifest): every record was skipped, by reason: missing file (2)" in err
    assert "no dataset was created or marked for rating" in err and _datasets(data) == []


def test_skipped_rows_of_an_existing_dataset_leave_it_unchanged(tmp_path: Path, capsys):
    data = tmp_path / "data"
    good = write_manifest(tmp_path / "good", subjects=1, outputs=1)
    assert main(["import", "manifest", str(good), "--dataset", "m", "--no-for-rating", "--data-dir", str(data)]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"ref": "r.png", "out": "gone.png", "prompt": "a dog", "subject": "dog"}))
    assert main(["import", "manifest", str(bad), "--dataset", "m", "--data-dir", str(data)]) == 2
    assert "dataset 'm' is unchanged" in capsys.readouterr().err
    with open_store(None, data) as store:
        assert [(d.name, d.for_rating) for d in store.samples.datasets()] == [("m", False)]
