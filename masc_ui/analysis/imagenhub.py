"""ImagenHub human ratings as agreement data, and the summary its `AnalyzeHumanEval.ipynb` prints.

Reading the TSVs is `masc_ui.datasets.imagenhub.read_imagenhub` (pure, no storage); this module takes one
of its tasks (anything with `raters`, `models`, `uids` and `cells[rater][model][uid] = (SC, PQ)`).

Criteria: `sc` (semantic consistency), `pq` (perceptual quality), `o` = sqrt(SC * PQ) per rater and cell
(ImagenHub's overall score); ratings are on the scale [0, 1] (values 0, 0.5, 1 for SC and PQ).

The notebook's numbers, per model: `SC_avg` etc. = mean over raters of each rater's mean over samples;
Krippendorff alpha (`ordinal`) on the (raters, samples) table of one model; Fleiss' kappa on the
transposed (samples, raters) table, each distinct value a category.

From the database (`masc-ui import imagenhub`, ratings stored x 4 on the 0-4 scale): `with_overall` adds
`o` = sqrt(sc * pq) per rater and sample to the `AgreementData` that `masc_ui.datasets.agreement_source`
builds (on the stored scale: sqrt(4 SC * 4 PQ) = 4 O), and `summarize_data` gives the same summaries per
method, dividing means by the data's rating range. O is never stored: it is derived here.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .alpha import krippendorff_alpha
from .data import AgreementData, AgreementRecord
from .kappa import fleiss_kappa

CRITERIA = ("sc", "pq", "o")
RATING_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class CriterionSummary:
    """One model's human ratings of one criterion: mean, ordinal alpha among raters, Fleiss' kappa.

    `fleiss_kappa` uses only the samples every rater rated (NaN if none)."""

    mean: float
    alpha_ordinal: float
    fleiss_kappa: float
    n_samples: int
    n_raters: int


def rating_tables(task: Any, model: str) -> dict[str, np.ndarray]:
    """criterion -> float64 (raters, samples) ratings of `model` (rows in `task.raters` order, columns in
    `task.uids` order; NaN = the rater has no valid cell for that sample)."""
    if model not in task.models:
        raise InputError(f"ImagenHub task {task.name!r} has no model {model!r}; models: {task.models}")
    sc = np.full((len(task.raters), len(task.uids)), np.nan)
    pq = np.full_like(sc, np.nan)
    for i, rater in enumerate(task.raters):
        cells = task.cells.get(rater, {}).get(model, {})
        for j, uid in enumerate(task.uids):
            if uid in cells:
                sc[i, j], pq[i, j] = cells[uid]
    return {"sc": sc, "pq": pq, "o": np.sqrt(sc * pq)}


def summarize_model(task: Any, model: str) -> dict[str, CriterionSummary]:
    """criterion (`sc`, `pq`, `o`) -> the notebook's summary of one model in one task."""
    return {criterion: summarize_table(table) for criterion, table in rating_tables(task, model).items()}


def summarize_table(table: np.ndarray) -> CriterionSummary:
    """The notebook's summary of one (raters, samples) float table on the [0, 1] scale (NaN = not rated)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = float(np.nanmean(np.nanmean(table, axis=1)))
    complete = table[:, ~np.isnan(table).any(axis=0)]
    kappa = fleiss_kappa(complete.T) if complete.shape[1] and complete.shape[0] >= 2 else math.nan
    return CriterionSummary(
        mean, krippendorff_alpha(table, "ordinal"), kappa, int((~np.isnan(table)).any(axis=0).sum()), table.shape[0]
    )


def with_overall(data: AgreementData) -> AgreementData:
    """`data` plus criterion `o` = sqrt(sc * pq) for each rater and sample with both (same scale as sc, pq).

    Raises InputError when `data` has no `sc` or no `pq` ratings (not ImagenHub ratings)."""
    missing = [c for c in ("sc", "pq") if c not in data.criteria]
    if missing:
        raise InputError(
            f"the agreement data has no {' or '.join(missing)} ratings (criteria: {data.criteria}); "
            "import ImagenHub ratings with `masc-ui import imagenhub PATH`"
        )
    records = []
    for rec in data.records:
        sc, pq = rec.ratings.get("sc", {}), rec.ratings.get("pq", {})
        overall = {r: math.sqrt(sc[r] * pq[r]) for r in sc if r in pq and not (math.isnan(sc[r]) or math.isnan(pq[r]))}
        ratings = dict(rec.ratings)
        if overall:
            ratings["o"] = overall
        records.append(AgreementRecord(rec.sample_id, rec.method, rec.category, rec.metrics, ratings))
    return AgreementData(tuple(records), data.scales, data.rating_range)


def summarize_data(data: AgreementData, criteria: tuple[str, ...] = CRITERIA) -> dict[str, dict[str, CriterionSummary]]:
    """method -> criterion -> the notebook's summary, from agreement data (e.g. built from the database).

    Ratings are mapped to [0, 1] by the data's rating range (stored 0-4 -> /4), so the means are
    ImagenHub's; `o` needs `with_overall` first. Raters: every rater with a rating of the criterion."""
    lo, hi = data.rating_range
    out: dict[str, dict[str, CriterionSummary]] = {}
    for method in data.groups("method"):
        records = data.select("method", method)
        out[method] = {}
        for criterion in criteria:
            _, table = data.rating_matrix(records, criterion, data.raters(criterion))
            out[method][criterion] = summarize_table((table - lo) / (hi - lo))
    return out


def summarize_task(task: Any) -> dict[str, dict[str, CriterionSummary]]:
    """model -> criterion -> summary, for every model of the task."""
    return {model: summarize_model(task, model) for model in task.models}


def agreement_data(task: Any) -> AgreementData:
    """The task's ratings as `AgreementData`: one record per (model, sample), `sample_id` `<task>/<model>/<uid>`,
    `method` = model, `category` = task name, ratings of criteria `sc`, `pq`, `o` by `rater1`..., scale [0, 1].
    No metric values (add them to compare metrics against these ratings)."""
    records = []
    for model in task.models:
        tables = rating_tables(task, model)
        for j, uid in enumerate(task.uids):
            ratings = {
                c: {r: float(tables[c][i, j]) for i, r in enumerate(task.raters) if not math.isnan(tables[c][i, j])}
                for c in CRITERIA
            }
            if any(ratings.values()):
                records.append(AgreementRecord(f"{task.name}/{model}/{uid}", model, task.name, {}, ratings))
    return AgreementData(tuple(records), {}, RATING_RANGE)
