"""A corrupt SQLite file: `db check`, `db check --deep` and `db dump` say it is corrupt and offer `db salvage`, which
recovers what is readable into a new file and says how to switch to it."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from masc_ui.cli import main
from storage import open_store

PAGE = 4096
RATERS = 400


def _database(data: Path) -> Path:
    """A database with one dataset and many raters (their table spans the last pages of the file)."""
    with open_store(None, data) as store:
        store.samples.ensure_dataset("kept")
        for i in range(RATERS):
            store.ratings.ensure_rater(f"rater-{i:04d}-" + "x" * 40)
    return data / "masc.sqlite3"


def _damage_last_pages(path: Path, pages: int = 3) -> None:
    data = bytearray(path.read_bytes())
    end = len(data) // PAGE
    for page in range(end - pages, end):
        data[page * PAGE : (page + 1) * PAGE] = b"\xa5" * PAGE
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("command", [["check"], ["check", "--deep"], ["dump", "out.json"]])
def test_commands_on_a_corrupt_file_say_corrupt_and_offer_salvage(tmp_path, capsys, command):
    data = tmp_path / "data"
    _damage_last_pages(_database(data))
    args = [a if a != "out.json" else str(tmp_path / a) for a in command]
    assert main(["db", *args, "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert "is corrupt (database disk image is malformed)" in err and "masc-ui db salvage NEW_FILE" in err
    assert "writable" not in err and len(err.strip().splitlines()) == 1


def test_a_failed_integrity_check_names_salvage_in_the_report():
    from storage.repo.checks import IntegrityReport

    lines = IntegrityReport("*** in database main ***\nPage 40: btreeInitPage() returns error code 11").lines()
    assert lines[0].startswith("database: *** in database main") and "masc-ui db salvage NEW_FILE" in lines[1]


def test_salvage_without_the_sqlite3_tool_copies_what_is_readable(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data"
    damaged = _database(data)
    _damage_last_pages(damaged)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # no sqlite3 command-line tool to find
    target = tmp_path / "salvaged.sqlite3"
    assert main(["db", "salvage", str(target), "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"salvaged {damaged} into {target} with Python's sqlite3 module, table by table")
    assert "(no sqlite3 command-line tool (3.29 or newer) on PATH)" in out
    assert "cut short: raters: " in out and f"move {target} to {damaged}" in out
    assert f"DATABASE_URL=sqlite:///{target}" in out
    assert main(["db", "datasets", "--db", f"sqlite:///{target}", "--data-dir", str(data)]) == 0
    assert capsys.readouterr().out.startswith("kept\t0 samples")
    rows = sqlite3.connect(target).execute("SELECT count(*) FROM raters").fetchone()[0]
    assert 0 <= rows < RATERS  # the rows before the damaged pages
    assert main(["db", "salvage", str(target), "--data-dir", str(data)]) == 2  # never overwrites a file
    assert "already exists; name a new file" in capsys.readouterr().err


def test_salvage_with_the_sqlite3_tool_uses_recover(tmp_path, capsys):
    tool = shutil.which("sqlite3")
    if tool is None:
        pytest.skip("no sqlite3 command-line tool on PATH")
    probe = tmp_path / "probe.sqlite3"
    sqlite3.connect(probe).execute("CREATE TABLE t (x)").connection.commit()
    if subprocess.run([tool, str(probe), ".recover"], capture_output=True).returncode != 0:
        pytest.skip(f"{tool} has no working .recover (built without SQLITE_ENABLE_DBPAGE_VTAB)")
    data = tmp_path / "data"
    _damage_last_pages(_database(data))
    target = tmp_path / "salvaged.sqlite3"
    assert main(["db", "salvage", str(target), "--data-dir", str(data)]) == 0
    assert "with the sqlite3 command-line tool's .recover" in capsys.readouterr().out


def test_salvage_names_a_tool_that_failed(tmp_path, capsys):
    """A sqlite3 tool whose `.recover` fails (Debian builds one without the page reader): the copy, with the reason."""
    from storage.salvage import salvage_sqlite

    tool = shutil.which("sqlite3")
    if tool is None:
        pytest.skip("no sqlite3 command-line tool on PATH")
    data = tmp_path / "data"
    damaged = _database(data)
    result = salvage_sqlite(damaged, tmp_path / "new.sqlite3", sqlite3_tool=tool)
    assert result.rows["datasets"] == 1
    if result.method == "python-copy":
        assert result.why_not_tool.startswith(f"{tool} .recover failed")
    else:
        assert result.rows["raters"] == RATERS


def test_salvage_refuses_postgresql(capsys):
    from storage.salvage import sqlite_file

    with pytest.raises(ValueError, match="salvage recovers SQLite files only"):
        sqlite_file("postgresql+psycopg://u@h/db", Path("."))
