"""Batch scoring on tiny demo checkpoints: what is stored, resumption, failures, mask modes, sharding."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, write_manifest  # noqa: E402

from masc_ui.errors import InputError  # noqa: E402
from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.segmentation.masks import mask_from_png  # noqa: E402
from masc_ui.workbench import build_workbench
from masc_ui.workbench.batch import BatchOptions  # noqa: E402
from storage import open_store  # noqa: E402

METRICS = ("cp", "pf", "clip_i")


@pytest.fixture()
def store(tmp_path: Path):
    with open_store(None, tmp_path / "data") as s:
        yield s


@pytest.fixture(scope="module")
def models() -> ModelRegistry:
    return ModelRegistry()


def _values(store, dataset: str = "d") -> dict[tuple[int, str], list]:
    out: dict[tuple[int, str], list] = {}
    for sample in store.samples.list(dataset):
        for v in store.metrics.history(sample.id):
            out.setdefault((sample.id, v.metric), []).append(v)
    return out


def test_scores_everything_once_with_masks_and_provenance(store, demo_settings, models, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m"))
    seen = []
    summary = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", METRICS, batch_size=4), on_start=seen.append
    )
    assert seen == [6] and summary.scored_samples == 6 and summary.values_written == 18 and not summary.failures
    values = _values(store)
    assert len(values) == 18 and all(len(v) == 1 for v in values.values())
    sample = store.samples.get_by_key("d", "toy0-1")
    masks = store.masks.current(sample.id)
    cp, pf, clip_i = (values[sample.id, m][0] for m in METRICS)
    assert cp.mask_version_ids == (masks["reference", 0].id,)
    assert pf.mask_version_ids == (masks["output", 0].id,)
    assert clip_i.mask_version_ids == ()
    assert cp.value is not None and -1 <= cp.value <= 1 and cp.provenance.model_id.endswith("siglip2-naflex")
    assert cp.provenance.params["fg_threshold"] == 0.5 and cp.provenance.device == "cpu"
    assert pf.extras["prompt_text"] == "a photo of on a table" and pf.extras["prompt_stripped"] is True

    again = build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", METRICS))
    assert again.scored_samples == 0 and again.values_written == 0
    assert again.already_done == {"cp": 6, "pf": 6, "clip_i": 6}
    assert "scored now: 0 samples" in "\n".join(again.lines())


def test_limit_then_resume_computes_nothing_twice(store, demo_settings, models, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m"))
    first = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", METRICS, batch_size=2, limit=3)
    )
    assert first.stopped_early and first.scored_samples == 3
    rest = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", METRICS, batch_size=2)
    )
    assert rest.scored_samples == 3 and rest.already_done == {"cp": 3, "pf": 3, "clip_i": 3}
    assert all(len(v) == 1 for v in _values(store).values()) and len(_values(store)) == 18


def test_new_mask_makes_only_its_metric_stale(store, demo_settings, models, tmp_path):
    import numpy as np

    from masc_ui.segmentation.masks import mask_to_png

    import_manifest(store, "d", write_manifest(tmp_path / "m", subjects=1, outputs=2))
    build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", METRICS))
    sample = store.samples.get_by_key("d", "toy0-0")
    mask = np.zeros((48, 64), bool)
    mask[10:30, 10:40] = True
    store.masks.add(sample.id, "output", 0, mask_to_png(mask), source="drawn")
    summary = build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", METRICS))
    assert summary.values_written == 1 and summary.already_done == {"cp": 2, "pf": 1, "clip_i": 2}
    assert len(store.metrics.history(sample.id, "pf")) == 2


def test_samples_without_masks_are_reported_not_stored(store, demo_settings, models, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=2))
    summary = build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", METRICS))
    assert summary.values_written == 2
    assert dict(summary.lacking_inputs) == {"cp needs ref_masks[0]": 2, "pf needs out_mask": 2}
    assert {m for _, m in _values(store)} == {"clip_i"}
    none = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", ("cp", "clip_i"), masks="none")
    )
    assert none.values_written == 0 and dict(none.lacking_inputs) == {"cp needs ref_masks[0]": 2}


def test_a_failing_sample_is_recorded_and_the_rest_continue(store, demo_settings, models, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m"))
    broken = store.samples.get_by_key("d", "toy1-2")
    store.blobs.path(broken.output).write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    summary = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", METRICS, batch_size=3)
    )
    assert [sid for sid, _ in summary.failures] == [broken.id]
    assert summary.failures[0][1].startswith("error: ")
    values = _values(store)
    assert len(values) == 18
    failed = [values[broken.id, m][0] for m in METRICS]
    assert all(v.value is None and v.reason.startswith("error: ") for v in failed)
    ok = [v[0] for (sid, _), v in values.items() if sid != broken.id]
    assert all(v.value is not None for v in ok)
    assert (
        build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", METRICS)).values_written
        == 0
    )
    retry = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", METRICS, retry_failed=True)
    )
    assert retry.scored_samples == 1 and len(retry.failures) == 1


def _confident(settings):
    """Thresholds at 0: the tiny random SAM 3 then finds masks that are not doubtful."""
    return settings.replace(text_seg_threshold=0.0, text_seg_min_fraction=0.0)


def test_text_masks_made_stored_and_reused(store, demo_settings, models, tmp_path):
    demo_settings = _confident(demo_settings)
    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=2))
    opts = BatchOptions("d", ("cp", "pf"), masks="text", store_masks=True)
    summary = build_workbench(demo_settings, store=store, models=models).batch.run(opts)
    assert summary.masks_made == 4 and summary.values_written == 4  # ref segmented once per sample slot
    sample = store.samples.get_by_key("d", "toy0-0")
    masks = store.masks.current(sample.id)
    assert {m.source for m in masks.values()} == {"text"} and masks["output", 0].params["text"] == "toy0"
    cp = store.metrics.history(sample.id, "cp")[0]
    assert cp.mask_version_ids == (masks["reference", 0].id,)
    assert build_workbench(demo_settings, store=store, models=models).batch.run(opts).values_written == 0
    stored = build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", ("cp", "pf")))
    assert stored.values_written == 0  # the stored text masks are the current masks


def test_doubtful_text_masks_are_neither_current_nor_scored_with(store, demo_settings, models, tmp_path):
    """The app's rule: a doubtful mask (the tiny SAM 3 at the default threshold finds nothing) is only offered, never
    applied; batch with --store-masks keeps each as a proposal (never current, scored with by no metric), once,
    and counts them."""
    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=2))
    opts = BatchOptions("d", ("cp", "pf", "clip_i"), masks="text", store_masks=True)
    summary = build_workbench(demo_settings, store=store, models=models).batch.run(opts)
    assert summary.masks_made == 4 and summary.doubtful_masks == 4 and not summary.failures
    samples = store.samples.list("d")
    assert all(store.masks.current(s.id) == {} for s in samples)
    assert {m for _, m in _values(store)} == {"clip_i"}
    assert dict(summary.lacking_inputs) == {
        "cp needs ref_masks[0] (text mask doubtful, not applied: ref_masks[0])": 2,
        "pf needs out_mask (text mask doubtful, not applied: out_mask)": 2,
    }
    proposals = store.masks.proposals_for([s.id for s in samples])
    assert {(sid, slot) for sid, by_slot in proposals.items() for slot in by_slot} == {
        (s.id, slot) for s in samples for slot in (("reference", 0), ("output", 0))
    }
    one = proposals[samples[0].id]["output", 0]
    assert one.proposal and one.source == "text" and one.params["doubtful"] and one.params["text"] == "toy0"
    assert summary.proposals_stored == 4
    assert "not applied: 4, 4 newly kept as proposals to check" in "\n".join(summary.lines())
    again = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", ("cp", "pf"), masks="text", store_masks=True)
    )
    assert again.doubtful_masks == 4 and again.proposals_stored == 0  # the same proposals are not kept twice
    assert [len(store.masks.history(s.id, "output", 0)) for s in samples] == [1, 1]
    unstored = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", ("cp",), masks="text")
    )
    assert "not applied: 4, not stored" in "\n".join(unstored.lines())


def test_an_opened_sample_offers_its_stored_proposals(store, demo_settings, models, tmp_path):
    """Browse's Open hands the Score tab each stored proposal still offered, at its image's size, with its reason."""
    small = demo_settings.replace(text_seg_threshold=0.0, text_seg_min_fraction=1.0)  # found, but too small
    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=1))
    wb = build_workbench(small, store=store, models=models)
    summary = wb.batch.run(BatchOptions("d", ("cp", "pf"), masks="text", store_masks=True))
    assert summary.doubtful_masks == summary.proposals_stored == 2
    sample = store.samples.get_by_key("d", "toy0-0")
    opened = wb.samples.open(sample.id, user=None)
    assert set(opened.proposals) == {"ref0", "out"} and opened.ref_masks == [None] and opened.out_mask is None
    kept = store.masks.proposals_for([sample.id])[sample.id]
    for target, slot, image in (("ref0", ("reference", 0), opened.refs[0]), ("out", ("output", 0), opened.out)):
        mask, why = opened.proposals[target]
        assert mask.shape == image.size[::-1] and mask.dtype == bool and mask.any()
        assert np.array_equal(mask, mask_from_png(store.blobs.path(kept[slot].sha256).read_bytes()) > 0)
        assert why.startswith("kept by the batch from the subject's name ('toy0'): ")


def test_text_masks_not_stored_get_their_own_provenance(store, demo_settings, models, tmp_path):
    demo_settings = _confident(demo_settings)
    import_manifest(store, "d", write_manifest(tmp_path / "m", masks=False, subjects=1, outputs=1))
    build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("d", ("pf",), masks="text"))
    sample = store.samples.get_by_key("d", "toy0-0")
    assert store.masks.current(sample.id) == {}
    pf = store.metrics.history(sample.id, "pf")[0]
    assert pf.provenance.params["text_masks"].endswith("sam3") and pf.mask_version_ids == ()


def test_shards_partition_the_dataset(store, demo_settings, models, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m"))
    a = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", ("clip_i",), process_index=0, num_processes=2)
    )
    b = build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("d", ("clip_i",), process_index=1, num_processes=2)
    )
    assert a.samples_in_shard + b.samples_in_shard == 6 and a.values_written + b.values_written == 6
    assert len(_values(store)) == 6


def test_dreambooth_identifier_token_reaches_neither_segmenter_nor_prompt(
    store, demo_settings, models, shared_data, tmp_path
):
    """DreamBooth's "sks" names the subject only to the fine-tuned model: the stored prompt (what raters read and
    text encoders get) leaves it out, PF strips the class, and SAM 3 is asked for the class alone."""
    import numpy as np
    from dataset_trees import tiny_image

    from masc_ui.datasets import read_layout
    from masc_ui.metrics.masc.strippers import strip_subject_from_prompt
    from masc_ui.segmentation import build_text_segmenter
    from masc_ui.segmentation.masks import mask_to_png
    from masc_ui.workbench.ingest import ingest

    tiny_image(tmp_path / "out" / "sd" / "dog" / "0_0.png", seed=1)
    ingest(store, "db", "dreambooth", read_layout("dreambooth", shared_data / "dreambooth", outputs=tmp_path / "out"))
    sample = store.samples.get_by_key("db", "sd/dog-0_0")
    assert sample.info["prompt_subject"] == "dog" and "sks" not in sample.prompt.split() and "dog" in sample.prompt
    out_mask = np.zeros((16, 24), bool)  # the generated image is 24x16
    out_mask[4:12, 6:18] = True
    store.masks.add(sample.id, "output", 0, mask_to_png(out_mask), source="drawn")
    real = build_text_segmenter(demo_settings, models)
    asked: list[str] = []

    class Recording:
        model_id = real.model_id
        provenance = real.provenance

        def segment(self, image, text, threshold=0.5, min_fraction=0.05):
            asked.append(text)
            return real.segment(image, text, threshold, min_fraction)

    build_workbench(demo_settings, store=store, models=models).batch.run(
        BatchOptions("db", ("cp", "pf"), masks="text"), segmenter=Recording()
    )
    assert asked and set(asked) == {"dog"}  # the references' masks, from the class alone
    (pf,) = store.metrics.history(sample.id, "pf")
    assert pf.value is not None and pf.extras["prompt_stripped"] is True
    assert pf.extras["prompt_text"] == strip_subject_from_prompt(sample.prompt, "dog", "regex")
    assert not {"sks", "dog"} & set(pf.extras["prompt_text"].split())


def test_bad_options_and_unknown_dataset(store, demo_settings, models):
    with pytest.raises(InputError, match="masks must be one of"):
        BatchOptions("d", ("cp",), masks="drawn")
    with pytest.raises(InputError, match="store_masks only applies"):
        BatchOptions("d", ("cp",), store_masks=True)
    with pytest.raises(InputError, match="batch size"):
        BatchOptions("d", ("cp",), batch_size=0)
    with pytest.raises(InputError, match="process index"):
        BatchOptions("d", ("cp",), process_index=2, num_processes=2)
    with pytest.raises(InputError, match="dataset 'nope' is not in the database"):
        build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("nope", ("cp",)))
    store.samples.ensure_dataset("empty")
    with pytest.raises(InputError, match="unknown metric"):
        build_workbench(demo_settings, store=store, models=models).batch.run(BatchOptions("empty", ("cpp",)))
