"""Text and JSON renderings of an `AgreementTable` (and of metric differences) for the CLI and exports."""

from __future__ import annotations

import json
import math
from typing import Any

from .bootstrap import Estimate
from .numbers import format_interval, format_value
from .table import STATISTICS, AgreementTable, MetricDifference

_HEADERS = {"alpha": "alpha", "spearman": "Spearman", "kendall": "Kendall tau-b", "pearson": "Pearson"}


def format_estimate(e: Estimate, digits: int = 3) -> str:
    """`0.512 [0.401, 0.603]` (`digits` significant digits, `numbers.format_value`); `n/a` when undefined; no
    brackets when there is no CI."""
    if math.isnan(e.value):
        return "n/a"
    interval = format_interval(e.ci_low, e.ci_high, digits)
    return f"{format_value(e.value, digits)} {interval}".rstrip()


def format_table(table: AgreementTable, digits: int = 3) -> str:
    """A fixed-width text table: one line per row (group, metric, n, raters, each statistic with its CI),
    a blank line between groups, and a header saying the criterion, CI level and resamples."""
    head = ["group", "metric", "n", "raters", *(_HEADERS[s] for s in STATISTICS)]
    body: list[list[str] | None] = []
    last = None
    for r in table.rows:
        if last is not None and r.group != last:
            body.append(None)
        last = r.group
        label = f"{r.metric} (human-human, {table.human_level} alpha)" if r.is_human else r.metric
        body.append(
            [r.group, label, str(r.n), str(r.n_raters), *(format_estimate(r.stat(s), digits) for s in STATISTICS)]
        )
    widths = [
        max(len(head[i]), *(len(line[i]) for line in body if line)) if body else len(head[i]) for i in range(len(head))
    ]
    ci = (
        f"{table.level:.0%} paired-bootstrap CI over samples, {table.n_boot} resamples, seed {table.seed}"
        if table.n_boot
        else "no confidence intervals (n_boot=0)"
    )
    lines = [
        f"Agreement with human ratings of {table.criterion!r} ({ci}); metric alpha: interval, vs each rater, averaged",
        "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["" if line is None else "  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
    return "\n".join(lines)


def table_to_dict(table: AgreementTable) -> dict[str, Any]:
    """JSON-able dict: parameters and rows; NaN becomes None."""
    return {
        "criterion": table.criterion,
        "by": table.by,
        "n_boot": table.n_boot,
        "seed": table.seed,
        "level": table.level,
        "human_level": table.human_level,
        "rows": [
            {
                "metric": r.metric,
                "group": r.group,
                "n": r.n,
                "n_raters": r.n_raters,
                "is_human": r.is_human,
                **{s: r.stat(s).to_dict() for s in STATISTICS},
            }
            for r in table.rows
        ],
    }


def difference_to_dict(d: MetricDifference) -> dict[str, Any]:
    return {
        "metric_a": d.metric_a,
        "metric_b": d.metric_b,
        "statistic": d.statistic,
        "group": d.group,
        "n": d.n,
        "a": d.a.to_dict(),
        "b": d.b.to_dict(),
        "difference": d.difference.to_dict(),
    }


def to_json(obj: AgreementTable | MetricDifference | list[MetricDifference], indent: int | None = 2) -> str:
    """Strict JSON (no NaN tokens) of a table, a difference, or a list of differences."""
    if isinstance(obj, AgreementTable):
        payload: Any = table_to_dict(obj)
    elif isinstance(obj, MetricDifference):
        payload = difference_to_dict(obj)
    else:
        payload = [difference_to_dict(d) for d in obj]
    return json.dumps(payload, indent=indent, allow_nan=False)
