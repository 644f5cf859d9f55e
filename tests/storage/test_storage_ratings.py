"""Raters, ratings, history, external imports, task assignment and progress."""

from __future__ import annotations

import pytest

from storage import ExternalRating, InvalidInput, InvalidRating, NotFound


@pytest.fixture()
def rated(store, add_sample):
    samples = [add_sample() for _ in range(3)]
    store.ratings.ensure_rater("alice")
    return samples


def test_rate_and_edit_keeps_history(store, rated):
    sample = rated[0]
    first = store.ratings.rate("alice", sample.id, "cp", 2, seconds_spent=10.5, presentation_order=1)
    assert (first.score, first.status, first.revision, first.seconds_spent) == (2, "rated", 1, 10.5)
    same = store.ratings.rate("alice", sample.id, "cp", 2, seconds_spent=3.0)
    assert same.revision == 1  # saving the same score again is not an edit
    edited = store.ratings.rate("alice", sample.id, "cp", 4, seconds_spent=4.0, note="looked again")
    assert edited.id == first.id and edited.revision == 2 and edited.score == 4
    flagged = store.ratings.rate("alice", sample.id, "cp", None, status="flagged", note="broken image")
    assert (flagged.score, flagged.status, flagged.revision) == (None, "flagged", 3)
    history = store.ratings.history(first.id)
    assert [(h.revision, h.score, h.status) for h in history] == [
        (1, 2, "rated"),
        (2, 4, "rated"),
        (3, None, "flagged"),
    ]
    assert history[0].replaced_at == history[1].rated_at and history[-1].replaced_at is None
    assert history[0].presentation_order == 1 and history[1].presentation_order == 1
    assert [r.id for r in store.ratings.current(rater="alice")] == [first.id]


def test_rate_sample_sets_both_criteria_at_once(store, rated):
    out = store.ratings.rate_sample("alice", rated[1].id, {"cp": 3, "pf": 1}, seconds_spent=20)
    assert {c: r.score for c, r in out.items()} == {"cp": 3, "pf": 1}
    assert {r.criterion for r in store.ratings.current(sample_id=rated[1].id)} == {"cp", "pf"}
    assert len(store.ratings.current(dataset="ds")) == 2


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        (("cp", 5), {}, "integer from 0 to 4, got 5"),
        (("cp", -1), {}, "integer from 0 to 4, got -1"),
        (("cp", 2.5), {}, "integer from 0 to 4, got 2.5"),
        (("cp", True), {}, "integer from 0 to 4, got True"),
        (("cp", None), {}, "integer from 0 to 4, got None"),
        (("aesthetics", 3), {}, "criterion 'aesthetics' is unknown"),
        (("cp", 3), {"status": "maybe"}, "status 'maybe' is unknown"),
        (("cp", 3), {"status": "skipped"}, "has no score"),
    ],
)
def test_bad_ratings_are_refused(store, rated, args, kwargs, message):
    with pytest.raises(InvalidRating, match=message):
        store.ratings.rate("alice", rated[0].id, *args, **kwargs)
    assert store.ratings.current() == []


def test_bad_rating_context(store, rated):
    with pytest.raises(NotFound, match="sample #999 does not exist"):
        store.ratings.rate("alice", 999, "cp", 3)
    with pytest.raises(NotFound, match="rater 'bob' does not exist.*ensure_rater"):
        store.ratings.rate("bob", rated[0].id, "cp", 3)
    with pytest.raises(InvalidInput, match="seconds_spent"):
        store.ratings.rate("alice", rated[0].id, "cp", 3, seconds_spent=-1)
    with pytest.raises(InvalidInput, match="presentation_order"):
        store.ratings.rate("alice", rated[0].id, "cp", 3, presentation_order=0)
    with pytest.raises(InvalidRating, match="pf score"):  # one bad criterion: nothing of the sample written
        store.ratings.rate_sample("alice", rated[0].id, {"cp": 3, "pf": 9})
    assert store.ratings.current() == []


def test_external_ratings_import(store, rated):
    rows = [
        ExternalRating(rated[0].id, "cp", 3),
        ExternalRating(rated[0].id, "pf", 4),
        ExternalRating(rated[1].id, "cp", None, status="skipped"),
    ]
    assert store.ratings.import_external("group1", rows) == 3
    assert store.ratings.import_external("group1", rows) == 3  # re-import: no new revisions
    assert store.ratings.rater("group1").is_external
    current = store.ratings.current(rater="group1")
    assert [(r.sample_id, r.criterion, r.score, r.revision) for r in current] == [
        (rated[0].id, "cp", 3, 1),
        (rated[0].id, "pf", 4, 1),
        (rated[1].id, "cp", None, 1),
    ]
    with pytest.raises(InvalidRating, match=r"ratings\[1\]: cp score"):
        store.ratings.import_external("group2", [rows[0], ExternalRating(rated[2].id, "cp", 7)])
    with pytest.raises(NotFound, match="sample #999"):
        store.ratings.import_external("group2", [rows[0], ExternalRating(999, "cp", 1)])
    assert [r.username for r in store.ratings.raters()] == ["alice", "group1"]  # group2 not half-created


