"""Datasets marked for rating (schema revision 0003): the flag, task scope, the upgrade's defaults, dumps, and
the skip/flag status and flag reason in browse rows and exports."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
import sqlalchemy as sa

from storage import NotFound, migrate
from storage.engine import create_engine, sqlite_url


def test_new_datasets_are_not_marked_and_the_flag_can_be_set(store, add_sample):
    add_sample("scratch")
    assert [(d.name, d.for_rating) for d in store.samples.datasets()] == [("scratch", False)]
    marked = store.samples.set_for_rating("scratch", True)
    assert marked.for_rating and marked.name == "scratch"
    assert store.samples.set_for_rating("scratch", True).for_rating  # the same again changes nothing
    assert store.samples.datasets()[0].for_rating
    assert not store.samples.set_for_rating("scratch", False).for_rating
    with pytest.raises(NotFound, match="'nope'"):
        store.samples.set_for_rating("nope", True)


def test_tasks_for_rating_only_come_from_marked_datasets(store, add_sample):
    bench = add_sample("bench")
    scratch = add_sample("scratch")
    store.ratings.ensure_rater("alice")
    assert store.tasks.next_task("alice", for_rating_only=True) is None
    assert store.tasks.progress("alice", for_rating_only=True) == (0, 0, 0)
    store.samples.set_for_rating("bench", True)
    task = store.tasks.next_task("alice", for_rating_only=True)
    assert task is not None and task.sample.id == bench.id
    assert store.tasks.progress("alice", for_rating_only=True) == (0, 1, 1)
    store.ratings.rate_sample("alice", bench.id, {"cp": 1, "pf": 2})
    assert store.tasks.next_task("alice", for_rating_only=True) is None
    # Without the option (or naming the dataset) every dataset is in scope, as before revision 0003.
    assert store.tasks.next_task("alice").sample.id == scratch.id
    assert store.tasks.next_task("alice", "scratch", for_rating_only=True).sample.id == scratch.id
    back = store.tasks.previous_task("alice", before_sample_id=None, for_rating_only=True)
    assert back is not None and back.sample.id == bench.id


def test_exports_carry_status_and_flag_reason(store, add_sample):
    a, b = add_sample(), add_sample()
    store.ratings.ensure_rater("alice")
    store.ratings.ensure_rater("bob")
    store.ratings.rate_sample("alice", a.id, {"cp": 3, "pf": 1})
    store.ratings.rate_sample("alice", b.id, {"cp": None, "pf": None}, status="skipped")
    store.ratings.rate_sample("bob", a.id, {"cp": None, "pf": None}, status="flagged", note="the output is blank")
    rows = {r.sample.id: r for r in store.views.browse("ds")}
    assert rows[a.id].statuses == {"alice": {"cp": "rated", "pf": "rated"}, "bob": {"cp": "flagged", "pf": "flagged"}}
    assert rows[a.id].notes == {"bob": "the output is blank"}
    out = io.StringIO()
    store.exports.write_csv(out, "ds")
    table = {r["sample_id"]: r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert table[str(a.id)]["status:alice"] == "rated" and table[str(a.id)]["rating:alice:cp"] == "3"
    assert table[str(a.id)]["status:bob"] == "flagged" and table[str(a.id)]["note:bob"] == "the output is blank"
    assert table[str(b.id)]["status:alice"] == "skipped" and table[str(b.id)]["rating:alice:cp"] == ""
    assert table[str(b.id)]["status:bob"] == "" and table[str(b.id)]["note:bob"] == ""
    store.ratings.rate("alice", b.id, "cp", 2)  # cp answered later, pf still skipped
    _, rows = store.exports.table("ds")
    assert {r["sample_id"]: r for r in rows}[b.id]["status:alice"] == "cp=rated;pf=skipped"


def test_dump_and_restore_keep_the_flag(store, add_sample, make_store, tmp_path):
    add_sample("bench")
    add_sample("scratch")
    store.samples.set_for_rating("bench", True)
    path = tmp_path / "dump.json"
    store.dumps.dump(path, include_blobs=True)
    target = make_store("restored")
    target.dumps.restore(path)
    assert [(d.name, d.for_rating) for d in target.samples.datasets()] == [("bench", True), ("scratch", False)]


def test_upgrade_marks_existing_datasets_except_the_score_tabs_scratch_dataset(database_url, tmp_path):
    engine = create_engine(database_url or sqlite_url(tmp_path))
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    try:
        migrate.upgrade(engine, "0002")
        with engine.begin() as c:
            for i, name in enumerate(("dbpp", "workbench", "imagenhub-x"), 1):
                c.execute(
                    sa.text("INSERT INTO datasets (id, name, created_at) VALUES (:i, :n, :t)"),
                    {"i": i, "n": name, "t": now},
                )
            if c.dialect.name == "postgresql":
                c.execute(sa.text("SELECT setval(pg_get_serial_sequence('datasets', 'id'), 3)"))
        migrate.upgrade(engine, "0003")
        with engine.connect() as c:
            flags = dict(c.execute(sa.text("SELECT name, for_rating FROM datasets")).all())
        assert {k: bool(v) for k, v in flags.items()} == {"dbpp": True, "workbench": False, "imagenhub-x": True}
        migrate.downgrade(engine, "0002")
        assert "for_rating" not in {col["name"] for col in sa.inspect(engine).get_columns("datasets")}
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT COUNT(*) FROM datasets")).scalar() == 3
    finally:
        engine.dispose()


def test_statuses_of_a_raters_finished_tasks(store, add_sample):
    a, b, c, d = (add_sample() for _ in range(4))
    store.ratings.ensure_rater("alice")
    store.ratings.rate_sample("alice", a.id, {"cp": 3, "pf": 1})
    store.ratings.rate_sample("alice", b.id, {"cp": None, "pf": None}, status="skipped")
    store.ratings.rate_sample("alice", c.id, {"cp": None, "pf": None}, status="flagged", note="broken image")
    store.ratings.rate("alice", d.id, "cp", 2)  # started, not finished
    assert store.tasks.statuses("alice", "ds") == {a.id: "rated", b.id: "skipped", c.id: "flagged"}
    assert store.tasks.statuses("alice", for_rating_only=True) == {}
    # The rater's screen after an answer reads the same three things from one snapshot.
    task, progress, statuses = store.tasks.rater_screen("alice", "ds", overlap_k=2)
    assert statuses == store.tasks.statuses("alice", "ds")
    assert (task.sample.id if task else None, progress) == (
        (lambda t, p: (t.sample.id if t else None, p))(*store.tasks.next_task_and_progress("alice", "ds", overlap_k=2))
    )
    assert task is not None and task.sample.id == d.id  # the started sample comes first
