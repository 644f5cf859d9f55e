"""The rater's task order (`storage.repo.tasks`): the cached order per rater follows every change of the scope, the
started samples come back oldest first, and a task's position is known without a stored presentation order."""

from __future__ import annotations

from storage.repo.tasks import TaskOrders, TaskRepository, _order_key


def _expected_next(store, rater: str, seed: int, overlap_k: int, scope: list[int]) -> int | None:
    """Among the samples of `scope` the rater has not answered that have fewer than `overlap_k` complete ratings,
    those with the most complete ratings, the first in the rater's SHA-256 order; computed here from the ratings
    themselves."""
    mine = {r.sample_id for r in store.ratings.current(rater=rater)}
    complete: dict[int, int] = {}
    by_rater: dict[tuple[str, int], int] = {}
    for r in store.ratings.current():
        if r.status == "rated" and r.criterion in ("cp", "pf"):
            by_rater[(r.rater, r.sample_id)] = by_rater.get((r.rater, r.sample_id), 0) + 1
    for (_, sid), n in by_rater.items():
        complete[sid] = complete.get(sid, 0) + (n == 2)
    waiting = [sid for sid in scope if sid not in mine and complete.get(sid, 0) < overlap_k]
    return min(waiting, key=lambda sid: (-complete.get(sid, 0), _order_key(seed, rater, sid))) if waiting else None


def test_the_cached_order_follows_the_scope(store, add_sample):
    for name in ("a", "b"):
        store.ratings.ensure_rater(name)
    bench = [add_sample("bench").id for _ in range(5)]
    store.samples.set_for_rating("bench", True)
    fresh = lambda: TaskRepository(store.tx)  # noqa: E731 - a repository with an empty cache

    def agree(scope: list[int]) -> None:
        for rater in ("a", "b"):
            for seed in (0, 3):
                got = store.tasks.next_task(rater, for_rating_only=True, overlap_k=1, seed=seed)
                again = fresh().next_task(rater, for_rating_only=True, overlap_k=1, seed=seed)
                got_id = got.sample.id if got else None
                assert got_id == (again.sample.id if again else None)
                assert got_id == _expected_next(store, rater, seed, 1, scope)

    agree(bench)
    later = [add_sample("bench").id for _ in range(4)]  # new samples join the scope
    agree(bench + later)
    other = [add_sample("other").id for _ in range(3)]
    store.samples.set_for_rating("other", True)  # a second dataset marked
    agree(bench + later + other)
    store.samples.set_for_rating("bench", False)  # and the first unmarked
    agree(other)
    task = store.tasks.next_task("a", for_rating_only=True, overlap_k=1)
    store.ratings.rate_sample("a", task.sample.id, {"cp": 1, "pf": 1})  # filled at K = 1: nobody else gets it
    agree(other)


def test_the_order_cache_keeps_at_most_its_raters():
    orders = TaskOrders(max_raters=2)
    scope = {1, 2, 3, 4}
    first = orders.order(0, "a", scope)
    assert first == sorted(scope, key=lambda sid: _order_key(0, "a", sid))
    assert orders.order(0, "a", set(scope)) is first  # an equal scope reuses the entry
    orders.order(0, "b", scope)
    orders.order(1, "a", scope)  # a third (seed, rater): the least recently used, (0, "a"), goes
    assert orders.order(0, "a", scope) is not first and orders.order(0, "a", scope) == first
    assert orders.order(0, "a", {1, 2}) == sorted({1, 2}, key=lambda sid: _order_key(0, "a", sid))


def test_started_samples_come_back_oldest_first_and_positions_without_a_stored_order(store, add_sample):
    x, y, z = (add_sample().id for _ in range(3))
    store.ratings.ensure_rater("a")
    store.ratings.rate_sample("a", z, {"cp": 1, "pf": 1})  # no presentation order given (an API client)
    store.ratings.rate("a", y, "cp", 2)  # started first
    store.ratings.rate("a", x, "pf", 3)  # started second
    task = store.tasks.next_task("a")
    assert task.sample.id == y and set(task.ratings) == {"cp"} and task.presentation_order == 2
    store.ratings.rate("a", y, "pf", 2)
    task = store.tasks.next_task("a")
    assert task.sample.id == x and task.presentation_order == 3
    assert store.tasks.previous_task("a", before_sample_id=y).sample.id == z
    assert store.tasks.previous_task("a", before_sample_id=y).presentation_order == 1
    assert store.tasks.statuses("a") == {z: "rated", y: "rated"}


def test_samples_other_raters_rated_come_first(store, add_sample):
    """K = 2: once a rates three samples, b is handed those three first (in b's own order), then fresh ones; so
    doubly-rated samples accrue from the start."""
    for name in ("a", "b"):
        store.ratings.ensure_rater(name)
    scope = [add_sample("bench").id for _ in range(12)]
    store.samples.set_for_rating("bench", True)
    rated_by_a = []
    for _ in range(3):
        task = store.tasks.next_task("a", for_rating_only=True, overlap_k=2)
        store.ratings.rate_sample("a", task.sample.id, {"cp": 2, "pf": 2})
        rated_by_a.append(task.sample.id)
    given_to_b = []
    for _ in range(4):
        task = store.tasks.next_task("b", for_rating_only=True, overlap_k=2)
        assert task.sample.id == _expected_next(store, "b", 0, 2, scope)
        store.ratings.rate_sample("b", task.sample.id, {"cp": 3, "pf": 3})
        given_to_b.append(task.sample.id)
    assert sorted(given_to_b[:3]) == sorted(rated_by_a) and given_to_b[3] not in rated_by_a
    assert given_to_b[:3] == sorted(rated_by_a, key=lambda sid: _order_key(0, "b", sid))
