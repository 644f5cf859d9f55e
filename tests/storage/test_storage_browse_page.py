"""Browse pages: every matching sample is reachable; sorting and paging happen over the whole selection."""

from __future__ import annotations

import pytest

from storage import InvalidInput

PROV = {"model_id": "m", "code_version": "1", "params": {}}


@pytest.fixture()
def many(store):
    """620 ratings-only samples of dataset `big` (more than one old 500-row cap), methods alternating."""
    items = [
        {"subject": f"s{i % 7}", "method": "even" if i % 2 == 0 else "odd", "external_key": f"k{i:04d}"}
        for i in range(620)
    ]
    return store.samples.add_many("big", items)


def test_pages_reach_every_sample_with_the_total(store, many):
    ids = [s.id for s in many]
    seen = []
    for offset in range(0, 700, 100):
        page = store.views.browse_page("big", limit=100, offset=offset)
        assert page.total == 620 and page.offset == offset
        seen += [r.sample.id for r in page.rows]
    assert seen == ids
    top = store.views.browse_page("big", sort="id", descending=True, limit=3)
    assert [r.sample.id for r in top.rows] == ids[::-1][:3]
    odd = store.views.browse_page("big", method="odd", limit=1000)
    assert odd.total == 310 and [r.sample.id for r in odd.rows] == ids[1::2]


def test_metric_and_rating_sorts_cover_the_whole_selection(store, many):
    late = many[-1].id  # beyond row 500: sorted first by its value
    store.metrics.record(late, "clip_t", 0.9, provenance=PROV)
    store.metrics.record(many[0].id, "clip_t", 0.1, provenance=PROV)
    store.metrics.record(many[3].id, "clip_t", 2.5e-9, provenance=PROV)
    store.metrics.record(many[3].id, "clip_t", 0.5, provenance=PROV)  # the newer value counts
    page = store.views.browse_page("big", sort="metric:clip_t", descending=True, limit=4)
    assert [r.sample.id for r in page.rows][:3] == [late, many[3].id, many[0].id]
    assert page.metrics == ["clip_t"] and page.total == 620
    up = store.views.browse_page("big", sort="metric:clip_t", limit=2)
    assert [r.sample.id for r in up.rows] == [many[0].id, many[3].id]
    store.ratings.ensure_rater("r1")
    store.ratings.ensure_rater("r2")
    store.ratings.rate_sample("r1", many[600].id, {"cp": 4, "pf": 1})
    store.ratings.rate_sample("r2", many[600].id, {"cp": 2, "pf": 1})
    store.ratings.rate_sample("r1", many[10].id, {"cp": 1, "pf": 0})
    best = store.views.browse_page("big", sort="mean:cp", descending=True, limit=2)
    assert [r.sample.id for r in best.rows] == [many[600].id, many[10].id]
    raters = store.views.browse_page("big", sort="raters", descending=True, limit=1)
    assert [r.sample.id for r in raters.rows] == [many[600].id]


def test_an_unknown_sort_key_is_refused(store, many):
    with pytest.raises(InvalidInput, match="cannot sort by 'colour'"):
        store.views.browse_page("big", sort="colour")
