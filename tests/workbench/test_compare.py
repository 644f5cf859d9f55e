"""The compare use case: two stored outputs of one reference, their latest metric values and differences, and both
outputs' MaSC patch maps drawn on the same colour scales (demo weights)."""

from __future__ import annotations

import numpy as np
import pytest

from masc_ui import overlays
from masc_ui.errors import InputError
from masc_ui.workbench import build_workbench
from masc_ui.workbench.examples import load_example

METRICS = ["cp", "pf", "clip_i", "dino_i"]


@pytest.fixture()
def saved(demo_settings):
    """Two outputs (the cat and the coffee cup) of the cat's reference, saved with METRICS; a third sample of
    another reference."""
    wb = build_workbench(demo_settings)
    cat, cup = load_example("cat-on-grass"), load_example("coffee-on-bricks")
    ids = []
    for method, out, out_mask in (("a", cat.out, cat.out_mask), ("b", cup.out, cup.out_mask)):
        sample = wb.scoring.make_sample([cat.ref], out, cat.prompt, cat.subject, [cat.ref_mask], out_mask)
        ids.append(wb.saving.save(sample, user="admin", dataset="d", method=method, names=METRICS).sample_id)
    other = wb.scoring.make_sample([cup.ref], cup.out, cup.prompt, cup.subject, [cup.ref_mask], cup.out_mask)
    ids.append(wb.saving.save(other, user="admin", dataset="d", method="a", names=["clip_i"]).sample_id)
    yield wb, ids
    wb.close()


def test_two_outputs_side_by_side(saved, monkeypatch):
    wb, (left_id, right_id, _) = saved
    drawn = []
    real_heatmap = overlays.heatmap

    def spy(image, grid, *, lo, hi, title, opacity=0.6):
        drawn.append((title, lo, hi))
        return real_heatmap(image, grid, lo=lo, hi=hi, title=title, opacity=opacity)

    monkeypatch.setattr(overlays, "heatmap", spy)
    result = wb.compare.compare(left_id, right_id, user="admin")
    store = wb.database.store
    left_values, right_values = store.metrics.latest(left_id), store.metrics.latest(right_id)
    assert [r.metric for r in result.rows] == METRICS  # registry order, every stored metric of either side
    for row in result.rows:
        assert row.left == pytest.approx(left_values[row.metric].value)
        assert row.right == pytest.approx(right_values[row.metric].value)
        assert row.difference == pytest.approx(row.left - row.right)
        assert row.better == ("left" if row.left > row.right else "right")  # every one is higher-is-better
    assert (result.left.method, result.right.method) == ("a", "b")
    assert result.left.out.sha256 == store.samples.get(left_id).output
    assert [r.sha256 for r in result.refs] == list(store.samples.get(left_id).references)
    # both sides' maps: present, and every cosine map of both on one range, PF attention on another
    for side in (result.left, result.right):
        e = side.explanation
        assert e.cp_ref[0] is not None and e.out_best is not None and e.lines is not None
        assert e.pf_attention is not None
    cosine = {(lo, hi) for title, lo, hi in drawn if not title.startswith("PF")}
    attention = {(lo, hi) for title, lo, hi in drawn if title.startswith("PF")}
    assert len(drawn) == 6 and cosine == {result.scales.cosine} and attention == {result.scales.pf}
    # the shared range spans both outputs' maps, computed again here from the engine's maps
    maps = [
        r.maps
        for r in wb.scoring.masc_engine().score_many(
            [wb.scoring.make_sample(*_pieces(wb, i)) for i in (left_id, right_id)], return_maps=True
        )
    ]
    values = np.concatenate(
        [np.concatenate([m.cp_ref[0].ravel(), m.out_best.ravel(), [c[3] for c in m.correspondences]]) for m in maps]
    )
    values = values[np.isfinite(values)]
    assert result.scales.cosine == pytest.approx((values.min(), values.max()), abs=1e-6)
    assert result.scales.pf == pytest.approx((0.0, max(float(m.pf_attention.max()) for m in maps)), abs=1e-6)
    headers, rows = result.table()
    assert headers[0] == "metric" and [r[0] for r in rows] == ["MaSC CP", "MaSC PF", "CLIP-I", "DINO-I"]


def _pieces(wb, sample_id):
    s = wb.samples.open(sample_id, user="admin")
    return s.refs, s.out, s.prompt, s.subject, s.ref_masks, s.out_mask


def test_a_metric_missing_on_one_side_and_partners(saved, demo_settings):
    wb, (left_id, right_id, other_id) = saved
    store = wb.database.store
    store.metrics.record_external(left_id, "judge", 3.0, source="test")
    result = wb.compare.compare(right_id, left_id, user="admin")
    judge = next(r for r in result.rows if r.metric == "judge")
    assert (judge.left, judge.right, judge.difference, judge.better) == (None, 3.0, None, None)
    assert judge.left_reason == "not computed yet" and result.rows[-1].metric == "judge"
    assert wb.compare.partners(left_id, user="admin") == [(f"#{right_id} b", right_id)]
    assert wb.compare.partners(other_id, user="admin") == []


def test_refusals(saved):
    wb, (left_id, right_id, other_id) = saved
    with pytest.raises(InputError, match="two different outputs"):
        wb.compare.compare(left_id, left_id, user="admin")
    with pytest.raises(InputError, match="different reference images"):
        wb.compare.compare(left_id, other_id, user="admin")
    ratings_only = wb.database.store.samples.add("d", subject="cat", method="c", external_key="no-images")
    with pytest.raises(InputError, match="ratings-only"):
        wb.compare.compare(left_id, ratings_only.id, user="admin")
