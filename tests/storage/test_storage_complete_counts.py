"""Each sample's stored count of complete ratings (schema revision 0006, `storage.repo.completion`): kept exact by
every rating write, under racing writers, filled in by the upgrade, checked by `db check`, repaired by `db recount`."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from storage import ExternalRating, migrate
from storage import schema as t
from storage.engine import create_engine, sqlite_url
from storage.repo import completion


def _stored(store, sample_id: int) -> int:
    return store.tx.read(lambda s: s.scalar(sa.select(t.Sample.complete_ratings).where(t.Sample.id == sample_id)))


def test_every_kind_of_rating_write_keeps_the_count(store, add_sample):
    a, b = add_sample(), add_sample()
    for name in ("ann", "ben", "cy"):
        store.ratings.ensure_rater(name)
    steps = [
        (lambda: store.ratings.rate("ann", a.id, "cp", 3), 0),  # one criterion: not complete yet
        (lambda: store.ratings.rate("ann", a.id, "pf", 0), 1),  # the second completes it (a 0 is a rating)
        (lambda: store.ratings.rate("ann", a.id, "pf", 0), 1),  # the same again changes nothing
        (lambda: store.ratings.rate_sample("ben", a.id, {"cp": 1, "pf": 2}), 2),
        (lambda: store.ratings.rate("ann", a.id, "pf", None, status="skipped"), 1),  # an edit undoes it
        (lambda: store.ratings.rate_sample("cy", a.id, {"cp": None, "pf": None}, status="flagged", note="x"), 1),
        (lambda: store.ratings.rate("ann", a.id, "pf", 4), 2),  # rated again
        (lambda: store.ratings.rate("cy", a.id, "cp", 2), 2),  # cy's pf is still flagged
        (lambda: store.ratings.rate("cy", a.id, "pf", 2), 3),
    ]
    for i, (write, expected) in enumerate(steps):
        write()
        assert (_stored(store, a.id), _stored(store, b.id)) == (expected, 0), f"after step {i}"
    assert store.check().ok


def test_imports_count_only_raters_of_the_app(store, add_sample):
    a, b = add_sample(), add_sample()
    both = [
        ExternalRating(a.id, "cp", 3),
        ExternalRating(a.id, "pf", 3),
        ExternalRating(b.id, "cp", 1),
        ExternalRating(b.id, "pf", None, status="skipped"),
    ]
    store.ratings.import_external("group1", both)  # an external group: never counts
    assert (_stored(store, a.id), _stored(store, b.id)) == (0, 0)
    # Imported benchmark criteria (ImagenHub's sc / pq) are not task criteria, whoever gave them.
    store.ratings.ensure_rater("ann")
    store.ratings.import_external("ann", [ExternalRating(a.id, "sc", 4), ExternalRating(a.id, "pq", 4)])
    assert _stored(store, a.id) == 0
    # A name that belongs to a rater of the app stays that rater (not external): its imported task ratings count,
    # on the first import (new rows) and on a re-import that changes them (edits).
    store.ratings.import_external("ann", both)
    assert (_stored(store, a.id), _stored(store, b.id)) == (1, 0)
    store.ratings.import_external(
        "ann", [ExternalRating(a.id, "pf", None, status="flagged", note="?"), ExternalRating(b.id, "pf", 2)]
    )
    assert (_stored(store, a.id), _stored(store, b.id)) == (0, 1)
    assert store.check().ok


def test_racing_writers_of_one_sample_are_all_counted(store, add_sample):
    """8 raters answer the same samples at once, each criterion in its own transaction, in both orders; and one
    rater's two criteria of a sample arrive from two threads at once (two tabs). Without the sample lock two
    writers each count without the other's uncommitted rating (PostgreSQL) and the count ends one short."""
    samples = [add_sample().id for _ in range(6)]
    raters = [store.ratings.ensure_rater(f"r{i}").username for i in range(8)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(raters) + 2)

    def answer(rater: str, order: tuple[str, str]) -> None:
        try:
            barrier.wait()
            for sid in samples:
                for criterion in order:
                    store.ratings.rate(rater, sid, criterion, 2)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    twin = store.ratings.ensure_rater("twin").username
    jobs = [(r, ("cp", "pf") if i % 2 else ("pf", "cp")) for i, r in enumerate(raters)]
    jobs += [(twin, ("cp",)), (twin, ("pf",))]
    threads = [threading.Thread(target=answer, args=job) for job in jobs]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [], repr(errors[0]) if errors else ""
    assert [_stored(store, sid) for sid in samples] == [len(raters) + 1] * len(samples)
    assert store.tx.read(completion.mismatches) == []


