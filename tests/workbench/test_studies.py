"""Crowd studies (use cases, SQLite and PostgreSQL): an admin creates a study of a dataset marked for rating and gets
its secret link once; the link (with a participant id) starts or resumes a participant, who rates only the study's
dataset, up to its tasks per participant, with gold tasks at its rate, then gets the completion; without the right
secret or a valid participant id nothing is created; a participant is no login and reaches no other use case."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from gold_samples import save_samples

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench import build_workbench
from masc_ui.workbench.studies import (
    StudyClosed,
    StudyLinkUnknown,
    participant_rater,
    study_of_rater,
)
from masc_ui.workbench.users import AccessDenied, Account, Accounts

ACCOUNTS = {"ada": "admin", "bob": "rater"}


@pytest.fixture()
def wb(demo_settings: Settings, database_url: str | None, tmp_path):
    accounts = Accounts({n: Account(n, "$argon2id$not-checked-here", role) for n, role in ACCOUNTS.items()})
    bench = build_workbench(
        demo_settings.replace(database_url=database_url, gold_rate=0.0, rating_overlap=5), accounts=accounts
    )
    yield bench
    bench.close()


def _create(wb, dataset: str = "d", **more):
    fields = dict(user="ada", dataset=dataset, name="pilot", tasks=3, gold_rate=0.0, completion_code="C0DE42")
    fields.update(more)
    return wb.studies.create(**fields)


def _walk(wb, rater: str) -> list[int]:
    seen = []
    while (task := wb.ratings.next_task(rater)) is not None:
        seen.append(task.sample_id)
        wb.ratings.submit(rater, task.sample_id, {"cp": 3, "pf": 2}, seconds_spent=4.0)
        assert len(seen) < 50
    return seen


def _raters(wb) -> set[str]:
    return {r.username for r in wb.database.store.ratings.raters()}


def test_only_an_admin_creates_a_study_of_a_rating_dataset_with_a_quota_and_a_completion(wb, tmp_path):
    save_samples(wb, tmp_path / "img", 4)
    wb.recorder.save(
        wb.scoring.make_sample(*_one_input(tmp_path)), {}, user=None, dataset="scratch", method="m"
    )  # a dataset not marked for rating
    with pytest.raises(AccessDenied, match="creating a crowd study needs an admin login"):
        _create(wb, user="bob")
    bad = [
        (dict(dataset="nope"), "dataset 'nope' does not exist"),
        (dict(dataset="scratch"), "is not marked for rating"),
        (dict(tasks=0), "tasks per participant must be a whole number within 1"),
        (dict(gold_rate=0.6), "the gold rate must be within 0..0.5"),
        (dict(completion_code=None), "give a completion code"),
        (dict(completion_code="has space"), "the completion code has 1 to 100 letters"),
        (dict(completion_code=None, redirect_url="javascript:alert(1)"), "must be a whole http"),
        (dict(completion_code=None, redirect_url="https://"), "must be a whole http"),
        (dict(name="  "), "name the study"),
    ]
    for change, message in bad:
        with pytest.raises(InputError, match=message):
            _create(wb, **change)
    assert wb.studies.studies(user="ada") == []
    link = _create(wb, redirect_url="https://app.prolific.com/submissions/complete?cc=C0DE42")
    study_id, secret = link.token.split(".")
    assert int(study_id) == link.study.id and len(secret) >= 32
    assert link.path.startswith(f"study/{link.token}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    # Only the secret's hash is stored: a dump of the database holds no secret.
    out = io.StringIO()
    wb.database.store.dumps.dump(out)
    assert secret not in out.getvalue()
    assert hashlib.sha256(secret.encode()).hexdigest() in out.getvalue()
    headers, rows = wb.studies.table(user="ada")
    assert dict(zip(headers, rows[0], strict=True))["state"] == "open"
    with pytest.raises(AccessDenied):
        wb.studies.table(user="bob")


def _one_input(tmp_path):
    from masc_ui.workbench.examples import EXAMPLES_DIR

    return [EXAMPLES_DIR / "cat-on-grass" / "ref.jpg"], EXAMPLES_DIR / "cat-on-grass" / "out.jpg", "p", "cat"


def test_a_link_without_the_right_secret_or_a_participant_id_creates_nothing(wb, tmp_path):
    save_samples(wb, tmp_path / "img", 3)
    link = _create(wb)
    study_id, secret = link.token.split(".")
    before = _raters(wb)
    other_last = "x" if secret[-1] != "x" else "y"  # one character off, never the secret itself
    for token in (
        "",
        secret,
        f"{study_id}.",
        f"{study_id}.{secret[:-1]}{other_last}",
        f"{int(study_id) + 1}.{secret}",
        "0.x",
    ):
        with pytest.raises(StudyLinkUnknown, match="this study link is not valid"):
            wb.studies.open_link(token, {"PROLIFIC_PID": "p1"})
    with pytest.raises(InputError, match="needs your participant id"):
        wb.studies.open_link(link.token, {"STUDY_ID": "s"})
    for bad in ("a b", "../x", "x" * 65, "p:1", "ünï"):
        with pytest.raises(InputError, match="participant id in this link is not valid"):
            wb.studies.open_link(link.token, {"participant": bad})
    with pytest.raises(InputError, match="SESSION_ID in this link is not valid"):
        wb.studies.open_link(link.token, {"participant": "p1", "SESSION_ID": "<script>"})
    assert _raters(wb) == before and wb.studies.participants(user="ada", study_id=link.study.id) == []
    joined = wb.studies.open_link(link.token, {"PROLIFIC_PID": "5f8a", "participant": "other", "SESSION_ID": "s1"})
    assert joined.participant == "5f8a" and joined.rater == participant_rater(link.study.id, "5f8a")


def test_a_participant_rates_the_study_dataset_up_to_the_quota_and_never_gets_a_second_one(wb, tmp_path):
    ids = save_samples(wb, tmp_path / "img", 8)
    other = save_samples(wb, tmp_path / "img2", 2, dataset="elsewhere")
    link = _create(wb, tasks=3)
    rater = wb.studies.open_link(link.token, {"PROLIFIC_PID": "p1"}).rater
    first = wb.ratings.next_task(rater)
    assert wb.ratings.progress(rater).text() == "rated 0 / assigned 3 / total 3"
    wb.ratings.submit(rater, first.sample_id, {"cp": 3, "pf": 2})
    # Leaving and opening the link again resumes the same rater and answers.
    assert wb.studies.open_link(link.token, {"PROLIFIC_PID": "p1", "SESSION_ID": "again"}).rater == rater
    seen = [first.sample_id, *_walk(wb, rater)]
    assert len(seen) == 3 and set(seen) <= set(ids)
    assert wb.studies.finished(rater).code == "C0DE42"
    assert wb.studies.participants(user="ada", study_id=link.study.id)[0].finished_at is not None
    assert wb.studies.open_link(link.token, {"PROLIFIC_PID": "p1"}).rater == rater
    assert wb.ratings.next_task(rater) is None  # no second quota
    assert wb.studies.studies(user="ada")[0].participants == 1
    # Not the study's dataset: refused, nothing stored.
    with pytest.raises(AccessDenied, match="not part of your study"):
        wb.ratings.submit(rater, other[0], {"cp": 1, "pf": 1})
    with pytest.raises(AccessDenied, match="not part of your study"):
        wb.ratings.task_for(rater, other[0])
    # Every answer carries the study: the rater's name says it, in the export too.
    assert {study_of_rater(r.rater) for r in wb.ratings.ratings_of(rater)} == {link.study.id}
    out = io.StringIO()
    wb.samples.export("jsonl", user="ada", dataset="d", target=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sum(1 for r in rows if r.get(f"status:{rater}") == "rated") == 3


def test_a_study_participant_is_finished_when_nothing_is_left(wb, tmp_path):
    save_samples(wb, tmp_path / "img", 2)
    link = _create(wb, tasks=5)
    rater = wb.studies.open_link(link.token, {"participant": "p2"}).rater
    assert len(_walk(wb, rater)) == 2
    assert wb.studies.finished(rater) is not None


def test_gold_tasks_come_at_the_study_rate(wb, tmp_path):
    ids = save_samples(wb, tmp_path / "img", 8)
    for sid in ids[:4]:
        wb.gold.mark(user=None, dataset="d", sample=f"#{sid}", criterion="cp", accepted="3-4")
    link = _create(wb, tasks=4, gold_rate=0.5)
    seen = _walk(wb, wb.studies.open_link(link.token, {"participant": "g1"}).rater)
    assert len(seen) == 4 and sum(1 for s in seen if s in ids[:4]) == 2  # one gold task in every 2
    none = _create(wb, tasks=4, gold_rate=0.0)
    seen = _walk(wb, wb.studies.open_link(none.token, {"participant": "g1"}).rater)
    assert len(seen) == 4 and not set(seen) & set(ids[:4])


def test_participants_are_bound_to_their_study_and_reach_no_other_use_case(wb, tmp_path):
    save_samples(wb, tmp_path / "img", 4)
    save_samples(wb, tmp_path / "img2", 4, dataset="d2")
    one, two = _create(wb, tasks=2), _create(wb, dataset="d2", tasks=2)
    a = wb.studies.open_link(one.token, {"participant": "same"}).rater
    b = wb.studies.open_link(two.token, {"participant": "same"}).rater
    assert a != b and study_of_rater(a) == one.study.id and study_of_rater(b) == two.study.id
    assert all(wb.database.samples.get(s).dataset == "d2" for s in _walk(wb, b))
    for call in (
        lambda: wb.gold.table(user=a, dataset="d"),
        lambda: wb.studies.table(user=a),
        lambda: wb.studies.create(user=a, dataset="d", name="x", tasks=1, completion_code="C"),
        lambda: wb.pairwise.next_task(a),
        lambda: wb.samples.export("csv", user=a, dataset="d", target=io.StringIO()),
    ):
        with pytest.raises(AccessDenied):
            call()
    assert not wb.accounts.is_admin(a)
    # A name shaped like a participant's but never started by a link is nobody.
    with pytest.raises(AccessDenied):
        wb.ratings.next_task(participant_rater(one.study.id, "never-joined"))


def test_a_closed_study_takes_no_new_participant_and_lets_started_ones_finish(wb, tmp_path):
    save_samples(wb, tmp_path / "img", 4)
    link = _create(wb, tasks=2)
    rater = wb.studies.open_link(link.token, {"participant": "early"}).rater
    assert not wb.studies.close(user="ada", study_id=link.study.id).is_open
    with pytest.raises(StudyClosed, match="this study is closed"):
        wb.studies.open_link(link.token, {"participant": "late"})
    assert wb.studies.open_link(link.token, {"participant": "early"}).rater == rater
    assert len(_walk(wb, rater)) == 2
    with pytest.raises(AccessDenied):
        wb.studies.close(user="bob", study_id=link.study.id)
    with pytest.raises(InputError, match="named by its id"):
        wb.studies.close(user="ada", study_id=0)


def test_the_same_participant_opening_the_link_at_once_is_started_once(wb, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    save_samples(wb, tmp_path / "img", 2)
    link = _create(wb)
    with ThreadPoolExecutor(8) as pool:
        raters = list(pool.map(lambda _: wb.studies.open_link(link.token, {"participant": "twice"}).rater, range(16)))
    assert set(raters) == {participant_rater(link.study.id, "twice")}
    assert len(wb.studies.participants(user="ada", study_id=link.study.id)) == 1


def test_a_participant_reads_the_study_dataset_guide_and_is_asked_nothing_once_finished(wb, tmp_path):
    save_samples(wb, tmp_path / "img", 3)
    wb.guides.set_guide(user="ada", dataset="d", text="# Rate the cats")
    link = _create(wb, tasks=1)
    rater = wb.studies.open_link(link.token, {"participant": "reader"}).rater
    step = wb.guides.next_step(rater)  # a participant is a rater here too, not "rating needs a login"
    assert step.kind == "guide" and step.dataset == "d" and step.guide is not None
    wb.guides.mark_read(rater, "d", step.guide.version)
    assert wb.guides.next_step(rater).kind == "tasks"
    assert len(_walk(wb, rater)) == 1 and wb.studies.finished(rater) is not None
    assert wb.guides.next_step(rater).kind == "tasks"  # finished: the page shows the completion alone
    with pytest.raises(AccessDenied):
        wb.guides.next_step(participant_rater(link.study.id, "never-joined"))
