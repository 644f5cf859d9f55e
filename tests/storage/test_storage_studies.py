"""Crowd studies in storage (SQLite and PostgreSQL): a study names an existing dataset and a completion; a participant
is stored once per (study, participant id), bound to one rater row of their own; a closed study takes no new
participant; a rater name that belongs to someone else is never taken over; dump and restore carry both tables."""

from __future__ import annotations

import pytest

from storage import Conflict, InvalidInput, NotFound


def _study(store, dataset: str = "ds", **more):
    fields = dict(
        tasks_per_participant=2, gold_rate=0.0, completion_code="C0DE", redirect_url=None, secret_hash="f" * 64
    )
    fields.update(more)
    return store.studies.create(dataset, "pilot", **fields)


def test_a_study_needs_an_existing_dataset_a_quota_and_a_completion(store, add_sample):
    add_sample()
    with pytest.raises(NotFound, match="dataset 'nope' does not exist"):
        _study(store, "nope")
    with pytest.raises(InvalidInput, match="tasks_per_participant must be >= 1"):
        _study(store, tasks_per_participant=0)
    with pytest.raises(InvalidInput, match="needs a completion code or a redirect URL"):
        _study(store, completion_code=None)
    study = _study(store)
    assert (study.dataset, study.tasks_per_participant, study.is_open, study.participants) == ("ds", 2, True, 0)
    assert store.studies.secret_hash(study.id) == "f" * 64
    assert store.studies.secret_hash(study.id + 1) is None


def test_the_same_participant_resumes_and_a_closed_study_takes_no_new_one(store, add_sample):
    add_sample()
    study = _study(store)
    first, new = store.studies.join(study.id, "p1", f"study{study.id}:p1", platform_session="s1")
    assert new and first.rater == f"study{study.id}:p1"
    again, new = store.studies.join(study.id, "p1", f"study{study.id}:p1", platform_session="s2")
    assert not new and again.rater == first.rater and again.platform_session == "s2"
    assert store.studies.get(study.id).participants == 1
    assert store.studies.participant_of(first.rater) == again
    assert store.studies.participant_of("alice") is None
    store.studies.finish(study.id, "p1")
    finished = store.studies.finish(study.id, "p1")
    assert finished.finished_at is not None and store.studies.get(study.id).finished == 1
    closed = store.studies.close(study.id)
    assert not closed.is_open
    with pytest.raises(Conflict, match="is closed"):
        store.studies.join(study.id, "p2", f"study{study.id}:p2")
    assert store.studies.join(study.id, "p1", f"study{study.id}:p1")[1] is False  # a started participant goes on


def test_a_rater_of_someone_else_is_never_taken_over(store, add_sample):
    add_sample()
    study = _study(store)
    store.ratings.ensure_rater(f"study{study.id}:p9")
    with pytest.raises(Conflict, match="already exists and is not this participant"):
        store.studies.join(study.id, "p9", f"study{study.id}:p9")
    assert store.studies.participants(study.id) == []


def test_dump_and_restore_carry_studies_and_participants(make_store, add_sample, store):
    add_sample()
    study = _study(store)
    store.studies.join(study.id, "p1", f"study{study.id}:p1", platform_study="S", platform_session="X")
    dumped = store.dumps.dump_dict(include_blobs=True)
    assert dumped["tables"]["studies"]["rows"] and dumped["tables"]["study_participants"]["rows"]
    other = make_store("copy")
    other.dumps.restore(dumped)
    assert other.studies.studies() == store.studies.studies()
    assert other.studies.participants(study.id) == store.studies.participants(study.id)
    assert other.studies.secret_hash(study.id) == "f" * 64
    assert other.dumps.dump_dict(include_blobs=True) == dumped