def test_check_reports_a_wrong_count_and_recount_repairs_it(store, add_sample):
    a = add_sample()
    store.ratings.ensure_rater("ann")
    store.ratings.rate_sample("ann", a.id, {"cp": 3, "pf": 3})
    store.tx.write(lambda s: s.execute(sa.update(t.Sample).where(t.Sample.id == a.id).values(complete_ratings=5)))
    report = store.check()
    assert not report.ok
    assert report.problems == [
        f"sample #{a.id} counts 5 complete rating(s), its ratings give 1: task assignment "
        f"would hand it out too rarely; repair with `masc-ui db recount`"
    ]
    assert store.ratings.recount_complete() == 1
    assert _stored(store, a.id) == 1 and store.check().ok
    assert store.ratings.recount_complete() == 0


def test_db_check_and_recount_commands(tmp_path, capsys):
    from masc_ui.cli import main
    from storage import open_store

    data = tmp_path / "data"
    with open_store(None, data) as s:
        img = s.images.add(b"\x89PNG\r\n\x1a\ncounts")
        sample = s.samples.add("ds", references=[img], output=img, prompt="p", subject="x")
        s.ratings.ensure_rater("ann")
        s.ratings.rate_sample("ann", sample.id, {"cp": 1, "pf": 1})
        s.tx.write(lambda x: x.execute(sa.update(t.Sample).values(complete_ratings=0)))
    assert main(["db", "check", "--data-dir", str(data)]) == 1
    assert f"sample #{sample.id} counts 0 complete rating(s), its ratings give 1" in capsys.readouterr().out
    assert main(["db", "recount", "--data-dir", str(data)]) == 0
    assert capsys.readouterr().out.strip() == "1 sample(s) had a wrong count of complete ratings; repaired"
    assert main(["db", "recount", "--data-dir", str(data)]) == 0
    assert capsys.readouterr().out.strip() == "every count of complete ratings was right"
    assert main(["db", "check", "--data-dir", str(data)]) == 0


