"""Datasets out: the Parquet export read back with pandas and the image folder loaded back with
`datasets.load_dataset("imagefolder")` hold exactly the values of the JSON-lines export (written by storage's own
exporter) and the stored image and mask bytes; `masc-ui push` is checked up to the Hub API call."""

from __future__ import annotations

import io
import json
import math
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, tiny_image, write_manifest  # noqa: E402

from masc_ui.cli import main  # noqa: E402
from masc_ui.errors import InputError  # noqa: E402
from masc_ui.settings import Settings  # noqa: E402
from masc_ui.workbench.browse import StoredSamples  # noqa: E402
from masc_ui.workbench.database import Database  # noqa: E402
from masc_ui.workbench.dataset_export import check_imagefolder  # noqa: E402
from storage import open_store  # noqa: E402


@pytest.fixture()
def stored(tmp_path: Path) -> Path:
    """Dataset `toys`: 2 subjects x 3 outputs from a manifest (PNG, masks), one extra sample with a JPEG reference
    and a second, unmasked reference, one ratings-only sample; metric values (one NaN with a reason), ratings of
    two raters (one skipped). Dataset `other`: one sample. Returns the data dir."""
    data = tmp_path / "data"
    manifest = write_manifest(tmp_path / "toys")
    extra = tmp_path / "extra"
    tiny_image(extra / "ref.jpg", seed=7, size=(40, 30))
    tiny_image(extra / "out.png", seed=8, size=(40, 30))
    (extra / "manifest.jsonl").write_text(
        json.dumps(
            {
                "ref": ["../toys/ref0.png", "ref.jpg"],
                "ref_mask": ["../toys/ref0_mask.png", ""],
                "out": "out.png",
                "prompt": 'a toy0 on the beach, "quoted", =1+1',
                "subject": "toy0",
                "method": "m2",
                "key": "toy0-x",
                "category": "object",
            }
        )
        + "\n"
    )
    with open_store(None, data) as store:
        import_manifest(store, "toys", manifest)
        import_manifest(store, "toys", extra / "manifest.jsonl")
        import_manifest(store, "other", write_manifest(tmp_path / "other", subjects=1, outputs=1))
        store.samples.add("toys", subject="toy1", method="m9", external_key="m9/ratings-only")
        for rater in ("alice", "bob"):
            store.ratings.ensure_rater(rater)
        prov = {"model_id": "synthetic", "code_version": "test"}
        for k, sample in enumerate(store.samples.list("toys")):
            store.metrics.record(sample.id, "clip_i", 0.1 * k + 1 / 3, provenance=prov)
            store.metrics.record(
                sample.id,
                "gpt4o_cp",
                None if k == 2 else float(k % 5),
                provenance=prov,
                reason="judge gave no answer" if k == 2 else None,
            )
            store.ratings.rate("alice", sample.id, "cp", k % 5)
            store.ratings.rate("bob", sample.id, "cp", None, status="skipped") if k == 1 else store.ratings.rate(
                "bob", sample.id, "pf", (k + 2) % 5
            )
    return data


def _jsonl(data: Path, dataset: str | None) -> list[dict]:
    """The reference: storage's JSON-lines export of the same rows."""
    text = io.StringIO()
    with Database(Settings(data_dir=data)) as database:
        StoredSamples(database, database._settings).export("jsonl", user=None, dataset=dataset, target=text)
    return [json.loads(line) for line in text.getvalue().splitlines()]


def _export(data: Path, fmt: str, target: Path, dataset: str | None = "toys") -> int:
    with Database(Settings(data_dir=data)) as database:
        _, n = StoredSamples(database, database._settings).export(fmt, user=None, dataset=dataset, target=target)
    return n


def _same(a, b) -> bool:
    """Equal values; None, NaN and pandas' NA all mean 'no value'."""
    missing = lambda v: v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))  # noqa: E731
    if isinstance(a, (list, np.ndarray)) or isinstance(b, (list, np.ndarray)):
        return list(a) == list(b)
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return a == b


def _stored_bytes(data: Path, sha: str) -> bytes:
    with open_store(None, data) as store:
        return store.images.read(sha)


