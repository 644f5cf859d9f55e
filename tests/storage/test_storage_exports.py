"""Browse rows, CSV/JSONL exports and the full JSON dump/restore round trip."""

from __future__ import annotations

import csv
import io
import json

import pytest

from storage import ExternalRating, RestoreError, open_store

PROV = {"model_id": "m", "code_version": "1", "params": {"k": 1}}


@pytest.fixture()
def populated(png, store, add_sample):
    a = add_sample(method="dreambooth", category="live", seed=1, external_key="dog-0", info={"src": "x.png"})
    b = add_sample(n_refs=2, method="textual_inversion", subject="cat")
    mask = store.masks.add(a.id, "output", 0, png(90), source="sam", params={"points": [[3, 4]]})
    store.metrics.record(
        a.id, "masc_cp", 0.123456789012345, provenance=PROV, mask_version_ids=[mask.id], extras={"per_ref": [0.1]}
    )
    store.metrics.record(a.id, "masc_cp", 0.5, provenance=dict(PROV, params={"k": 2}), mask_version_ids=[mask.id])
    store.metrics.record(b.id, "clip_t", None, provenance=PROV, reason="empty prompt")
    for name in ("alice", "bob"):
        store.ratings.ensure_rater(name)
    store.ratings.rate_sample("alice", a.id, {"cp": 4, "pf": 2}, seconds_spent=12.25, presentation_order=1)
    store.ratings.rate("alice", a.id, "cp", 3)  # an edit with history
    store.ratings.rate_sample("bob", a.id, {"cp": 2, "pf": 3})
    store.ratings.rate_sample("bob", b.id, {"cp": None, "pf": None}, status="flagged", note="nsfw?")
    store.ratings.import_external("group1", [ExternalRating(b.id, "cp", 1)])
    return a, b


def test_browse_rows(store, populated):
    a, b = populated
    rows = store.views.browse("ds")
    assert [r.sample.id for r in rows] == [a.id, b.id]
    assert rows[0].metrics == {"masc_cp": 0.5}
    assert rows[0].ratings == {"alice": {"cp": 3, "pf": 2}, "bob": {"cp": 2, "pf": 3}}
    assert rows[0].means == {"cp": 2.5, "pf": 2.5} and rows[0].counts == {"cp": 2, "pf": 2}
    assert rows[1].metrics == {"clip_t": None}
    assert rows[1].means == {"cp": 1.0, "pf": None} and rows[1].counts == {"cp": 1, "pf": 0}
    assert [r.sample.id for r in store.views.browse(method="textual_inversion")] == [b.id]
    assert [r.sample.id for r in store.views.browse(subject="dog", limit=5)] == [a.id]


def test_csv_and_jsonl_exports(store, populated, tmp_path):
    a, b = populated
    n = store.exports.write_csv(tmp_path / "out" / "table.csv", dataset="ds")
    assert n == 2
    with open(tmp_path / "out" / "table.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["sample_id"] == str(a.id) and rows[0]["external_key"] == "dog-0"
    assert rows[0]["metric:masc_cp"] == "0.5" and rows[1]["metric:clip_t"] == ""
    assert rows[0]["rating:alice:cp"] == "3" and rows[1]["rating:bob:cp"] == ""
    assert rows[1]["rating:group1:cp"] == "1" and rows[1]["rating:group1:pf"] == ""
    assert rows[0]["mean:cp"] == "2.5" and rows[1]["n:pf"] == "0"
    assert rows[1]["reference_sha256s"] == ";".join(b.references)
    buffer = io.StringIO()
    assert store.exports.write_jsonl(buffer) == 2
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert lines[1]["reference_sha256s"] == list(b.references)
    assert lines[1]["metric:clip_t"] is None and lines[0]["rating:bob:pf"] == 3
    columns, table = store.exports.table()
    assert list(lines[0]) == columns and table == lines
    assert columns[-4:] == ["mean:cp", "mean:pf", "n:cp", "n:pf"]


def test_dump_restore_round_trips_exactly(store, populated, make_store, tmp_path):
    path = tmp_path / "dump.json"
    store.dumps.dump(path, include_blobs=True)
    first = json.loads(path.read_text(encoding="utf-8"))
    assert {k: len(v["rows"]) for k, v in first["tables"].items()}["rating_history"] == 1
    target = make_store("restored")
    counts = target.dumps.restore(path)
    assert counts["ratings"] == 7 and counts["metric_values"] == 3
    assert target.dumps.dump_dict(include_blobs=True) == first
    # ids and sequences continue after the restored rows
    a, _ = populated
    assert target.ratings.ensure_rater("carol").id == 4
    assert target.views.browse() == store.views.browse()
    assert target.images.read(a.output, verify=True) == store.images.read(a.output)


def test_restore_refuses_bad_input(store, populated, make_store, tmp_path):
    dump = store.dumps.dump_dict()
    with pytest.raises(RestoreError, match="not empty"):
        store.dumps.restore(dump)
    fresh = make_store("fresh")
    with pytest.raises(RestoreError, match="blob.*not in the blob store"):
        fresh.dumps.restore(dump)  # no blobs embedded, none copied
    with pytest.raises(RestoreError, match="not a MaSC Workbench dump"):
        fresh.dumps.restore({"hello": 1})
    with pytest.raises(RestoreError, match="schema revision"):
        fresh.dumps.restore(dict(dump, schema_revision="9999"))
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RestoreError, match="cannot read dump"):
        fresh.dumps.restore(tmp_path / "broken.json")
    assert fresh.samples.count() == 0


@pytest.mark.postgres
def test_dump_moves_sqlite_to_postgres(png, tmp_path, pg_schemas):
    """A team moving from the embedded SQLite to PostgreSQL: dump, restore elsewhere, same content."""
    with open_store(None, tmp_path / "solo") as solo:
        img = solo.images.add(png(1))
        sample = solo.samples.add("ds", references=[img], output=img, prompt="p", subject="s")
        solo.ratings.ensure_rater("alice")
        solo.ratings.rate("alice", sample.id, "pf", 1)
        solo.metrics.record(sample.id, "clip_t", 0.1 + 0.2, provenance=PROV)
        dump = solo.dumps.dump_dict(include_blobs=True)
    with open_store(pg_schemas.new_url(), tmp_path / "team") as team:
        team.dumps.restore(dump)
        assert team.dumps.dump_dict(include_blobs=True) == dump
