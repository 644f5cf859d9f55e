"""Integrity pieces of issue 12 in storage: value identity (unique index, migration backfill), masks added once,
`samples.put`'s created flag, `Store.check` on a damaged store, characters and numbers no column can hold,
spreadsheet-safe CSV, bytes stored per dataset."""

from __future__ import annotations

import csv
import io
import threading

import pytest
import sqlalchemy as sa

from storage import InvalidInput, Provenance, RecordInput, ValueInput, open_store
from storage import schema as t
from storage.repo._common import insert_returning_id
from storage.repo.exports import neutralize_formula


def _png(seed: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (4, 4), (seed % 256, 7, 9)).save(buf, format="PNG")
    return buf.getvalue()


def _mask(seed: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    img = Image.new("L", (4, 4), 0)
    img.putpixel((seed % 4, 0), 255)
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture()
def store(database_url, tmp_path):
    with open_store(database_url, tmp_path / "data") as s:
        yield s


def _sample(store, key: str = "k1", dataset: str = "d", prompt: str = "a cat"):
    ref, out = store.images.add(_png(1)), store.images.add(_png(2))
    return store.samples.put(dataset, references=[ref], output=out, prompt=prompt, subject="cat", external_key=key)


def test_put_says_who_created_the_sample(store):
    first, created = _sample(store)
    again, created_again = _sample(store)
    assert created and not created_again and first.id == again.id


def test_the_same_value_identity_is_stored_once(store):
    sample, _ = _sample(store)
    prov = Provenance(model_id="m", code_version="v1", params={"a": 1})
    item = RecordInput(sample.id, values=(ValueInput("clip_i", 0.5, prov),))
    assert len(store.recording.record([item])[0].new_values) == 1
    assert store.recording.record([item])[0].new_values == ()  # done: nothing added
    (row,) = store.metrics.history(sample.id)
    columns = dict(
        sample_id=sample.id,
        metric="clip_i",
        value=0.5,
        reason=None,
        extras=None,
        model_id="m",
        revision=None,
        params={"a": 1},
        code_version="v1",
        device=None,
        dtype=None,
        provenance_key=row.provenance_key,
        computed_at=row.computed_at,
        masks_key="",
        sequence=0,
    )
    # What a second writer racing the first would insert: the unique identity leaves it out.
    assert store.tx.write(lambda s: insert_returning_id(s, t.MetricValue, columns)) is None
    assert store.tx.write(lambda s: insert_returning_id(s, t.MetricValue, {**columns, "sequence": 1})) is not None
    assert len(store.metrics.history(sample.id)) == 2


def test_masks_are_added_once_even_by_concurrent_imports(store, backend):
    sample, _ = _sample(store)
    png = _mask(1)
    results = []

    def add() -> None:
        results.append(store.masks.add_if_new(sample.id, "output", 0, png, source="imported", created_by="import"))

    threads = [threading.Thread(target=add) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sum(added for _, added in results) == 1
    assert len(store.masks.history(sample.id, "output", 0)) == 1
    other, added = store.masks.add_if_new(sample.id, "output", 0, _mask(2), source="imported")
    assert added and other.version == 2
    back, added = store.masks.add_if_new(sample.id, "output", 0, png, source="imported")
    assert not added and back.version == 1  # a mask the image already had is not added again


def test_check_finds_missing_resized_and_overwritten_blobs(store):
    sample, _ = _sample(store, key="a")
    assert store.check().ok and store.check(deep=True).ok
    assert any("no metric value" in n for n in store.check().notes)
    ref, out = sample.references[0], sample.output
    store.blobs.path(ref).unlink()
    path = store.blobs.path(out)
    data = path.read_bytes()
    path.write_bytes(bytes([data[0] ^ 1]) + data[1:])  # same size, other bytes
    shallow = store.check()
    assert not shallow.ok and any("blob file missing" in p and ref[:12] in p for p in shallow.problems)
    assert not any("hash" in p for p in shallow.problems)
    deep = store.check(deep=True)
    assert any("does not hash to its name" in p and out in p for p in deep.problems)
    path.write_bytes(data + b"x")
    assert any("of another size" in p for p in store.check().problems)


def test_db_check_deep_command_on_a_damaged_store(tmp_path, capsys):
    from masc_ui.cli import main

    data = tmp_path / "data"
    with open_store(None, data) as s:
        sample, _ = _sample(s)
        s.blobs.path(sample.output).write_bytes(b"overwritten")
    assert main(["db", "check", "--deep", "--data-dir", str(data)]) == 1
    out = capsys.readouterr().out
    assert "of another size" in out and "no metric value" in out
    with open_store(None, data) as s:
        s.blobs.path(sample.output).write_bytes(_png(2))
    assert main(["db", "check", "--deep", "--data-dir", str(data)]) == 0
    assert capsys.readouterr().out.startswith("ok")


def test_text_no_column_can_hold_and_oversized_ids_are_refused(store):
    with pytest.raises(InvalidInput, match="prompt contains a NUL character at position 2"):
        _sample(store, prompt="a\x00cat")
    with pytest.raises(InvalidInput, match="not valid UTF-8"):
        _sample(store, key="k\udce9")
    with pytest.raises(InvalidInput, match="must fit in 64 bits"):
        store.samples.get(10**20)
    assert store.samples.datasets() == []  # nothing was written


def test_csv_cells_that_spreadsheets_would_run_are_neutralized(store, tmp_path):
    sample, _ = _sample(store, key="=cmd|' /C calc'!A0", prompt='=HYPERLINK("http://x","y")')
    store.metrics.record(sample.id, "clip_i", -0.25, provenance=Provenance(model_id="m", code_version="v"))
    target = tmp_path / "out.csv"
    store.exports.write_csv(target)
    row = next(csv.DictReader(target.open(newline="", encoding="utf-8")))
    assert row["prompt"] == '\'=HYPERLINK("http://x","y")' and row["external_key"].startswith("'=cmd")
    assert row["metric:clip_i"] == "-0.25"  # numbers are numbers, negative ones too
    assert [neutralize_formula(x) for x in ("+1", "-x", "@a", "\tx", "ok", "")] == [
        "'+1",
        "'-x",
        "'@a",
        "'\tx",
        "ok",
        "",
    ]
    jsonl = tmp_path / "out.jsonl"
    store.exports.write_jsonl(jsonl)
    assert '"prompt": "=HYPERLINK' in jsonl.read_text()  # JSON lines keep the text as stored


def test_stored_bytes_of_a_dataset(store):
    assert store.samples.stored_bytes("d") == 0
    sample, _ = _sample(store)
    store.masks.add(sample.id, "output", 0, _mask(3), source="drawn")
    expected = len(_png(1)) + len(_png(2)) + len(_mask(3))
    assert store.samples.stored_bytes("d") == expected


def test_migration_gives_old_duplicate_values_their_own_sequence(database_url, tmp_path):
    from storage import migrate
    from storage.engine import create_engine, sqlite_url

    engine = create_engine(database_url or sqlite_url(tmp_path))
    try:
        migrate.upgrade(engine, "0002")
        now = "2026-01-01 00:00:00"
        with engine.begin() as c:
            c.execute(sa.text("INSERT INTO datasets (id, name, created_at) VALUES (1, 'd', :t)"), {"t": now})
            c.execute(
                sa.text("INSERT INTO subjects (id, dataset_id, name, created_at) VALUES (1, 1, 's', :t)"), {"t": now}
            )
            c.execute(
                sa.text(
                    "INSERT INTO samples (id, dataset_id, subject_id, prompt, content_key, created_at) "
                    "VALUES (1, 1, 1, 'p', 'c', :t)"
                ),
                {"t": now},
            )
            for vid in (1, 2, 3):  # an older version stored the same value twice, then another provenance
                c.execute(
                    sa.text(
                        "INSERT INTO metric_values (id, sample_id, metric, value, params, code_version, "
                        "provenance_key, computed_at) VALUES (:i, 1, 'clip_i', 0.5, '{}', 'v', :k, :t)"
                    ),
                    {"i": vid, "k": "k1" if vid < 3 else "k2", "t": now},
                )
        migrate.upgrade(engine)
        with engine.connect() as c:
            rows = c.execute(sa.text("SELECT id, masks_key, sequence FROM metric_values ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [(1, "", 0), (2, "", 1), (3, "", 0)]
        migrate.check_models_match(engine)
        migrate.downgrade(engine, "0002")
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT COUNT(*) FROM metric_values")).scalar() == 3
    finally:
        engine.dispose()