def test_parquet_equals_the_jsonl_export(stored, tmp_path):
    target = tmp_path / "out" / "toys.parquet"
    assert _export(stored, "parquet", target) == 8
    frame = pd.read_parquet(target)
    expected = _jsonl(stored, "toys")
    assert list(frame.columns) == list(expected[0])  # the CSV's columns, in its order
    assert len(frame) == len(expected) == 8
    for row, ref in zip(frame.to_dict("records"), expected):
        for column, value in ref.items():
            assert _same(row[column], value), (column, row[column], value)
    assert str(frame["sample_id"].dtype) == "int64" and str(frame["metric:clip_i"].dtype) == "float64"
    assert frame["metric:clip_i"].iloc[0] == 1 / 3  # full float64 precision, no text round trip
    ratings_only = frame[frame.external_key == "m9/ratings-only"].iloc[0]
    assert pd.isna(ratings_only.output_sha256) and list(ratings_only.reference_sha256s) == []
    assert not list(tmp_path.joinpath("out").glob(".*partial"))


def test_imagefolder_loads_back_with_datasets(stored, tmp_path):
    from datasets import load_dataset

    folder = tmp_path / "hf"
    assert _export(stored, "imagefolder", folder) == 8
    assert check_imagefolder(folder) == 8
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "images", "masks", "metadata.parquet"]
    loaded = load_dataset("imagefolder", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "cache"))
    expected = _jsonl(stored, "toys")
    assert len(loaded) == 8
    assert {"image", "references", "output_mask", "reference_masks"} <= set(loaded.column_names)
    with open_store(None, stored) as store:
        masks = store.masks.current_for([r["sample_id"] for r in expected])
    for row, ref in zip(loaded, expected):
        for column, value in ref.items():
            assert _same(row[column], value), (column, row[column], value)
        if ref["output_sha256"] is None:
            assert row["image"] is None and row["references"] == [] and row["output_mask"] is None
            continue
        assert _pixels(row["image"]) == _pixels(_stored_bytes(stored, ref["output_sha256"]))
        assert [_pixels(im) for im in row["references"]] == [
            _pixels(_stored_bytes(stored, sha)) for sha in ref["reference_sha256s"]
        ]
        current = masks.get(ref["sample_id"], {})
        pairs = [(row["output_mask"], current.get(("output", 0)))]
        pairs += [(mask, current.get(("reference", i))) for i, mask in enumerate(row["reference_masks"])]
        for mask, rec in pairs:
            assert (mask is None) == (rec is None)
            if rec is not None:
                assert _pixels(mask) == _pixels(_stored_bytes(stored, rec.sha256))
    two_refs = next(r for r in loaded if r["external_key"] == "toy0-x")
    assert len(two_refs["references"]) == 2 and two_refs["reference_masks"][1] is None
    assert two_refs["output_mask"] is None and two_refs["reference_masks"][0] is not None
    assert sum(r["output_mask"] is not None for r in loaded) == 6
    assert two_refs["references"][1].format == "JPEG"  # stored bytes, not re-encoded
    assert "toys" in (folder / "README.md").read_text()


def _pixels(image) -> tuple:
    if isinstance(image, bytes):
        image = Image.open(io.BytesIO(image))
    return image.size, image.mode, image.tobytes()


def test_imagefolder_refuses_a_used_folder_and_images_free_datasets(stored, tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="already exists and is not an empty folder"):
        _export(stored, "imagefolder", used)
    assert (used / "notes.txt").read_text() == "mine"
    with open_store(None, stored) as store:
        store.samples.add("ratings", subject="s", method="m", external_key="m/1")
    with pytest.raises(InputError, match="only ratings-only samples"):
        _export(stored, "imagefolder", tmp_path / "none", dataset="ratings")
    with pytest.raises(InputError, match="to a folder, not to standard output"):
        _export(stored, "imagefolder", io.StringIO())


