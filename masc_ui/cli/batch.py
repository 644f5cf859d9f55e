"""`masc-ui batch`: score every sample of a dataset that lacks a value (resumable; `accelerate launch -m masc_ui batch ...` shards it)."""

from __future__ import annotations

import argparse

from ..settings import MAX_NAFLEX_PATCHES, STRIPPERS, Settings
from .common import (
    CLI_USER,
    FRACTION,
    PATCHES,
    POSITIVE,
    add_catalogue_flags,
    add_common,
    bounded,
    open_workbench,
    say_profile,
    settings_from_args,
)


def add_batch(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "batch",
        help="score every sample of a dataset that lacks values (resumable, multi-process)",
        description="Score the samples of DATASET that have no value yet for the current provenance "
        "(model, revision, parameters, dtype) and masks. Safe to interrupt and rerun. "
        "Several processes/GPUs: accelerate launch -m masc_ui batch ... "
        "Standard error says which model profile is in use and why (in the demo profile: the numbers mean nothing).",
    )
    p.add_argument("--dataset", required=True, help="dataset name in the database")
    p.add_argument("--metrics", default="cp,pf", help="comma-separated metric names, or 'all' (default cp,pf)")
    p.add_argument(
        "--masks",
        choices=("stored", "text", "none"),
        default="stored",
        help="stored: the samples' current masks; text: missing ones made from the subject's name "
        "(SAM 3); none: no masks (only metrics that need none)",
    )
    p.add_argument("--store-masks", action="store_true", help="with --masks text: save the masks made")
    p.add_argument(
        "--batch-size",
        type=bounded(int, 1, 4096),
        default=16,
        help="samples scored and written together, 1..4096 (default 16)",
    )
    p.add_argument("--limit", type=POSITIVE, help="score at most N samples in this run")
    p.add_argument("--retry-failed", action="store_true", help="score again samples whose scoring failed before")
    p.add_argument(
        "--mask-sensitivity",
        nargs="?",
        const="3",
        metavar="PX[,PX...]",
        help="store with every mask-dependent value (cp, pf, *_seg) the same metric with every mask eroded and "
        "dilated by PX pixels (default 3; e.g. 2,5) and the spread, for the leaderboard's mask-dependence check "
        "(values computed without it are scored again)",
    )
    g = p.add_argument_group("metric parameters")
    g.add_argument("--siglip-model", help="SigLIP2 checkpoint (HF id or folder)")
    g.add_argument("--clip-model", help="CLIP checkpoint (HF id or folder)")
    g.add_argument(
        "--naflex-max-patches", type=PATCHES, help=f"MaSC NaFlex patch budget, 1..{MAX_NAFLEX_PATCHES} (default 1024)"
    )
    g.add_argument("--fg-threshold", type=FRACTION, help="MaSC mask threshold, 0..1 (default 0.5)")
    g.add_argument("--stripper", choices=STRIPPERS, help="PF subject stripper (default regex)")
    add_catalogue_flags(p)
    add_common(p)
    p.set_defaults(func=_cmd_batch)


def _cmd_batch(args: argparse.Namespace, settings: Settings | None = None) -> int:
    import dataclasses

    from ..workbench.batch import BatchOptions, gather_summaries, process_context
    from ..workbench.score_files import parse_shifts

    shifts = parse_shifts(args.mask_sensitivity) if args.mask_sensitivity is not None else ()
    options = BatchOptions(  # every argument error before a model (or torch) is loaded
        args.dataset,
        tuple(args.metrics.split(",")),
        masks=args.masks,
        store_masks=args.store_masks,
        batch_size=args.batch_size,
        limit=args.limit,
        retry_failed=args.retry_failed,
        mask_shifts=shifts,
    )
    from tqdm import tqdm

    context = process_context(settings or settings_from_args(args))
    options = dataclasses.replace(options, process_index=context.index, num_processes=context.count)
    label = "batch" if context.count == 1 else f"batch [process 1 of {context.count}]"
    bars: list[tqdm] = []

    def start(total: int) -> None:
        bars.append(tqdm(total=total, unit="sample", desc=label, disable=not context.is_main, dynamic_ncols=True))

    try:
        with open_workbench(context.settings, loads_models=True, announce=False) as wb:
            wb.batch.check(options, user=CLI_USER)
            if context.is_main:
                say_profile(wb)
            summary = wb.batch.run(options, user=CLI_USER, on_start=start, progress=lambda n: bars[0].update(n))
    finally:
        for bar in bars:
            bar.close()
    summaries = gather_summaries(context, summary)
    if context.is_main:
        for one in summaries:
            print("\n".join(one.lines()))
    return 1 if any(one.failures for one in summaries) else 0
