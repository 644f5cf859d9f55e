"""Raters are looked up once per process (`storage.repo.rater_rows`): an answer and the read of the next task reuse
the row a read transaction saw, and a row seen only by a write transaction (which may still roll back) is not
remembered."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from storage import InvalidInput, NotFound


def _rater_lookups(store) -> list[str]:
    seen: list[str] = []

    def count(_conn, _cursor, statement, *_):
        if "FROM raters" in statement:
            seen.append(statement)

    sa.event.listen(store.tx.engine, "before_cursor_execute", count)
    return seen


def test_answers_and_next_tasks_look_the_rater_up_once(store, add_sample):
    samples = [add_sample() for _ in range(3)]
    store.ratings.ensure_rater("alice")
    lookups = _rater_lookups(store)
    store.ratings.rate_sample("alice", samples[0].id, {"cp": 3, "pf": 2})  # a write: looks up, remembers nothing
    assert len(lookups) == 1
    first = store.tasks.rater_screen("alice", overlap_k=3)[0]  # the first read remembers the row
    assert len(lookups) == 2
    for _ in range(2):
        store.ratings.rate_sample("alice", first.sample.id, {"cp": 1, "pf": 4})
        first = store.tasks.rater_screen("alice", overlap_k=3)[0]
    assert len(lookups) == 2
    assert {r.rater for r in store.ratings.current(sample_id=samples[0].id)} == {"alice"}


def test_unknown_raters_are_still_refused(store, add_sample):
    sample = add_sample()
    store.ratings.ensure_rater("alice")
    store.tasks.next_task("alice")
    for _ in range(2):
        with pytest.raises(NotFound, match="rater 'bob' does not exist"):
            store.tasks.next_task("bob")
        with pytest.raises(NotFound, match="rater 'bob' does not exist"):
            store.ratings.rate_sample("bob", sample.id, {"cp": 1, "pf": 1})


def test_a_rater_name_that_is_not_a_string_is_a_clear_error(store, add_sample):
    sample = add_sample()
    store.ratings.ensure_rater("alice")
    store.tasks.next_task("alice")
    with pytest.raises(InvalidInput, match="rater must be a string, got list"):
        store.tasks.next_task(["alice"])
    with pytest.raises(InvalidInput, match="rater must be a string, got list"):
        store.ratings.rate_sample(["alice"], sample.id, {"cp": 1, "pf": 1})