def test_browse_download_zips_the_folder(stored, tmp_path):
    with Database(Settings(data_dir=stored)) as database:
        path, n = StoredSamples(database, database._settings).export(
            "imagefolder", user=None, dataset="other", folder=tmp_path / "scratch"
        )
    assert n == 1 and path.name == "masc-export-other.zip"
    names = zipfile.ZipFile(path).namelist()
    assert "masc-export-other/metadata.parquet" in names and any(
        n.startswith("masc-export-other/images/") for n in names
    )


def test_cli_export_formats(stored, tmp_path, capsys):
    common = ["--data-dir", str(stored)]
    assert main(["export", "-o", str(tmp_path / "t.parquet"), "--dataset", "toys", *common]) == 0
    assert "8 samples written" in capsys.readouterr().out and len(pd.read_parquet(tmp_path / "t.parquet")) == 8
    assert main(["export", "-o", str(tmp_path / "f"), "--format", "imagefolder", *common]) == 0
    assert check_imagefolder(tmp_path / "f") == 9  # both datasets
    assert main(["export", "-o", "-", "--format", "parquet", *common]) == 2
    assert "not to standard output" in capsys.readouterr().err


# --- masc-ui push: everything up to the Hub API call ----------------------------------------------------------


class FakeHfApi:
    """Stands in for `huggingface_hub.HfApi`: records the calls `push` makes (the upload needs the network)."""

    calls: list[tuple[str, dict]] = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        return f"https://huggingface.co/datasets/{repo_id}"

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))
        return type("Commit", (), {"commit_url": "https://huggingface.co/datasets/x/commit/1"})()


@pytest.fixture()
def folder(stored, tmp_path) -> Path:
    target = tmp_path / "hf"
    _export(stored, "imagefolder", target)
    return target


@pytest.fixture()
def hub(monkeypatch):
    import huggingface_hub
    from huggingface_hub import constants

    FakeHfApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHfApi)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_test_token")
    return FakeHfApi


def test_push_uploads_the_checked_folder(folder, hub, capsys):
    assert main(["push", str(folder), "--repo", "me/toys", "--private"]) == 0
    assert [name for name, _ in hub.calls] == ["create_repo", "upload_folder"]
    assert hub.calls[0][1] == {"repo_id": "me/toys", "repo_type": "dataset", "private": True, "exist_ok": True}
    upload = hub.calls[1][1]
    assert upload["folder_path"] == str(folder) and upload["repo_type"] == "dataset"
    assert upload["commit_message"] == "MaSC Workbench export: 8 samples"
    assert "uploaded 8 samples" in capsys.readouterr().out
    assert main(["push", str(folder), "--repo", "me/toys", "--dry-run"]) == 0
    assert len(hub.calls) == 2 and "would upload 8 samples" in capsys.readouterr().out


@pytest.mark.parametrize(
    "case, message",
    [
        ("bad id", "is not a Hub repository id"),
        ("no owner", "needs its owner"),
        ("no folder", "is not a folder"),
        ("not an export", "metadata.parquet is missing"),
        ("missing file", "which is not a file inside"),
        ("offline", "HF_HUB_OFFLINE is set"),
        ("no token", "no Hugging Face token"),
    ],
)
def test_push_refuses_before_calling_the_hub(folder, hub, monkeypatch, capsys, tmp_path, case, message):
    import huggingface_hub
    from huggingface_hub import constants

    repo, target = "me/toys", folder
    if case == "bad id":
        repo = "me/bad name"
    elif case == "no owner":
        repo = "toys"
    elif case == "no folder":
        target = tmp_path / "nowhere"
    elif case == "not an export":
        target = tmp_path / "plain"
        target.mkdir()
    elif case == "missing file":
        next((folder / "images").iterdir()).unlink()
    elif case == "offline":
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    else:
        monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    assert main(["push", str(target), "--repo", repo]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert hub.calls == []


def test_push_reports_what_the_hub_answered(folder, hub, monkeypatch, capsys):
    def refuse(self, **kwargs):
        raise PermissionError("403 Forbidden: you cannot write to me/toys")

    monkeypatch.setattr(FakeHfApi, "upload_folder", refuse)
    assert main(["push", str(folder), "--repo", "me/toys"]) == 2
    err = capsys.readouterr().err
    assert "push to the Hub dataset me/toys failed (PermissionError: 403 Forbidden" in err
