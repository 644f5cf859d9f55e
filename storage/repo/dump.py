"""Full JSON dump of the database (every table, every row, in primary-key order) and its exact restore.

Format: `{"format": "masc-workbench-dump", "format_version": 1, "schema_revision": ..., "tables":
{name: {"columns": [...], "rows": [[...], ...]}}, "blob_data": {sha256: base64}}` — `blob_data` only
with `include_blobs=True`; otherwise copy the data directory's `blobs/` folder along with the dump.
Timestamps are ISO 8601 strings with offset; JSON columns stay JSON. A restore needs an empty
database at the same schema revision; it keeps every id, so dump -> restore -> dump is identical.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path
from typing import Any, TextIO

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import schema as t
from ..blobs import BlobStore, sha256_hex
from ..errors import RestoreError
from ..migrate import head_revision
from ..transactions import Transactions

FORMAT = "masc-workbench-dump"
FORMAT_VERSION = 1
_BATCH = 1000


class DumpRepository:
    def __init__(self, tx: Transactions, blobs: BlobStore) -> None:
        self._tx = tx
        self._blobs = blobs

    def dump_dict(self, *, include_blobs: bool = False) -> dict[str, Any]:
        """The whole database as a JSON-able dict (see the module docstring)."""

        def work(s: Session) -> dict[str, Any]:
            tables = {}
            for table in t.TABLES_IN_DEPENDENCY_ORDER:
                columns = [c.name for c in table.columns]
                rows = s.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
                tables[table.name] = {
                    "columns": columns,
                    "rows": [[_encode(table.c[c], v) for c, v in zip(columns, row)] for row in rows],
                }
            return tables

        tables = self._tx.read(work)
        out: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "schema_revision": head_revision(),
            "tables": tables,
        }
        if include_blobs:
            shas = [row[0] for row in tables["blobs"]["rows"]]
            out["blob_data"] = {sha: base64.b64encode(self._blobs.get(sha)).decode("ascii") for sha in shas}
        return out

    def dump(self, target: Path | str | TextIO, *, include_blobs: bool = False) -> None:
        """Write `dump_dict()` as JSON to a path (written to a temp file, then renamed) or a text stream."""
        text = json.dumps(self.dump_dict(include_blobs=include_blobs), ensure_ascii=False, allow_nan=False)
        if isinstance(target, (str, Path)):
            path = Path(target)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        else:
            target.write(text)

    def restore(self, source: Path | str | TextIO | dict[str, Any]) -> dict[str, int]:
        """Load a dump into this (empty) database in one transaction; return rows per table.

        Raises RestoreError when the file is not a dump, was made at another schema revision, the
        database already holds data, or referenced blobs are neither embedded nor in the blob store.
        """
        data = _read(source)
        tables = data["tables"]
        for sha, encoded in (data.get("blob_data") or {}).items():
            raw = base64.b64decode(encoded)
            if sha256_hex(raw) != sha:
                raise RestoreError(f"embedded blob {sha} does not match its hash; the dump is damaged")
            self._blobs.put(raw)
        missing = [row[0] for row in tables.get("blobs", {}).get("rows", []) if not self._blobs.exists(row[0])]
        if missing:
            raise RestoreError(
                f"{len(missing)} blob(s) listed in the dump (e.g. {missing[0]}) are not in the blob store "
                f"{self._blobs.root}; copy the old data directory's `blobs/` folder there first, or dump "
                f"with include_blobs=True"
            )

        def work(s: Session) -> dict[str, int]:
            counts: dict[str, int] = {}
            for table in t.TABLES_IN_DEPENDENCY_ORDER:
                if s.scalar(sa.select(sa.func.count()).select_from(table)):
                    raise RestoreError(
                        f"the target database is not empty (table {table.name} has rows); "
                        f"restore into a new data directory / database"
                    )
            for table in t.TABLES_IN_DEPENDENCY_ORDER:
                body = tables.get(table.name, {"columns": [], "rows": []})
                columns = body["columns"]
                unknown = set(columns) - set(table.columns.keys())
                if unknown:
                    raise RestoreError(f"dump table {table.name} has unknown columns {sorted(unknown)}")
                rows = [{c: _decode(table.c[c], v) for c, v in zip(columns, row)} for row in body["rows"]]
                for start in range(0, len(rows), _BATCH):
                    s.execute(sa.insert(table), rows[start : start + _BATCH])
                counts[table.name] = len(rows)
            if s.get_bind().dialect.name == "postgresql":
                _reset_sequences(s)
            return counts

        return self._tx.write(work)


def _read(source: Path | str | TextIO | dict[str, Any]) -> dict[str, Any]:
    if isinstance(source, dict):
        data = source
    else:
        try:
            text = Path(source).read_text(encoding="utf-8") if isinstance(source, (str, Path)) else source.read()
            data = json.loads(text)
        except (OSError, ValueError) as exc:
            raise RestoreError(f"cannot read dump {source}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tables"), dict):
        raise RestoreError(f'{source} is not a MaSC Workbench dump (expected "format": "{FORMAT}")')
    if data.get("format_version") != FORMAT_VERSION:
        raise RestoreError(
            f"dump format version {data.get('format_version')} is not supported "
            f"(this program reads version {FORMAT_VERSION})"
        )
    if data.get("schema_revision") != head_revision():
        raise RestoreError(
            f"the dump was made at schema revision {data.get('schema_revision')}, this program is at "
            f"{head_revision()}; restore it with the masc-ui version that made it, then upgrade"
        )
    return data


def _encode(column: sa.Column[Any], value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def _decode(column: sa.Column[Any], value: Any) -> Any:
    if value is not None and isinstance(column.type, t.UTCDateTime):
        return dt.datetime.fromisoformat(value)
    return value


def _reset_sequences(s: Session) -> None:
    for table in t.TABLES_IN_DEPENDENCY_ORDER:
        if "id" in table.c and table.c.id.primary_key:
            s.execute(
                sa.text(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f"COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM {table.name}"
                )
            )
