"""Mask versions kept as proposals (schema revision 0007): never current, never scored with, offered while newer than
the image's current mask; a mask of the same bytes that is applied becomes current; the migration adds the flag
without changing any current mask and its downgrade deletes the proposals."""

from __future__ import annotations

import io

import numpy as np
import sqlalchemy as sa
from PIL import Image

from storage import migrate
from storage import schema as t


def _before_proposals() -> str:
    """The revision below the one that adds `mask_versions.proposal` (found by its title, whatever its number)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate.alembic_config())
    (found,) = [r for r in script.walk_revisions() if r.doc == "mask versions kept as proposals"]
    assert isinstance(found.down_revision, str)
    return found.down_revision


def _mask_png(seed: int, size: int = 8) -> bytes:
    pixels = (np.random.default_rng(seed).random((size, size)) > 0.5).astype(np.uint8) * 255
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def test_a_proposal_is_never_current_and_is_offered_until_a_newer_mask(store, add_sample):
    sample = add_sample()
    drawn = store.masks.add(sample.id, "reference", 0, _mask_png(1), source="drawn")
    proposal, added = store.masks.add_if_new(
        sample.id, "output", 0, _mask_png(2), source="text", params={"doubtful": "empty"}, proposal=True
    )
    assert added and proposal.proposal and proposal.version == 1
    assert store.masks.current(sample.id) == {("reference", 0): drawn}  # the output has no current mask
    assert store.masks.proposals_for([sample.id]) == {sample.id: {("output", 0): proposal}}
    again, added = store.masks.add_if_new(sample.id, "output", 0, _mask_png(2), source="text", proposal=True)
    assert not added and again == proposal  # a re-run proposes the same mask once
    # Applied (the same bytes, as a mask in use): a new current version; the proposal is no longer offered.
    applied, added = store.masks.add_if_new(sample.id, "output", 0, _mask_png(2), source="text")
    assert added and not applied.proposal and applied.version == 2
    assert store.masks.current(sample.id)[("output", 0)] == applied
    assert store.masks.proposals_for([sample.id]) == {}
    later, _ = store.masks.add_if_new(sample.id, "reference", 0, _mask_png(3), source="text", proposal=True)
    assert store.masks.current(sample.id)[("reference", 0)] == drawn  # a newer proposal replaces nothing
    assert store.masks.proposals_for([sample.id]) == {sample.id: {("reference", 0): later}}
    assert [m.proposal for m in store.masks.history(sample.id, "reference", 0)] == [False, True]


def test_a_mask_in_use_of_a_proposals_bytes_is_added_as_current(store, add_sample):
    sample = add_sample()
    store.masks.add_if_new(sample.id, "output", 0, _mask_png(4), source="text", proposal=True)
    current = store.masks.add(sample.id, "output", 0, _mask_png(4), source="drawn")
    assert not current.proposal and store.masks.current(sample.id)[("output", 0)] == current


def test_the_migration_keeps_current_masks_and_its_downgrade_deletes_proposals(store, add_sample):
    sample = add_sample()
    kept = store.masks.add(sample.id, "reference", 0, _mask_png(5), source="drawn")
    store.masks.add_if_new(sample.id, "output", 0, _mask_png(6), source="text", proposal=True)
    store.masks.add_if_new(sample.id, "reference", 0, _mask_png(7), source="text", proposal=True)
    engine = store.engine
    migrate.downgrade(engine, _before_proposals())
    with engine.connect() as c:
        rows = c.execute(sa.text("SELECT id, version FROM mask_versions ORDER BY id")).all()
        columns = {col["name"] for col in sa.inspect(c).get_columns("mask_versions")}
    assert [tuple(r) for r in rows] == [(kept.id, 1)] and "proposal" not in columns  # the highest is current
    migrate.upgrade(engine)
    with engine.connect() as c:
        flags = c.execute(sa.select(t.MaskVersion.id, t.MaskVersion.proposal)).all()
    assert [tuple(r) for r in flags] == [(kept.id, False)]
    assert store.masks.current(sample.id) == {("reference", 0): kept}
