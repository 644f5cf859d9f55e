"""What importers read out of a benchmark layout, before anything is written: plain records with their origin.

Every record carries `where` ("manifest.jsonl:12", "captions/animal/00.txt"): the file (and line) it came
from, so that a problem found later (an unreadable image while storing) is still reported by its origin.
Paths are absolute (importers resolve them against the layout's root or the manifest's folder).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.pairwise_data import PairJudgment, canonical


@dataclass(frozen=True)
class SampleEntry:
    """One generated output with its reference(s), as a layout describes it."""

    where: str
    """Origin of the record (file[:line])."""
    key: str | None
    """External key, unique within the dataset (e.g. DreamBench++ `"<method>/<collection>-<prompt_idx>"`);
    None = identified by content only."""
    subject: str
    """Subject name (the concept)."""
    prompt: str | None
    """Full generation prompt (None only for a ratings-only sample whose prompt is unknown)."""
    out: Path | None
    """Generated image; None for a *ratings-only* sample (published ratings / judge values whose image is
    not here): stored without images (needs `key`; `refs` empty), completed when its images are imported."""
    refs: tuple[Path, ...] = ()
    """Reference image(s) of the subject."""
    ref_masks: tuple[Path | None, ...] = ()
    """Mask file of each reference (same order as `refs`; None = no mask)."""
    out_mask: Path | None = None
    """Mask file of the subject in the output."""
    method: str | None = None
    """Generation method (model) name."""
    seed: int | None = None
    """Generation seed."""
    category: str | None = None
    """Subject category (animal, human, object, style, ...)."""
    info: dict = field(default_factory=dict)
    """Layout-specific extras kept with the sample (JSON-able): collection id, prompt index, class name..."""
    gold: dict[str, tuple[int, int]] = field(default_factory=dict)
    """criterion -> (low, high) accepted answer when the sample is a gold task (the manifest's `gold_cp`, `gold_pf`);
    empty for a normal sample."""


@dataclass(frozen=True)
class RatingEntry:
    """One published rating of one sample by one (external) rater on the 0-4 scale."""

    where: str
    key: str
    """External key of the rated sample."""
    rater: str
    """Rater name as stored (e.g. `dreambench:group1`)."""
    criterion: str
    """`cp` or `pf`; `sc` or `pq` for ImagenHub (see `storage.RATING_CRITERIA`)."""
    score: int
    """Integer 0..4 (ImagenHub's {0, 0.5, 1} x 4)."""


@dataclass(frozen=True)
class MetricEntry:
    """One externally computed metric value (e.g. a GPT-4o judge's rating) of one sample."""

    where: str
    key: str
    metric: str
    """Metric name the user gave (e.g. `gpt4o_cp`)."""
    value: float
    source: str
    """Where the value comes from (file path relative to the layout root); kept in the value's extras."""
    rating_range: tuple[float, float] | None = None
    """(lo, hi) when the values are ratings on a fixed scale (a judge's 0-4): agreement maps them to [0, 1]
    by that range instead of min-max; None = a continuous metric."""
    model_id: str | None = None
    """What computed the values, when the source says (e.g. the judge model `gpt-4o-2024-05-13`); None = unknown
    (stored as `import:<metric>`)."""
    params: dict = field(default_factory=dict, hash=False)
    """Provenance params the source states (e.g. the judge's rubric template), stored with the scale."""


@dataclass(frozen=True)
class PairwiseEntry:
    """One judgment as the file gives it, with where it came from."""

    where: str
    left: str
    right: str
    criterion: str
    winner: str
    """`left`, `right` or `tie`."""
    rater: str
    both_bad: bool = False
    judged_at: dt.datetime | None = None
    """When it was judged (timezone-aware, UTC when the file gave no zone); None = not given."""
    seconds: float | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(rater, first key, second key, criterion) with the two sample keys sorted: the judgment's identity."""
        first, second = canonical(self.left, self.right)
        return (self.rater, first, second, self.criterion)

    @property
    def winner_key(self) -> str | None:
        """The key of the preferred sample; None for a tie."""
        return None if self.winner == "tie" else (self.left if self.winner == "left" else self.right)

    def judgment(self, left_method: str | None = None, right_method: str | None = None) -> PairJudgment:
        """As the analysis input (sample ids = the keys here)."""
        return PairJudgment(self.left, self.right, self.criterion, self.winner, self.rater, left_method, right_method)


@dataclass(frozen=True)
class PairGoldEntry:
    """The accepted answer of one criterion of a gold pair as the file gives it, with where it came from."""

    where: str
    left: str
    right: str
    """The two samples: external keys in the dataset, or `#<id>`."""
    criterion: str
    accepted: str
    """`a` (left is better), `b` (right is better) or `tie`."""
    kind: str = "gold"
    """`gold` or `attention`."""
    note: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """(first name, second name, criterion) with the two names sorted: the answer's identity."""
        first, second = canonical(self.left, self.right)
        return (first, second, self.criterion)

    @property
    def better(self) -> str | None:
        """The name of the sample accepted as better; None for a tie."""
        return None if self.accepted == "tie" else (self.left if self.accepted == "a" else self.right)


@dataclass(frozen=True)
class Problem:
    """A record that was skipped: where it is and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class Parsed:
    """Everything one importer read from a layout: records to store and records already rejected."""

    samples: list[SampleEntry] = field(default_factory=list)
    ratings: list[RatingEntry] = field(default_factory=list)
    metrics: list[MetricEntry] = field(default_factory=list)
    pairwise: list[PairwiseEntry] = field(default_factory=list)
    """Pairwise human judgments (which of two samples, named by key, is better)."""
    pair_gold: list[PairGoldEntry] = field(default_factory=list)
    """Accepted answers of gold pairs (samples named by key or `#<id>`)."""
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Things the user should know that skipped nothing (e.g. "no ratings found in this tree")."""
    parts: dict[str, Parsed] = field(default_factory=dict)
    """For layouts that hold several datasets (ImagenHub: one per task): dataset-name suffix -> its records,
    stored in dataset `<dataset>-<suffix>` by `ingest_all`; the top-level lists then hold only problems/notes."""

    def skip(self, where: str, reason: str) -> None:
        self.problems.append(Problem(where, reason))


@dataclass
class ImportSummary:
    """What an import did. `added_*` count new rows; `existing_*` rows that were already stored (re-import)."""

    dataset: str
    importer: str
    added_samples: int = 0
    existing_samples: int = 0
    ratings_only_samples: int = 0
    """Of the added samples, those stored without images (ratings-only)."""
    completed_samples: int = 0
    """Ratings-only samples stored before whose images this import attached."""
    gold_answers: int = 0
    """Accepted answers of gold tasks marked (the manifest's `gold_cp`, `gold_pf`)."""
    added_masks: int = 0
    """Mask versions written (a mask file of a sample that had no mask with those bytes), new samples' and
    re-imported ones' alike."""
    existing_masks: int = 0
    """Mask files whose exact mask was already one of the image's versions."""
    added_ratings: int = 0
    existing_ratings: int = 0
    added_metrics: int = 0
    existing_metrics: int = 0
    added_judgments: int = 0
    """Pairwise judgments written (new, or a changed answer: a new revision)."""
    existing_judgments: int = 0
    added_pair_gold: int = 0
    """Accepted answers of gold pairs written (a new mark, or a changed answer, kind or note)."""
    existing_pair_gold: int = 0
    """Accepted answers of gold pairs already marked as the file gives them."""
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    created_dataset: bool = False
    """True when this import created the dataset (with its rating mark)."""

    @property
    def stored_nothing(self) -> bool:
        """True when the import neither added nor found any sample, rating, metric value, judgment or gold pair answer."""
        return not any(
            (
                self.added_samples,
                self.existing_samples,
                self.added_ratings,
                self.existing_ratings,
                self.added_metrics,
                self.existing_metrics,
                self.added_judgments,
                self.existing_judgments,
                self.added_pair_gold,
                self.existing_pair_gold,
            )
        )

    @property
    def skipped(self) -> int:
        return len(self.problems)

    def reasons(self) -> list[tuple[str, int]]:
        """Skip reasons with their counts, most frequent first (the reason without its per-row details)."""
        counts = Counter(p.reason.split(":")[0] for p in self.problems)
        return counts.most_common()

    def lines(self, max_problems: int = 50) -> list[str]:
        """A human-readable report: totals, the reasons, then up to `max_problems` skipped rows."""
        masks = (
            f"masks {self.added_masks} imported, {self.existing_masks} already present; "
            if self.added_masks or self.existing_masks
            else ""
        )
        out = [
            f"dataset {self.dataset!r} ({self.importer}): samples {self.added_samples} imported, "
            f"{self.existing_samples} already present; {masks}ratings {self.added_ratings} imported, "
            f"{self.existing_ratings} already present; metric values {self.added_metrics} imported, "
            f"{self.existing_metrics} already present; {self.skipped} skipped",
        ]
        if self.added_judgments or self.existing_judgments or self.importer == "pairwise":
            out.append(f"pairwise judgments {self.added_judgments} imported, {self.existing_judgments} already present")
        if self.added_pair_gold or self.existing_pair_gold or self.importer == "pair-gold":
            out.append(
                f"gold pair answers {self.added_pair_gold} marked, {self.existing_pair_gold} already marked as given"
            )
        if self.ratings_only_samples:
            out.append(
                f"{self.ratings_only_samples} of the imported samples are ratings-only (no images; import "
                f"their images later to complete them)"
            )
        if self.completed_samples:
            out.append(f"images attached to {self.completed_samples} ratings-only sample(s) stored before")
        if self.gold_answers:
            out.append(f"{self.gold_answers} accepted answer(s) of gold tasks marked (gold_cp / gold_pf)")
        out += [f"note: {n}" for n in self.notes]
        out += [f"warning: {w}" for w in self.warnings]
        if self.problems:
            out.append("skipped, by reason: " + "; ".join(f"{r} ({n})" for r, n in self.reasons()))
            out += [f"  skipped {p}" for p in self.problems[:max_problems]]
            if len(self.problems) > max_problems:
                out.append(f"  ... and {len(self.problems) - max_problems} more")
        return out
