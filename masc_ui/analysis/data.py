"""The input of agreement analysis: per-sample metric values and human ratings, storage-free.

Build an `AgreementData` from plain records (dicts, `AgreementRecord`s, or a pandas DataFrame with
those columns); the batch/CLI layer builds them from storage, the ImagenHub reader from its TSVs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from .normalization import CONTINUOUS, HUMAN_RATING_RANGE, MetricScale

GROUPINGS = ("method", "category")
POOLED = "all"
"""Group name of the pooled row (all samples)."""


@dataclass(frozen=True)
class AgreementRecord:
    """One generated sample: its metric values and its human ratings.

    `metrics`: metric name -> value (None or NaN = not computed / not computable).
    `ratings`: criterion (e.g. `cp`, `pf`) -> rater (a user, or a DreamBench++ group such as `group1`)
    -> rating on the data's rating scale (None or NaN = not rated).
    """

    sample_id: str
    method: str | None = None
    category: str | None = None
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    ratings: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class AgreementData:
    """Records plus how to read them.

    `scales`: metric name -> `MetricScale` (a judge's integer 0-4 ratings: `MetricScale("rating", (0, 4))`);
    metrics not listed are continuous (min-max normalized for alpha).
    `rating_range`: the human rating scale, (0, 4) for the DreamBench++ protocol; ratings map to [0, 1]
    as (r - lo) / (hi - lo).
    """

    records: tuple[AgreementRecord, ...]
    scales: Mapping[str, MetricScale] = field(default_factory=dict)
    rating_range: tuple[float, float] = HUMAN_RATING_RANGE

    def __post_init__(self) -> None:
        lo, hi = (float(v) for v in self.rating_range)
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            raise InputError(f"rating_range must be finite (lo, hi) with hi > lo; got {self.rating_range!r}")
        object.__setattr__(self, "rating_range", (lo, hi))
        object.__setattr__(self, "records", tuple(self.records))
        seen: set[str] = set()
        for rec in self.records:
            if rec.sample_id in seen:
                raise InputError(
                    f"sample_id {rec.sample_id!r} occurs twice in the agreement records; "
                    "give each sample one record holding all its metrics and ratings"
                )
            seen.add(rec.sample_id)
            for criterion, by_rater in rec.ratings.items():
                for rater, value in by_rater.items():
                    if value is not None and not math.isnan(value) and not lo <= value <= hi:
                        raise InputError(
                            f"rating {value!r} of rater {rater!r} for criterion {criterion!r} on "
                            f"sample {rec.sample_id!r} is outside the rating range [{lo:g}, {hi:g}]; "
                            "pass the right rating_range"
                        )
        for name, scale in self.scales.items():
            if not isinstance(scale, MetricScale):
                raise InputError(f"scale of metric {name!r} must be a MetricScale; got {type(scale).__name__}")

    @classmethod
    def from_records(
        cls,
        records: Any,
        scales: Mapping[str, MetricScale] | None = None,
        rating_range: tuple[float, float] = HUMAN_RATING_RANGE,
    ) -> AgreementData:
        """From an iterable of dicts / `AgreementRecord`s, or a pandas DataFrame (one row per sample).

        A dict needs `sample_id`; `method`, `category`, `metrics` ({name: value}) and `ratings`
        ({criterion: {rater: rating}}) are optional.
        """
        if hasattr(records, "to_dict") and hasattr(records, "columns"):
            records = records.to_dict("records")
        return cls(tuple(_as_record(r, i) for i, r in enumerate(_iterate(records))), dict(scales or {}), rating_range)

    def scale(self, metric: str) -> MetricScale:
        return self.scales.get(metric, CONTINUOUS)

    @property
    def metric_names(self) -> list[str]:
        """Every metric with a value in some record, in first-seen order."""
        names: dict[str, None] = {}
        for rec in self.records:
            names.update(dict.fromkeys(rec.metrics))
        return list(names)

    @property
    def criteria(self) -> list[str]:
        names: dict[str, None] = {}
        for rec in self.records:
            names.update(dict.fromkeys(rec.ratings))
        return list(names)

    def raters(self, criterion: str) -> list[str]:
        """Raters with at least one rating for `criterion`, in first-seen order."""
        names: dict[str, None] = {}
        for rec in self.records:
            names.update({r: None for r, v in rec.ratings.get(criterion, {}).items() if _present(v)})
        return list(names)

    def groups(self, by: str | None) -> list[str]:
        """The group names of a grouping (`method`, `category`), sorted; [] for None."""
        if by is None:
            return []
        check_grouping(by)
        return sorted({g for g in (getattr(r, by) for r in self.records) if g is not None})

    def select(self, by: str | None = None, group: str | None = None) -> list[AgreementRecord]:
        """Records of one group (all records when `by` is None or `group` is the pooled group)."""
        if by is None or group is None or group == POOLED:
            return list(self.records)
        check_grouping(by)
        return [r for r in self.records if getattr(r, by) == group]

    def metric_values(self, records: list[AgreementRecord], metric: str) -> np.ndarray:
        """float64 (N,) values of `metric` on `records`; NaN where absent."""
        return np.array([_number(r.metrics.get(metric)) for r in records], dtype=np.float64)

    def rating_matrix(
        self, records: list[AgreementRecord], criterion: str, raters: list[str] | None = None
    ) -> tuple[list[str], np.ndarray]:
        """(raters, float64 (R, N) raw ratings of `criterion` on `records`, NaN = not rated).

        Raters default to those who rated at least one of `records`."""
        if raters is None:
            names: dict[str, None] = {}
            for rec in records:
                names.update({k: None for k, v in rec.ratings.get(criterion, {}).items() if _present(v)})
            raters = list(names)
        matrix = np.array(
            [[_number(rec.ratings.get(criterion, {}).get(rater)) for rec in records] for rater in raters],
            dtype=np.float64,
        ).reshape(len(raters), len(records))
        return raters, matrix


def chosen_names(asked: Sequence[str] | None, available: list[str], what: str) -> list[str]:
    """The names a caller asked for (all `available` when None), in the asked order without repeats; InputError
    for a bare string or a name without values."""
    if asked is None:
        return list(available)
    if isinstance(asked, str):
        raise InputError(f"pass the {what} names as a list, e.g. [{asked!r}]; got the string {asked!r}")
    missing = [a for a in asked if a not in available]
    if missing:
        raise InputError(f"no values for {what}(s) {missing} in the data; available: {available or 'none'}")
    return list(dict.fromkeys(asked))


def check_grouping(by: str | None) -> None:
    if by is not None and by not in GROUPINGS:
        raise InputError(f"`by` must be one of {', '.join(GROUPINGS)} (or None for pooled only); got {by!r}")


def _iterate(records: Any) -> Iterable[Any]:
    if isinstance(records, (str, bytes, Mapping)) or not hasattr(records, "__iter__"):
        raise InputError(
            "agreement records must be a list of per-sample records (dicts with sample_id, method, "
            f"category, metrics, ratings) or a DataFrame; got {type(records).__name__}"
        )
    return records


def _as_record(raw: Any, index: int) -> AgreementRecord:
    if isinstance(raw, AgreementRecord):
        return raw
    if not isinstance(raw, Mapping):
        raise InputError(f"agreement record #{index} must be a dict or AgreementRecord; got {type(raw).__name__}")
    unknown = set(raw) - {"sample_id", "method", "category", "metrics", "ratings"}
    if unknown:
        raise InputError(
            f"agreement record #{index} has unknown key(s) {sorted(unknown)}; expected sample_id, "
            "method, category, metrics ({name: value}), ratings ({criterion: {rater: rating}})"
        )
    if raw.get("sample_id") is None:
        raise InputError(f"agreement record #{index} has no sample_id")
    # A DataFrame row holds NaN where a record had no metrics / ratings.
    metrics = {} if _label(raw.get("metrics")) is None else raw["metrics"]
    ratings = {} if _label(raw.get("ratings")) is None else raw["ratings"]
    if not isinstance(metrics, Mapping):
        raise InputError(f"agreement record #{index} ({raw['sample_id']!r}): metrics must be a dict name -> value")
    if not isinstance(ratings, Mapping) or not all(isinstance(v, Mapping) for v in ratings.values()):
        raise InputError(
            f"agreement record #{index} ({raw['sample_id']!r}): ratings must be a dict criterion -> {{rater: rating}}"
        )
    where = f"agreement record #{index} ({raw['sample_id']!r})"
    return AgreementRecord(
        sample_id=str(raw["sample_id"]),
        method=_label(raw.get("method")),
        category=_label(raw.get("category")),
        metrics={str(k): _checked_number(v, f"{where}, metric {k!r}") for k, v in metrics.items()},
        ratings={
            str(c): {str(r): _checked_number(v, f"{where}, rating of {r!r} for {c!r}") for r, v in by.items()}
            for c, by in ratings.items()
        },
    )


def _label(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def _checked_number(value: Any, where: str) -> float:
    if value is None:
        return float("nan")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {value!r} is not a number") from None
    if math.isinf(number):
        raise InputError(f"{where}: value is infinite; store a finite number, or None when not computable")
    return number


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _present(value: float | None) -> bool:
    return value is not None and not math.isnan(value)
