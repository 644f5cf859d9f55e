"""Pairwise analysis of the stored judgments: method rankings (Davidson-Bradley-Terry with bootstrap CIs, Elo),
the win-rate matrix, agreement among raters on pairs, and each metric's pairwise accuracy — what
`masc-ui agreement --pairwise` prints and the Agreement tab shows — and the leaderboard's pairwise human column.
These views name methods and show metric values: they are for admins (every function takes the acting `user`, where
the role check belongs).

Input (`PairwiseAnalysis.input`): the current `rated` judgments of every rater (app raters and imported ones) whose pair
is in the dataset, in the order they were given (`judged_at`; Elo depends on it), less the judgments of gold pairs
and attention checks (`pair_gold`) and of pairs with a gold sample (`gold`): they never count for a method; skipped and flagged answers carry
no preference and are only counted. A judgment flagged "both bad" keeps its winner (the flag is counted, not
used). Samples are named `<dataset>/<key>` (or `<dataset>/#<id>`), as in the agreement table; methods come from
the samples. Metric values: each sample's latest stored value per metric (computed with its current masks); a
metric's direction from the registry (imported metrics, e.g. judges: higher is better).

The statistics are `masc_ui.analysis`'s, unchanged: see `bradley_terry`, `elo_ratings` (K 4, initial 1000, the
judgments' order), `win_rate_matrix`, `pairwise_rater_agreement` (nominal alpha) and `pairwise_accuracy` (human
ties — pairs whose decisive votes are balanced — left out and counted; metric ties count 1/2).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..analysis import (
    BradleyTerryFit,
    EloRatings,
    Estimate,
    PairRaterAgreement,
    PairwiseAccuracy,
    PairwiseData,
    WinRateMatrix,
    bradley_terry,
    elo_ratings,
    format_bradley_terry,
    format_elo,
    format_pair_agreement,
    format_pairwise_accuracy,
    format_win_rate,
    pairwise_accuracy,
    pairwise_rater_agreement,
    win_rate_matrix,
)
from ..analysis.bootstrap import check_resamples
from ..analysis.numbers import SIGNIFICANT, format_interval, format_value
from ..analysis.pairwise_data import PairJudgment
from ..errors import InputError
from ..metrics.value_records import json_safe
from .agreement import MAX_BOOTSTRAP, no_bootstrap_warning, shown_name, single_rater_warning, small_n_warning
from .database import Database
from .rater_selection import EVERY_RATER, CountedRaters, RaterSelection, RaterSelections
from .ratings import CRITERION_NAMES, criteria

if TYPE_CHECKING:
    from storage import SampleRecord


@dataclass(frozen=True)
class PairwiseInput:
    """The stored judgments of a scope as analysis input."""

    data: PairwiseData
    metric_values: Mapping[str, Mapping[str, float | None]]
    """sample label -> metric -> latest value (None = undefined), for the judged samples."""
    higher_is_better: Mapping[str, bool]
    skipped: Mapping[str, int]
    """criterion -> skipped answers (no preference)."""
    flagged: Mapping[str, int]
    """criterion -> flagged answers (no preference)."""
    n_both_bad: Mapping[str, int]
    """criterion -> rated judgments flagged "both bad"."""

    @property
    def n_skipped(self) -> int:
        """Skipped answers of every criterion."""
        return sum(self.skipped.values())

    @property
    def n_flagged(self) -> int:
        """Flagged answers of every criterion."""
        return sum(self.flagged.values())


@dataclass(frozen=True)
class CriterionReport:
    """Every pairwise statistic of one criterion."""

    criterion: str
    n_judgments: int
    """Rated judgments of this criterion."""
    n_both_bad: int
    n_skipped: int
    """Skipped answers of this criterion (no preference, left out)."""
    n_flagged: int
    """Flagged answers of this criterion (no preference, left out)."""
    ranking_note: str | None
    """Why there is no method ranking (no vote between outputs of two different known methods), else None."""
    bradley_terry: BradleyTerryFit | None
    elo: EloRatings | None
    win_rate: WinRateMatrix | None
    agreement: PairRaterAgreement
    accuracy: list[PairwiseAccuracy]
    warnings: tuple[str, ...] = ()
    """What makes these numbers fragile (few pairs, a single rater, no CIs, no method told apart), as sentences:
    `pairwise_warnings`."""

    def text(self) -> str:
        """The criterion's block of `masc-ui agreement --pairwise`."""
        head = (
            f"== {self.criterion} ({CRITERION_NAMES.get(self.criterion, self.criterion)}): {self.n_judgments} "
            f"judgments, {self.n_both_bad} flagged 'both bad' (their winner counts); {self.n_skipped} skipped and "
            f"{self.n_flagged} flagged answers left out"
        )
        parts = [head, *(f"warning: {w}" for w in self.warnings)]
        if self.ranking_note is not None:
            parts.append(f"method ranking: n/a ({self.ranking_note})")
        elif self.bradley_terry is not None and self.elo is not None and self.win_rate is not None:
            parts += [
                format_bradley_terry(self.bradley_terry),
                format_elo(self.elo) + "\n(the given order: the order the votes were judged in)",
                format_win_rate(self.win_rate),
            ]
        parts += [self.agreement_text(), format_pairwise_accuracy(self.accuracy)]
        return "\n\n".join(parts)

    def agreement_text(self) -> str:
        """The raters' agreement on pairs as `masc-ui agreement --pairwise` prints it (nominal alpha, percent
        agreement, Fleiss' kappa, with counts)."""
        return format_pair_agreement(self.agreement)

    def to_dict(self) -> dict[str, Any]:
        fit, elo, matrix = self.bradley_terry, self.elo, self.win_rate
        out: dict[str, Any] = {
            "criterion": self.criterion,
            "n_judgments": self.n_judgments,
            "n_both_bad": self.n_both_bad,
            "n_skipped": self.n_skipped,
            "n_flagged": self.n_flagged,
            "warnings": list(self.warnings),
            "ranking_note": self.ranking_note,
            "bradley_terry": None,
            "elo": None,
            "win_rate": None,
        }
        if fit is not None:
            scale = fit.elo_scale()
            out["bradley_terry"] = {
                "methods": [
                    {
                        "method": m,
                        "rank": fit.rank[m],
                        "theta": fit.strength[m].to_dict(),
                        "elo_scale": scale[m].to_dict(),
                    }
                    for m in fit.methods
                ],
                "tie": fit.tie.to_dict(),
                "log_likelihood": fit.log_likelihood,
                "n_votes": fit.n_votes,
                "n_ties": fit.n_ties,
                "n_pairs": fit.n_pairs,
                "n_excluded": fit.n_excluded,
                "regularization": fit.regularization,
                "n_boot": fit.n_boot,
                "seed": fit.seed,
                "level": fit.level,
                "n_boot_undefined": fit.n_boot_undefined,
                "reason": fit.reason,
            }
        if elo is not None:
            out["elo"] = {
                "methods": [{"method": m, "rank": elo.rank[m], "rating": elo.rating[m]} for m in elo.methods],
                "order": "judged time" if not elo.shuffles else f"mean over {elo.shuffles} random orders",
                "n_votes": elo.n_votes,
                "n_excluded": elo.n_excluded,
                "k": elo.k,
                "initial": elo.initial,
                "scale": elo.scale,
                "base": elo.base,
            }
        if matrix is not None:
            out["win_rate"] = {
                "methods": list(matrix.methods),
                "rate": matrix.rate,
                "wins": matrix.wins,
                "ties": matrix.ties,
                "n_excluded": matrix.n_excluded,
            }
        a = self.agreement
        out["rater_agreement"] = {
            "level": a.level,
            "n_units": a.n_units,
            "n_raters": a.n_raters,
            "n_judgments": a.n_judgments,
            "alpha": a.alpha.to_dict(),
            "percent_agreement": a.percent_agreement.to_dict(),
            "fleiss_kappa": a.fleiss_kappa,
        }
        out["accuracy"] = [
            {
                "metric": r.metric,
                "higher_is_better": r.higher_is_better,
                "accuracy": r.accuracy.to_dict(),
                "n_pairs": r.n_pairs,
                "n_metric_ties": r.n_metric_ties,
                "n_human_ties": r.n_human_ties,
                "n_missing": r.n_missing,
            }
            for r in self.accuracy
        ]
        clean: dict[str, Any] = json_safe(out)
        return clean


