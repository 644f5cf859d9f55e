"""The rater report (admins; the Raters tab and `masc-ui raters`): per rater of a dataset, answers, skips and flags,
the median and 10th-percentile time per task, answers under the time floor (`Settings.min_seconds`), the longest run
of identical answers, gold accuracy and attention-check pass rate (with n), the same for pairs (gold pair accuracy
per criterion, pair attention-check pass rate: `pair_gold`), leave-one-out agreement with the other
raters (interval alpha with a bootstrap CI) and agreement with each metric (Spearman); raters below a threshold are
marked with the reason, nothing is deleted. The statistics and thresholds are `masc_ui.analysis.rater_quality`.

Who is in it: the raters of the app (not imported groups or judges) with a finished task in the dataset, or a rated
judgment of a gold pair or pair attention check of it. Time, runs
and answers count every task (gold tasks and attention checks too); the agreement statistics use the samples that
are not gold (`Agreement.data`, which leaves gold out)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..settings import Settings
from .agreement import MAX_BOOTSTRAP, Agreement, shown_name
from .database import Database
from .gold import GoldTasks
from .pair_gold import PairGoldTasks
from .ratings import criteria

if TYPE_CHECKING:
    from ..analysis.rater_quality import RaterQuality

REPORT_HEADERS = (
    "rater",
    "answers",
    "skips",
    "flags",
    "median s",
    "p10 s",
    "under floor",
    "identical run",
    "gold",
    "attention",
    "pair gold",
    "pair attention",
    "alpha vs others",
    "alpha 95% CI",
    "marked because",
)
"""Columns of `report_rows` (then one `rho <metric>` column per metric)."""


@dataclass(frozen=True)
class RaterReport:
    """The rater report of one dataset and criterion."""

    dataset: str
    criterion: str
    """The criterion of the agreement columns."""
    min_seconds: float
    n_boot: int
    metrics: tuple[str, ...]
    rows: tuple[RaterQuality, ...]

    @property
    def marked(self) -> list[str]:
        """The marked raters, by name."""
        return [q.rater for q in self.rows if q.marked]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: what `masc-ui raters --json` prints (NaN as null)."""
        return {
            "dataset": self.dataset,
            "criterion": self.criterion,
            "min_seconds": self.min_seconds,
            "n_boot": self.n_boot,
            "raters": [
                {
                    "rater": q.rater,
                    "answers": q.answers,
                    "skips": q.skips,
                    "flags": q.flags,
                    "median_seconds": _json_number(q.median_seconds),
                    "p10_seconds": _json_number(q.p10_seconds),
                    "under_floor": q.under_floor,
                    "timed": q.timed,
                    "longest_identical_run": q.longest_identical_run,
                    "gold": {"correct": q.gold.correct, "n": q.gold.n},
                    "attention": {"passed": q.attention.correct, "n": q.attention.n},
                    "pair_gold": {c: {"correct": g.correct, "n": g.n} for c, g in q.pair_gold.items()},
                    "pair_attention": {"passed": q.pair_attention.correct, "n": q.pair_attention.n},
                    "alpha_vs_others": {**q.loo_alpha.to_dict(), "n": q.loo_n},
                    "metrics": {m: {"spearman": _json_number(r), "n": n} for m, (r, n) in q.metric_rho.items()},
                    "marked": q.marked,
                    "marks": list(q.marks),
                }
                for q in self.rows
            ],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_csv(self) -> str:
        """`report_rows` as CSV."""
        headers, rows = report_rows(self)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(rows)
        return out.getvalue()

    def text(self) -> str:
        """The report as a table of tab-separated columns, then the marks: what `masc-ui raters` prints."""
        headers, rows = report_rows(self)
        lines = [
            f"raters of {self.dataset!r}: agreement on {self.criterion}, time floor {self.min_seconds:g} s, "
            f"{self.n_boot} bootstrap resamples",
            "\t".join(headers),
            *("\t".join("" if c is None else str(c) for c in row) for row in rows),
        ]
        marked = [q for q in self.rows if q.marked]
        lines.append(
            "marked: " + "; ".join(f"{q.rater} ({', '.join(q.marks)})" for q in marked) if marked else "marked: none"
        )
        return "\n".join(lines)


class RaterReports:
    """Rater reports over one `Database`. Admins only."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        gold: GoldTasks,
        agreement: Agreement,
        pair_gold: PairGoldTasks | None = None,
    ) -> None:
        self._database = database
        self._settings = settings
        self._gold = gold
        self._agreement = agreement
        self._pair_gold = pair_gold if pair_gold is not None else PairGoldTasks(database)

    def report(
        self, *, user: str | None, dataset: str, criterion: str = "cp", n_boot: int = 1000, seed: int = 0
    ) -> RaterReport:
        """The rater report of `dataset` (see the module docstring); InputError for an unknown dataset or criterion,
        bad `n_boot`, or a dataset no rater of the app has answered yet."""
        from ..analysis.rater_quality import (
            Graded,
            RaterQuality,
            longest_identical_run,
            loo_alpha,
            marks_of,
            metric_agreement,
            task_answers,
            time_stats,
        )

        self._database.accounts.require_admin(user, "the rater report")
        if criterion not in criteria():
            raise InputError(f"criterion must be one of {', '.join(criteria())}; got {criterion!r}")
        if not 0 <= n_boot <= MAX_BOOTSTRAP:
            raise InputError(f"bootstrap resamples must be within 0..{MAX_BOOTSTRAP:,} (0 = no CIs), got {n_boot:,}")
        self._database.require_dataset(dataset)
        external = {r.username for r in self._database.ratings.raters() if r.is_external}
        answered = task_answers(self._database.ratings.current(dataset=dataset), criteria())
        tasks = [a for a in answered if a.rater not in external]
        pair_graded: dict[tuple[str, str], dict[str, Graded]] = {}
        for g in self._pair_gold.accuracy(user=user, dataset=dataset):
            if g.rater not in external:
                pair_graded.setdefault((g.rater, g.kind), {})[g.criterion] = Graded(g.correct, g.n)
        names = sorted({a.rater for a in tasks} | {rater for rater, _ in pair_graded})
        if not names:
            raise InputError(f"no rater has answered a task of {dataset!r} yet: the report needs answers")
        graded: dict[tuple[str, str], list[int]] = {}
        for g in self._gold.accuracy(user=user, dataset=dataset):
            count = graded.setdefault((g.rater, g.kind), [0, 0])
            count[0] += g.correct
            count[1] += g.n
        data = self._agreement.data(user=user, dataset=dataset)
        records = list(data.records)
        matrix_raters, matrix = data.rating_matrix(records, criterion)
        metrics = tuple(data.metric_names)
        values = {m: data.metric_values(records, m) for m in metrics}
        floor = self._settings.min_seconds
        rows = []
        for name in names:
            mine = [a for a in tasks if a.rater == name]
            times = [a.seconds for a in mine if a.seconds is not None]
            median, p10 = time_stats(times)
            if name in matrix_raters:
                i = matrix_raters.index(name)
                own, others = matrix[i], np.delete(matrix, i, axis=0)
            else:
                own, others = np.full(len(records), np.nan), matrix
            alpha, loo_n = loo_alpha(own, others, n_boot=n_boot, seed=seed)
            q = RaterQuality(
                rater=name,
                answers=sum(a.status == "rated" for a in mine),
                skips=sum(a.status == "skipped" for a in mine),
                flags=sum(a.status == "flagged" for a in mine),
                median_seconds=median,
                p10_seconds=p10,
                under_floor=sum(t < floor for t in times),
                timed=len(times),
                longest_identical_run=longest_identical_run(mine),
                gold=Graded(*graded.get((name, "gold"), (0, 0))),
                attention=Graded(*graded.get((name, "attention"), (0, 0))),
                loo_alpha=alpha,
                loo_n=loo_n,
                metric_rho={m: metric_agreement(own, values[m]) for m in metrics},
                pair_gold=pair_graded.get((name, "gold"), {}),
                pair_attention=Graded(
                    sum(g.correct for g in pair_graded.get((name, "attention"), {}).values()),
                    sum(g.n for g in pair_graded.get((name, "attention"), {}).values()),
                ),
            )
            rows.append(dataclasses.replace(q, marks=marks_of(q)))
        return RaterReport(dataset, criterion, floor, n_boot, metrics, tuple(rows))


def report_rows(report: RaterReport) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) of the report for a grid or CSV: `REPORT_HEADERS`, then `rho <metric>` per metric; counts with
    their n (`3/4`), times in seconds to 0.1, alpha to 0.01."""
    headers = [*REPORT_HEADERS, *(f"rho {shown_name(m)}" for m in report.metrics)]
    rows = []
    for q in report.rows:
        rows.append(
            [
                q.rater,
                q.answers,
                q.skips,
                q.flags,
                _rounded(q.median_seconds, 1),
                _rounded(q.p10_seconds, 1),
                f"{q.under_floor}/{q.timed}",
                q.longest_identical_run,
                f"{q.gold.correct}/{q.gold.n}" if q.gold.n else "n/a",
                f"{q.attention.correct}/{q.attention.n}" if q.attention.n else "n/a",
                "; ".join(f"{c} {g.correct}/{g.n}" for c, g in sorted(q.pair_gold.items())) or "n/a",
                f"{q.pair_attention.correct}/{q.pair_attention.n}" if q.pair_attention.n else "n/a",
                _rounded(q.loo_alpha.value, 2),
                _interval(q.loo_alpha.ci_low, q.loo_alpha.ci_high) + f" (n={q.loo_n})",
                "; ".join(q.marks),
                *(_with_n(*q.metric_rho[m]) for m in report.metrics),
            ]
        )
    return headers, rows


def _rounded(x: float, digits: int) -> float | None:
    return None if math.isnan(x) else round(float(x), digits)


def _interval(lo: float, hi: float) -> str:
    return "n/a" if math.isnan(lo) or math.isnan(hi) else f"[{lo:.2f}, {hi:.2f}]"


def _with_n(rho: float, n: int) -> str:
    return f"n/a (n={n})" if math.isnan(rho) else f"{rho:.2f} (n={n})"


def _json_number(x: float) -> float | None:
    return None if math.isnan(x) else float(x)
