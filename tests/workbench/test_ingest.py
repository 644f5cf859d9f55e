"""Importing into storage (SQLite in a temp folder): what lands where, bad rows skipped, twice adds nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from masc_ui.datasets import read_layout
from masc_ui.workbench.ingest import ingest
from storage import open_store
from tests.datasets.dataset_trees import tiny_image, tiny_mask, write_dreambench


@pytest.fixture()
def store(tmp_path: Path):
    with open_store(None, tmp_path / "data") as s:
        yield s


def _import(store, name: str, fmt: str, path: Path, **options):
    return ingest(store, name, fmt, read_layout(fmt, path, **options))


def test_dreambench_full_tree_then_again(store, tmp_path: Path):
    root = write_dreambench(tmp_path / "db")
    first = _import(store, "dbpp", "dreambench", root, judge="gpt4o")
    assert first.problems == []
    assert (first.added_samples, first.added_ratings, first.added_metrics) == (12, 48, 24)
    sample = store.samples.get_by_key("dbpp", "dreambooth_sd/live_subject_animal_00_kitten-1")
    assert sample.subject == "kitten" and sample.category == "animal" and sample.method == "dreambooth_sd"
    assert sample.info == {"collection": "live_subject_animal_00_kitten", "prompt_idx": 1}
    assert store.images.read(sample.references[0]) == (root / "images/animal/00.jpg").read_bytes()
    ratings = {(r.rater, r.criterion): r.score for r in store.ratings.current(sample_id=sample.id)}
    assert ratings == {
        ("dreambench:group1", "cp"): 1,
        ("dreambench:group1", "pf"): 1,
        ("dreambench:group2", "cp"): 2,
        ("dreambench:group2", "pf"): 2,
    }
    assert all(r.is_external for r in store.ratings.raters())
    latest = store.metrics.latest(sample.id)
    assert latest["gpt4o_cp"].value == 2.0 and latest["gpt4o_cp"].provenance.code_version == "external"
    assert latest["gpt4o_pf"].extras == {"file": "data_gpt_rating/prompt_following_full/dreambooth_sd.json"}
    # the two collections share one reference image each across methods and prompts: stored once
    assert len({s.references[0] for s in store.samples.list("dbpp")}) == 2

    again = _import(store, "dbpp", "dreambench", root, judge="gpt4o")
    assert (again.added_samples, again.added_ratings, again.added_metrics) == (0, 0, 0)
    assert (again.existing_samples, again.existing_ratings, again.existing_metrics) == (12, 48, 24)
    assert store.samples.count("dbpp") == 12
    assert len(store.metrics.history(sample.id)) == 2
    assert all(r.revision == 1 for r in store.ratings.current(dataset="dbpp"))


def test_dreambench_ratings_only_after_images(store, tmp_path: Path):
    images = write_dreambench(tmp_path / "images_only", human=False, gpt=False)
    ratings = write_dreambench(tmp_path / "ratings_only", images=False, samples=False)
    assert _import(store, "d", "dreambench", images).added_samples == 12
    summary = _import(store, "d", "dreambench", ratings, judge="j")
    assert (summary.added_samples, summary.added_ratings, summary.added_metrics) == (0, 48, 24)


def test_ratings_of_an_unreadable_collection_are_skipped_with_reason(store, tmp_path: Path):
    root = write_dreambench(tmp_path / "r", images=False, samples=False, gpt=False)
    shutil.rmtree(root / "captions")
    (root / "data_human_rating/merged_data/group1/m-cp.json").write_text(json.dumps({"Weird-0": 1, "Weird-1": 2}))
    summary = _import(store, "d", "dreambench", root)
    assert summary.added_ratings == 48 and summary.skipped == 2 and summary.ratings_only_samples == 12
    assert summary.reasons() == [("unknown key", 2)]
    assert str(summary.problems[0]).startswith(
        "data_human_rating/merged_data/group1/m-cp.json: key 'Weird-0': unknown key: no sample 'm/Weird-0' in "
        "dataset 'd'"
    )


def test_changed_rating_becomes_a_new_revision(store, tmp_path: Path):
    root = write_dreambench(tmp_path / "db", gpt=False)
    _import(store, "d", "dreambench", root)
    path = root / "data_human_rating/merged_data/group1/dreambooth_sd-cp.json"
    data = json.loads(path.read_text())
    data["object_03_red_backpack-0"] = 4 if data["object_03_red_backpack-0"] != 4 else 0
    path.write_text(json.dumps(data))
    summary = _import(store, "d", "dreambench", root)
    assert (summary.added_ratings, summary.existing_ratings) == (1, 47)


def test_manifest_with_masks_bad_rows_and_reimport(store, tmp_path: Path):
    tiny_image(tmp_path / "r.png", seed=1)
    tiny_image(tmp_path / "o1.png", seed=2)
    tiny_image(tmp_path / "o2.png", seed=3)
    tiny_mask(tmp_path / "m.png")
    tiny_mask(tmp_path / "small_mask.png", size=(8, 8))
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    rows = [
        {
            "ref": "r.png",
            "ref_mask": "m.png",
            "out": "o1.png",
            "out_mask": "small_mask.png",
            "prompt": "a dog",
            "subject": "dog",
            "key": "a",
        },
        {"ref": "r.png", "out": "broken.png", "prompt": "a dog", "subject": "dog", "key": "b"},
        {"ref": "r.png", "out": "o2.png", "prompt": "a dog running", "subject": "dog"},
    ]
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows))
    first = _import(store, "m", "manifest", manifest)
    assert (first.added_samples, first.skipped) == (2, 1)
    assert str(first.problems[0]).startswith("m.jsonl:2: unreadable image or mask: image broken.png")
    assert len(first.warnings) == 1 and "small_mask.png is 8x8 but its image is 24x16" in first.warnings[0]
    sample = store.samples.get_by_key("m", "a")
    masks = store.masks.current(sample.id)
    assert set(masks) == {("reference", 0), ("output", 0)} and masks["output", 0].source == "imported"

    again = _import(store, "m", "manifest", manifest)
    assert (again.added_samples, again.existing_samples, again.skipped) == (0, 2, 1)
    assert store.masks.history(sample.id, "output", 0)[-1].version == 1
    text = "\n".join(again.lines())
    assert (
        "samples 0 imported, 2 already present" in text and "skipped, by reason: unreadable image or mask (1)" in text
    )


def test_a_reimport_counts_the_masks_it_adds(store, tmp_path: Path):
    """Samples imported without masks, then the same layout with masks: no sample is new, every mask is."""
    from dataset_trees import write_manifest

    first = _import(store, "m", "manifest", write_manifest(tmp_path / "bare", subjects=1, outputs=3, masks=False))
    assert (first.added_samples, first.added_masks, first.existing_masks) == (3, 0, 0)
    assert "masks" not in first.lines()[0]
    with_masks = write_manifest(tmp_path / "bare", subjects=1, outputs=3, masks=True)
    again = _import(store, "m", "manifest", with_masks)
    assert (again.added_samples, again.existing_samples, again.added_masks, again.existing_masks) == (0, 3, 6, 0)
    assert "samples 0 imported, 3 already present; masks 6 imported, 0 already present;" in again.lines()[0]
    third = _import(store, "m", "manifest", with_masks)
    assert (third.added_masks, third.existing_masks) == (0, 6)


def test_changed_content_under_a_stored_key_is_refused(store, tmp_path: Path):
    tiny_image(tmp_path / "r.png", seed=1)
    tiny_image(tmp_path / "o.png", seed=2)
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"ref": "r.png", "out": "o.png", "prompt": "a", "subject": "dog", "key": "k"}))
    _import(store, "m", "manifest", manifest)
    manifest.write_text(json.dumps({"ref": "r.png", "out": "o.png", "prompt": "b", "subject": "dog", "key": "k"}))
    summary = _import(store, "m", "manifest", manifest)
    assert summary.added_samples == 0 and summary.reasons() == [("refused by the database", 1)]


def test_dreambooth_real_photos(store, shared_data: Path, tmp_path: Path):
    outputs = tmp_path / "out"
    for i in range(3):
        tiny_image(outputs / "sd" / "cat" / f"{i}_0.png", seed=i)
    summary = _import(store, "dreambooth", "dreambooth", shared_data / "dreambooth", outputs=outputs)
    assert summary.added_samples == 3 and summary.problems == []
    sample = store.samples.get_by_key("dreambooth", "sd/cat-2_0")
    assert sample.prompt == "a cat on the beach" and sample.info["generation_prompt"] == "a sks cat on the beach"
    assert len(sample.references) == len(list((shared_data / "dreambooth/dataset/cat").glob("*.jpg")))
    assert _import(store, "dreambooth", "dreambooth", shared_data / "dreambooth", outputs=outputs).added_samples == 0
