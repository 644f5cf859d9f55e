"""Agreement use cases: the table of `masc-ui agreement` and of the Agreement tab (the same numbers), and per-sample
points for the scatter plot, from the stored values and ratings."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from .database import Database
from .rater_selection import EVERY_RATER, CountedRaters, RaterSelection, RaterSelections

if TYPE_CHECKING:
    from ..analysis import AgreementData, AgreementTable
    from ..analysis.bootstrap import Estimate
    from ..analysis.mask_dependence import MaskCheck
    from ..analysis.table import AgreementRow


@dataclass(frozen=True)
class AgreementView:
    """One analysis of the stored data."""

    table: AgreementTable
    text: str
    """The raters counted (`CountedRaters.text`), then `format_table(table)`: exactly what `masc-ui agreement`
    prints."""
    data: AgreementData
    """The stored values and ratings it was computed on."""
    warnings: tuple[str, ...] = ()
    """What makes these numbers fragile (few samples, a single rater, no CIs), as sentences."""
    counted: CountedRaters = EVERY_RATER
    """Whose ratings the numbers rest on (`rater_selection`); the first line of `text`, a key of `to_json`."""

    @property
    def samples_used(self) -> int:
        """The most samples any row of the pooled table rests on: a metric row's samples with a value and a rating,
        the humans row's samples rated by two or more raters."""
        pooled = [r for r in self.table.rows if r.group == self.table.groups[0]] if self.table.rows else []
        return max((r.n for r in pooled), default=0)

    def to_json(self) -> str:
        """The table as strict JSON (no NaN tokens): what `masc-ui agreement --json` prints."""
        import json

        from ..analysis import to_json

        return json.dumps({**json.loads(to_json(self.table)), "raters": self.counted.to_dict()}, indent=2)


@dataclass(frozen=True)
class ScatterSeries:
    """Points of one metric vs the mean human rating, with a 95% CI of each mean (normal approximation,
    mean +- 1.96 sd / sqrt(n); NaN half-width where only one rater rated)."""

    metric: str
    criterion: str
    values: np.ndarray
    """Raw metric values (N,)."""
    human_mean: np.ndarray
    """Mean rating 0..4 (N,)."""
    half_width: np.ndarray
    """CI half-width of each mean (N,)."""
    sample_ids: tuple[str, ...]


TABLE_HEADERS = ("group", "metric", "n", "raters", "alpha", "alpha 95% CI", "spearman", "kendall", "pearson", "note")
"""Columns of `table_rows`."""
SMALL_N = 30
"""Fewer samples than this in a row earn a warning: alpha and the correlations swing widely, CIs are wide."""
MAX_BOOTSTRAP = 20_000
"""Upper bound on resamples asked for in the app: each costs an (n_samples,) index row, and one request must not
exhaust the memory of a process that serves every user."""


