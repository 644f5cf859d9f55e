"""`masc-ui db upgrade|check|dump|restore` round trip on a temporary SQLite database."""

import json

from masc_ui.cli import main


def _args(tmp_path, *rest):
    return ["db", *rest, "--data-dir", str(tmp_path / "data")]


def test_upgrade_check_dump_restore(tmp_path, capsys):
    assert main(_args(tmp_path, "upgrade")) == 0
    assert "revision" in capsys.readouterr().out
    assert main(_args(tmp_path, "check")) == 0
    assert capsys.readouterr().out.strip() == "ok"

    from storage import open_store

    with open_store(None, tmp_path / "data") as store:
        store.ratings.ensure_rater("alice")
    dump = tmp_path / "dump.json"
    assert main(_args(tmp_path, "dump", str(dump))) == 0
    assert "alice" in json.dumps(json.loads(dump.read_text()))

    fresh = tmp_path / "fresh"
    assert main(["db", "restore", str(dump), "--data-dir", str(fresh)]) == 0
    with open_store(None, fresh) as store:
        assert [r.username for r in store.ratings.raters()] == ["alice"]


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(_args(tmp_path, "dump")) == 2
    assert "needs a FILE" in capsys.readouterr().err
    assert main(_args(tmp_path, "restore", str(tmp_path / "nope.json"))) == 2
    assert "does not exist" in capsys.readouterr().err


def test_datasets_and_for_rating(tmp_path, capsys):
    from storage import open_store

    with open_store(None, tmp_path / "data") as store:
        store.samples.ensure_dataset("bench")
        store.samples.ensure_dataset("workbench")
    assert main(_args(tmp_path, "datasets")) == 0
    assert capsys.readouterr().out.splitlines() == [
        "bench\t0 samples\tnot for rating",
        "workbench\t0 samples\tnot for rating",
    ]
    assert main(_args(tmp_path, "for-rating", "bench")) == 0
    assert "'bench' is now marked for rating" in capsys.readouterr().out
    assert main(_args(tmp_path, "datasets")) == 0
    assert "bench\t0 samples\tfor rating" in capsys.readouterr().out
    assert main(_args(tmp_path, "for-rating", "bench", "--off")) == 0
    assert "no longer marked" in capsys.readouterr().out
    dump = tmp_path / "dump.json"
    assert main(_args(tmp_path, "for-rating", "workbench")) == 0 and main(_args(tmp_path, "dump", str(dump))) == 0
    fresh = tmp_path / "fresh"
    assert main(["db", "restore", str(dump), "--data-dir", str(fresh)]) == 0
    capsys.readouterr()
    assert main(["db", "datasets", "--data-dir", str(fresh)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "bench\t0 samples\tnot for rating",
        "workbench\t0 samples\tfor rating",
    ]
    assert main(_args(tmp_path, "for-rating")) == 2
    assert "needs a DATASET" in capsys.readouterr().err
    assert main(_args(tmp_path, "for-rating", "nope")) == 2
    assert "'nope' is not in the database" in capsys.readouterr().err
