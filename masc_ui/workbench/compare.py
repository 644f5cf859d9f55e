"""Compare two stored outputs of one reference side by side (the Compare view, for admins): every metric's latest
stored value of each (computed with the sample's current masks), the difference per metric (left - right) and which
side the metric prefers, and MaSC's patch maps of both drawn by the Explain use case on the same colour scales
(`explain.shared_scales`: one range for every cosine map of both outputs, one for PF attention), so equal colours
mean equal values across the two.

Two outputs are "of one reference" when they have the same reference images (by content hash, any order); their
prompts may differ (PF then judges each against its own prompt, and the comparison says so). A metric's direction
comes from the registry; a metric outside it (an imported judge) counts as higher-is-better, as in the agreement
and leaderboard analyses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..analysis.numbers import column_digits, format_value
from ..errors import InputError
from ..imaging import InputImage, InputVideo
from ..metrics.sample import Sample
from .browse import StoredSample, StoredSamples, sample_id_of
from .database import Database
from .explain import Explanation, MapScales, draw_explanation, shared_scales
from .scoring import Scoring

if TYPE_CHECKING:
    from storage import MetricValueRecord

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class MetricComparison:
    """One metric of the two outputs."""

    metric: str
    display_name: str
    left: float | None
    """Latest stored value (None: undefined or not computed; `left_reason` says which)."""
    right: float | None
    difference: float | None
    """left - right (None when either is missing)."""
    higher_is_better: bool
    better: str | None
    """`left`, `right` or `equal` by the metric's direction; None when either value is missing."""
    left_reason: str | None = None
    right_reason: str | None = None


@dataclass
class ComparedOutput:
    """One side of the comparison."""

    sample_id: int
    external_key: str | None
    method: str | None
    seed: int | None
    prompt: str
    out: InputImage | InputVideo
    explanation: Explanation
    """MaSC patch maps of this output, on the comparison's shared scales."""


@dataclass
class Comparison:
    refs: list[InputImage]
    """The shared reference images (of the left sample, in its order)."""
    subject: str
    left: ComparedOutput
    right: ComparedOutput
    rows: list[MetricComparison]
    scales: MapScales | None
    """The colour ranges both sides' maps are drawn on (None when neither has a map)."""
    notes: list[str] = field(default_factory=list)

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """(headers, rows) for a grid: metric, both values, the difference, the better side. Values are written
        with the significant digits that tell the two apart (`numbers.column_digits`): two values that differ never
        read the same, so `better` is never said of two equal-looking numbers."""
        headers = [
            "metric",
            f"left (#{self.left.sample_id})",
            f"right (#{self.right.sample_id})",
            "left - right",
            "better",
        ]
        rows = []
        marks = self._reason_marks()
        for r in self.rows:
            digits = column_digits([r.left, r.right])
            rows.append(
                [
                    r.display_name,
                    _show(r.left, r.left_reason, digits, marks),
                    _show(r.right, r.right_reason, digits, marks),
                    "" if r.difference is None else format_value(r.difference),
                    r.better or "n/a",
                ]
            )
        return headers, rows

    def reason_notes(self) -> list[str]:
        """Why a value of the table is n/a, once per distinct reason: `[1] reason (MaSC CP left, CLIP-I right)`;
        the table's cells carry only the mark, so a long reason never widens a column."""
        where: dict[str, list[str]] = {}
        for r in self.rows:
            for side, value, reason in (("left", r.left, r.left_reason), ("right", r.right, r.right_reason)):
                if value is None and reason:
                    where.setdefault(reason, []).append(f"{r.display_name} {side}")
        marks = self._reason_marks()
        return [f"[{marks[reason]}] {reason} ({', '.join(cells)})" for reason, cells in where.items()]

    def _reason_marks(self) -> dict[str, int]:
        marks: dict[str, int] = {}
        for r in self.rows:
            for value, reason in ((r.left, r.left_reason), (r.right, r.right_reason)):
                if value is None and reason and reason not in marks:
                    marks[reason] = len(marks) + 1
        return marks


