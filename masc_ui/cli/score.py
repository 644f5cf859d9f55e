"""`masc-ui score` (one output against its references) and `masc-ui metrics` (list every metric)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..settings import MAX_NAFLEX_PATCHES, STRIPPERS, Settings
from .common import CLI_USER, FRACTION, PATCHES, add_catalogue_flags, add_common, model_registry, settings_from_args


def add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score one output against its reference(s): MaSC CP and PF, or any metric with --metrics",
        description="Print MaSC Concept Preservation (CP) and Prompt Following (PF) of OUT against the "
        "reference image(s), with the diagnostics (extras). Masks are image files "
        "(foreground = white, or opaque where the file has transparency). The precision "
        "in use (dtype, and why the precision policy chose it) is printed to stderr.",
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
    add_catalogue_flags(p)
    add_common(p)
    p.set_defaults(func=_cmd_score)


def _cmd_score(args: argparse.Namespace, settings: Settings | None = None) -> int:
    import json

    from ..metrics.registry import parse_metric_names, resolve_metric_names
    from ..models.loading import pick_device
    from ..models.precision import precision_policy
    from ..workbench.scoring import Scoring

    settings = settings or settings_from_args(args)
    asked = getattr(args, "metrics", None) or "cp,pf"
    masc_only = parse_metric_names(asked, media=None) == ["cp", "pf"]
    if masc_only:
        for flag, value in (("--ref-mask", args.ref_mask), ("--out-mask", args.out_mask), ("--prompt", args.prompt)):
            if not value:
                raise InputError(f"{flag} is required for MaSC CP and PF; give it, or choose other --metrics")
        if not args.prompt.strip():
            raise InputError("--prompt is empty: give the prompt the output image was generated from")
    scoring = Scoring(settings, model_registry(), settings.device)
    labels = getattr(args, "label", None) or ()
    if labels and len(labels) != len(args.ref):
        raise InputError(
            f"{len(args.ref)} --ref image(s) but {len(labels)} --label(s): give one label per reference, "
            "in the same order"
        )
    sample = scoring.sample_from_files(
        args.ref,
        args.out,
        ref_masks=args.ref_mask or (),
        out_mask=args.out_mask,
        prompt=args.prompt,
        subject=args.object_name,
        out_mask_frame=getattr(args, "out_mask_frame", 0) or 0,
        ref_labels=labels,
    )
    names = resolve_metric_names(asked, [sample], settings)
    print(f"precision: {precision_policy(settings.dtype, pick_device(settings.device)).describe()}", file=sys.stderr)
    if sample.is_video:
        if not args.json:
            video = sample.out
            print(
                f"video\t{args.out}\t{video.frame_count} frames\t{video.fps:g} fps\t{video.size[0]}x{video.size[1]}"
                f"\timage metrics: mean over {settings.video_frames} sampled frames"
            )
        return _print_values(scoring.score_values(sample, names, user=CLI_USER), args.json)
    if not masc_only:
        return _print_values(scoring.score_values(sample, names, user=CLI_USER), args.json)
    record = scoring.masc_record(sample, user=CLI_USER)
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
        return 0
    for name in ("cp", "pf"):
        value = record[name]
        reason = record["extras"].get(f"{name}_reason")
        print(f"{name.upper()}\t{'n/a (' + reason + ')' if value is None else f'{value:.6f}'}")
    for key, value in record["extras"].items():
        if key != "provenance":
            print(f"{key}\t{value}")
    for key, value in record["extras"]["provenance"].items():
        print(f"provenance.{key}\t{value}")
    return 0


def _print_values(values: dict, as_json: bool) -> int:
    """`score --metrics ...`: each metric's value, range, direction and model (or JSON records)."""
    import json
    import math

    from ..metrics.registry import get_spec
    from ..metrics.value_records import metric_record

    if as_json:
        print(json.dumps({name: metric_record(v) for name, v in values.items()}, indent=2, allow_nan=False))
        return 0
    for name, v in values.items():
        spec = get_spec(name)
        shown = f"n/a ({v.reason})" if math.isnan(v.value) else f"{v.value:.6f}"
        direction = "higher is better" if spec.higher_is_better else "lower is better"
        print(
            f"{spec.display_name}\t{shown}\t[{spec.range[0]:g}, {spec.range[1]:g}]\t{direction}\t"
            f"{v.provenance.get('model_id')}\t{v.provenance.get('dtype')}"
        )
    return 0


def add_metrics(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="list every metric with its range, direction and convention")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=_cmd_metrics)


def _cmd_metrics(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from ..metrics.registry import list_metrics

    specs = list_metrics()
    if args.json:
        print(json.dumps([dataclasses.asdict(s) for s in specs], indent=2))
        return 0
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