def test_order_is_random_but_fixed_per_rater_and_seed(store, add_sample):
    for _ in range(12):
        add_sample()
    for name in ("a", "b"):
        store.ratings.ensure_rater(name)
    first = store.tasks.next_task("a", "ds", seed=7)
    assert first == store.tasks.next_task("a", "ds", seed=7) and first.presentation_order == 1
    assert first.ratings == {}
    walks = {(name, seed): _walk(store.tasks, name, seed) for name in ("a", "b") for seed in (7, 8)}
    assert len(set(walks.values())) == 4  # each (rater, seed) has its own order
    assert all(sorted(w) == list(range(1, 13)) for w in walks.values())


def _walk(tasks, rater, seed):
    """Ids of the whole order `next_task` would walk for a rater who rates nothing (read-only)."""
    from storage.repo.tasks import _order_key

    first = tasks.next_task(rater, seed=seed).sample.id
    order = sorted(range(1, 13), key=lambda sid: _order_key(seed, rater, sid))
    assert order[0] == first
    return tuple(order)


def test_next_task_respects_overlap_k(store, add_sample):
    for _ in range(6):
        add_sample()
    for name in ("a", "b", "c"):
        store.ratings.ensure_rater(name)
    # a and b rate everything -> every sample has 2 complete ratings -> nothing left for c at K=2
    for name in ("a", "b"):
        while (task := store.tasks.next_task(name, "ds", overlap_k=2, seed=7)) is not None:
            store.ratings.rate_sample(
                name, task.sample.id, {"cp": 2, "pf": 3}, presentation_order=task.presentation_order
            )
    assert store.tasks.next_task("c", "ds", overlap_k=2, seed=7) is None
    assert store.tasks.next_task("c", "ds", overlap_k=3, seed=7) is not None
    assert store.tasks.progress("c", "ds", overlap_k=2) == (0, 0, 6)
    assert store.tasks.progress("c", "ds", overlap_k=3) == (0, 6, 6)
    assert store.tasks.progress("a", "ds", overlap_k=2) == (6, 6, 6)
    orders_a = sorted(r.presentation_order for r in store.ratings.current(rater="a") if r.criterion == "cp")
    assert orders_a == [1, 2, 3, 4, 5, 6]


def test_skipped_samples_do_not_count_as_complete(store, add_sample):
    sample = add_sample()
    for name in ("a", "b"):
        store.ratings.ensure_rater(name)
    store.ratings.rate_sample("a", sample.id, {"cp": None, "pf": None}, status="skipped")
    assert store.tasks.next_task("a") is None  # seen by a
    assert store.tasks.next_task("b", overlap_k=1).sample.id == sample.id  # still 0 complete ratings


def test_external_ratings_do_not_fill_the_overlap(store, add_sample):
    sample = add_sample()
    store.ratings.import_external("group1", [ExternalRating(sample.id, "cp", 1), ExternalRating(sample.id, "pf", 2)])
    store.ratings.ensure_rater("a")
    assert store.tasks.next_task("a", overlap_k=1).sample.id == sample.id


def test_started_task_comes_back_first_and_previous_walks_back(store, add_sample):
    samples = [add_sample() for _ in range(4)]
    store.ratings.ensure_rater("a")
    done = []
    for _ in range(2):
        task = store.tasks.next_task("a")
        store.ratings.rate_sample("a", task.sample.id, {"cp": 1, "pf": 1}, presentation_order=task.presentation_order)
        done.append(task.sample.id)
    third = store.tasks.next_task("a")
    store.ratings.rate("a", third.sample.id, "cp", 0, presentation_order=3)  # half done, then left
    again = store.tasks.next_task("a")
    assert again.sample.id == third.sample.id and set(again.ratings) == {"cp"}
    assert again.presentation_order == 3
    assert store.tasks.previous_task("a").sample.id == third.sample.id
    back = store.tasks.previous_task("a", before_sample_id=third.sample.id)
    assert back.sample.id == done[1] and back.ratings["cp"].score == 1 and back.presentation_order == 2
    assert store.tasks.previous_task("a", before_sample_id=done[1]).sample.id == done[0]
    assert store.tasks.previous_task("a", before_sample_id=done[0]) is None
    assert store.tasks.progress("a") == (2, 3, 4)  # 2 done; 1 unseen waiting (the half-done one is seen)
    assert len(samples) == 4


def test_task_errors(store, add_sample):
    add_sample()
    with pytest.raises(NotFound, match="rater 'ghost'"):
        store.tasks.next_task("ghost")
    store.ratings.ensure_rater("a")
    with pytest.raises(NotFound, match="dataset 'nope'"):
        store.tasks.next_task("a", "nope")
    with pytest.raises(InvalidInput, match="overlap_k must be >= 1"):
        store.tasks.next_task("a", overlap_k=0)
