"""Ratings-only samples (no images) and the imported criteria sc / pq (schema revision 0002): adding,
completing with images later under the same key, task assignment, browse/export, and the migration
from revision 0001 with data in it."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
import sqlalchemy as sa

from storage import DuplicateKey, ExternalRating, InvalidInput, InvalidRating, migrate
from storage.engine import create_engine, sqlite_url


def ratings_only(store, key="m/x-0", **kwargs):
    fields = dict(subject="kitten", category="animal", method="m", external_key=key)
    fields.update(kwargs)
    return store.samples.add("ds", **fields)


def test_ratings_only_sample_is_stored_without_images(store):
    a = ratings_only(store)
    assert a.ratings_only and a.output is None and a.references == () and a.prompt is None
    assert ratings_only(store) == a  # idempotent
    b = ratings_only(store, key="m/x-1", prompt="a kitten on a sofa")
    assert b.prompt == "a kitten on a sofa" and store.samples.count("ds") == 2
    assert store.samples.get_by_key("ds", "m/x-0") == a


def test_ratings_only_input_is_checked(store, png):
    img = store.images.add(png(1))
    with pytest.raises(InvalidInput, match="needs an external_key"):
        store.samples.add("ds", subject="kitten")
    with pytest.raises(InvalidInput, match="needs its output image"):
        store.samples.add("ds", references=[img], subject="kitten", external_key="k")
    with pytest.raises(InvalidInput, match="non-empty list"):
        store.samples.add("ds", output=img, prompt="p", subject="kitten", external_key="k")
    with pytest.raises(InvalidInput, match="prompt must be a string"):
        store.samples.add("ds", references=[img], output=img, subject="kitten", external_key="k")
    assert store.samples.count() == 0


def test_adding_the_images_completes_the_same_sample(store, png):
    a = ratings_only(store, subject="kitten", info={"collection": "c"})
    store.ratings.import_external("dreambench:group1", [ExternalRating(a.id, "cp", 3)])
    ref, out = store.images.add(png(1)), store.images.add(png(2))
    full = dict(
        references=[ref],
        output=out,
        prompt="a kitten",
        subject="Kitten",
        category="animal",
        method="m",
        seed=7,
        external_key="m/x-0",
        info={"prompt_idx": 0},
    )
    done = store.samples.add("ds", **full)
    assert done.id == a.id and not done.ratings_only
    assert (done.output, done.references, done.prompt, done.subject, done.seed) == (
        out,
        (ref,),
        "a kitten",
        "Kitten",
        7,
    )
    assert done.info == {"collection": "c", "prompt_idx": 0}
    assert store.samples.add("ds", **full) == done  # again: nothing changes
    assert ratings_only(store) == done  # a ratings-only add of a complete key returns it
    assert store.samples.count("ds") == 1
    assert [(r.sample_id, r.score) for r in store.ratings.current(dataset="ds")] == [(a.id, 3)]
    with pytest.raises(DuplicateKey, match="differ"):
        store.samples.add("ds", **{**full, "prompt": "another prompt"})


def test_a_key_of_another_method_is_refused(store, png):
    ratings_only(store)
    with pytest.raises(DuplicateKey, match="of method 'm', not 'other'"):
        ratings_only(store, method="other")
    img = store.images.add(png(1))
    with pytest.raises(DuplicateKey, match="of method 'm', not 'other'"):
        store.samples.add(
            "ds", references=[img], output=img, prompt="p", subject="kitten", method="other", external_key="m/x-0"
        )


def test_tasks_never_hand_out_ratings_only_samples(store, add_sample):
    for i in range(4):
        ratings_only(store, key=f"m/x-{i}")
    real = add_sample()
    store.ratings.ensure_rater("alice")
    task = store.tasks.next_task("alice", "ds")
    assert task is not None and task.sample.id == real.id
    assert store.tasks.progress("alice", "ds") == (0, 1, 1)
    store.ratings.rate_sample("alice", real.id, {"cp": 3, "pf": 2})
    assert store.tasks.next_task("alice", "ds") is None
    assert store.tasks.next_task("alice") is None
    assert store.tasks.progress("alice", "ds") == (1, 1, 1)


def test_sc_pq_ratings_and_exports(store, add_sample):
    a = ratings_only(store)
    b = add_sample()
    store.ratings.import_external("imagenhub:rater1", [ExternalRating(a.id, "sc", 2), ExternalRating(a.id, "pq", 4)])
    store.ratings.import_external("group1", [ExternalRating(b.id, "cp", 1)])
    with pytest.raises(InvalidRating, match="'sc' \\(semantic consistency\\)"):
        store.ratings.rate("group1", b.id, "xx", 1)
    rows = {r.sample.id: r for r in store.views.browse("ds")}
    assert set(rows) == {a.id, b.id}
    assert rows[a.id].means["sc"] == 2 and rows[a.id].means["pq"] == 4 and rows[a.id].counts["cp"] == 0
    out = io.StringIO()
    assert store.exports.write_csv(out, "ds") == 2
    table = {r["sample_id"]: r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert table[str(a.id)]["output_sha256"] == "" and table[str(a.id)]["reference_sha256s"] == ""
    assert table[str(a.id)]["rating:imagenhub:rater1:sc"] == "2" and table[str(a.id)]["mean:pq"] == "4.0"
    assert table[str(b.id)]["output_sha256"] == b.output
    columns, _ = store.exports.table()
    assert "mean:sc" in columns and "n:pq" in columns


def test_export_without_imported_criteria_keeps_cp_pf_columns(store, add_sample):
    add_sample()
    columns, _ = store.exports.table()
    assert [c for c in columns if c.startswith("mean:")] == ["mean:cp", "mean:pf"]


def _seed_revision_0001(engine: sa.Engine) -> None:
    """One sample with an output image, a rating and its history, written at schema revision 0001."""
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    sha = "a" * 64
    with engine.begin() as c:
        c.execute(sa.text("INSERT INTO datasets (id, name, created_at) VALUES (1, 'ds', :t)"), {"t": now})
        c.execute(
            sa.text("INSERT INTO subjects (id, dataset_id, name, created_at) VALUES (1, 1, 'dog', :t)"), {"t": now}
        )
        c.execute(sa.text("INSERT INTO blobs VALUES (:s, 1, 'image/png', :t)"), {"s": sha, "t": now})
        c.execute(
            sa.text(
                "INSERT INTO samples (id, dataset_id, subject_id, prompt, content_key, created_at) "
                "VALUES (1, 1, 1, 'p', :k, :t)"
            ),
            {"k": "b" * 64, "t": now},
        )
        c.execute(
            sa.text(
                "INSERT INTO sample_images (id, sample_id, role, position, blob_sha256) "
                "VALUES (1, 1, 'output', 0, :s), (2, 1, 'reference', 0, :s)"
            ),
            {"s": sha},
        )
        c.execute(
            sa.text("INSERT INTO raters (id, username, is_external, created_at) VALUES (1, 'al', false, :t)"),
            {"t": now},
        )
        c.execute(
            sa.text(
                "INSERT INTO ratings (id, rater_id, sample_id, criterion, score, status, revision, "
                "created_at, updated_at) VALUES (1, 1, 1, 'cp', 3, 'rated', 2, :t, :t)"
            ),
            {"t": now},
        )
        c.execute(
            sa.text(
                "INSERT INTO rating_history (id, rating_id, revision, score, status, rated_at, "
                "replaced_at) VALUES (1, 1, 1, 2, 'rated', :t, :t)"
            ),
            {"t": now},
        )
        if c.dialect.name == "postgresql":  # rows with explicit ids: move the id sequences past them
            for table in ("datasets", "subjects", "samples", "sample_images", "raters", "ratings", "rating_history"):
                c.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 1)"))


def test_upgrade_from_0001_keeps_data_and_downgrade_refuses_new_kinds(database_url, tmp_path):
    from storage import open_store

    engine = create_engine(database_url or sqlite_url(tmp_path))
    try:
        migrate.upgrade(engine, "0001")
        _seed_revision_0001(engine)
        migrate.upgrade(engine)
        assert migrate.current_revision(engine) == migrate.head_revision()
        migrate.check_models_match(engine)
        with open_store(database_url, tmp_path) as store:
            old = store.samples.get(1)
            assert old.prompt == "p" and not old.ratings_only
            assert [(h.revision, h.score) for h in store.ratings.history(1)] == [(1, 2), (2, 3)]
            new = ratings_only(store)
            store.ratings.import_external("imagenhub:rater1", [ExternalRating(new.id, "sc", 4)])
        with pytest.raises(RuntimeError, match="1 ratings of criterion sc or pq.*1 samples without a prompt"):
            migrate.downgrade(engine, "0001")
        assert migrate.current_revision(engine) == migrate.head_revision()  # refused: nothing changed
        with engine.begin() as c:  # without the new kinds of rows, the downgrade goes through
            c.execute(sa.text("DELETE FROM ratings WHERE sample_id = :i"), {"i": new.id})
            c.execute(sa.text("DELETE FROM samples WHERE id = :i"), {"i": new.id})
        migrate.downgrade(engine, "0001")
        assert migrate.current_revision(engine) == "0001"
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT score FROM ratings")).scalar() == 3
            assert c.execute(sa.text("SELECT COUNT(*) FROM rating_history")).scalar() == 1
            if c.dialect.name == "sqlite":
                assert c.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        with pytest.raises(sa.exc.IntegrityError):
            with engine.begin() as c:
                c.execute(sa.text("UPDATE ratings SET criterion = 'sc'"))
    finally:
        engine.dispose()


def test_sqlite_foreign_keys_are_on_again_after_migrating(tmp_path):
    engine = create_engine(sqlite_url(tmp_path))
    try:
        migrate.upgrade(engine)
        with engine.connect() as c:
            assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        engine.dispose()


def test_add_many_in_one_transaction(store, png):
    img = store.images.add(png(1))
    items = [dict(subject="s", method="m", external_key=f"m/{i}") for i in range(3)]
    items.append(dict(references=[img], output=img, prompt="p", subject="s", method="m", external_key="m/0"))
    records = store.samples.add_many("ds", items)
    assert [r.external_key for r in records] == ["m/0", "m/1", "m/2", "m/0"]
    assert records[0].id == records[3].id and not records[3].ratings_only and records[1].ratings_only
    assert store.samples.count("ds") == 3
    with pytest.raises(
        InvalidInput, match=r"samples\[1\]: a ratings-only sample \(output=None\) needs an external_key"
    ):
        store.samples.add_many("ds", [dict(subject="s", external_key="m/9"), dict(subject="s")])
    with pytest.raises(DuplicateKey):  # all or nothing: m/9 is not stored either
        store.samples.add_many(
            "ds",
            [dict(subject="s", method="m", external_key="m/9"), dict(subject="s", method="other", external_key="m/1")],
        )
    assert store.samples.get_by_key("ds", "m/9") is None and store.samples.count("ds") == 3
