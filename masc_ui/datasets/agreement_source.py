"""Agreement input from storage: each sample's latest metric values and current human ratings as an
`masc_ui.analysis.AgreementData` (the analysis itself is storage-free).

Metric scales: built-in metrics are continuous (min-max normalized for alpha); an imported metric whose
provenance params say `scale="rating"` (a judge's 0-4, see `masc_ui.workbench.ingest`) is mapped by its
declared `range`. Ratings are the raters' current `rated` scores (skipped/flagged count as not rated), of
every criterion stored: `cp`, `pf`, and the imported ImagenHub `sc`, `pq` (all on the stored 0-4 scale, the
data's rating range; ImagenHub's {0, 0.5, 1} cells were stored x 4, so /4 gives them back, and ordinal or
interval alpha are the same on either scale). Ratings-only samples (no images) are included: their ratings
and judge values count like any other sample's. ImagenHub's O = sqrt(SC * PQ) is not stored; derive it with
`masc_ui.analysis.imagenhub.with_overall`.
Gold tasks and attention checks (`store.gold`) are left out: their ratings measure the raters, never a method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis import AgreementData, MetricScale, scale_for


def load_agreement_data(
    store: Any, dataset: str | None = None, counts: Callable[[str], bool] | None = None
) -> AgreementData:
    """Every sample of `dataset` (None = all datasets) with its metric values and ratings; with `counts`, only the
    ratings of the raters it keeps (`rater -> bool`). The name is checked by the caller
    (`masc_ui.workbench.agreement` says which datasets exist); storage refuses an unknown one."""
    gold = store.gold.sample_ids(dataset)
    samples = [s for s in store.samples.list(dataset) if s.id not in gold]
    ratings = store.ratings.current(dataset=dataset)
    latest = store.metrics.latest_for([s.id for s in samples])
    scales: dict[str, MetricScale] = {}
    by_sample: dict[int, dict[str, dict[str, float | None]]] = {}
    for r in ratings:
        if r.status == "rated" and (counts is None or counts(r.rater)):
            by_sample.setdefault(r.sample_id, {}).setdefault(r.criterion, {})[r.rater] = float(r.score)
    records = []
    for s in samples:
        values = latest.get(s.id, {})
        for name, v in values.items():
            params = v.provenance.params or {}
            if params.get("scale") == "rating" and name not in scales:
                lo, hi = params.get("range") or (0.0, 4.0)
                scales[name] = scale_for("rating", (float(lo), float(hi)))
        label = f"{s.dataset}/{s.external_key}" if s.external_key else f"{s.dataset}/#{s.id}"
        records.append(
            {
                "sample_id": label,
                "method": s.method,
                "category": s.category,
                "metrics": {name: v.value for name, v in values.items()},
                "ratings": by_sample.get(s.id, {}),
            }
        )
    return AgreementData.from_records(records, scales=scales)


def load_mask_checks(store: Any, dataset: str | None = None, by: str = "method") -> dict[str, list[Any]]:
    """Metric -> the `masc_ui.analysis.mask_dependence.MaskCheck` of every sample of `dataset` whose latest value
    of it carries a mask-sensitivity check (extras `mask_sensitivity`, stored by `masc-ui batch
    --mask-sensitivity`), grouped `by` method or category."""
    from ..analysis.mask_dependence import MaskCheck

    samples = store.samples.list(dataset)
    latest = store.metrics.latest_for([s.id for s in samples])
    out: dict[str, list[MaskCheck]] = {}
    for s in samples:
        for name, v in latest.get(s.id, {}).items():
            check = (v.extras or {}).get("mask_sensitivity")
            if not isinstance(check, dict) or v.value is None:
                continue
            variants = {str(k): (None if x is None else float(x)) for k, x in (check.get("values") or {}).items()}
            group = s.method if by == "method" else s.category
            out.setdefault(name, []).append(MaskCheck(group, float(v.value), variants))
    return out
