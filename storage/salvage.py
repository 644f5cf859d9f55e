"""Recovering what is readable of a damaged SQLite database into a new file (`masc-ui db salvage NEW_FILE`).

Two ways, the first one available:
- `sqlite3-recover`: the sqlite3 command-line tool's `.recover` (SQLite 3.29 or newer on PATH), which reads the
  file page by page and also rescues rows of damaged tables (rows it cannot place go to a `lost_and_found` table);
- `python-copy`: Python's `sqlite3` module, table by table: the schema (`sqlite_master`) is created in the new
  file, then each table's rows are copied as far as they can be read (a table cut short by a damaged page is
  named in the result). This is what `Connection.iterdump()` does, continued past a table that fails.

The damaged file is only read. The new file must not exist yet. The blob store (images, masks) is not touched:
the recovered database points into the same data directory.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from .engine import sqlite_url
from .errors import InvalidInput, StorageError

RECOVER_MIN_VERSION = (3, 29, 0)
"""The first sqlite3 command-line tool with `.recover`."""
RECOVER_TIMEOUT_S = 3600
"""How long the sqlite3 tool may take for one salvage."""


@dataclass
class SalvageResult:
    """What a salvage wrote."""

    source: Path
    target: Path
    method: str
    """`sqlite3-recover` or `python-copy` (module docstring)."""
    rows: dict[str, int] = field(default_factory=dict)
    """Table -> rows in the new file."""
    cut_short: dict[str, str] = field(default_factory=dict)
    """Table -> why not every row could be read (`python-copy` only)."""
    why_not_tool: str = ""
    """With `python-copy`: why the sqlite3 command-line tool's `.recover` was not used."""

    def lines(self) -> list[str]:
        """A report: how, what, and how to switch to the new file."""
        how = (
            "the sqlite3 command-line tool's .recover"
            if self.method == "sqlite3-recover"
            else f"Python's sqlite3 module, table by table ({self.why_not_tool or 'the sqlite3 tool was not asked'})"
        )
        out = [f"salvaged {self.source} into {self.target} with {how}"]
        out.append("rows recovered: " + (", ".join(f"{t} {n}" for t, n in sorted(self.rows.items())) or "none"))
        out += [f"cut short: {t}: {why}" for t, why in sorted(self.cut_short.items())]
        out += [
            "to switch to it: stop the app and every masc-ui process, move the damaged file (and its -wal and -shm "
            f"files, if any) aside, then move {self.target} to {self.source};",
            f"or point the app at it: DATABASE_URL=sqlite:///{self.target} (--db). Then run `masc-ui db check --deep`.",
        ]
        return out


def sqlite_file(database_url: str | None, data_dir: Path) -> Path:
    """The SQLite file of a database URL (None: the embedded one under `data_dir`); InvalidInput for a server
    database (PostgreSQL has its own tools: `pg_dump`, and recovery from its backups)."""
    url = sa.engine.make_url(database_url or sqlite_url(data_dir))
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        raise InvalidInput(
            "salvage recovers SQLite files only; a PostgreSQL database is recovered with the server's own tools "
            "(pg_dump, its backups)"
        )
    return Path(url.database)


def salvage_sqlite(source: Path, target: Path, *, sqlite3_tool: str | None = "sqlite3") -> SalvageResult:
    """Recover what is readable of the SQLite file `source` into the new file `target` (module docstring).
    `sqlite3_tool`: the command-line tool to try first (None: Python's copy only). InvalidInput when `source` is
    missing or `target` exists; StorageError when nothing could be read."""
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise InvalidInput(f"salvage: {source} does not exist or is not a file")
    if target.exists():
        raise InvalidInput(f"salvage: {target} already exists; name a new file")
    if target.resolve() == source.resolve():
        raise InvalidInput("salvage: the new file must differ from the damaged one")
    target.parent.mkdir(parents=True, exist_ok=True)
    tool = _recover_tool(sqlite3_tool)
    why_not = "no sqlite3 command-line tool (3.29 or newer) on PATH" if sqlite3_tool else ""
    if tool is not None:
        why_not = _recover_with_tool(tool, source, target)
        if not why_not:
            return SalvageResult(source, target, "sqlite3-recover", _row_counts(target))
    target.unlink(missing_ok=True)
    result = _copy_readable(source, target)
    result.why_not_tool = why_not
    return result


