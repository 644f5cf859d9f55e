"""`masc-ui agreement` and `masc-ui leaderboard`: metric-human agreement and per-method tables of a stored dataset."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError
from ..settings import Settings
from ..workbench.rater_selection import RaterSelection
from .common import CLI_USER, SEED, add_common, bounded, metric_names_arg, open_workbench, settings_from_args


def add_agreement(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "agreement",
        help="agreement of each metric (and judge) with human ratings, with CIs",
        description="Krippendorff's alpha, Spearman, Kendall tau-b and Pearson of each metric against "
        "the human ratings, and human vs human, with paired-bootstrap CIs (METRICS.md). "
        "With --pairwise: the pairwise judgments instead (Bradley-Terry with Davidson ties "
        "and bootstrap CIs, Elo, win rates, rater agreement on pairs, each metric's "
        "pairwise accuracy with human ties left out).",
    )
    p.add_argument("--dataset", help="only this dataset (default: all)")
    p.add_argument(
        "--criterion",
        choices=("cp", "pf", "sc", "pq"),
        help="which human ratings (default cp; with --pairwise: cp or pf, default both); sc / pq: imported "
        "ImagenHub ratings (with --human-level ordinal for ImagenHub's alphas)",
    )
    p.add_argument(
        "--pairwise",
        action="store_true",
        help="analyse the pairwise judgments (which of two outputs is better) instead of the 0-4 ratings",
    )
    p.add_argument("--by", choices=("method", "category"), help="also one row per method or category")
    p.add_argument("--metrics", help="comma-separated metric names (default: every metric with values)")
    p.add_argument(
        "--n-boot",
        type=bounded(int, 0, 1_000_000),
        default=2000,
        help="bootstrap resamples, 0..1,000,000 (0 = no CIs; default 2000)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--human-level",
        choices=("interval", "ordinal", "nominal", "ratio"),
        default="interval",
        help="Krippendorff level of the human-vs-human alpha (default interval)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--raters",
        default="all",
        help="whose answers count: all (default), unmarked (all but the raters the rater report marks; needs "
        "--dataset), or names separated by commas; the output says which",
    )
    add_common(p)
    p.set_defaults(func=_cmd_agreement)


def _cmd_agreement(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or settings_from_args(args)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    if args.pairwise:
        return _print_pairwise(args, settings, metrics)
    with open_workbench(settings) as wb:
        view = wb.agreement.report(
            user=CLI_USER,
            dataset=args.dataset,
            criterion=args.criterion or "cp",
            metrics=metrics,
            by=args.by,
            n_boot=args.n_boot,
            seed=args.seed,
            human_level=args.human_level,
            raters=RaterSelection.parse(args.raters),
        )
    print(view.to_json() if args.json else view.text)
    return 0


def add_leaderboard(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="the table of a paper: per method each metric's and the humans' mean with "
        "95%% CIs, ranks, and each metric's rank agreement with the humans",
        description="Per method (or category) of DATASET: every metric's mean and each criterion's "
        "mean human rating with a stratified bootstrap 95% CI, n and the rank under each; "
        "then Kendall tau-b between each metric's ranking and the humans' (README "
        "'Leaderboard'). With pairwise judgments, columns 'human bt_cp' / 'human bt_pf' "
        "(Bradley-Terry theta per method) follow the criteria. md and latex print both tables; csv prints the leaderboard, a "
        "blank line, then the rank agreement (with -o: FILE and FILE's "
        "<stem>-rank-agreement.csv).",
    )
    p.add_argument("--dataset", required=True, help="dataset name in the database")
    p.add_argument("--by", choices=("method", "category"), default="method", help="one row per (default method)")
    p.add_argument("--format", choices=("md", "csv", "latex"), default="md", dest="fmt", help="default md")
    p.add_argument("--metrics", help="comma-separated metric names (default: every metric with values)")
    p.add_argument("--criteria", help="comma-separated human criteria (default: every rated one; '' = none)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples per group (0 = no CIs; default 2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("-o", "--output", type=Path, help="write to this file instead of standard output")
    p.add_argument(
        "--raters",
        default="all",
        help="whose answers count: all (default), unmarked (all but the raters the rater report marks; needs "
        "--dataset), or names separated by commas; the output says which",
    )
    add_common(p)
    p.set_defaults(func=_cmd_leaderboard)


def _cmd_leaderboard(args: argparse.Namespace, settings: Settings | None = None) -> int:
    with open_workbench(settings or settings_from_args(args)) as wb:
        view = wb.leaderboard.view(
            user=CLI_USER,
            dataset=args.dataset,
            by=args.by,
            metrics=metric_names_arg(args.metrics),
            criteria=metric_names_arg(args.criteria),
            n_boot=args.n_boot,
            seed=args.seed,
            raters=RaterSelection.parse(args.raters),
        )
    text = view.render(args.fmt)
    agreement = view.rank_agreement_csv() if args.fmt == "csv" and view.board.agreement else None
    if args.output is None:
        print(text + (f"\n{agreement}" if agreement else ""), end="")
        return 0
    second = args.output.with_name(f"{args.output.stem}-rank-agreement.csv")
    try:
        args.output.write_text(text, encoding="utf-8")
        if agreement:
            second.write_text(agreement, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the leaderboard to {args.output}: {exc}") from None
    print(
        f"leaderboard of {args.dataset} by {args.by} ({len(view.board.rows)} rows) written to {args.output}"
        + (f"; rank agreement to {second}" if agreement else "")
    )
    return 0


def _print_pairwise(args: argparse.Namespace, settings: Settings, metrics: list[str] | None) -> int:
    """`agreement --pairwise`: the pairwise report as text or JSON."""
    for flag, given in (("--by", args.by), ("--human-level", args.human_level != "interval")):
        if given:
            raise InputError(f"{flag} is for the 0-4 ratings; leave it out with --pairwise")
    if args.criterion not in (None, "cp", "pf"):
        raise InputError(f"--criterion {args.criterion} has no pairwise judgments; use cp or pf with --pairwise")
    with open_workbench(settings) as wb:
        report = wb.pairwise_analysis.report(
            user=CLI_USER,
            dataset=args.dataset,
            criterion=args.criterion,
            metrics=metrics,
            n_boot=args.n_boot,
            seed=args.seed,
            raters=RaterSelection.parse(args.raters),
        )
    print(report.to_json() if args.json else report.text())
    return 0