@dataclass(frozen=True)
class PairwiseReport:
    """`masc-ui agreement --pairwise` and the Agreement tab's pairwise part."""

    dataset: str | None
    criteria: tuple[CriterionReport, ...]
    n_skipped: int
    n_flagged: int
    n_boot: int
    seed: int
    counted: CountedRaters = EVERY_RATER
    """Whose judgments the numbers rest on (`rater_selection`)."""

    def text(self) -> str:
        scope = f"dataset {self.dataset!r}" if self.dataset else "all datasets"
        head = (
            f"Pairwise judgments of {scope} ({self.n_skipped} skipped and {self.n_flagged} flagged answers carry "
            f"no preference and are left out); {self.counted.text()}"
        )
        return "\n\n".join([head, *(c.text() for c in self.criteria)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "raters": self.counted.to_dict(),
            "n_boot": self.n_boot,
            "seed": self.seed,
            "n_skipped": self.n_skipped,
            "n_flagged": self.n_flagged,
            "criteria": [c.to_dict() for c in self.criteria],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


@dataclass(frozen=True)
class PairwiseColumn:
    """The leaderboard's human column from pairwise votes: each method's Bradley-Terry log-strength theta (sum 0
    over the ranked methods; higher = preferred more often) with its bootstrap CI, and its rank (1 = best).
    Methods without a vote between two different methods are absent; `reason` says why every value is missing."""

    name: str
    criterion: str
    values: Mapping[str, Estimate]
    ranks: Mapping[str, int | None]
    n_votes: int
    reason: str | None
    higher_is_better: bool = True


class PairwiseAnalysis:
    """The pairwise analysis of the judgments stored in one `Database`. Admins only."""

    def __init__(self, database: Database, selections: Callable[[], RaterSelections] | None = None) -> None:
        self._database = database
        self._selections = selections

    def counted_raters(self, *, user: str | None, dataset: str | None, raters: RaterSelection | None) -> CountedRaters:
        """The raters `raters` (None = all) counts in `dataset` (`rater_selection.RaterSelections.resolve`)."""
        if raters is None or raters.kind == "all":
            return EVERY_RATER
        if self._selections is None:
            raise InputError("this workbench cannot choose raters (no rater report): count every rater")
        return self._selections().resolve(user=user, dataset=dataset, selection=raters)

    def has_judgments(self, *, user: str | None, dataset: str | None) -> bool:
        """Whether `dataset` (None = all) has any current pairwise judgment (rated, skipped or flagged)."""
        self._database.accounts.require_admin(user, "the pairwise analysis")
        return bool(self._database.pairwise.current(dataset=dataset))

    def input(self, *, user: str | None, dataset: str | None, counted: CountedRaters = EVERY_RATER) -> PairwiseInput:
        """The stored judgments of `dataset` (None = all) of the raters `counted` keeps (default every one) as
        analysis input (see the module docstring); InputError for an unknown dataset or when nothing was judged
        yet."""
        self._database.accounts.require_admin(user, "the pairwise analysis")
        if dataset is not None:
            self._database.require_dataset(dataset)
        gold = self._database.gold.sample_ids(dataset)
        gold_pairs = self._database.pair_gold.keys(dataset)
        judgments = [
            j
            for j in self._database.pairwise.current(dataset=dataset)
            if counted.keeps(j.rater)
            and j.sample_a_id not in gold
            and j.sample_b_id not in gold
            and (j.sample_a_id, j.sample_b_id) not in gold_pairs
        ]
        samples = {s.id: s for s in self._database.samples.list(dataset)}
        judged = sorted({x for j in judgments for x in (j.sample_a_id, j.sample_b_id)})
        latest = self._database.metrics.latest_for(judged)
        if not judgments:
            raise InputError(
                "there are no pairwise judgments yet: judge pairs in the Rate tab, or import them with "
                "`masc-ui import FILE --format pairwise --dataset NAME`"
            )
        rated = [j for j in judgments if j.status == "rated" and j.winner is not None]
        labels = {sid: _label(samples[sid]) for j in judgments for sid in (j.sample_a_id, j.sample_b_id)}
        records = [
            PairJudgment(
                labels[j.left_sample_id],
                labels[j.right_sample_id],
                j.criterion,
                str(j.winner),
                j.rater,
                samples[j.left_sample_id].method,
                samples[j.right_sample_id].method,
            )
            for j in rated
        ]
        values = {labels[sid]: {name: v.value for name, v in by_metric.items()} for sid, by_metric in latest.items()}
        return PairwiseInput(
            PairwiseData(tuple(records)),
            values,
            _directions(values),
            {c: sum(j.status == "skipped" and j.criterion == c for j in judgments) for c in criteria()},
            {c: sum(j.status == "flagged" and j.criterion == c for j in judgments) for c in criteria()},
            {c: sum(j.both_bad for j in rated if j.criterion == c) for c in criteria()},
        )

    def report(
        self,
        *,
        user: str | None,
        dataset: str | None = None,
        criterion: str | None = None,
        metrics: list[str] | None = None,
        n_boot: int = 2000,
        seed: int = 0,
        raters: RaterSelection | None = None,
    ) -> PairwiseReport:
        """Every pairwise statistic of `criterion` (None = each judged criterion) over the stored judgments of
        `dataset` (None = all): Bradley-Terry (Davidson ties) with `n_boot` bootstrap resamples of output pairs,
        Elo, win rates, rater agreement, the pairwise accuracy of `metrics` (None = every metric with values on the
        judged samples; CIs over decided pairs), on the judgments of `raters` (None = every rater). InputError when
        nothing was judged, for an unknown criterion or metric, or bad bootstrap arguments."""
        _check_bootstrap(n_boot, seed)
        counted = self.counted_raters(user=user, dataset=dataset, raters=raters)
        source = self.input(user=user, dataset=dataset, counted=counted)
        judged = source.data.criteria
        if criterion is not None and criterion not in criteria():
            raise InputError(
                f"criterion must be one of {', '.join(criteria())} for pairwise judgments; got {criterion!r}"
            )
        if criterion is not None and criterion not in judged:
            raise InputError(
                f"no pairwise judgments of {criterion!r} ({CRITERION_NAMES[criterion]}) yet; judged: "
                f"{', '.join(judged) or 'none (every answer was skipped or flagged)'}"
            )
        chosen = [criterion] if criterion is not None else [c for c in criteria() if c in judged]
        if not chosen:
            raise InputError("every pairwise answer so far was skipped or flagged: there is no preference to analyse")
        if metrics is not None:
            known = sorted({m for values in source.metric_values.values() for m in values})
            unknown = [m for m in metrics if m not in known]
            if unknown:
                raise InputError(
                    f"no values of metric(s) {', '.join(unknown)} on the judged samples; metrics with "
                    f"values: {', '.join(known) or 'none (score the samples first: masc-ui batch)'}"
                )
        reports = tuple(_criterion_report(source, c, metrics, n_boot, seed) for c in chosen)
        return PairwiseReport(dataset, reports, source.n_skipped, source.n_flagged, n_boot, seed, counted)

    def column(
        self,
        *,
        user: str | None,
        dataset: str | None,
        criterion: str = "cp",
        n_boot: int = 2000,
        seed: int = 0,
        counted: CountedRaters = EVERY_RATER,
    ) -> PairwiseColumn:
        """The leaderboard's pairwise human column of `criterion` (see `PairwiseColumn`) from the judgments of the
        raters `counted` keeps; InputError when `dataset` has no judgments of it."""
        _check_bootstrap(n_boot, seed)
        source = self.input(user=user, dataset=dataset, counted=counted)
        name = f"humans, pairwise ({criterion}, Bradley-Terry theta)"
        if criterion not in source.data.criteria:
            raise InputError(f"no pairwise judgments of {criterion!r} in {dataset or 'the database'} yet")
        try:
            fit = bradley_terry(source.data, criterion, n_boot=n_boot, seed=seed)
        except InputError as exc:
            return PairwiseColumn(name, criterion, {}, {}, 0, str(exc))
        return PairwiseColumn(name, criterion, dict(fit.strength), dict(fit.rank), fit.n_votes, fit.reason)

    def datasets(self, *, user: str | None) -> list[str]:
        """The stored datasets' names (the pairwise report's choices)."""
        self._database.accounts.require_admin(user, "the pairwise analysis")
        return self._database.datasets()


def bradley_terry_rows(report: CriterionReport) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) for a grid: rank, method, theta and its CI, the Elo-like scale, the online Elo rating."""
    headers = ["rank", "method", "theta", "theta 95% CI", "BT Elo scale", "online Elo"]
    fit, elo = report.bradley_terry, report.elo
    if fit is None or fit.reason is not None:
        return headers, []
    scale = fit.elo_scale()
    order = sorted(fit.methods, key=lambda m: (fit.rank[m] is None, fit.rank[m] or 0, m))
    return headers, [
        [
            fit.rank[m],
            m,
            _round(fit.strength[m].value),
            _ci(fit.strength[m]),
            _round(scale[m].value),
            _round(elo.rating.get(m)) if elo is not None else None,
        ]
        for m in order
    ]


def win_rate_rows(report: CriterionReport) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) for a grid: the row method's win rate against each column method (None = never compared)."""
    matrix = report.win_rate
    if matrix is None:
        return ["method"], []
    return ["method", *matrix.methods], [
        [m, *(_round(v) for v in matrix.rate[i])] for i, m in enumerate(matrix.methods)
    ]


def accuracy_rows(report: CriterionReport) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) for a grid: each metric (its display name) with its pairwise accuracy, CI and counts."""
    headers = ["metric", "accuracy", "95% CI", "pairs", "metric ties", "human ties (left out)", "missing"]
    return headers, [
        [
            shown_name(r.metric),
            _round(r.accuracy.value),
            _ci(r.accuracy),
            r.n_pairs,
            r.n_metric_ties,
            r.n_human_ties,
            r.n_missing,
        ]
        for r in report.accuracy
    ]


def _criterion_report(
    source: PairwiseInput, criterion: str, metrics: list[str] | None, n_boot: int, seed: int
) -> CriterionReport:
    data = source.data
    votes = data.votes(criterion)
    note = fit = elo = matrix = None
    try:
        fit = bradley_terry(data, criterion, n_boot=n_boot, seed=seed)
        elo = elo_ratings(data, criterion)
        matrix = win_rate_matrix(data, criterion)
    except InputError as exc:  # no vote between outputs of two different known methods
        note = str(exc)
    if metrics is None:
        metrics = sorted(
            {m for label in {x for pair in votes.pairs for x in pair} for m in source.metric_values.get(label, {})}
        )
    accuracy = (
        pairwise_accuracy(
            data,
            source.metric_values,
            metrics=metrics,
            criteria=[criterion],
            higher_is_better=source.higher_is_better,
            n_boot=n_boot,
            seed=seed,
        )
        if metrics
        else []
    )
    agreement = pairwise_rater_agreement(data, criterion, n_boot=n_boot, seed=seed)
    return CriterionReport(
        criterion,
        int(votes.outcome.size),
        source.n_both_bad.get(criterion, 0),
        source.skipped.get(criterion, 0),
        source.flagged.get(criterion, 0),
        note,
        fit,
        elo,
        matrix,
        agreement,
        accuracy,
        tuple(pairwise_warnings(fit, agreement, accuracy, votes.raters, n_boot)),
    )


def pairwise_warnings(
    fit: BradleyTerryFit | None,
    agreement: PairRaterAgreement,
    accuracy: list[PairwiseAccuracy],
    raters: tuple[str, ...],
    n_boot: int,
) -> list[str]:
    """Warnings of one criterion's pairwise statistics, by the ratings view's rules (`agreement.small_n_warning`:
    fewer than `SMALL_N` units; a single rater; no CIs), plus one when every method's Bradley-Terry CI includes 0
    (no method is told apart from the average strength, theta = 0)."""
    ranked = fit is not None and fit.reason is None
    out = [
        small_n_warning(
            [fit.n_pairs] if fit is not None and ranked else [],
            "output pair(s) compare two different methods",
            "the method ranking (Bradley-Terry, Elo, win rates) and its CIs are not reliable yet; judge more pairs",
        ),
        small_n_warning(
            [agreement.n_units] if agreement.n_raters >= 2 else [],
            "output pair(s) were judged by two or more raters",
            "the raters' agreement on pairs is not reliable yet; have a second rater judge the pairs the first one "
            "judged",
        ),
        small_n_warning(
            [r.n_pairs for r in accuracy],
            "pair(s) decided by the humans have values of a metric",
            "the metric accuracies and their CIs are not reliable yet; judge more pairs",
        ),
        single_rater_warning(
            raters,
            "there is no agreement among raters to compare with, and every preference is one person's; ask a "
            "second rater to judge the same pairs",
        ),
        no_bootstrap_warning(n_boot),
    ]
    if fit is not None and ranked and n_boot and _every_interval_holds(fit, 0.0):
        out.append(
            "every method's Bradley-Terry 95% CI includes 0 (the average strength): the judgments tell no method "
            "apart from the average yet, so the ranking may be chance; judge more pairs"
        )
    return [w for w in out if w is not None]


def _every_interval_holds(fit: BradleyTerryFit, value: float) -> bool:
    """Every method's CI is defined and contains `value`."""
    intervals = [(e.ci_low, e.ci_high) for e in fit.strength.values()]
    return all(low == low and high == high and low <= value <= high for low, high in intervals)


def _directions(values: Mapping[str, Mapping[str, Any]]) -> dict[str, bool]:
    from ..metrics.registry import list_metrics

    known = {spec.name: spec.higher_is_better for spec in list_metrics(None)}
    return {m: known.get(m, True) for by_metric in values.values() for m in by_metric}


def _label(sample: SampleRecord) -> str:
    return f"{sample.dataset}/{sample.external_key}" if sample.external_key else f"{sample.dataset}/#{sample.id}"


def _check_bootstrap(n_boot: int, seed: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 0 <= n_boot <= MAX_BOOTSTRAP:
        raise InputError(
            f"bootstrap resamples must be an integer within 0..{MAX_BOOTSTRAP:,} (0 = no confidence "
            f"intervals), got {n_boot!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"the bootstrap seed must be an integer >= 0, got {seed!r}")
    check_resamples(n_boot, 0.95)


def _round(value: float | None, digits: int = SIGNIFICANT) -> str | None:
    """A grid cell with `digits` significant digits (`numbers.format_value`); None (empty) when undefined."""
    if value is None or value != value:
        return None
    return format_value(value, digits)


def _ci(e: Estimate) -> str:
    return format_interval(e.ci_low, e.ci_high, 3) or "n/a"
