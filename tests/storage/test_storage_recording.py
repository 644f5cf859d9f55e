"""`store.recording.record`: a scored sample's images, sample, masks and values in one transaction, idempotent by
content, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from storage import ImageInput, InvalidInput, MaskInput, MaskRef, NotFound, RecordInput, SampleInput, Store, ValueInput
from storage.blobs import sha256_hex

PROV = {"model_id": "m", "revision": "r", "params": {"k": 1}, "code_version": "c1", "device": "cpu", "dtype": "float32"}


def _item(png, *, seed: int = 0, values=(), masks=(), dataset: str = "d") -> RecordInput:
    ref, out = png(100 + seed), png(200 + seed)
    sample = SampleInput(dataset, "dog", references=(sha256_hex(ref),), output=sha256_hex(out), prompt="a dog")
    return RecordInput(
        sample, images=(ImageInput(ref, "image/png"), ImageInput(out)), masks=tuple(masks), values=tuple(values)
    )


def _counts(store: Store) -> dict[str, int]:
    import sqlalchemy as sa

    from storage import schema

    tables = {
        "samples": schema.Sample,
        "blobs": schema.Blob,
        "masks": schema.MaskVersion,
        "values": schema.MetricValue,
        "value_masks": schema.MetricValueMask,
    }
    return store.tx.read(
        lambda s: {name: s.scalar(sa.select(sa.func.count()).select_from(table)) for name, table in tables.items()}
    )


def test_one_record_stores_everything_and_again_nothing(store: Store, png):
    mask = png(7)
    ref_mask = MaskRef("output", 0, sha256_hex(mask))
    item = _item(
        png,
        masks=[MaskInput("output", 0, mask, "drawn", created_by="alice")],
        values=[ValueInput("pf", 0.5, PROV, masks=(ref_mask,)), ValueInput("clip_i", 0.25, PROV)],
    )
    (first,) = store.recording.record([item])
    assert first.new_masks == 1 and len(first.new_values) == 2 and first.sample.prompt == "a dog"
    current = store.masks.current(first.sample.id)
    assert current["output", 0].created_by == "alice"
    pf, clip_i = first.new_values
    assert pf.mask_version_ids == (current["output", 0].id,) and clip_i.mask_version_ids == ()
    before = _counts(store)
    (again,) = store.recording.record([item])
    assert again.sample.id == first.sample.id and again.new_masks == 0 and again.new_values == ()
    assert _counts(store) == before
    assert store.images.media_type(first.sample.references[0]) == "image/png"


def test_a_computed_value_already_recorded_with_the_same_masks_is_not_added_again(store: Store, png):
    """Same provenance and masks = the same measurement, even when float rounding of another batch shape moved
    it; a new mask makes it new; an imported (external) value is added when its number changed."""
    (first,) = store.recording.record([_item(png, values=[ValueInput("clip_i", 0.25, PROV)])])
    sid = first.sample.id
    (rounded,) = store.recording.record([RecordInput(sid, values=(ValueInput("clip_i", 0.25 + 1e-7, PROV),))])
    assert rounded.new_values == ()
    external = {**PROV, "code_version": "external"}
    store.recording.record([RecordInput(sid, values=(ValueInput("gpt_cp", 3.0, external),))])
    (same,) = store.recording.record([RecordInput(sid, values=(ValueInput("gpt_cp", 3.0, external),))])
    (changed,) = store.recording.record([RecordInput(sid, values=(ValueInput("gpt_cp", 2.0, external),))])
    assert same.new_values == () and [v.value for v in changed.new_values] == [2.0]
    (failed,) = store.recording.record([RecordInput(sid, values=(ValueInput("dino_i", None, PROV, "error: X"),))])
    (retried,) = store.recording.record([RecordInput(sid, values=(ValueInput("dino_i", 0.75, PROV),))])
    assert len(failed.new_values) == 1 and [v.value for v in retried.new_values] == [0.75]


def test_a_new_mask_is_a_new_version_and_values_name_the_one_they_used(store: Store, png):
    old_mask, new_mask = png(7), png(8)
    (first,) = store.recording.record(
        [
            _item(
                png,
                masks=[MaskInput("output", 0, old_mask, "sam")],
                values=[ValueInput("pf", 0.5, PROV, masks=(MaskRef("output", 0, sha256_hex(old_mask)),))],
            )
        ]
    )
    sid = first.sample.id
    (second,) = store.recording.record(
        [
            RecordInput(
                sid,
                masks=(MaskInput("output", 0, new_mask, "drawn"),),
                values=(ValueInput("pf", 0.6, PROV, masks=(MaskRef("output", 0, sha256_hex(new_mask)),)),),
            )
        ]
    )
    assert second.new_masks == 1 and len(second.new_values) == 1
    history = store.masks.history(sid, "output")
    assert [m.version for m in history] == [1, 2]
    assert store.metrics.history(sid, "pf")[1].mask_version_ids == (history[1].id,)
    # a value computed earlier with the old mask (e.g. by batch) names that version, not the current one
    (late,) = store.recording.record(
        [RecordInput(sid, values=(ValueInput("cp", 0.1, PROV, masks=(MaskRef("output", 0, sha256_hex(old_mask)),)),))]
    )
    assert late.new_values[0].mask_version_ids == (history[0].id,)


def test_all_or_nothing(store: Store, png):
    """A value naming a mask that is stored nowhere fails the whole call: no sample, no images, no masks."""
    before = _counts(store)
    bad = _item(
        png,
        masks=[MaskInput("output", 0, png(7), "drawn")],
        values=[ValueInput("pf", 0.5, PROV, masks=(MaskRef("reference", 0, sha256_hex(png(9))),))],
    )
    good = _item(png, seed=1, values=[ValueInput("clip_i", 0.5, PROV)])
    with pytest.raises(InvalidInput, match="names a reference 0 mask .* not stored"):
        store.recording.record([good, bad])
    assert _counts(store) == before


def test_bad_items_are_refused_before_anything_is_written(store: Store, png):
    with pytest.raises(InvalidInput, match="record item 0: .*prompt"):
        store.recording.record([RecordInput(SampleInput("d", "dog", references=("a" * 64,), output="b" * 64))])
    with pytest.raises(InvalidInput, match="value 0 .*value is None but no reason"):
        store.recording.record([_item(png, values=[ValueInput("pf", None, PROV)])])
    with pytest.raises(InvalidInput, match="mask must be PNG bytes"):
        store.recording.record([_item(png, masks=[MaskInput("output", 0, b"not a png", "drawn")])])
    with pytest.raises(NotFound, match="sample #999"):
        store.recording.record([RecordInput(999, values=(ValueInput("clip_i", 0.5, PROV),))])
    with pytest.raises(InvalidInput, match="list of storage.RecordInput"):
        store.recording.record(_item(png))  # type: ignore[arg-type]
    assert _counts(store)["samples"] == 0
