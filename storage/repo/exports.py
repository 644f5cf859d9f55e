"""Exports: one row per sample (sample fields, each metric's latest value, each rater's scores, means),
as CSV or JSON Lines.

Columns: `sample_id, dataset, external_key, subject, category, method, seed, prompt, output_sha256,
reference_sha256s, created_at`, then `metric:<name>` for every metric, `rating:<rater>:<criterion>`
for every rater and criterion (empty when not rated or skipped/flagged), `status:<rater>` (the rater's
status on the sample: `rated`, `skipped` or `flagged`; `criterion=status;...` when it differs between criteria;
empty when the rater has no rating of the sample), `note:<rater>` (the rater's note, e.g. why they flagged the
sample; distinct notes of several criteria joined by ` | `), then `mean:<criterion>` and `n:<criterion>`.
Criteria: `cp` and `pf` always, then `sc` / `pq` only when some exported sample has such a rating
(imported ImagenHub ratings, stored x 4). In CSV, reference hashes are joined with `;` and missing values are
empty; in JSONL they are a list and missing values are null. A ratings-only sample
(no images) has an empty `output_sha256` and no reference hashes.

Spreadsheet safety (CSV only): a text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
would be read as a formula by Excel, LibreOffice or Google Sheets (a subject `=1+1`, a prompt
`=HYPERLINK(...)`), so it is written with a leading `'`, which spreadsheets show as text and do not display.
Numbers (metric values, means, counts, ids) are written as numbers, negative ones included. The JSONL export
keeps every text exactly as stored.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from .. import schema as t
from ..record_types import SampleRow
from ..transactions import Transactions
from ._common import sample_filters
from .views import sample_rows

SAMPLE_COLUMNS = (
    "sample_id",
    "dataset",
    "external_key",
    "subject",
    "category",
    "method",
    "seed",
    "prompt",
    "output_sha256",
    "reference_sha256s",
    "created_at",
)


class ExportRepository:
    def __init__(self, tx: Transactions) -> None:
        self._tx = tx

    def table(self, dataset: str | None = None) -> tuple[list[str], list[dict[str, Any]]]:
        """(columns, rows) of the export table for `dataset` (or everything)."""
        rows = self._tx.read(lambda s: sample_rows(s, sample_filters(dataset=dataset)))
        return export_table(rows)

    def write_csv(self, target: Path | str | TextIO, dataset: str | None = None) -> int:
        """Write the table as CSV (UTF-8, header row) to a path or text stream; return the row count."""
        columns, rows = self.table(dataset)
        with _open(target) as fh:
            csv.writer(fh, lineterminator="\n").writerow([neutralize_formula(c) for c in columns])
            writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
            for row in rows:
                writer.writerow({k: _csv_cell(v) for k, v in row.items()})
        return len(rows)

    def write_jsonl(self, target: Path | str | TextIO, dataset: str | None = None) -> int:
        """Write one JSON object per line (all columns present) to a path or text stream; return the count."""
        _, rows = self.table(dataset)
        with _open(target) as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return len(rows)


def export_table(rows: list[SampleRow]) -> tuple[list[str], list[dict[str, Any]]]:
    metrics = sorted({m for r in rows for m in r.metrics})
    raters = sorted({u for r in rows for u in r.ratings})
    present = {c for r in rows for by in r.ratings.values() for c in by}
    criteria = [c for c in t.RATING_CRITERIA if c in t.CRITERIA or c in present]
    columns = list(SAMPLE_COLUMNS) + [f"metric:{m}" for m in metrics]
    columns += [f"rating:{u}:{c}" for u in raters for c in criteria]
    columns += [f"{kind}:{u}" for u in raters for kind in ("status", "note")]
    columns += [f"mean:{c}" for c in criteria] + [f"n:{c}" for c in criteria]
    out = []
    for r in rows:
        x = r.sample
        row: dict[str, Any] = {
            "sample_id": x.id,
            "dataset": x.dataset,
            "external_key": x.external_key,
            "subject": x.subject,
            "category": x.category,
            "method": x.method,
            "seed": x.seed,
            "prompt": x.prompt,
            "output_sha256": x.output,
            "reference_sha256s": list(x.references),
            "created_at": x.created_at.isoformat(),
        }
        row.update({f"metric:{m}": r.metrics.get(m) for m in metrics})
        row.update({f"rating:{u}:{c}": r.ratings.get(u, {}).get(c) for u in raters for c in criteria})
        for u in raters:
            row[f"status:{u}"] = _status_text(r.statuses.get(u, {}))
            row[f"note:{u}"] = r.notes.get(u)
        row.update({f"mean:{c}": r.means.get(c) for c in criteria})
        row.update({f"n:{c}": r.counts.get(c, 0) for c in criteria})
        out.append(row)
    return columns, out


def _status_text(by_criterion: Mapping[str, str]) -> str | None:
    """One rater's status on a sample: the status when every criterion has the same one, else
    `criterion=status` pairs joined by `;`; None when the rater has no rating of the sample."""
    if not by_criterion:
        return None
    if len(set(by_criterion.values())) == 1:
        return next(iter(by_criterion.values()))
    return ";".join(f"{c}={s}" for c, s in sorted(by_criterion.items()))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV text cell as a formula (OWASP's list)."""


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return neutralize_formula(";".join(value))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return neutralize_formula(value)
    return value


def neutralize_formula(text: str) -> str:
    """`text` with a leading `'` when a spreadsheet would read it as a formula (see the module docstring)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _open:
    """Context manager: open a path for writing (UTF-8) or pass a stream through without closing it."""

    def __init__(self, target: Path | str | TextIO) -> None:
        self._target = target
        self._owned: TextIO | None = None

    def __enter__(self) -> TextIO:
        if isinstance(self._target, (str, Path)):
            path = Path(self._target)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._owned = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115
            return self._owned
        return self._target

    def __exit__(self, *exc: object) -> None:
        if self._owned is not None:
            self._owned.close()
