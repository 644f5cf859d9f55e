"""Plain, frozen records of pairwise tasks and judgments (see `storage.repo.pairwise`).

A pair is stored canonically: `sample_a_id < sample_b_id`; `left_sample_id` says which of the two was shown on
the left. A judgment's `winner` is what the rater answered about what they saw: `left`, `right` or `tie`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PairCandidateRecord:
    """An output that may be paired: what an assignment rule needs of a sample."""

    sample_id: int
    dataset: str
    method: str
    prompt: str
    references: tuple[str, ...]
    """SHA-256 of the reference images, sorted."""
    output_media_type: str = ""
    """Media type of the output's stored file (`image/png`, `video/mp4`, ...), so a rule can pair like with like."""


@dataclass(frozen=True)
class PairJudgmentRecord:
    id: int
    rater: str
    sample_a_id: int
    sample_b_id: int
    left_sample_id: int
    """The sample shown on the left (one of a, b)."""
    criterion: str
    """`cp` (concept preservation) or `pf` (prompt following)."""
    winner: str | None
    """`left`, `right` or `tie` when status is `rated`, else None."""
    both_bad: bool
    """The rater flagged both outputs as bad (an extra flag; the winner still counts)."""
    status: str
    """`rated`, `skipped` or `flagged`."""
    seconds_spent: float | None
    note: str | None
    task_id: int | None
    """The task it answers; None for an imported judgment."""
    revision: int
    """1 for the first answer, +1 per change."""
    judged_at: dt.datetime
    """When the current answer was given (imports: the file's time when it gives one)."""
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def right_sample_id(self) -> int:
        return self.sample_b_id if self.left_sample_id == self.sample_a_id else self.sample_a_id

    @property
    def winner_sample_id(self) -> int | None:
        """The preferred sample; None for a tie or an answer without a winner (skipped / flagged)."""
        if self.winner == "left":
            return self.left_sample_id
        if self.winner == "right":
            return self.right_sample_id
        return None


@dataclass(frozen=True)
class PairJudgmentRevision:
    """One revision of a pairwise judgment; `replaced_at` is None for the current one."""

    revision: int
    left_sample_id: int
    winner: str | None
    both_bad: bool
    status: str
    seconds_spent: float | None
    note: str | None
    judged_at: dt.datetime
    replaced_at: dt.datetime | None


@dataclass(frozen=True)
class PairTaskRecord:
    """A pair handed to a rater, with that rater's current judgments of it."""

    id: int
    token: str
    """Opaque random handle of the task (what a rater's screen holds instead of sample ids)."""
    rater: str
    sample_a_id: int
    sample_b_id: int
    left_sample_id: int
    position: int
    """1, 2, ... in the order the rater was given their tasks."""
    assigned_at: dt.datetime
    judgments: Mapping[str, PairJudgmentRecord]
    """criterion -> the rater's current judgment of this pair (any status)."""

    @property
    def right_sample_id(self) -> int:
        return self.sample_b_id if self.left_sample_id == self.sample_a_id else self.sample_a_id

    def complete(self, criteria: tuple[str, ...]) -> bool:
        """Whether every one of `criteria` has a judgment (any status)."""
        return all(c in self.judgments for c in criteria)


@dataclass(frozen=True)
class PairAnswer:
    """One criterion's answer to a task (see `PairwiseRepository.judge`)."""

    criterion: str
    winner: str | None
    """`left`, `right` or `tie` when `status` is `rated`; None when skipped / flagged."""
    status: str = "rated"
    both_bad: bool = False
    note: str | None = None


@dataclass(frozen=True)
class ExternalPairJudgment:
    """One imported judgment (see `PairwiseRepository.import_external`)."""

    left_sample_id: int
    right_sample_id: int
    criterion: str
    winner: str | None
    both_bad: bool = False
    status: str = "rated"
    judged_at: dt.datetime | None = None
    """When it was judged (None: the import time)."""
    seconds_spent: float | None = None
    note: str | None = None


@dataclass(frozen=True)
class PairChoice:
    """The new pair an assignment rule picked: the two samples (any order) and the one to show on the left."""

    first_sample_id: int
    second_sample_id: int
    left_sample_id: int


@dataclass(frozen=True)
class PairGoldRecord:
    """The accepted answer of one criterion of a gold pair (`storage.repo.pair_gold`): of the canonical pair
    `sample_a_id < sample_b_id`, `accepted` is `a`, `b` or `tie`."""

    sample_a_id: int
    sample_b_id: int
    dataset: str
    criterion: str
    accepted: str
    kind: str
    """`gold` (an admin's accepted answer) or `attention` (an attention check made from the data)."""
    note: str | None
    created_by: str | None
    created_at: dt.datetime

    @property
    def key(self) -> tuple[int, int]:
        return (self.sample_a_id, self.sample_b_id)

    def accepts(self, judgment: PairJudgmentRecord) -> bool:
        """Whether a `rated` judgment of this pair and criterion gives the accepted answer (whatever side each
        sample was shown on)."""
        if judgment.winner == "tie" or self.accepted == "tie":
            return judgment.winner == self.accepted
        winner = judgment.winner_sample_id
        return winner is not None and winner == (self.sample_a_id if self.accepted == "a" else self.sample_b_id)


@dataclass(frozen=True)
class PairAssignmentState:
    """What an assignment rule sees, read in the transaction that records its choice."""

    rater: str
    now: dt.datetime
    """The database transaction's notion of now (UTC), for expiry rules."""
    candidates: tuple[PairCandidateRecord, ...]
    """The outputs that may be paired: samples in scope with an output image, a method and a prompt, by id."""
    tasks: tuple[PairTaskRecord, ...]
    """Every task of every rater whose pair is in scope, by id."""
    judgments: tuple[PairJudgmentRecord, ...]
    """Every current judgment in scope (app raters and imported ones), by judged_at then id."""
    gold: frozenset[tuple[int, int]] = frozenset()
    """The gold pairs in scope (canonical sample ids, any kind): never a normal pair (a rule must not choose one);
    storage hands them out itself (`PairwiseRepository.next_task`'s `gold_rate`)."""
