"""Versioned masks and metric values with provenance: nothing overwritten, NaN as NULL + reason,
latest-with-current-masks, resumable `has_value`, bad input."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from storage import InvalidInput, MetricInput, NotFound, Provenance, provenance_key

PROV = {
    "model_id": "google/siglip2-so400m-patch16-naflex",
    "revision": "abc123",
    "params": {"max_patches": 1024, "threshold": 0.5},
    "code_version": "0.1.0+g1234",
    "device": "cpu",
    "dtype": "float32",
}


def test_masks_are_versioned(png, store, add_sample):
    sample = add_sample(n_refs=2)
    first = store.masks.add(sample.id, "reference", 1, png(50), source="drawn", created_by="alice")
    second = store.masks.add(sample.id, "reference", 1, png(51), source="sam", params={"points": [[1, 2]]})
    out = store.masks.add(sample.id, "output", 0, png(52), source="text", params={"prompt": "dog"})
    assert (first.version, second.version, out.version) == (1, 2, 1)
    assert store.masks.current(sample.id) == {("reference", 1): second, ("output", 0): out}
    assert store.masks.history(sample.id, "reference", 1) == [first, second]
    assert store.masks.get(first.id) == first
    assert store.images.read(second.sha256) == png(51)
    assert store.masks.current_for([sample.id, 12345]) == {sample.id: store.masks.current(sample.id)}


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (("output", 0), {"source": "magic"}, InvalidInput, "mask source 'magic'"),
        (("middle", 0), {"source": "drawn"}, InvalidInput, "image role 'middle'"),
        (("reference", 3), {"source": "drawn"}, NotFound, "no reference image at position 3"),
        (("output", -1), {"source": "drawn"}, InvalidInput, "position must be >= 0"),
        (("output", 0), {"source": "drawn", "params": [1]}, InvalidInput, "params must be a dict"),
    ],
)
def test_bad_masks(png, store, add_sample, args, kwargs, error, message):
    sample = add_sample()
    with pytest.raises(error, match=message):
        store.masks.add(sample.id, *args, png(60), **kwargs)
    assert store.masks.current(sample.id) == {}


def test_mask_must_be_png_and_sample_must_exist(png, store, add_sample):
    sample = add_sample()
    with pytest.raises(InvalidInput, match="PNG bytes"):
        store.masks.add(sample.id, "output", 0, b"\xff\xd8\xffjpeg", source="drawn")
    with pytest.raises(NotFound, match="sample #999"):
        store.masks.add(999, "output", 0, png(1), source="drawn")


def test_values_are_appended_with_full_provenance(store, add_sample):
    sample = add_sample()
    when = dt.datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone.utc)
    v1 = store.metrics.record(sample.id, "masc_cp", 0.25, provenance=PROV, extras={"per_ref": [0.25]}, computed_at=when)
    assert v1.provenance == Provenance(**PROV)
    assert v1.provenance_key == provenance_key(PROV) and len(v1.provenance_key) == 64
    assert v1.computed_at == when and v1.extras == {"per_ref": [0.25]}
    other = dict(PROV, params={"max_patches": 256, "threshold": 0.5})
    v2 = store.metrics.record(sample.id, "masc_cp", 0.5, provenance=other)
    assert v2.provenance_key != v1.provenance_key
    assert [v.value for v in store.metrics.history(sample.id)] == [0.25, 0.5]
    assert store.metrics.latest(sample.id)["masc_cp"].id == v2.id
    only_v1 = store.metrics.latest(sample.id, provenance_keys={"masc_cp": v1.provenance_key})
    assert only_v1["masc_cp"].id == v1.id


def test_provenance_key_ignores_code_version_and_device():
    assert provenance_key(PROV) == provenance_key(dict(PROV, code_version="9.9", device="cuda:3"))
    assert provenance_key(PROV) != provenance_key(dict(PROV, dtype="bfloat16"))
    assert provenance_key(PROV) != provenance_key(dict(PROV, revision="other"))


def test_nan_is_stored_as_null_with_reason(store, add_sample):
    sample = add_sample()
    a = store.metrics.record(sample.id, "clip_i_seg", float("nan"), provenance=PROV, reason="empty mask")
    b = store.metrics.record(sample.id, "dino_i", math.nan, provenance=PROV)
    c = store.metrics.record(
        sample.id, "pickscore", None, provenance=PROV, reason="prompt too long", extras={"ratio": float("inf")}
    )
    assert (a.value, a.reason) == (None, "empty mask")
    assert (b.value, b.reason) == (None, "value was NaN")
    assert c.extras == {"ratio": None}
    assert {k: v.value for k, v in store.metrics.latest(sample.id).items()} == {
        "clip_i_seg": None,
        "dino_i": None,
        "pickscore": None,
    }


def test_latest_and_has_value_follow_current_masks(png, store, add_sample):
    sample = add_sample()
    ref = store.masks.add(sample.id, "reference", 0, png(70), source="drawn")
    out = store.masks.add(sample.id, "output", 0, png(71), source="sam")
    key = provenance_key(PROV)
    assert not store.metrics.has_value(sample.id, "masc_cp", key)
    masked = store.metrics.record(sample.id, "masc_cp", 0.7, provenance=PROV, mask_version_ids=[ref.id, out.id])
    unmasked = store.metrics.record(sample.id, "clip_t", 0.3, provenance=PROV)
    assert masked.mask_version_ids == tuple(sorted([ref.id, out.id]))
    assert store.metrics.has_value(sample.id, "masc_cp", key)
    store.masks.add(sample.id, "output", 0, png(72), source="drawn")  # new mask: masc_cp is now stale
    assert not store.metrics.has_value(sample.id, "masc_cp", key)
    assert store.metrics.has_value(sample.id, "clip_t", key)
    assert set(store.metrics.latest(sample.id)) == {"clip_t"}
    assert store.metrics.latest(sample.id)["clip_t"] == unmasked
    assert store.metrics.history(sample.id, "masc_cp") == [masked]  # kept, never overwritten
    assert store.metrics.scored_samples("clip_t", key) == {sample.id}
    assert store.metrics.names() == ["clip_t", "masc_cp"]


def test_has_value_with_exact_masks(png, store, add_sample):
    """A value computed without masks does not count for a run that would now use a new mask."""
    sample = add_sample()
    key = provenance_key(PROV)
    store.metrics.record(sample.id, "masc_cp", 0.4, provenance=PROV)  # whole images, no mask yet
    mask = store.masks.add(sample.id, "output", 0, png(73), source="drawn")
    assert store.metrics.has_value(sample.id, "masc_cp", key)  # default rule: used masks all current
    assert not store.metrics.has_value(sample.id, "masc_cp", key, mask_version_ids=[mask.id])
    assert store.metrics.has_value(sample.id, "masc_cp", key, mask_version_ids=[])
    store.metrics.record(sample.id, "masc_cp", 0.6, provenance=PROV, mask_version_ids=[mask.id])
    assert store.metrics.scored_samples("masc_cp", key, mask_version_ids={sample.id: [mask.id]}) == {sample.id}


def test_record_many_is_all_or_nothing(store, add_sample):
    a, b = add_sample(), add_sample()
    items = [MetricInput(a.id, "clip_i", 0.1, PROV), MetricInput(b.id, "clip_i", 0.2, PROV)]
    assert [v.value for v in store.metrics.record_many(items)] == [0.1, 0.2]
    bad = items + [MetricInput(b.id, "clip_i", float("inf"), PROV)]
    with pytest.raises(InvalidInput, match="value is inf"):
        store.metrics.record_many(bad)
    with pytest.raises(NotFound, match="sample #999"):
        store.metrics.record_many(items + [MetricInput(999, "clip_i", 0.3, PROV)])
    assert len(store.metrics.history(a.id)) == 1 and len(store.metrics.history(b.id)) == 1


def test_masks_of_another_sample_are_refused(png, store, add_sample):
    a, b = add_sample(), add_sample()
    mask_b = store.masks.add(b.id, "output", 0, png(80), source="drawn")
    with pytest.raises(InvalidInput, match=f"belongs to sample #{b.id}"):
        store.metrics.record(a.id, "masc_cp", 0.5, provenance=PROV, mask_version_ids=[mask_b.id])
    with pytest.raises(InvalidInput, match="does not exist"):
        store.metrics.record(a.id, "masc_cp", 0.5, provenance=PROV, mask_version_ids=[12345])
    assert store.metrics.history(a.id) == []


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"value": None}, "no reason is given"),
        ({"value": "0.5"}, "value must be a float"),
        ({"value": True}, "value must be a float"),
        ({"metric": ""}, "metric must not be empty"),
        ({"provenance": {"model_id": "x"}}, "needs `code_version`"),
        ({"provenance": dict(PROV, colour="red")}, "unknown provenance keys"),
        ({"provenance": 3}, "provenance must be a Provenance or a dict"),
        ({"extras": {"a": object()}}, "JSON-serialisable"),
        ({"computed_at": dt.datetime(2025, 1, 1)}, "timezone-aware"),
    ],
)
def test_bad_metric_values(store, add_sample, kwargs, message):
    sample = add_sample()
    fields = dict(metric="masc_cp", value=0.5, provenance=PROV)
    fields.update(kwargs)
    with pytest.raises(InvalidInput, match=message):
        store.metrics.record(sample.id, fields.pop("metric"), fields.pop("value"), **fields)
    assert store.metrics.history(sample.id) == []


def test_external_metric_values(store, add_sample):
    sample = add_sample()
    v = store.metrics.record_external(
        sample.id, "gpt4o_cp", 3.5, source="gpt-4o", extras={"rationale": "the dog keeps its ears"}
    )
    assert v.provenance.model_id == "gpt-4o" and v.provenance.code_version == "external"
    assert store.metrics.latest(sample.id)["gpt4o_cp"].value == 3.5
