"""The `active` assignment policy in the rating use cases (SQLite and PostgreSQL): a rating task goes to the method
whose mean rating is least certain, a pair to the method pair whose outcome is most uncertain, both orders of a pair
balanced over its raters; K and "never twice to one rater" hold as under the overlap policy."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from pairwise_samples import add_outputs

from masc_ui.analysis.pair_planner import outcome_uncertainty
from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench.database import Database
from masc_ui.workbench.pairwise import PairwiseTasks, _judgments, plan_of
from masc_ui.workbench.ratings import RatingTasks
from storage import open_store


@pytest.fixture()
def store(database_url, tmp_path: Path):
    with open_store(database_url, tmp_path / "data") as opened:
        yield opened


def _by_method(samples) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for s in samples:
        out.setdefault(s.method, []).append(s.id)
    return out


def test_the_setting_is_checked():
    with pytest.raises(InputError, match="assignment_policy must be one of overlap, active"):
        Settings(assignment_policy="widest")
    assert Settings.from_env({"MASC_ASSIGNMENT_POLICY": "active"}).assignment_policy == "active"


def test_a_rating_task_goes_to_the_method_whose_mean_is_least_certain(store, tmp_path):
    samples = add_outputs(store, methods=("spread", "steady"), references=8)
    ids = _by_method(samples)
    for rater in ("x", "y"):
        store.ratings.ensure_rater(rater)
    # four samples of each method rated once: "spread" disagrees with itself, "steady" does not
    for sid, score in zip(ids["spread"][:4], (0, 4, 0, 4), strict=True):
        store.ratings.rate_sample("x", sid, {"cp": score, "pf": 2})
    for sid in ids["steady"][:4]:
        store.ratings.rate_sample("y", sid, {"cp": 2, "pf": 2})
    settings = Settings(rating_overlap=2, gold_rate=0.0, data_dir=tmp_path / "d")
    active = RatingTasks(Database.of(store), settings.replace(assignment_policy="active"), tmp_path / "f1")
    overlap = RatingTasks(Database.of(store), settings, tmp_path / "f2")
    task = active.next_task("new", dataset="ds")
    assert task.sample_id in ids["spread"][4:]  # the widest method, an unrated sample of it
    # the overlap rule finishes started samples first instead
    assert overlap.next_task("other", dataset="ds").sample_id in ids["spread"][:4] + ids["steady"][:4]
    # a rater walks the whole scope once, K = 2 caps every sample, and the widest method is served first
    seen = []
    while (task := active.next_task("walker", dataset="ds")) is not None:
        seen.append(task.sample_id)
        active.submit("walker", task.sample_id, {"cp": 2, "pf": 2})
    assert sorted(seen) == sorted(s.id for s in samples)
    assert seen[: len(ids["spread"]) - 4] == [s for s in seen if s in ids["spread"][4:]]
    assert active.next_task("third", dataset="ds") is not None  # samples rated by one rater are still open
    assert active.progress("walker", dataset="ds").rated == len(samples)


def test_a_pair_comes_from_the_most_uncertain_method_pair(store, tmp_path):
    add_outputs(store, methods=("m0", "m1", "m2"), references=4)
    settings = Settings(rating_overlap=2, assignment_policy="active", data_dir=tmp_path / "d")
    tasks = PairwiseTasks(Database.of(store), settings, tmp_path / "f")

    def methods_of(view) -> tuple[str, ...]:
        record = store.pairwise.task(view_rater[view.token], view.token)
        return tuple(sorted(store.samples.get(i).method for i in (record.sample_a_id, record.sample_b_id)))

    view_rater: dict[str, str] = {}
    # m0 beats m1 again and again: that outcome is settled, m2's are not
    for rater in ("a", "b", "c", "d"):
        while True:
            view = tasks.next_task(rater)
            view_rater[view.token] = rater
            if methods_of(view) == ("m0", "m1"):
                left_is_m0 = store.samples.get(store.pairwise.task(rater, view.token).left_sample_id).method == "m0"
                answer = "left" if left_is_m0 else "right"
                tasks.submit(rater, view.token, {"cp": answer, "pf": answer})
                break
            tasks.submit(rater, view.token, {"cp": "tie", "pf": "tie"})
    state = store.pairwise.state("e", for_rating_only=True)
    plan = plan_of(state)
    uncertainty = outcome_uncertainty(plan, [j for j in _judgments(state)])
    view = tasks.next_task("e")
    view_rater[view.token] = "e"
    assert methods_of(view) == plan.method_pairs[int(np.argmax(uncertainty))] != ("m0", "m1")
    # every rater is given each pair at most once, and no pair more than K times
    held = Counter((t.sample_a_id, t.sample_b_id) for t in store.pairwise.tasks())
    assert max(held.values()) <= 2
    for rater in "abcde":
        mine = [(t.sample_a_id, t.sample_b_id) for t in store.pairwise.tasks(rater=rater)]
        assert len(mine) == len(set(mine))


def test_both_orders_of_a_pair_are_balanced_over_its_raters(store, tmp_path):
    add_outputs(store, methods=("m0", "m1"), references=1)  # a single pair
    settings = Settings(rating_overlap=6, assignment_policy="active", data_dir=tmp_path / "d")
    tasks = PairwiseTasks(Database.of(store), settings, tmp_path / "f")
    lefts = []
    for rater in ("r1", "r2", "r3", "r4", "r5", "r6"):
        view = tasks.next_task(rater)
        lefts.append(store.pairwise.task(rater, view.token).left_sample_id)
        tasks.submit(rater, view.token, {"cp": "tie", "pf": "tie"})
        counts = Counter(lefts)
        assert max(counts.values()) - min(counts.values() if len(counts) == 2 else [0]) <= 1
    assert sorted(Counter(lefts).values()) == [3, 3]
    assert tasks.next_task("r1") is None
