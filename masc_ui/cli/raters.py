"""`masc-ui raters`: the rater report of a stored dataset (who to trust and why)."""

from __future__ import annotations

import argparse

from ..settings import Settings
from .common import CLI_USER, SEED, add_common, bounded, open_workbench, settings_from_args


def add_raters(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "raters",
        help="the rater report: answers, time per task, identical runs, gold and attention checks, agreement",
        description="Per rater of DATASET: answers, skips and flags; median and 10th-percentile time per task; "
        "answers under the time floor (MASC_MIN_SECONDS); the longest run of identical answers; gold accuracy and "
        "attention-check pass rate with n; leave-one-out agreement with the other raters (interval alpha of the "
        "rater against the others' mean, bootstrap 95% CI) and Spearman rho with each metric. Raters below a "
        "threshold are marked with the reason; nothing is deleted.",
    )
    p.add_argument("--dataset", required=True, help="dataset name in the database")
    p.add_argument("--criterion", choices=("cp", "pf"), default="cp", help="criterion of the agreement (default cp)")
    p.add_argument(
        "--n-boot",
        type=bounded(int, 0, 20_000),
        default=1000,
        help="bootstrap resamples of the alpha CI, 0..20,000 (0 = no CI; default 1000)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_common(p)
    p.set_defaults(func=_cmd_raters)


def _cmd_raters(args: argparse.Namespace, settings: Settings | None = None) -> int:
    with open_workbench(settings or settings_from_args(args)) as wb:
        report = wb.rater_report.report(
            user=CLI_USER, dataset=args.dataset, criterion=args.criterion, n_boot=args.n_boot, seed=args.seed
        )
    print(report.to_json() if args.json else report.text())
    return 0
