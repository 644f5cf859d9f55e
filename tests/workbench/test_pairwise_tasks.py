"""Pairwise rating use cases: even coverage of method pairs, never the same pair twice, per-criterion answers
committed at once, going back and changing an answer (history kept), skip / flag, expiry, blindness."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from pairwise_samples import add_outputs, decoded, shown

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench.database import Database, StoreError
from masc_ui.workbench.pairwise import ASSIGNMENT_EXPIRY, PairProgress, PairwiseTasks, plan_of, reference_key
from storage import open_store


@pytest.fixture()
def store(database_url, tmp_path: Path):
    with open_store(database_url, tmp_path / "data") as opened:
        yield opened


def tasks_of(store, overlap: int = 2) -> PairwiseTasks:
    return PairwiseTasks(Database.of(store), Settings(rating_overlap=overlap))


def method_pair(store, task_view_or_record) -> tuple[str, str]:
    a = store.samples.get(task_view_or_record.sample_a_id)
    b = store.samples.get(task_view_or_record.sample_b_id)
    return tuple(sorted((a.method, b.method)))


def test_assignment_covers_method_pairs_evenly_and_never_repeats_a_pair(store):
    add_outputs(store, methods=("m0", "m1", "m2", "m3"), references=3)  # 6 method pairs x 3 references
    raters = ["alice", "bob", "carol", "dave"]
    tasks = tasks_of(store, overlap=2)
    coverage: Counter = Counter()
    method_pairs = {("m0", "m1"), ("m0", "m2"), ("m0", "m3"), ("m1", "m2"), ("m1", "m3"), ("m2", "m3")}
    active = list(raters)
    steps = 0
    while active:
        for rater in list(active):
            view = tasks.next_task(rater)
            if view is None:
                active.remove(rater)
                continue
            record = store.pairwise.task(rater, view.token)
            pair = method_pair(store, record)
            # the chosen method pair is among the least covered ones this rater could still take
            before = [
                (t.rater, (t.sample_a_id, t.sample_b_id)) for t in store.pairwise.tasks() if t.token != view.token
            ]
            held = Counter(key for _, key in before)
            mine = {key for who, key in before if who == rater}
            plan = plan_of(store.pairwise.state(rater))
            open_pairs = {
                p.method_pair
                for p in plan.pairs
                if tuple(sorted((int(p.a), int(p.b)))) not in mine and held[tuple(sorted((int(p.a), int(p.b))))] < 2
            }
            assert coverage[pair] == min(coverage[mp] for mp in open_pairs)
            coverage[pair] += 1
            tasks.submit(rater, view.token, {"cp": "left", "pf": "tie"})
            steps += 1
    assert steps == 18 * 2  # every pair judged by K = 2 raters
    assert coverage == {mp: 6 for mp in method_pairs}  # evenly: 3 pairs x 2 raters each
    per_pair = Counter((t.sample_a_id, t.sample_b_id) for t in store.pairwise.tasks())
    assert set(per_pair.values()) == {2}
    for rater in raters:
        mine = [(t.sample_a_id, t.sample_b_id) for t in store.pairwise.tasks(rater=rater)]
        assert len(mine) == len(set(mine))  # never the same pair twice
    assert all(tasks.progress(r).judged == len(store.pairwise.tasks(rater=r)) for r in raters)


def test_pairs_are_outputs_of_one_reference_and_prompt(store):
    outputs = add_outputs(store, methods=("m0", "m1"), references=2, prompts=("p one", "p two"))
    add_outputs(store, dataset="other", methods=("m0", "m1"), references=1)
    plan = plan_of(store.pairwise.state("x", dataset="ds"))
    assert len(plan.pairs) == 4  # 2 references x 2 prompts, one method pair each
    by_id = {str(s.id): s for s in outputs}
    for p in plan.pairs:
        a, b = by_id[p.a], by_id[p.b]
        assert reference_key(a) == reference_key(b) and a.prompt == b.prompt and a.method != b.method
    assert len(plan_of(store.pairwise.state("x")).pairs) == 5  # every dataset, never across datasets


def test_a_rater_completes_pairs_goes_back_and_changes_an_answer(store):
    add_outputs(store, methods=("m0", "m1", "m2"), references=2)
    tasks = tasks_of(store)
    given: dict[str, dict[str, str]] = {}
    views = []
    for answer in ({"cp": "left", "pf": "right"}, {"cp": "tie", "pf": "left"}, {"cp": "right", "pf": "right"}):
        view = tasks.next_task("alice")
        assert view.answers.complete is False and set(view.answers.winners.values()) == {None}
        first = tasks.submit("alice", view.token, {"cp": answer["cp"]}, seconds_spent=3.0)
        assert first.complete is False and first.winners == {"cp": answer["cp"], "pf": None}
        assert tasks.next_task("alice").token == view.token  # committed, but the task is not finished
        done = tasks.submit("alice", view.token, {"pf": answer["pf"]}, both_bad={"pf": True}, seconds_spent=5.0)
        assert done.complete and done.both_bad == {"cp": False, "pf": True}
        given[view.token] = dict(answer)
        views.append(view)
    assert tasks.progress("alice").judged == 3
    back = tasks.previous_task("alice", None)  # no task on screen: the latest one
    assert back.token == views[2].token
    back = tasks.previous_task("alice", views[2].token)
    assert back.token == views[1].token and back.answers.winners == given[views[1].token]
    assert back.left == views[1].left and np.array_equal(shown(back.left), shown(views[1].left))
    assert tasks.previous_task("alice", views[0].token) is None
    tasks.submit("alice", back.token, {"cp": "right"}, seconds_spent=1.0)
    given[back.token]["cp"] = "right"
    forward = tasks.task_for("alice", views[2].token)
    assert forward.answers.winners == given[views[2].token]
    # the database holds exactly the answers given, and the change kept the old answer in the history
    stored = {}
    for record in store.pairwise.tasks(rater="alice"):
        stored[record.token] = {c: j.winner for c, j in record.judgments.items()}
        assert {c: j.both_bad for c, j in record.judgments.items()} == {"cp": False, "pf": True}
    assert stored == given
    changed = store.pairwise.task("alice", back.token).judgments["cp"]
    assert [(h.winner, h.seconds_spent) for h in store.pairwise.history(changed.id)] == [("tie", 3.0), ("right", 1.0)]
    assert len(store.pairwise.current(rater="alice")) == 6


def test_views_are_blind_and_show_the_recorded_sides(store):
    add_outputs(store, methods=("m0", "m1"), references=1)
    tasks = tasks_of(store)  # kept: its file folder goes with it
    view = tasks.next_task("alice")
    assert {f.name for f in dataclasses.fields(view)} == {
        "token",
        "refs",
        "left",
        "right",
        "prompt",
        "position",
        "answers",
        "left_video",
        "right_video",
        "left_media_type",
        "right_media_type",
        "problem",
        "answered_as",
        "refs_picture",
    }
    assert view.answered_as == ()  # nothing answered yet: what a later Submit is checked against
    assert view.refs_picture is not None
    assert view.problem is None  # a fixed sentence when a stored file cannot be shown, never a sample id
    assert not view.has_video and view.left_video is None and view.right_media_type is None  # images: nothing to play
    record = store.pairwise.task("alice", view.token)
    left = store.samples.get(record.left_sample_id)
    right = store.samples.get(record.right_sample_id)
    assert np.array_equal(shown(view.left), decoded(store.images.read(left.output)))
    assert np.array_equal(shown(view.right), decoded(store.images.read(right.output)))
    assert np.array_equal(shown(view.refs[0]), decoded(store.images.read(left.references[0])))
    # no file metadata reaches a rater, nor a name to look the stored file up by (tests/workbench/test_blind_files.py)
    assert left.output not in view.left.name and right.output not in view.right.name
    assert left.references[0] not in view.refs_picture.name
    same_pair = tasks_of(store).next_task("bob")  # the same pair (K = 2), another random token
    assert store.pairwise.task("bob", same_pair.token).sample_a_id == record.sample_a_id
    assert same_pair.token != view.token and len(view.token) >= 20
    assert view.prompt == "a dog on a beach" and view.position == 1


def test_left_right_is_a_coin_per_rater_and_pair(store):
    add_outputs(store, methods=("m0", "m1"), references=8)
    tasks = tasks_of(store, overlap=8)
    swapped = []
    for rater in ("alice", "bob"):
        while (view := tasks.next_task(rater)) is not None:
            record = store.pairwise.task(rater, view.token)
            swapped.append(record.left_sample_id == record.sample_b_id)
            tasks.skip(rater, view.token)
    assert len(swapped) == 16 and 0 < sum(swapped) < 16


def test_other_raters_tokens_and_bad_answers_are_refused(store):
    add_outputs(store, methods=("m0", "m1"), references=1)
    tasks = tasks_of(store)
    view = tasks.next_task("alice")
    tasks.next_task("bob")
    with pytest.raises(StoreError, match="'bob' has no pairwise task"):
        tasks.submit("bob", view.token, {"cp": "left"})
    with pytest.raises(StoreError, match="has no pairwise task"):
        tasks.task_for("bob", view.token)
    for winners, message in (
        ({}, "choose left, right or tie"),
        ({"cp": "both"}, "must be left, right or tie"),
        ({"sc": "left"}, "unknown criterion 'sc'"),
    ):
        with pytest.raises(InputError, match=message):
            tasks.submit("alice", view.token, winners)
    with pytest.raises(InputError, match="'both bad' given for pf without an answer"):
        tasks.submit("alice", view.token, {"cp": "left"}, both_bad={"pf": True})
    with pytest.raises(InputError, match="logged-in rater"):
        tasks.next_task(None)
    with pytest.raises(InputError, match="no pairwise task on screen"):
        tasks.submit("alice", "", {"cp": "left"})
    with pytest.raises(InputError, match="dataset 'nope' is not in the database"):
        tasks.next_task("alice", dataset="nope")
    assert store.pairwise.current() == []


def test_skip_and_flag_free_the_pair_for_another_rater(store):
    add_outputs(store, methods=("m0", "m1"), references=1)  # one pair
    tasks = tasks_of(store, overlap=1)
    alice = tasks.next_task("alice")
    assert tasks.next_task("bob") is None  # the one slot is held by alice's open task
    assert tasks.skip("alice", alice.token, seconds_spent=2.0).statuses == {"cp": "skipped", "pf": "skipped"}
    bob = tasks.next_task("bob")
    assert bob is not None and tasks.next_task("alice") is None  # never the same pair twice
    flagged = tasks.flag("bob", bob.token, note="  the right image is broken ")
    assert flagged.complete and flagged.winners == {"cp": None, "pf": None}
    assert {j.note for j in store.pairwise.current(rater="bob")} == {"the right image is broken"}
    carol = tasks.next_task("carol")
    tasks.submit("carol", carol.token, {"cp": "left", "pf": "left"})
    assert tasks.next_task("dave") is None  # one rated judgment: the pair has its K = 1
    assert tasks.progress("dave") == PairProgress(0, 0, 1)
    assert tasks.progress("alice").judged == 1


def test_an_unanswered_assignment_expires(store):
    add_outputs(store, methods=("m0", "m1"), references=1)
    tasks = tasks_of(store, overlap=1)
    alice = tasks.next_task("alice")
    assert tasks.next_task("bob") is None
    old = dt.datetime.now(dt.timezone.utc) - ASSIGNMENT_EXPIRY - dt.timedelta(seconds=1)
    with store.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE pair_tasks SET assigned_at = :t"),
            {"t": old if store.backend == "postgresql" else old.replace(tzinfo=None)},
        )
    bob = tasks.next_task("bob")
    assert bob is not None and bob.token != alice.token  # alice's slot was released
    assert tasks.next_task("alice").token == alice.token  # her unfinished task still comes back to her first
    tasks.submit("alice", alice.token, {"cp": "tie", "pf": "tie"})  # and her late answer counts
    assert len(store.pairwise.current()) == 2


def test_progress_counts(store):
    add_outputs(store, methods=("m0", "m1", "m2"), references=2)  # 6 pairs
    tasks = tasks_of(store, overlap=1)
    assert tasks.progress("alice") == PairProgress(0, 6, 6)
    view = tasks.next_task("alice")
    assert tasks.progress("alice") == PairProgress(0, 6, 6) and tasks.progress("bob") == PairProgress(0, 5, 6)
    tasks.submit("alice", view.token, {"cp": "left", "pf": "left"})
    assert (
        tasks.progress("alice") == PairProgress(1, 6, 6)
        and tasks.progress("alice").text() == "judged 1 / assigned 6 / total 6 pairs"
    )


def test_a_skip_never_overwrites_an_answer_and_a_flag_needs_a_note(store):
    add_outputs(store, methods=("m0", "m1"), references=2)  # two pairs
    tasks = tasks_of(store, overlap=1)

    def current(token: str) -> set[tuple]:
        record = store.pairwise.task("alice", token)
        return {(c, j.status, j.winner, j.note, j.revision) for c, j in record.judgments.items()}

    half = tasks.next_task("alice")
    tasks.submit("alice", half.token, {"cp": "left"})
    after = tasks.skip("alice", half.token)  # only the criterion without an answer is skipped
    assert after.statuses == {"cp": "rated", "pf": "skipped"} and after.winners == {"cp": "left", "pf": None}
    whole = tasks.next_task("alice")
    assert whole.token != half.token
    tasks.submit("alice", whole.token, {"cp": "tie", "pf": "right"})
    before = current(whole.token)
    back = tasks.previous_task("alice", None)  # back to the answered pair, then S
    assert back.token == whole.token
    kept = tasks.skip("alice", back.token, seconds_spent=1.0)
    assert kept.statuses == {"cp": "rated", "pf": "rated"} and kept.winners == {"cp": "tie", "pf": "right"}
    assert current(whole.token) == before  # nothing written
    for empty in (None, "", "  \n "):
        with pytest.raises(InputError, match="type a reason, then flag"):
            tasks.flag("alice", whole.token, note=empty)
    with pytest.raises(InputError, match="keep it under 1000"):
        tasks.flag("alice", whole.token, note="x" * 1001)
    assert current(whole.token) == before
    flagged = tasks.flag("alice", whole.token, note="  the left image\n is blank ")
    assert flagged.statuses == {"cp": "flagged", "pf": "flagged"}
    assert {note for _, _, _, note, _ in current(whole.token)} == {"the left image is blank"}
    flagged_state = current(whole.token)
    assert tasks.skip("alice", whole.token).statuses == {"cp": "flagged", "pf": "flagged"}  # a skip keeps a flag
    assert current(whole.token) == flagged_state


def test_pairs_come_only_from_datasets_marked_for_rating_like_absolute_tasks(store):
    """One rule for both kinds of rating: with nothing named, only the datasets marked for rating."""
    from masc_ui.workbench.ratings import RatingTasks

    private = add_outputs(store, dataset="private", methods=("m0", "m1"), references=1, for_rating=False)
    tasks, absolute = tasks_of(store), RatingTasks(Database.of(store), Settings())
    assert tasks.next_task("rita") is None and absolute.next_task("rita") is None
    assert tasks.progress("rita") == PairProgress(0, 0, 0)
    assert tasks.previous_task("rita", None) is None
    named = tasks.next_task("rita", dataset="private")  # a dataset named explicitly is used as it is
    assert named is not None
    record = store.pairwise.task("rita", named.token)
    assert {record.sample_a_id, record.sample_b_id} == {s.id for s in private}
    tasks.submit("rita", named.token, {"cp": "left", "pf": "tie"})
    marked = add_outputs(store, dataset="marked", methods=("m0", "m1"), references=1)
    view = tasks.next_task("rita")
    record = store.pairwise.task("rita", view.token)
    assert {record.sample_a_id, record.sample_b_id} == {s.id for s in marked}
    assert store.samples.get(absolute.next_task("rita").sample_id).dataset == "marked"
    assert tasks.progress("rita") == PairProgress(0, 1, 1)  # the private pair judged is not in the marked scope
    store.samples.set_for_rating("marked", False)
    assert tasks.next_task("bob") is None  # unmarked again: nothing handed out


def test_an_admin_who_only_looks_takes_no_raters_slot(store):
    """K = 2 and one pair: the admin's unanswered look holds no slot, so both raters are given the pair; the
    admin's answer, once given, counts."""
    from masc_ui.workbench.users import Accounts

    settings = Settings(rating_overlap=2, users="alice:pw-a:admin,bob:pw-b:rater,rita:pw-r:rater")
    tasks = PairwiseTasks(Database(settings, store, accounts=Accounts.from_settings(settings)), settings)
    add_outputs(store, methods=("m0", "m1"), references=1)
    looked = tasks.next_task("alice")
    assert looked is not None
    assert tasks.progress("bob") == PairProgress(0, 1, 1)  # still open to both raters
    assert tasks.next_task("bob") is not None and tasks.next_task("rita") is not None
    tasks.submit("alice", looked.token, {"cp": "left", "pf": "tie"})  # an admin's answer counts
    assert len(store.pairwise.current()) == 2
