"""The leaderboard of a stored dataset (`masc-ui leaderboard`; the app's Leaderboard view calls the same): per
method (or category) every metric's mean and each criterion's mean human rating with bootstrap 95% CIs, n and
ranks, the rank agreement (Kendall tau-b) of each metric with the humans, and the methods x metrics matrix for a
plot. The statistics are `masc_ui.analysis.leaderboard` (conventions there and in README "Leaderboard"); this
use case reads the stored values and ratings, takes each metric's direction from the registry, and appends the
extra human columns it is given and, when the dataset has pairwise judgments, one pairwise column per judged
criterion (`bt_cp`, `bt_pf`: each method's Bradley-Terry theta from `pairwise_analysis.pairwise_column`, see
`pairwise_columns`). When values carry mask-sensitivity checks (`masc-ui batch --mask-sensitivity`), each such
metric is checked for a ranking that depends on the masks (`masc_ui.analysis.mask_dependence`) and the view says
so beside the tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from .agreement import Agreement, shown_name
from .pairwise_analysis import PairwiseAnalysis
from .rater_selection import EVERY_RATER, CountedRaters, RaterSelection

if TYPE_CHECKING:
    from ..analysis import HumanColumn, Leaderboard, LeaderboardMatrix
    from ..analysis.bootstrap import Estimate
    from ..analysis.leaderboard import LeaderboardCell
    from ..analysis.mask_dependence import MaskDependence

LEADERBOARD_FORMATS = ("md", "csv", "latex")


@dataclass(frozen=True)
class LeaderboardView:
    """One leaderboard of the stored data and everything shown from it."""

    dataset: str | None
    board: Leaderboard
    """Extra human columns included, as criteria."""
    matrix: LeaderboardMatrix
    """groups x (metrics, then human columns), raw and 0..1 (1 = best)."""
    mask_dependence: tuple[MaskDependence, ...] = ()
    """The mask-dependence check of each metric of the board whose stored values carry mask-sensitivity checks."""
    counted: CountedRaters = EVERY_RATER
    """Whose ratings and judgments the human columns rest on (`rater_selection`), written into every rendering."""

    def render(self, fmt: str) -> str:
        """The leaderboard as Markdown (`md`, with the rank-agreement table and the mask-dependence lines), CSV
        (`csv`, the leaderboard only; see `rank_agreement_csv`) or LaTeX booktabs (`latex`, with the rank-agreement
        table). Each says which raters it counts: Markdown a line under the caption, LaTeX a comment line under the
        caption's, CSV a last column `raters` (the same text on every row)."""
        from ..analysis import LEADERBOARD_RENDERERS

        if fmt not in LEADERBOARD_RENDERERS:
            raise InputError(f"leaderboard format must be one of {', '.join(LEADERBOARD_RENDERERS)}; got {fmt!r}")
        text = LEADERBOARD_RENDERERS[fmt](self.board)
        said = self.counted.text()
        if fmt == "csv":
            return _with_column(text, "raters", said)
        caption, rest = text.split("\n", 1)
        text = f"{caption}\n{'% ' if fmt == 'latex' else ''}{said[0].upper()}{said[1:]}.\n{rest}"
        notes = mask_notes(self)
        if fmt == "md" and notes:
            text = text.rstrip("\n") + "\n\nMask dependence (the values' mask-sensitivity checks)\n\n"
            text += "".join(f"- {line}\n" for line in notes)
        return text

    def rank_agreement_csv(self) -> str:
        """One row per (metric, human column): metric, criterion, n_groups, tau, ci_low, ci_high, raters (the raters
        counted)."""
        from ..analysis import rank_agreement_csv

        return _with_column(rank_agreement_csv(self.board), "raters", self.counted.text())


