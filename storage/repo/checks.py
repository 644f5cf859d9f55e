"""Integrity checks of a store: the database's own check, every blob file against its row, samples without values.

`check_store(store, deep=False)` reads (never writes). Blob files are compared with their `blobs` row: present
and of the recorded size always, hashing to their name with `deep` (reads every byte). Each sample's stored count of
complete ratings (`samples.complete_ratings`, what task assignment reads) is compared with its ratings. Samples
with images but no metric value at all are reported as notes, not problems: an import without scores leaves them
so until `masc-ui batch` runs, while a Save is one transaction and never does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from .. import schema as t
from ..blobs import BlobStore, sha256_hex
from . import completion

CORRUPT_HINT = (
    "the database file is corrupt: `masc-ui db salvage NEW_FILE` recovers what is readable into a new file and "
    "says how to switch to it"
)
MAX_LISTED = 20
"""Problems and notes listed one by one per kind; the rest are counted."""


@dataclass
class IntegrityReport:
    """What a check found. `ok` when there is no problem (notes do not count)."""

    database: str
    """The database's own check (`PRAGMA integrity_check` on SQLite): `ok` when healthy."""
    blobs_checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.database == "ok" and not self.problems

    def lines(self) -> list[str]:
        """Human-readable lines: `ok` first when healthy, else each problem (a failed database check says the file is
        corrupt and how to salvage it); then the notes."""
        if self.ok:
            head = ["ok"]
        elif self.database == "ok":
            head = list(self.problems)
        else:
            head = [f"database: {self.database}", CORRUPT_HINT, *self.problems]
        return head + [f"note: {n}" for n in self.notes]


def check_blobs(tx: Any, blobs: BlobStore, *, deep: bool) -> tuple[int, list[str]]:
    """(blobs checked, problems): each blob row's file exists with the recorded size (and, with `deep`, hashes to
    its name)."""
    rows = tx.read(lambda s: list(s.execute(sa.select(t.Blob.sha256, t.Blob.size_bytes).order_by(t.Blob.sha256))))
    missing, resized, corrupt = [], [], []
    for sha, size in rows:
        path = blobs.path(sha)
        try:
            actual = path.stat().st_size
        except FileNotFoundError:
            missing.append(sha)
            continue
        if actual != size:
            resized.append(f"{sha[:12]}... ({actual} bytes, recorded {size})")
        elif deep and sha256_hex(path.read_bytes()) != sha:
            corrupt.append(sha)
    problems = []
    for label, items in (
        ("blob file missing", missing),
        ("blob file of another size", resized),
        ("blob file does not hash to its name (overwritten or damaged)", corrupt),
    ):
        problems += [f"{label}: {item}" for item in items[:MAX_LISTED]]
        if len(items) > MAX_LISTED:
            problems.append(f"{label}: {len(items) - MAX_LISTED} more")
    return len(rows), problems


def samples_without_values(tx: Any) -> list[str]:
    """Notes on samples that have an output image but no metric value (imported and not scored yet)."""

    def work(s: Any) -> list[int]:
        with_values = sa.select(t.MetricValue.sample_id)
        with_output = sa.select(t.SampleImage.sample_id).where(t.SampleImage.role == "output")
        return list(
            s.scalars(
                sa.select(t.Sample.id)
                .where(t.Sample.id.in_(with_output), t.Sample.id.not_in(with_values))
                .order_by(t.Sample.id)
            )
        )

    ids = tx.read(work)
    if not ids:
        return []
    shown = ", ".join(f"#{i}" for i in ids[:MAX_LISTED]) + (
        f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    )
    return [f"{len(ids)} sample(s) with images but no metric value ({shown}); score them with `masc-ui batch`"]


def complete_rating_counts(tx: Any) -> list[str]:
    """Problems: samples whose stored count of complete ratings differs from what their ratings give (only a write
    outside the workbench, e.g. a hand-edited database, can cause one); `masc-ui db recount` repairs them."""
    wrong = tx.read(completion.mismatches)
    problems = [
        f"sample #{sid} counts {stored} complete rating(s), its ratings give {actual}: task assignment "
        f"would hand it out too {'rarely' if stored > actual else 'often'}; repair with `masc-ui db recount`"
        for sid, stored, actual in wrong[:MAX_LISTED]
    ]
    if len(wrong) > MAX_LISTED:
        problems.append(
            f"{len(wrong) - MAX_LISTED} more samples with a wrong count of complete ratings; repair "
            f"with `masc-ui db recount`"
        )
    return problems
