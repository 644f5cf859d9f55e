"""Batch stores the mask-sensitivity check with each mask-dependent value: the same metric with every mask eroded
and dilated, equal to the Score tab's check of that sample, under its own provenance (a rerun without it does not
replace it; asking for it scores values made without it again)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import import_manifest, write_manifest  # noqa: E402

from masc_ui.errors import InputError  # noqa: E402
from masc_ui.models.loaded_models import ModelRegistry  # noqa: E402
from masc_ui.workbench import build_workbench  # noqa: E402
from masc_ui.workbench.batch import BatchOptions  # noqa: E402
from storage import open_store  # noqa: E402


@pytest.fixture()
def store(tmp_path: Path):
    with open_store(None, tmp_path / "data") as s:
        yield s


def test_each_mask_dependent_value_carries_its_check(store, demo_settings, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m"))
    models = ModelRegistry()
    wb = build_workbench(demo_settings, store=store, models=models)
    plain = wb.batch.run(BatchOptions("d", ("cp", "clip_i"), batch_size=4))
    assert plain.values_written == 12 and plain.sensitivity_values == 0
    summary = wb.batch.run(BatchOptions("d", ("cp", "clip_i"), batch_size=4, mask_shifts=(2,)))
    # CP is scored again under its new provenance; CLIP-I uses no mask and is already done.
    assert summary.already_done == {"cp": 0, "clip_i": 6} and summary.sensitivity_values == 6
    assert "values stored with their mask-sensitivity check: 6" in summary.lines()
    sample = store.samples.get_by_key("d", "toy0-1")
    latest = store.metrics.latest_for([sample.id])[sample.id]
    cp = latest["cp"]
    check = cp.extras["mask_sensitivity"]
    assert cp.provenance.params["mask_sensitivity_px"] == [2] and check["shifts_px"] == [2]
    assert set(check["values"]) == {"eroded 2 px", "dilated 2 px"}
    assert "mask_sensitivity" not in latest["clip_i"].extras

    # The same numbers as the Score tab's check of this sample, computed one at a time.
    opened = wb.samples.open(sample.id, user=None)
    one = wb.scoring.make_sample(
        opened.refs, opened.out, opened.prompt, opened.subject, opened.ref_masks, opened.out_mask
    )
    report = wb.mask_sensitivity.run(one, ["cp"], user=None, shifts=(2,))
    assert report.metrics[0].stored == pytest.approx(cp.value, abs=1e-5)
    for label, value in report.metrics[0].values.items():
        assert check["values"][label] == pytest.approx(value, abs=1e-5)
    assert check["spread"] == pytest.approx(
        max([cp.value, *check["values"].values()]) - min([cp.value, *check["values"].values()])
    )

    again = wb.batch.run(BatchOptions("d", ("cp",), mask_shifts=(2,)))
    assert again.scored_samples == 0 and again.already_done == {"cp": 6}


def test_bad_shifts_are_refused_before_scoring():
    with pytest.raises(InputError, match="whole number of pixels from 0 to 64"):
        BatchOptions("d", ("cp",), mask_shifts=(99,))


def test_the_leaderboard_checks_each_checked_metric_for_mask_dependence(store, demo_settings, tmp_path):
    import_manifest(store, "d", write_manifest(tmp_path / "m"))
    wb = build_workbench(demo_settings, store=store, models=ModelRegistry())
    wb.batch.run(BatchOptions("d", ("cp", "clip_i"), batch_size=4, mask_shifts=(3,)))
    view = wb.leaderboard.view(user=None, dataset="d", criteria=[], n_boot=0)
    assert [d.metric for d in view.mask_dependence] == ["cp"]  # CLIP-I uses no mask: nothing to check
    found = view.mask_dependence[0]
    assert found.n_samples == 6 and set(found.groups) == {r.group for r in view.board.rows}
    md = view.render("md")
    assert "Mask dependence (the values' mask-sensitivity checks)" in md
    assert f"- {'⚠ ' if found.depends else ''}MaSC CP: the ranking of methods" in md
    assert "Mask dependence" not in view.render("csv")
