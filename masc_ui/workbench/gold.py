"""Gold tasks: samples whose accepted answer an admin gives (a score, or a range of scores, per criterion), mixed into
each rater's queue at `Settings.gold_rate` (`storage.repo.tasks`), and every rater's accuracy on them, per criterion.

A gold task reaches a rater exactly as any other task does (`ratings.RatingTasks`: the same view, the same blind
files, the same progress counts): nothing in the page, the file names or the answers' replies tells them apart. Gold
samples never count as ratings of a method: the agreement and leaderboard data leave them out
(`datasets.agreement_source`). Samples are named by their external key in the dataset, or by `#<id>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..datasets.accepted import accepted_text, parse_accepted
from ..errors import InputError
from .database import Database
from .ratings import criteria

if TYPE_CHECKING:
    from storage import GoldRecord, SampleRecord

__all__ = ["AttentionChecksMade", "GoldAccuracy", "GoldTasks", "accepted_text", "parse_accepted"]


@dataclass(frozen=True)
class AttentionChecksMade:
    """What `GoldTasks.make_attention_checks` did."""

    dataset: str
    added: int
    existing: int
    """Checks that were there already (made before)."""
    subjects: int

    def text(self) -> str:
        return (
            f"attention checks of {self.dataset!r}: {self.added} made, {self.existing} already there "
            f"({self.subjects} subject(s); concept preservation: the reference as the output, accepted 4, and an "
            "output of another subject, accepted 0-1)"
        )


@dataclass(frozen=True)
class GoldAccuracy:
    """One rater's answers to the gold tasks of one kind and criterion: `correct` of `n` rated answers were accepted
    (skipped and flagged gold tasks are not in n)."""

    rater: str
    kind: str
    criterion: str
    correct: int
    n: int

    @property
    def rate(self) -> float:
        """correct / n (NaN when n = 0)."""
        return self.correct / self.n if self.n else float("nan")


class GoldTasks:
    """Marking gold tasks and reading raters' accuracy on them, over one `Database`. Admins only."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def _admin(self, user: str | None) -> None:
        self._database.accounts.require_admin(user, "gold tasks")

    def find_sample(self, dataset: str, sample: str) -> SampleRecord:
        """The sample named `sample` in `dataset`: its external key, or `#<id>` (InputError when there is none)."""
        self._database.require_dataset(dataset)
        name = str(sample).strip()
        if re.fullmatch(r"#\d+", name):
            found = self._database.sample(int(name[1:]), missing="is not in the database")
            if found.dataset != dataset:
                raise InputError(f"sample {name} is in dataset {found.dataset!r}, not {dataset!r}")
            return found
        by_key = self._database.samples.get_by_key(dataset, name)
        if by_key is None:
            raise InputError(
                f"dataset {dataset!r} has no sample with key {name[:80]!r}: give its external key (the manifest's "
                "`key`) or #<id> (the Browse tab's id)"
            )
        return by_key

    def mark(
        self,
        *,
        user: str | None,
        dataset: str,
        sample: str,
        criterion: str,
        accepted: str,
        note: str | None = None,
    ) -> GoldRecord:
        """Make a sample of `dataset` a gold task whose `criterion` accepts `accepted` (`3`, `3-4`; see
        `parse_accepted`). Marking it again replaces the accepted answer."""
        self._admin(user)
        if criterion not in criteria():
            raise InputError(f"criterion must be one of {', '.join(criteria())}; got {criterion!r}")
        low, high = parse_accepted(accepted)
        record = self.find_sample(dataset, sample)
        if record.output is None:
            raise InputError(f"sample {sample!r} has no output image (ratings only): raters cannot be shown it")
        return self._database.gold.mark(
            record.id, criterion, low, high, note=(note or "").strip() or None, created_by=user
        )

    def make_attention_checks(self, *, user: str | None, dataset: str) -> AttentionChecksMade:
        """Make the attention checks of `dataset` (`attention_checks`: per subject, its reference as the output and
        an output of another subject), stored as gold tasks of kind `attention`; what was made."""
        from .attention_checks import plan_attention_checks

        self._admin(user)
        self._database.require_dataset(dataset)
        before = self._database.gold.sample_ids(dataset)
        planned = plan_attention_checks(self._database.samples.list(dataset))
        if not planned:
            raise InputError(
                f"dataset {dataset!r} has no image sample with references and a prompt to make attention checks from"
            )
        ids = [
            self._database.gold.add_check(
                dataset,
                references=c.references,
                output=c.output,
                prompt=c.prompt,
                subject=c.subject,
                category=c.category,
                external_key=c.key,
                criterion="cp",
                low=c.low,
                high=c.high,
                note=c.note,
            )
            for c in planned
        ]
        added = len(set(ids) - before)
        return AttentionChecksMade(dataset, added, len(ids) - added, len({c.subject for c in planned}))

    def unmark(self, *, user: str | None, dataset: str, sample: str, criterion: str | None = None) -> int:
        """Remove the gold mark of a sample (one criterion, or all); the raters' answers stay. How many marks went."""
        self._admin(user)
        return self._database.gold.unmark(self.find_sample(dataset, sample).id, criterion)

    def answers(self, *, user: str | None, dataset: str | None = None, kind: str | None = None) -> list[GoldRecord]:
        """The accepted answers of `dataset` (None = every dataset), of `kind` (`gold`, `attention`, None = both)."""
        self._admin(user)
        if dataset is not None:
            self._database.require_dataset(dataset)
        return self._database.gold.answers(dataset, kind=kind)

    def table(self, *, user: str | None, dataset: str) -> tuple[list[str], list[list[object]]]:
        """(headers, rows) of the accepted answers of `dataset`: sample (external key or #id), kind, criterion,
        accepted (`3`, `3-4`), note."""
        answers = self.answers(user=user, dataset=dataset)
        keys = {s.id: s.external_key for s in self._database.samples.list(dataset)}
        headers = ["sample", "kind", "criterion", "accepted", "note"]
        rows: list[list[object]] = [
            [
                keys.get(a.sample_id) or f"#{a.sample_id}",
                a.kind,
                a.criterion,
                accepted_text(a.low, a.high),
                a.note or "",
            ]
            for a in answers
        ]
        return headers, rows

    def accuracy(self, *, user: str | None, dataset: str | None = None) -> list[GoldAccuracy]:
        """Per (rater, kind, criterion) with a rated answer to a gold task: how many were accepted, of how many."""
        answers = {(a.sample_id, a.criterion): a for a in self.answers(user=user, dataset=dataset)}
        if not answers:
            return []
        counts: dict[tuple[str, str, str], list[int]] = {}
        for r in self._database.ratings.current(dataset=dataset):
            gold = answers.get((r.sample_id, r.criterion))
            if gold is None or r.status != "rated" or r.score is None:
                continue
            count = counts.setdefault((r.rater, gold.kind, r.criterion), [0, 0])
            count[0] += int(gold.accepts(r.score))
            count[1] += 1
        return [GoldAccuracy(rater, kind, c, ok, n) for (rater, kind, c), (ok, n) in sorted(counts.items())]