class Comparisons:
    """Side-by-side comparisons of stored outputs over one `Database` and the Score tab's MaSC engine."""

    def __init__(self, database: Database, samples: StoredSamples, scoring: Scoring) -> None:
        self._database = database
        self._samples = samples
        self._scoring = scoring

    def partners(self, sample_id: int, *, user: str | None) -> list[tuple[str, int]]:
        """The other stored outputs of `sample_id`'s reference, as (label, sample id) choices for a picker: label
        `#id method key`, by id. InputError for an id that is not a stored sample's. Admins only."""
        self._database.accounts.require_admin(user, "comparing outputs")
        chosen = self._database.sample(
            sample_id_of(sample_id),
            missing="is not in the database: type the id of a stored sample (the Browse tab lists them)",
        )
        if chosen.output is None:
            return []
        others = self._database.samples.list(chosen.dataset)
        same = sorted(chosen.references)
        return [
            (" ".join(x for x in (f"#{s.id}", s.method, s.external_key) if x), s.id)
            for s in others
            if s.id != chosen.id and s.output is not None and sorted(s.references) == same
        ]

    def compare(
        self, left_id: int | str, right_id: int | str, *, user: str | None, progress: Progress | None = None
    ) -> Comparison:
        """Outputs `left_id` and `right_id` side by side (see the module docstring). InputError when they are the
        same sample, have different references, one is not in the database or has no images (ratings-only)."""
        left_id, right_id = sample_id_of(left_id), sample_id_of(right_id)
        if left_id == right_id:
            raise InputError(f"pick two different outputs to compare (both are sample #{left_id})")
        if progress:
            progress(0.05, "loading the two outputs")
        left = self._samples.open(left_id, user=user)
        right = self._samples.open(right_id, user=user)
        if sorted(r.sha256 for r in left.refs) != sorted(r.sha256 for r in right.refs):
            raise InputError(
                f"samples #{left.sample_id} and #{right.sample_id} have different reference images: "
                "compare two outputs of one reference (the picker lists them)"
            )
        notes = []
        if (left.prompt or "") != (right.prompt or ""):
            notes.append("the two outputs come from different prompts: PF judges each against its own prompt")
        records = (self._database.samples.get(left.sample_id), self._database.samples.get(right.sample_id))
        rows = _rows(
            self._samples.latest_values(left.sample_id, user=user),
            self._samples.latest_values(right.sample_id, user=user),
        )
        if progress:
            progress(0.2, "computing MaSC patch maps of both outputs")
        samples = [self._sample(x) for x in (left, right)]
        results = self._scoring.masc_engine().score_many(samples, batch_size=2, return_maps=True)
        scales = shared_scales(results)
        pictures = [draw_explanation(s, r, scales=scales) for s, r in zip(samples, results)]
        sides = [
            ComparedOutput(x.sample_id, rec.external_key, rec.method, rec.seed, x.prompt or "", x.out, pic)
            for x, rec, pic in zip((left, right), records, pictures)
        ]
        for side, pic in zip(("left", "right"), pictures):
            notes += [f"{side}: {n}" for n in pic.notes]
        return Comparison(list(left.refs), left.subject, sides[0], sides[1], rows, scales, notes)

    def _sample(self, stored: StoredSample) -> Sample:
        return self._scoring.make_sample(
            stored.refs, stored.out, stored.prompt, stored.subject, stored.ref_masks, stored.out_mask
        )


def _rows(left: dict[str, MetricValueRecord], right: dict[str, MetricValueRecord]) -> list[MetricComparison]:
    from ..metrics.registry import list_metrics

    specs = {s.name: s for s in list_metrics(None)}
    names = [n for n in specs if n in left or n in right] + sorted((set(left) | set(right)) - set(specs))
    rows = []
    for name in names:
        spec = specs.get(name)
        higher = spec.higher_is_better if spec is not None else True
        a, b = (_value(side.get(name)) for side in (left, right))
        difference = better = None
        if a is not None and b is not None:
            difference = a - b
            better = "equal" if a == b else ("left" if (a > b) == higher else "right")
        rows.append(
            MetricComparison(
                name,
                spec.display_name if spec is not None else name,
                a,
                b,
                difference,
                higher,
                better,
                _reason(left.get(name)),
                _reason(right.get(name)),
            )
        )
    return rows


def _value(record: MetricValueRecord | None) -> float | None:
    if record is None or record.value is None or not math.isfinite(record.value):
        return None
    return float(record.value)


def _reason(record: MetricValueRecord | None) -> str | None:
    if record is None:
        return "not computed yet"
    return record.reason if record.value is None else None


def _show(value: float | None, reason: str | None, digits: int, marks: dict[str, int]) -> str:
    if value is None:
        return f"n/a [{marks[reason]}]" if reason else "n/a"
    return format_value(value, digits)
