"""Rating guides in storage (SQLite and PostgreSQL): versions, examples and practice lists per dataset, practice
answers kept apart from ratings and answered once, practice samples out of the task queue, the guide tables in dump
and restore, and revision 0010 on top of 0009 (crowd studies): a downgrade refuses while guides exist."""

from __future__ import annotations

import pytest

from storage import InvalidInput, migrate


def _guided(store, add_sample):
    samples = [add_sample("ds") for _ in range(4)]
    store.samples.set_for_rating("ds", True)
    store.gold.mark(samples[0].id, "cp", 3, 4, note="the colour changed")
    store.guides.set_practice("ds", [samples[0].id])
    store.guides.set_guide("ds", "# Guide", practice_tasks=1, created_by="ann")
    store.guides.set_examples("ds", [(samples[1].id, 4, None, "same dog")])
    store.ratings.ensure_rater("zoe")
    store.guides.answer_practice("zoe", samples[0].id, {"cp": 2, "pf": 3})
    store.guides.mark_read("zoe", "ds", 1)
    return samples


def test_guides_keep_versions_and_lists_are_replaced_per_dataset(store, add_sample):
    a, b = add_sample("ds"), add_sample("other")
    assert store.guides.guide("ds") is None
    store.guides.set_guide("ds", "one")
    store.guides.set_guide("ds", "two", practice_skippable=True)
    store.guides.set_guide("other", "else")
    assert [(g.version, g.text) for g in store.guides.versions("ds")] == [(1, "one"), (2, "two")]
    assert store.guides.guide("ds").practice_skippable and store.guides.guide("ds", 1).text == "one"
    store.guides.set_examples("ds", [(a.id, 1, 2, None)])
    store.guides.set_examples("other", [(b.id, None, 4, "b")])
    store.guides.set_examples("ds", [])
    assert store.guides.examples("ds") == [] and [e.pf for e in store.guides.examples("other")] == [4]
    with pytest.raises(InvalidInput, match=f"sample #{b.id} is not in dataset 'ds'"):
        store.guides.set_examples("ds", [(b.id, 1, None, None)])
    with pytest.raises(InvalidInput, match="is not a gold task"):
        store.guides.set_practice("ds", [a.id])
    # one transaction: a refused guide leaves the examples and the versions as they were
    with pytest.raises(InvalidInput, match="asks for 1 task\\(s\\) but 0 practice sample"):
        store.guides.set_guide("other", "three", practice_tasks=1, examples=[(b.id, 0, 0, None)])
    assert [(e.cp, e.pf) for e in store.guides.examples("other")] == [(None, 4)]
    assert [g.text for g in store.guides.versions("other")] == ["else"]
    store.gold.mark(b.id, "pf", 1)
    made = store.guides.set_guide("other", "three", practice_tasks=1, examples=[(b.id, 0, 0, None)], practice=[b.id])
    assert made.version == 2 and store.guides.practice_samples("other") == [b.id]


def test_practice_answers_are_kept_apart_answered_once_and_out_of_the_queue(store, add_sample):
    samples = _guided(store, add_sample)
    with pytest.raises(InvalidInput, match="answered already"):
        store.guides.answer_practice("zoe", samples[0].id, {"cp": 4, "pf": 4})
    with pytest.raises(InvalidInput, match="is not a practice task"):
        store.guides.answer_practice("zoe", samples[1].id, {"cp": 4})
    assert [(a.criterion, a.score) for a in store.guides.practice_answers("zoe")] == [("cp", 2), ("pf", 3)]
    assert store.ratings.current(rater="zoe") == []
    progress = store.tasks.progress("zoe", "ds", gold_rate=0.5)
    assert progress.total == 3  # the practice sample is no real task, even with gold tasks handed out
    seen = set()
    while (task := store.tasks.next_task("zoe", "ds", gold_rate=0.5)) is not None:
        seen.add(task.sample.id)
        store.ratings.rate_sample("zoe", task.sample.id, {"cp": 3, "pf": 3})
    assert seen == {s.id for s in samples[1:]}
    assert store.guides.reading("zoe", "ds").version_read == 1
    # a practice sample whose gold marks are all removed leaves the practice round (no feedback to give)
    store.gold.mark(samples[0].id, "pf", 2)
    store.gold.unmark(samples[0].id, "cp")
    assert store.guides.practice_samples("ds") == [samples[0].id]
    store.gold.unmark(samples[0].id)
    assert store.guides.practice_samples("ds") == []
    assert store.guides.skip_practice("zoe", "ds").practice_skipped_at is not None


def test_dump_and_restore_carry_the_guide_tables(store, add_sample, make_store):
    _guided(store, add_sample)
    dumped = store.dumps.dump_dict(include_blobs=True)
    for table in ("rating_guides", "guide_examples", "practice_samples", "practice_answers", "guide_readings"):
        assert dumped["tables"][table]["rows"], table
    target = make_store("restored")
    target.dumps.restore(dumped)
    assert target.dumps.dump_dict(include_blobs=True) == dumped
    assert target.guides.guide("ds").text == "# Guide"


def test_downgrade_below_0010_refuses_while_guides_exist(store, add_sample):
    samples = _guided(store, add_sample)
    with pytest.raises(RuntimeError, match="cannot downgrade below revision 0010: the database holds rating guides"):
        migrate.downgrade(store.engine, "0009")
    assert migrate.current_revision(store.engine) == migrate.head_revision()
    assert store.guides.guide("ds").version == 1
    with store.engine.begin() as conn:
        for table in ("guide_readings", "practice_answers", "practice_samples", "guide_examples", "rating_guides"):
            conn.exec_driver_sql(f"DELETE FROM {table}")
    migrate.downgrade(store.engine, "0009")
    assert migrate.current_revision(store.engine) == "0009"
    assert [g.sample_id for g in store.gold.answers()] == [samples[0].id]
    migrate.upgrade(store.engine)
    assert migrate.current_revision(store.engine) == migrate.head_revision()
