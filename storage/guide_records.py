"""Records of rating guides, their examples, practice rounds and practice answers (`storage.repo.guides`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class GuideRecord:
    """One version of a dataset's rating guide."""

    dataset: str
    version: int
    """1, 2, ...: each edit adds a version; the highest is the current guide."""
    text: str
    """The guide in Markdown."""
    practice_tasks: int
    """How many practice tasks a rater answers before their first real task of the dataset (0 = none)."""
    practice_skippable: bool
    """Whether a rater may skip the practice round."""
    created_by: str | None
    created_at: dt.datetime


@dataclass(frozen=True)
class GuideExampleRecord:
    """A sample shown in its dataset's guide with its expected answers (a score 0-4 of `cp` and / or `pf`)."""

    sample_id: int
    dataset: str
    position: int
    cp: int | None
    pf: int | None
    note: str | None

    def expected(self, criterion: str) -> int | None:
        """The expected score of `criterion` (None when the example gives none)."""
        return self.cp if criterion == "cp" else self.pf if criterion == "pf" else None


@dataclass(frozen=True)
class PracticeAnswerRecord:
    """A rater's answer to one criterion of a practice task (never a rating)."""

    rater: str
    sample_id: int
    criterion: str
    score: int
    created_at: dt.datetime


@dataclass(frozen=True)
class GuideReadingRecord:
    """Where a rater stands with a dataset's guide: the version they last read (None = never), and when they
    skipped its practice round (None = not skipped)."""

    rater: str
    dataset: str
    version_read: int | None
    read_at: dt.datetime | None
    practice_skipped_at: dt.datetime | None