class Agreement:
    """Agreement of the stored metric values with the stored human ratings, over one `Database`. Admins only."""

    def __init__(self, database: Database, selections: Callable[[], RaterSelections] | None = None) -> None:
        self._database = database
        self._selections = selections
        """The resolver of rater selections (built on first use: it reads the rater report, which reads `data`)."""

    def counted_raters(
        self, *, user: str | None, dataset: str | None, raters: RaterSelection | None, criterion: str = "cp"
    ) -> CountedRaters:
        """The raters `raters` (None = all) counts in `dataset` (`rater_selection.RaterSelections.resolve`)."""
        if raters is None or raters.kind == "all":
            return EVERY_RATER
        if self._selections is None:
            raise InputError("this workbench cannot choose raters (no rater report): count every rater")
        return self._selections().resolve(user=user, dataset=dataset, selection=raters, criterion=criterion)

    def view(
        self,
        *,
        user: str | None,
        dataset: str | None,
        criterion: str,
        n_boot: int = 2000,
        seed: int = 0,
        by: str | None = None,
        raters: RaterSelection | None = None,
    ) -> AgreementView:
        """Krippendorff's alpha / Spearman / Kendall / Pearson (with bootstrap CIs) of every stored metric
        against the human ratings of `criterion`, plus the human-vs-human row (`masc_ui.analysis`): the Agreement
        tab. `raters`: whose ratings count (None = every rater; `rater_selection`). InputError when there is nothing
        to analyse yet, for a criterion nobody rated, or bad `n_boot`."""
        from ..analysis import agreement_table

        self._database.accounts.require_admin(user, "agreement with humans")
        if not 0 <= n_boot <= MAX_BOOTSTRAP:
            raise InputError(
                f"bootstrap resamples must be within 0..{MAX_BOOTSTRAP:,} (0 = no confidence intervals), got {n_boot:,}"
            )
        counted = self.counted_raters(user=user, dataset=dataset, raters=raters, criterion=criterion)
        data = self.data(user=user, dataset=dataset, counted=counted)
        if not data.records:
            raise InputError("there are no samples in the database yet: save or import samples, then rate them")
        if criterion not in data.criteria:
            raise InputError(
                f"no human ratings for {criterion!r} yet: rate samples in the Rate tab (or import ratings)"
            )
        table = agreement_table(data, None, criterion=criterion, by=by, n_boot=n_boot, seed=seed)
        return _view(table, data, counted)

    def report(
        self,
        *,
        user: str | None,
        dataset: str | None,
        criterion: str,
        metrics: list[str] | None = None,
        by: str | None = None,
        n_boot: int = 2000,
        seed: int = 0,
        human_level: str = "interval",
        raters: RaterSelection | None = None,
    ) -> AgreementView:
        """What `masc-ui agreement` prints (`text`, `to_json()`): the table of `metrics` (None: every metric with
        values), with the human-vs-human alpha at `human_level`, on the ratings of `raters` (None = every rater)."""
        from ..analysis import agreement_table

        counted = self.counted_raters(user=user, dataset=dataset, raters=raters, criterion=criterion)
        data = self.data(user=user, dataset=dataset, counted=counted)
        table = agreement_table(
            data, metrics, criterion=criterion, by=by, n_boot=n_boot, seed=seed, human_level=human_level
        )
        return _view(table, data, counted)

    def data(self, *, user: str | None, dataset: str | None, counted: CountedRaters = EVERY_RATER) -> AgreementData:
        """The stored values and ratings of `dataset` (None = all) as `masc_ui.analysis.AgreementData`, the ratings
        of the raters `counted` keeps (default every one; gold tasks never in it); InputError for an unknown
        dataset."""
        from ..datasets.agreement_source import load_agreement_data

        self._database.accounts.require_admin(user, "agreement with humans")
        if dataset is not None:
            self._database.require_dataset(dataset)
        counts = None if counted is EVERY_RATER else counted.keeps
        return self._database.run(partial(load_agreement_data, dataset=dataset, counts=counts))

    def mask_checks(self, *, user: str | None, dataset: str | None, by: str = "method") -> dict[str, list[MaskCheck]]:
        """Metric -> the stored mask-sensitivity checks of `dataset`'s samples (`load_mask_checks`), grouped `by`
        method or category; InputError for an unknown dataset."""
        from ..datasets.agreement_source import load_mask_checks

        self._database.accounts.require_admin(user, "agreement with humans")
        if dataset is not None:
            self._database.require_dataset(dataset)
        return self._database.run(partial(load_mask_checks, dataset=dataset, by=by))

    def datasets(self, *, user: str | None) -> list[str]:
        """The stored datasets' names (the Agreement tab's choices)."""
        self._database.accounts.require_admin(user, "agreement with humans")
        return self._database.datasets()


def _view(table: AgreementTable, data: AgreementData, counted: CountedRaters) -> AgreementView:
    from ..analysis import format_table

    text = f"{counted.text()}\n{format_table(table)}"
    return AgreementView(table, text, data, tuple(view_warnings(table, data)), counted)


def view_warnings(table: AgreementTable, data: AgreementData) -> list[str]:
    """Warnings of an agreement table: rows on fewer than `SMALL_N` samples, a single rater, no CIs."""
    pooled = [r for r in table.rows if r.group == table.groups[0]]
    humans = next((r for r in pooled if r.is_human), None)
    out = [
        small_n_warning(
            [r.n for r in pooled if not r.is_human],
            "sample(s) have both a metric value and a human rating",
            "these numbers and their CIs are not reliable yet; rate more samples",
        ),
        small_n_warning(
            [humans.n] if humans is not None and humans.n_raters >= 2 else [],
            "sample(s) were rated by two or more raters",
            "the human-vs-human agreement (the humans row and the ceiling line of the plot) is not reliable yet; "
            "have a second rater rate the samples the first one rated",
        ),
        single_rater_warning(
            data.raters(table.criterion),
            "there is no human-vs-human agreement to compare with, and each mean human rating is one person's "
            "score; ask a second rater to rate the same samples",
        ),
        no_bootstrap_warning(table.n_boot),
    ]
    return [w for w in out if w is not None]