class Leaderboards:
    """Leaderboards of the stored data, from the agreement data (values and ratings) and the pairwise judgments."""

    def __init__(self, agreement: Agreement, pairwise: PairwiseAnalysis) -> None:
        self._agreement = agreement
        self._pairwise = pairwise

    def view(
        self,
        *,
        user: str | None,
        dataset: str | None,
        by: str = "method",
        metrics: Sequence[str] | None = None,
        criteria: Sequence[str] | None = None,
        n_boot: int = 2000,
        seed: int = 0,
        extra_columns: Sequence[HumanColumn] = (),
        pairwise: bool = True,
        raters: RaterSelection | None = None,
    ) -> LeaderboardView:
        """The leaderboard of `dataset` (None = every dataset) grouped `by` method or category. Admins only.

        Args:
            metrics: metric names (default: every metric with a stored value); criteria: rated criteria (default:
                every criterion with a rating; [] = metrics only).
            n_boot: bootstrap resamples per group (0..`MAX_N_BOOT`, 0 = no CIs); seed: their seed.
            extra_columns: `masc_ui.analysis.HumanColumn`s appended after the criteria (ranked, compared with every
                metric by Kendall tau-b; see `masc_ui.analysis.leaderboard_columns`).
            pairwise: append the pairwise Bradley-Terry columns (`pairwise_columns`, same `n_boot` and `seed`) after
                them when the dataset has pairwise judgments; never with `criteria=[]` (metrics only).
            raters: whose ratings and judgments count (None = every rater; `rater_selection`); said in `render`.
        Raises:
            InputError: unknown dataset, no samples, unknown metric / criterion, bad `by` / `n_boot` / `seed`.
        """
        from ..analysis import leaderboard, leaderboard_matrix
        from ..analysis.leaderboard_columns import with_human_column

        counted = self._agreement.counted_raters(user=user, dataset=dataset, raters=raters)
        data = self._agreement.data(user=user, dataset=dataset, counted=counted)
        if not data.records:
            where = f"dataset {dataset!r}" if dataset else "the database"
            raise InputError(f"{where} has no samples yet: import or save samples, score them, then rate them")
        names = list(metrics) if metrics else list(data.metric_names)
        board = leaderboard(
            data, metrics, criteria, by=by, higher_is_better=metric_directions(names), n_boot=n_boot, seed=seed
        )
        if pairwise and (criteria is None or list(criteria)):
            extra_columns = [
                *extra_columns,
                *self.pairwise_columns(user=user, dataset=dataset, n_boot=n_boot, seed=seed, counted=counted),
            ]
        for column in extra_columns:
            board = with_human_column(board, column)
        dependence = self.mask_dependence(user=user, dataset=dataset, by=by, metrics=board.metrics)
        return LeaderboardView(dataset, board, leaderboard_matrix(board), dependence, counted)

    def mask_dependence(
        self, *, user: str | None, dataset: str | None, by: str, metrics: Sequence[str]
    ) -> tuple[MaskDependence, ...]:
        """The mask-dependence check (`masc_ui.analysis.mask_dependence`) of each of `metrics` whose stored values
        carry mask-sensitivity checks, in the order of `metrics`."""
        from ..analysis.mask_dependence import mask_dependence

        checks = self._agreement.mask_checks(user=user, dataset=dataset, by=by)
        directions = metric_directions(list(metrics))
        found = (mask_dependence(m, checks[m], directions.get(m, True)) for m in metrics if checks.get(m))
        return tuple(d for d in found if d is not None)

    def pairwise_columns(
        self,
        *,
        user: str | None,
        dataset: str | None,
        n_boot: int = 2000,
        seed: int = 0,
        counted: CountedRaters = EVERY_RATER,
    ) -> list[HumanColumn]:
        """The leaderboard's pairwise human columns of `dataset` (None = all): per judged criterion (cp, then pf) a
        `HumanColumn` named `bt_<criterion>` holding each method's Bradley-Terry log-strength theta with its
        bootstrap CI (`PairwiseAnalysis.column`: Davidson ties, resampled output pairs) and, as its n, the votes
        between two different methods that involve the method (the votes the fit uses). [] when the dataset has no
        rated pairwise judgment. A fit without finite strengths (e.g. a method that never lost) gives a column of
        n/a, its reason in the column's description. Only the judgments of the raters `counted` keeps. Admins only."""
        from ..analysis import HumanColumn
        from ..analysis.pairwise_data import method_votes
        from .ratings import criteria

        if not self._pairwise.has_judgments(user=user, dataset=dataset):
            return []
        source = self._pairwise.input(user=user, dataset=dataset, counted=counted)
        columns = []
        for criterion in (c for c in criteria() if c in source.data.criteria):
            votes = method_votes(source.data.votes(criterion))
            counts = np.bincount(np.concatenate([votes.first, votes.second]), minlength=len(votes.methods))
            column = self._pairwise.column(
                user=user, dataset=dataset, criterion=criterion, n_boot=n_boot, seed=seed, counted=counted
            )
            described = column.name + (f": n/a because {column.reason}" if column.reason else "")
            columns.append(
                HumanColumn(
                    f"bt_{criterion}",
                    dict(column.values),
                    {m: int(counts[i]) for i, m in enumerate(votes.methods)},
                    described,
                )
            )
        return columns


