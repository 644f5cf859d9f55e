"""`masc-ui score` (one output against its references) and `masc-ui metrics` (list every metric)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..settings import MAX_NAFLEX_PATCHES, STRIPPERS, Settings
from .common import (
    CLI_USER,
    FRACTION,
    PATCHES,
    add_catalogue_flags,
    add_common,
    open_workbench,
    profile_record,
    settings_from_args,
)

if TYPE_CHECKING:
    from ..workbench.mask_sensitivity import SensitivityReport
    from ..workbench.scoring import FileScores


def add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score one output against its reference(s): MaSC CP and PF, or any metric with --metrics",
        description="Print MaSC Concept Preservation (CP) and Prompt Following (PF) of OUT against the "
        "reference image(s), with the diagnostics (extras). Masks are image files "
        "(foreground = white, or opaque where the file has transparency) of their image's size. "
        "Standard error says which model profile is in use and why, and the precision "
        "(dtype, and why the precision policy chose it); in the demo profile, that the numbers mean nothing.",
    )
    p.add_argument(
        "--ref",
        action="append",
        required=True,
        type=Path,
        metavar="IMAGE",
        help="reference image of the subject (repeatable: CP per reference and their mean)",
    )
    p.add_argument(
        "--ref-mask",
        action="append",
        type=Path,
        metavar="MASK",
        help="mask of the subject in each --ref, same order (repeatable; needed by cp)",
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="IMAGE|VIDEO",
        help="the generated output image, or video (MP4, WebM, ...: every image metric per sampled frame, "
        "and the video metrics gmescore, nexusscore, naturalscore)",
    )
    p.add_argument(
        "--out-mask",
        type=Path,
        metavar="MASK",
        help="mask of the subject in --out (needed by pf, "
        "clip_i_seg); for a video: drawn on one frame "
        "and reused on every frame",
    )
    p.add_argument(
        "--out-mask-frame",
        type=int,
        default=0,
        metavar="K",
        help="video: the frame --out-mask was drawn on (default 0)",
    )
    p.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="class label of each --ref, same order (nexusscore; default: --object for every reference)",
    )
    p.add_argument(
        "--prompt", help="the prompt the output was generated from (needed by pf, clip_t, clipscore, pickscore)"
    )
    p.add_argument(
        "--metrics",
        default="cp,pf",
        metavar="all|NAME,...",
        help="metrics to print: all, or a comma-separated list of names from `masc-ui metrics` (default cp,pf)",
    )
    p.add_argument("--clip-model", metavar="ID|DIR", help="CLIP checkpoint of the CLIP family (default: the profile's)")
    p.add_argument(
        "--object",
        dest="object_name",
        metavar="NAME",
        help="the subject's name, stripped from the prompt for PF (default: keep the prompt)",
    )
    p.add_argument("--model", dest="siglip_model", metavar="ID|DIR", help="SigLIP2 checkpoint (default: the profile's)")
    p.add_argument("--stripper", choices=STRIPPERS, help="PF subject stripper (default regex)")
    p.add_argument(
        "--naflex-max-patches", type=PATCHES, help=f"NaFlex patch budget, 1..{MAX_NAFLEX_PATCHES} (default 1024)"
    )
    p.add_argument("--fg-threshold", type=FRACTION, help="mask threshold, 0..1 (default 0.5)")
    p.add_argument("--json", action="store_true", help="print one JSON object (NaN as null)")
    p.add_argument(
        "--mask-sensitivity",
        nargs="?",
        const="3",
        metavar="PX[,PX...]",
        help="also rescore every mask-dependent metric asked (cp, pf, *_seg) with every mask eroded and dilated by "
        "PX pixels (default 3; e.g. 2,5) and, with --object, with the masks segmented by that name; prints each "
        "value and the spread (max - min); in --json, under `mask_sensitivity`",
    )
    add_catalogue_flags(p)
    add_common(p)
    p.set_defaults(func=_cmd_score)


def _cmd_score(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from ..workbench.score_files import DEFAULT_METRICS, ScoreFiles

    files = ScoreFiles(
        refs=tuple(args.ref),
        out=args.out,
        ref_masks=tuple(args.ref_mask or ()),
        out_mask=args.out_mask,
        out_mask_frame=getattr(args, "out_mask_frame", 0) or 0,
        prompt=args.prompt,
        subject=args.object_name,
        ref_labels=tuple(getattr(args, "label", None) or ()),
        metrics=getattr(args, "metrics", None) or DEFAULT_METRICS,
        mask_shifts=getattr(args, "mask_sensitivity", None),
    )
    files.check()  # every argument error before a model (or torch) is loaded
    settings = settings or settings_from_args(args)
    sample = files.open(settings)  # and every bad file before the profile is decided
    with open_workbench(settings, loads_models=True) as wb:
        print(f"precision: {wb.precision.describe()}", file=sys.stderr)
        scores = wb.scoring.score_files(files, user=CLI_USER, sample=sample)
        sensitivity = None
        if files.shifts:
            sensitivity = wb.mask_sensitivity.run(
                sample, scores.names, user=CLI_USER, shifts=files.shifts, by_name=bool(files.subject)
            )
        about = profile_record(wb)
    for warning in scores.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if sensitivity is not None:
        about = {**about, "mask_sensitivity": sensitivity.record()}
    if scores.masc is not None:
        code = _print_masc(scores.masc, about, args.json)
    else:
        if scores.video_summary and not args.json:
            print(scores.video_summary)
        code = _print_values(scores, about, args.json)
    if sensitivity is not None and not args.json:
        _print_sensitivity(sensitivity)
    return code


def _print_sensitivity(report: SensitivityReport) -> None:
    """The mask-sensitivity table after the scores: one row per metric, one column per mask variant."""
    print("\nmask sensitivity")
    print("\t".join(report.header()))
    for row in report.rows():
        print("\t".join(row))
    for label, reason in report.skipped.items():
        print(f"skipped\t{label}: {reason}")
    for label, note in report.notes.items():
        print(f"note\t{label}: {note}")
    for m in report.metrics:
        for label, reason in m.reasons.items():
            print(f"n/a\t{m.display_name} with {label}: {reason}")


def _print_masc(record: dict[str, Any], about: dict[str, Any], as_json: bool) -> int:
    """The default output: MaSC CP and PF with every diagnostic (one JSON object with `profile` and `notice`)."""
    if as_json:
        print(json.dumps({**record, **about}, indent=2, allow_nan=False))
        return 0
    from ..workbench import format_value

    for name in ("cp", "pf"):
        value = record[name]
        reason = record["extras"].get(f"{name}_reason")
        print(f"{name.upper()}\t{'n/a (' + reason + ')' if value is None else format_value(value, 6)}")
    for key, value in record["extras"].items():
        if key != "provenance":
            print(f"{key}\t{value}")
    for key, value in record["extras"]["provenance"].items():
        print(f"provenance.{key}\t{value}")
    return 0


def _print_values(scores: FileScores, about: dict[str, Any], as_json: bool) -> int:
    """`score --metrics ...`: each metric's value, range, direction and model (or one JSON object: the records by
    metric name, with `profile` and `notice`)."""
    if as_json:
        print(json.dumps({**scores.records, **about}, indent=2, allow_nan=False))
        return 0
    for row in scores.rows:
        provenance = scores.values[row.metric].provenance
        shown = f"n/a ({row.reason})" if row.value is None else f"{row.value:.6f}"
        print(
            f"{row.display_name}\t{shown}\t[{row.lo:g}, {row.hi:g}]\t{row.direction}\t"
            f"{provenance.get('model_id')}\t{provenance.get('dtype')}"
        )
    return 0


def add_metrics(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "metrics",
        help="list every metric (image and video) with its range, direction, convention and what it needs",
        description="Every built-in metric, grouped by the media it judges: image metrics (also applied to each "
        "sampled frame of a video output), then video metrics (a video output only).",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list (each entry has its `media`)")
    p.set_defaults(func=_cmd_metrics)


def _cmd_metrics(args: argparse.Namespace) -> int:
    from ..workbench.metric_list import MEDIA_TITLES, metrics_by_media, spec_record

    groups = metrics_by_media()
    if args.json:
        print(json.dumps([spec_record(s) for specs in groups.values() for s in specs], indent=2))
        return 0
    for i, (media, specs) in enumerate(groups.items()):
        print(("\n" if i else "") + f"{MEDIA_TITLES[media]}:")
        for s in specs:
            direction = "higher is better" if s.higher_is_better else "lower is better"
            needs = [
                f"{s.needs_masks} mask" if s.needs_masks != "none" else "",
                "prompt" if s.needs_prompt else "",
                "reference" if s.needs_reference else "",
            ]
            print(
                f"{s.name}\t{s.display_name}\t[{s.range[0]:g}, {s.range[1]:g}]\t{direction}\t"
                f"needs: {', '.join(n for n in needs if n) or 'output only'}"
            )
            print(f"\t{s.convention} ({s.paper})")
    return 0
