"""Gold pairs: pairs of samples whose accepted answer an admin gives (`a`: the first is better, `b`: the second, or
`tie`, per criterion), mixed into each rater's pair queue at `Settings.gold_rate` (`storage.repo.pairwise`), attention
checks of pairs made from the data itself, and every rater's accuracy on them, per criterion.

A gold pair reaches a rater exactly as any other pair does (`pairwise.PairwiseTasks`: the same task record and token,
the same view, the same blind files): nothing in the page, the file names or the answers' replies tells them apart. A
gold pair is never handed out as a normal pair, and its judgments never count for a method: the rankings, win rates,
rater agreement and metric accuracy on pairs leave them out (`pairwise_analysis`). Samples are named by their
external key in the dataset, or by `#<id>`.

Attention checks of pairs: per subject of a dataset, its first image output (by id) shown on both sides: a copy of
the output stored as a sample without a method (external key `attention:same-output:<id>`, so it never counts for a
method), paired with the original, accepted `tie` on every criterion. Making them again adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError
from .attention_checks import KEY_PREFIX
from .database import Database
from .gold import GoldAccuracy, GoldTasks
from .ratings import criteria, is_video_sample

if TYPE_CHECKING:
    from storage import PairGoldRecord, SampleRecord

ACCEPTED = ("a", "b", "tie")
"""Accepted answers of a gold pair: the first sample named is better, the second, or a tie."""
SAME_OUTPUT = f"{KEY_PREFIX}same-output:"
"""External key prefix of the copies made for pair attention checks."""


def split_pair(text: object) -> tuple[str, str]:
    """The two sample names of `A,B` (external keys or `#id`s), InputError unless there are exactly two."""
    names = [x.strip() for x in str(text or "").split(",")]
    if len(names) != 2 or not all(names):
        raise InputError(f"give two samples separated by a comma (e.g. dog-0,dog-1 or #3,#7); got {str(text)[:80]!r}")
    return names[0], names[1]


@dataclass(frozen=True)
class PairChecksMade:
    """What `PairGoldTasks.make_attention_checks` did."""

    dataset: str
    added: int
    existing: int
    """Checks that were there already (made before)."""

    def text(self) -> str:
        return (
            f"pair attention checks of {self.dataset!r}: {self.added} made, {self.existing} already there (one per "
            "subject: the same output on both sides, accepted tie)"
        )


class PairGoldTasks:
    """Marking gold pairs, making pair attention checks and reading raters' accuracy on them, over one `Database`.
    Admins only."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._samples = GoldTasks(database)

    def _admin(self, user: str | None) -> None:
        self._database.accounts.require_admin(user, "gold pairs")

    def _pair(self, dataset: str, first: str, second: str) -> tuple[SampleRecord, SampleRecord]:
        a, b = self._samples.find_sample(dataset, first), self._samples.find_sample(dataset, second)
        if a.id == b.id:
            raise InputError(f"{first!r} and {second!r} are the same sample #{a.id}: a gold pair is two samples")
        for name, record in ((first, a), (second, b)):
            if record.output is None:
                raise InputError(f"sample {name!r} has no output image (ratings only): raters cannot be shown it")
        return a, b

    def mark(
        self,
        *,
        user: str | None,
        dataset: str,
        first: str,
        second: str,
        criterion: str,
        accepted: str,
        note: str | None = None,
    ) -> PairGoldRecord:
        """Make the pair of samples `first`, `second` of `dataset` a gold pair whose `criterion` accepts `accepted`
        (`a`: `first` is better, `b`: `second` is, `tie`). Marking it again replaces the accepted answer."""
        self._admin(user)
        if criterion not in criteria():
            raise InputError(f"criterion must be one of {', '.join(criteria())}; got {criterion!r}")
        answer = str(accepted).strip().lower()
        if answer not in ACCEPTED:
            raise InputError(
                f"the accepted answer of a pair is a (the first sample is better), b (the second) or tie; got "
                f"{str(accepted)[:40]!r}"
            )
        a, b = self._pair(dataset, first, second)
        return self._database.pair_gold.mark(
            a.id, b.id, criterion, answer, note=(note or "").strip() or None, created_by=user
        )

    def unmark(self, *, user: str | None, dataset: str, first: str, second: str, criterion: str | None = None) -> int:
        """Remove the gold mark of a pair (one criterion, or all); the raters' judgments stay. How many marks went."""
        self._admin(user)
        a, b = self._pair(dataset, first, second)
        return self._database.pair_gold.unmark(a.id, b.id, criterion)

    def make_attention_checks(self, *, user: str | None, dataset: str) -> PairChecksMade:
        """Make the pair attention checks of `dataset` (see the module docstring); what was made."""
        self._admin(user)
        self._database.require_dataset(dataset)
        first: dict[str, SampleRecord] = {}
        for s in sorted(self._database.samples.list(dataset), key=lambda s: s.id):
            usable = s.output is not None and s.method and s.prompt and not is_video_sample(s)
            if usable and not (s.external_key or "").startswith(KEY_PREFIX):
                first.setdefault(s.subject, s)
        if not first:
            raise InputError(
                f"dataset {dataset!r} has no image output with a method and a prompt to make pair attention checks from"
            )
        before = self._database.pair_gold.keys(dataset)
        made = set()
        for subject in sorted(first):
            original = first[subject]
            assert original.output is not None and original.prompt is not None
            copy = self._database.pair_gold.add_attention(
                original.id,
                dataset=dataset,
                references=original.references,
                output=original.output,
                prompt=original.prompt,
                subject=subject,
                category=original.category,
                external_key=f"{SAME_OUTPUT}{original.id}",
                note="the same output on both sides",
            )
            made.add(tuple(sorted((original.id, copy))))
        added = len(made - before)
        return PairChecksMade(dataset, added, len(made) - added)

    def answers(self, *, user: str | None, dataset: str | None = None, kind: str | None = None) -> list[PairGoldRecord]:
        """The accepted answers of pairs of `dataset` (None = every dataset), of `kind` (`gold`, `attention`, None =
        both)."""
        self._admin(user)
        if dataset is not None:
            self._database.require_dataset(dataset)
        return self._database.pair_gold.answers(dataset, kind=kind)

    def table(self, *, user: str | None, dataset: str) -> tuple[list[str], list[list[object]]]:
        """(headers, rows) of the accepted answers of pairs of `dataset`: sample a, sample b (external key or #id),
        kind, criterion, accepted (`a`, `b`, `tie`), note."""
        answers = self.answers(user=user, dataset=dataset)
        keys = {s.id: s.external_key for s in self._database.samples.list(dataset)}
        headers = ["sample a", "sample b", "kind", "criterion", "accepted", "note"]
        rows: list[list[object]] = [
            [
                keys.get(g.sample_a_id) or f"#{g.sample_a_id}",
                keys.get(g.sample_b_id) or f"#{g.sample_b_id}",
                g.kind,
                g.criterion,
                g.accepted,
                g.note or "",
            ]
            for g in answers
        ]
        return headers, rows

    def accuracy(self, *, user: str | None, dataset: str | None = None) -> list[GoldAccuracy]:
        """Per (rater, kind, criterion) with a rated judgment of a gold pair: how many gave the accepted answer, of
        how many (skipped and flagged judgments are not in n)."""
        answers = {(g.key, g.criterion): g for g in self.answers(user=user, dataset=dataset)}
        if not answers:
            return []
        counts: dict[tuple[str, str, str], list[int]] = {}
        for j in self._database.pairwise.current(dataset=dataset):
            gold = answers.get(((j.sample_a_id, j.sample_b_id), j.criterion))
            if gold is None or j.status != "rated" or j.winner is None:
                continue
            count = counts.setdefault((j.rater, gold.kind, j.criterion), [0, 0])
            count[0] += int(gold.accepts(j))
            count[1] += 1
        return [GoldAccuracy(rater, kind, c, ok, n) for (rater, kind, c), (ok, n) in sorted(counts.items())]