def _with_column(csv_text: str, name: str, value: str) -> str:
    """`csv_text` (a header and rows) with a last column `name` holding `value` on every row."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(csv_text)))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([[*rows[0], name], *([*row, value] for row in rows[1:])] if rows else [])
    return out.getvalue()


def metric_directions(names: Sequence[str]) -> dict[str, bool]:
    """metric -> higher is better, from the registry (image and video metrics); names it does not know (imported
    judges such as `gpt4o_cp`) are higher-is-better, as the leaderboard assumes."""
    from ..metrics.registry import list_metrics

    known = {spec.name: spec.higher_is_better for spec in list_metrics(None)}
    return {name: known.get(name, True) for name in names}


def matrix_rows(view: LeaderboardView) -> tuple[list[str], list[list[Any]]]:
    """Long-format rows for a methods x metrics plot (heat map or grouped bars): group, column, higher is better,
    mean (raw), normalized (0..1 within the column, 1 = best group; None where undefined)."""
    m = view.matrix
    headers = [view.board.by, "column", "higher_is_better", "mean", "normalized"]
    rows = [
        [group, column, m.higher_is_better[k], _number(m.means[g, k]), _number(m.normalized[g, k])]
        for g, group in enumerate(m.groups)
        for k, column in enumerate(m.columns)
    ]
    return headers, rows


def table_rows(view: LeaderboardView, digits: int = 3) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) of the leaderboard for a grid, cell for cell the Markdown rendering's (`render("md")`):
    group, n, then per metric (arrow = its direction) and per human column `mean [ci_low, ci_high] (rank)`, each
    column with the significant digits that separate its means (`column_precision`)."""
    from ..analysis.leaderboard_render import HUMAN_PREFIX, column_precision
    from ..analysis.report import format_estimate

    board = view.board
    shown = column_precision(board, digits)
    headers = [
        board.by,
        "n",
        *(f"{shown_name(m)} {'↑' if board.higher_is_better[m] else '↓'}" for m in board.metrics),
        *(f"human {c} ↑" for c in board.criteria),
    ]
    rows = [
        [
            r.group,
            r.n,
            *(_cell(r.metrics[m], shown[m], format_estimate) for m in board.metrics),
            *(_cell(r.humans[c], shown[HUMAN_PREFIX + c], format_estimate) for c in board.criteria),
        ]
        for r in board.rows
    ]
    return headers, rows


def agreement_rows(view: LeaderboardView, digits: int = 3) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) of the rank agreement for a grid, as in `render("md")`: per metric (its display name),
    Kendall tau-b [CI] (n = groups) against each human column; an undefined tau reads `n/a (n=3) [1]`, its reason
    is note [1] of `agreement_notes`. ([], []) when there is no human column (`agreement_notes` says why)."""
    from ..analysis.report import format_estimate

    board = view.board
    if not board.agreement:
        return [], []
    marks = _reason_marks(view)
    headers = ["metric", *(f"tau vs human {c}" for c in board.criteria)]
    rows = []
    for m in board.metrics:
        cells = []
        for a in (board.rank_agreement(m, c) for c in board.criteria):
            text = f"{format_estimate(a.tau, digits)} (n={a.n_groups})"
            cells.append(f"{text} [{marks[a.reason]}]" if a.reason else text)
        rows.append([shown_name(m), *cells])
    return headers, rows


FULL_RANGE_SLACK = 1e-9
"""How close to -1 and 1 a tau CI's ends must be to count as the full range (floating-point slack)."""


def agreement_notes(view: LeaderboardView) -> list[str]:
    """What the rank-agreement grid cannot hold: why it is empty (no human column), why each undefined tau is
    undefined (`[1] ...`, the marks of `agreement_rows`), and that the CIs say nothing when every defined tau's CI
    is the full range [-1, 1]."""
    board = view.board
    if not board.agreement:
        if not board.metrics:
            return ["No rank agreement: the dataset has no stored metric values to rank the groups by."]
        return [
            "No rank agreement: the dataset has no human ratings or pairwise judgments, so there is no human "
            f"ranking of the {board.by}s to compare each metric's ranking with. Rate its samples (the Rate and "
            "Rate pairs tabs) or import ratings, then compute again."
        ]
    notes = [f"[{mark}] {reason}" for reason, mark in _reason_marks(view).items()]
    with_ci = [a for a in board.agreement if a.reason is None and a.tau.ci_low == a.tau.ci_low]
    if with_ci and all(
        a.tau.ci_low <= -1 + FULL_RANGE_SLACK and a.tau.ci_high >= 1 - FULL_RANGE_SLACK for a in with_ci
    ):
        groups = sorted({a.n_groups for a in with_ci})
        notes.append(
            "Every rank agreement's 95% CI is the full range [-1, 1]: on "
            f"{' or '.join(str(n) for n in groups)} {board.by}s the resamples range from full disagreement to full "
            f"agreement, so no tau here is told apart from chance; compare more {board.by}s, or rate more samples "
            "of each."
        )
    return notes


def mask_notes(view: LeaderboardView) -> list[str]:
    """One sentence per metric checked for mask dependence (`MaskDependence.sentence`, display names), those whose
    ranking depends on the masks first."""
    checks = sorted(view.mask_dependence, key=lambda d: not d.depends)
    return [("⚠ " if d.depends else "") + d.sentence(shown_name(d.metric), view.board.by) for d in checks]


def _reason_marks(view: LeaderboardView) -> dict[str, int]:
    """Distinct reasons of undefined taus -> their note number (1, 2, ...), in table order."""
    marks: dict[str, int] = {}
    for a in view.board.agreement:
        if a.reason and a.reason not in marks:
            marks[a.reason] = len(marks) + 1
    return marks


def _cell(cell: LeaderboardCell, digits: int, format_estimate: Callable[[Estimate, int], str]) -> str:
    text = format_estimate(cell.mean, digits)
    return text if cell.rank is None else f"{text} ({cell.rank})"


def _number(x: float) -> float | None:
    return None if math.isnan(x) else float(x)