def _recover_tool(name: str | None) -> str | None:
    """The path of a sqlite3 command-line tool that has `.recover`, or None."""
    found = shutil.which(name) if name else None
    if found is None:
        return None
    try:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout.split()
        numbers = tuple(int(x) for x in version[0].split(".")[:3])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return found if numbers >= RECOVER_MIN_VERSION else None


def _recover_with_tool(tool: str, source: Path, target: Path) -> str:
    """`sqlite3 SOURCE .recover | sqlite3 TARGET`: "" when the new file was written and opens, else why not."""
    recovered = subprocess.run([tool, str(source), ".recover"], capture_output=True, timeout=RECOVER_TIMEOUT_S)
    said = recovered.stderr.decode(errors="replace").strip()
    if recovered.returncode != 0 or not recovered.stdout:
        return f"{tool} .recover failed: {said or f'exit status {recovered.returncode}'}"
    loaded = subprocess.run([tool, str(target)], input=recovered.stdout, capture_output=True, timeout=RECOVER_TIMEOUT_S)
    if loaded.returncode != 0:
        return f"{tool} could not load what .recover wrote: {loaded.stderr.decode(errors='replace').strip()}"
    try:
        _row_counts(target)
    except sqlite3.DatabaseError as exc:
        return f"the file {tool} .recover wrote does not open: {exc}"
    return ""


def _copy_readable(source: Path, target: Path) -> SalvageResult:
    """Python's copy: the schema, then each table's rows until the first unreadable one."""
    result = SalvageResult(source, target, "python-copy")
    old = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        try:
            schema = old.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                "ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"salvage: nothing readable in {source}: its schema cannot be read ({exc})") from exc
        new = sqlite3.connect(target)
        try:
            tables = [name for kind, name, _ in schema if kind == "table"]
            for kind, _, sql in schema:
                if kind == "table":
                    new.execute(sql)
            for table in tables:
                result.rows[table] = _copy_table(old, new, table, result)
            for kind, name, sql in schema:
                if kind != "table":
                    try:
                        new.execute(sql)
                    except sqlite3.DatabaseError as exc:  # e.g. a unique index over rows that came out twice
                        result.cut_short[f"{kind} {name}"] = f"not recreated: {exc}"
            new.commit()
        finally:
            new.close()
    finally:
        old.close()
    return result


def _copy_table(old: sqlite3.Connection, new: sqlite3.Connection, table: str, result: SalvageResult) -> int:
    """Rows of `table` copied from `old` to `new` until one cannot be read (then noted in `result.cut_short`)."""
    quoted = '"' + table.replace('"', '""') + '"'
    copied = 0
    try:
        cursor = old.execute(f"SELECT * FROM {quoted}")
        width = len(cursor.description or ())
        insert = f"INSERT INTO {quoted} VALUES ({', '.join('?' * width)})"
        while True:
            rows = cursor.fetchmany(1000)
            if not rows:
                break
            new.executemany(insert, rows)
            copied += len(rows)
    except sqlite3.DatabaseError as exc:
        result.cut_short[table] = f"{copied} row(s) read before: {exc}"
    return copied


def _row_counts(path: Path) -> dict[str, int]:
    """Table -> number of rows of the SQLite file `path`."""
    db = sqlite3.connect(path)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            n: int(db.execute(f'SELECT count(*) FROM "{n.replace(chr(34), chr(34) * 2)}"').fetchone()[0]) for n in names
        }
    finally:
        db.close()