def small_n_warning(counts: list[int], counted: str, consequence: str) -> str | None:
    """The one small-n rule of every agreement view (ratings and pairwise): when a count of `counts` is within
    1..`SMALL_N` - 1, "only <the small counts> <counted> (fewer than SMALL_N): <consequence>", else None. Counts of
    0 are left out (a row with nothing says so in its own note)."""
    small = sorted({n for n in counts if 0 < n < SMALL_N})
    if not small:
        return None
    return f"only {_join(small)} {counted} (fewer than {SMALL_N}): {consequence}"


def single_rater_warning(raters: list[str] | tuple[str, ...], consequence: str) -> str | None:
    """ "a single rater (<name>): <consequence>" when exactly one rater answered, else None."""
    return f"a single rater ({raters[0]}): {consequence}" if len(raters) == 1 else None


def no_bootstrap_warning(n_boot: int) -> str | None:
    """The warning of a view computed without resamples, else None."""
    return "0 bootstrap resamples: no confidence intervals" if n_boot == 0 else None


def row_note(row: AgreementRow, table: AgreementTable, data: AgreementData) -> str:
    """Why a row's numbers are missing (empty when they are all there)."""
    if not row.is_human:
        if row.n == 0:
            return "no sample has a value and a rating"
        if row.n == 1:
            return "1 sample only: needs 2 or more"
        if math.isnan(row.alpha.value):
            return "values or ratings do not vary: undefined"
    else:
        if row.n_raters < 2:
            return "one rater only: needs 2+ raters on the same samples"
        _, ratings = data.rating_matrix(data.select(table.by, row.group), table.criterion)
        shared = int(((~np.isnan(ratings)).sum(axis=0) >= 2).sum())
        if shared == 0:
            return f"{row.n_raters} raters, but no sample rated by two of them"
        if math.isnan(row.alpha.value):
            return "ratings do not vary: undefined"
    if table.n_boot and row.n >= 2 and math.isnan(row.alpha.ci_low):
        return "no CI: too little variation in the resamples"
    return ""


def _join(numbers: list[int]) -> str:
    return ", ".join(str(n) for n in numbers[:-1]) + (" and " if len(numbers) > 1 else "") + str(numbers[-1])


def scatter_series(view: AgreementView, metric: str) -> ScatterSeries:
    from ..analysis import scatter_points

    criterion = view.table.criterion
    pts = scatter_points(view.data, metric, criterion)
    records = {r.sample_id: r for r in view.data.records}
    half = []
    for sid in pts.sample_ids:
        ratings = [v for v in records[sid].ratings.get(criterion, {}).values() if v is not None and not math.isnan(v)]
        half.append(1.96 * float(np.std(ratings, ddof=1)) / math.sqrt(len(ratings)) if len(ratings) > 1 else math.nan)
    return ScatterSeries(
        metric,
        criterion,
        np.asarray(pts.values, dtype=np.float64),
        np.asarray(pts.human_mean, dtype=np.float64),
        np.asarray(half, dtype=np.float64),
        tuple(pts.sample_ids),
    )


def shown_name(metric: str) -> str:
    """A metric's display name in tables people read (`cp` -> its registry display name); a name that is not a
    registered metric (an imported judge's, e.g. `gpt4o`) as it is."""
    from ..metrics.registry import get_spec

    try:
        return get_spec(metric).display_name
    except InputError:
        return metric


def table_rows(view: AgreementView) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) of the table for a grid: group, metric (its display name), n, raters, each statistic,
    alpha's CI, and a note saying why numbers are missing."""
    headers = list(TABLE_HEADERS)
    rows = []
    for r in view.table.rows:
        rows.append(
            [
                r.group,
                shown_name(r.metric),
                r.n,
                r.n_raters,
                _num(r.alpha.value),
                _ci(r.alpha),
                _num(r.spearman.value),
                _num(r.kendall.value),
                _num(r.pearson.value),
                row_note(r, view.table, view.data),
            ]
        )
    return headers, rows


def _num(x: float) -> str | None:
    """A grid cell in significant digits (`numbers.format_value`); None (empty) when undefined."""
    from ..analysis.numbers import format_value

    return None if x is None or math.isnan(x) else format_value(x)


def _ci(e: Estimate) -> str:
    from ..analysis.numbers import format_interval

    return format_interval(e.ci_low, e.ci_high, 3) or "n/a"
