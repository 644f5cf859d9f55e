"""The record use case: one path for the app's Save, batch and imported judge values, one mask rule, one
notion of done (both ways between the app and batch), idempotent by content."""

from __future__ import annotations

import math

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.metrics.sample import MetricValue
from masc_ui.workbench import Workbench, build_workbench
from masc_ui.workbench.batch import BatchOptions
from masc_ui.workbench.examples import load_example
from masc_ui.workbench.recorder import masks_used

SCORED = ("cp", "pf", "clip_i", "clip_i_seg", "dino_i")
"""Metrics that need reference masks, the output mask, or none."""


def _example_sample(wb: Workbench, name: str = "cat-on-grass"):
    ex = load_example(name)
    return wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)


def test_the_mask_rule_comes_from_the_registry():
    slots = [("reference", 0), ("reference", 1), ("output", 0)]
    assert masks_used("cp", slots) == (("reference", 0), ("reference", 1))
    assert masks_used("pf", slots) == masks_used("clip_i_seg", slots) == (("output", 0),)
    assert masks_used("clip_i", slots) == masks_used("dino_i", slots) == ()
    assert masks_used("gpt4o_cp", slots) == ()  # an imported judge, outside the registry
    assert masks_used("cp", [("output", 0)]) == ()


def test_a_value_saved_in_the_app_is_done_for_batch(demo_settings):
    wb = build_workbench(demo_settings)
    saved = wb.saving.save(_example_sample(wb), user="alice", dataset="d", names=list(SCORED))
    assert saved.new_values == len(SCORED) and saved.new_masks == 2
    store = wb.database.store
    masks = store.masks.current(saved.sample_id)
    stored = {v.metric: v for v in store.metrics.history(saved.sample_id)}
    assert stored["cp"].mask_version_ids == (masks["reference", 0].id,)
    assert stored["pf"].mask_version_ids == stored["clip_i_seg"].mask_version_ids == (masks["output", 0].id,)
    assert stored["clip_i"].mask_version_ids == stored["dino_i"].mask_version_ids == ()
    assert {m.created_by for m in masks.values()} == {"alice"}
    summary = build_workbench(wb.settings, store=store, models=wb.models).batch.run(BatchOptions("d", SCORED))
    assert summary.already_done == {m: 1 for m in SCORED}
    assert summary.scored_samples == 0 and summary.values_written == 0
    wb.close()


def test_a_value_computed_by_batch_is_done_for_the_app(demo_settings):
    """Batch scores a stored sample; opening it in the app and saving it again adds nothing."""
    wb = build_workbench(demo_settings)
    first = wb.saving.save(_example_sample(wb, "coffee-on-bricks"), user="alice", dataset="d", names=["clip_i"])
    store = wb.database.store
    summary = build_workbench(wb.settings, store=store, models=wb.models).batch.run(BatchOptions("d", SCORED))
    assert summary.values_written == len(SCORED) - 1  # clip_i was saved from the app
    opened = wb.samples.open(first.sample_id, user="bob")
    assert opened.refs[0].sha256 == store.samples.get(first.sample_id).references[0]  # one identity
    sample = wb.scoring.make_sample(
        opened.refs, opened.out, opened.prompt, opened.subject, opened.ref_masks, opened.out_mask
    )
    again = wb.saving.save(sample, user="bob", dataset="d", names=list(SCORED), mask_sources=opened.mask_sources)
    assert again.sample_id == first.sample_id
    assert (again.new_masks, again.new_values) == (0, 0) and "nothing changed" in again.message
    wb.close()


def test_save_needs_prompt_subject_and_dataset(demo_settings):
    wb = build_workbench(demo_settings)
    sample = _example_sample(wb)
    for field, message in (({"prompt": None}, "prompt is empty"), ({"subject": None}, "subject name is empty")):
        import dataclasses

        with pytest.raises(InputError, match=message):
            wb.recorder.save(dataclasses.replace(sample, **field), {}, user=None, dataset="d")
    with pytest.raises(InputError, match="dataset name is empty"):
        wb.recorder.save(sample, {}, user=None, dataset=" ")
    assert wb.database.datasets() == []
    wb.close()


def test_soft_masks_are_stored_at_the_metrics_threshold(demo_settings):
    """A soft mask (weights) is stored with foreground = weight >= 0.5, the same rule everywhere masks are
    stored (`mask_to_png`)."""
    wb = build_workbench(demo_settings)
    ex = load_example("cat-on-grass")
    soft = np.where(ex.out_mask, 0.75, 0.25).astype(np.float32)
    sample = wb.scoring.make_sample([ex.ref], ex.out, ex.prompt, ex.subject, [None], soft)
    saved = wb.recorder.save(sample, {"pf": MetricValue("pf", math.nan, "test")}, user=None, dataset="d")
    store = wb.database.store
    from masc_ui.imaging import load_mask_file

    stored = load_mask_file(store.images.read(store.masks.current(saved.sample_id)["output", 0].sha256))
    assert np.array_equal(stored, ex.out_mask)
    wb.close()