def test_the_upgrade_fills_in_the_counts_and_the_downgrade_drops_them(database_url, tmp_path):
    engine = create_engine(database_url or sqlite_url(tmp_path))
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    rows = [  # (rater, sample, criterion, status): samples 1 and 2 get 2 and 1 complete ratings, 3 none
        (1, 1, "cp", "rated"),
        (1, 1, "pf", "rated"),
        (2, 1, "cp", "rated"),
        (2, 1, "pf", "rated"),
        (1, 2, "cp", "rated"),
        (1, 2, "pf", "rated"),
        (2, 2, "cp", "rated"),
        (2, 2, "pf", "skipped"),
        (3, 2, "cp", "rated"),
        (3, 2, "pf", "rated"),  # rater 3 is external
        (1, 3, "cp", "rated"),
        (1, 3, "sc", "rated"),
        (2, 3, "cp", "rated"),
        (2, 3, "pq", "rated"),
    ]
    try:
        migrate.upgrade(engine, "0005")
        with engine.begin() as c:
            c.execute(
                sa.text("INSERT INTO datasets (id, name, created_at, for_rating) VALUES (1, 'ds', :t, :y)"),
                {"t": now, "y": True},
            )
            c.execute(
                sa.text("INSERT INTO subjects (id, dataset_id, name, created_at) VALUES (1, 1, 'x', :t)"), {"t": now}
            )
            for sid in (1, 2, 3):
                c.execute(
                    sa.text(
                        "INSERT INTO samples (id, dataset_id, subject_id, prompt, content_key, created_at) "
                        "VALUES (:i, 1, 1, 'p', :k, :t)"
                    ),
                    {"i": sid, "k": f"k{sid}", "t": now},
                )
            for rid, external in ((1, False), (2, False), (3, True)):
                c.execute(
                    sa.text("INSERT INTO raters (id, username, is_external, created_at) VALUES (:i, :u, :e, :t)"),
                    {"i": rid, "u": f"u{rid}", "e": external, "t": now},
                )
            for i, (rid, sid, criterion, status) in enumerate(rows, 1):
                c.execute(
                    sa.text(
                        "INSERT INTO ratings (id, rater_id, sample_id, criterion, score, status, revision, created_at, "
                        "updated_at) VALUES (:i, :r, :s, :c, :v, :st, 1, :t, :t)"
                    ),
                    {
                        "i": i,
                        "r": rid,
                        "s": sid,
                        "c": criterion,
                        "v": 2 if status == "rated" else None,
                        "st": status,
                        "t": now,
                    },
                )
        migrate.upgrade(engine, "0006")
        with engine.connect() as c:
            counts = dict(c.execute(sa.text("SELECT id, complete_ratings FROM samples")).all())
        assert counts == {1: 2, 2: 1, 3: 0}
        migrate.downgrade(engine, "0005")
        assert "complete_ratings" not in {col["name"] for col in sa.inspect(engine).get_columns("samples")}
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT COUNT(*) FROM ratings")).scalar() == len(rows)
    finally:
        engine.dispose()


def test_assignment_reads_the_count(store, add_sample):
    """The overlap rule follows the stored count: a sample with K complete ratings is handed to nobody new."""
    a = add_sample()
    for name in ("ann", "ben", "cy"):
        store.ratings.ensure_rater(name)
    store.ratings.rate_sample("ann", a.id, {"cp": 1, "pf": 1})
    assert store.tasks.next_task("ben", overlap_k=1) is None
    assert store.tasks.next_task("ben", overlap_k=2).sample.id == a.id
    store.ratings.rate_sample("ben", a.id, {"cp": 1, "pf": 1})
    assert store.tasks.next_task("cy", overlap_k=2) is None
    assert store.tasks.progress("cy", overlap_k=2) == (0, 0, 1)
    # A count changed behind the workbench's back changes the assignment (what `db check` guards against).
    store.tx.write(lambda s: s.execute(sa.update(t.Sample).where(t.Sample.id == a.id).values(complete_ratings=0)))
    assert store.tasks.next_task("cy", overlap_k=2).sample.id == a.id
    assert store.ratings.recount_complete() == 1


def test_the_sample_lock_lets_rows_referring_to_the_sample_be_inserted(store, add_sample):
    """On PostgreSQL a rating write's sample lock is `FOR NO KEY UPDATE`: a transaction that is inserting rows
    referring to the sample (it holds a key-share lock on it, as a batch storing metric values does until it commits)
    does not hold the rating back; `FOR UPDATE` would wait for it (here: fail at once, with `lock_timeout`)."""
    if store.backend != "postgresql":
        pytest.skip("SQLite takes no row locks: its writers are serialized by BEGIN IMMEDIATE")
    a = add_sample()
    with store.engine.connect() as other:
        other.execute(sa.text("SELECT id FROM samples WHERE id = :i FOR KEY SHARE"), {"i": a.id})

        def lock(s, strength: str | None):
            s.execute(sa.text("SET LOCAL lock_timeout = '200ms'"))
            if strength is None:
                completion.lock_samples(s, [a.id])
            else:
                s.execute(sa.text(f"SELECT id FROM samples WHERE id = :i {strength}"), {"i": a.id})

        with Session(store.engine) as s, s.begin():  # not `store.tx.write`: it would retry a lock timeout
            lock(s, None)
        with pytest.raises(sa.exc.OperationalError, match="lock"):
            with store.engine.begin() as c:
                lock(c, "FOR UPDATE")
        other.rollback()
