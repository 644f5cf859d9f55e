"""`masc-ui segment`: a mask from Segment Anything clicks or a box."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..settings import Settings
from .common import CLI_USER, COUNT, FRACTION, add_common, open_workbench, settings_from_args


def add_segment(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "segment",
        help="mask an image from clicks/a box (Segment Anything) or the subject's name (SAM 3)",
        description="Write a mask PNG (255 = subject) for IMAGE. Coordinates are pixels of IMAGE, x to the right, "
        "y down. Exit status 3: a --text mask was written but is doubtful (nothing found, or too small). "
        "Standard error says which model profile is in use and why (in the demo profile: tiny random "
        "weights, the mask means nothing).",
    )
    p.add_argument("image", type=Path, help="image file")
    p.add_argument(
        "--point",
        action="append",
        type=_point_arg,
        default=[],
        metavar="X,Y[,L]",
        help="click at pixel X,Y; L=1 subject (default), L=0 background (repeatable)",
    )
    p.add_argument("--box", type=_box_arg, metavar="X0,Y0,X1,Y1", help="box: left, top, right, bottom pixels")
    p.add_argument("--text", metavar="NAME", help="segment every instance of NAME with SAM 3 (instead of clicks)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="MASK.png", help="mask file to write")
    p.add_argument("--single-mask", action="store_true", help="SAM: one mask instead of the best of three")
    p.add_argument(
        "--threshold", type=FRACTION, help="SAM 3: minimum instance score, 0..1 (default text_seg_threshold)"
    )
    p.add_argument("--min-fraction", type=FRACTION, help="SAM 3: smaller masks are doubtful, 0..1 (default 0.05)")
    p.add_argument("--fill-holes", action="store_true", help="fill holes enclosed by the mask")
    p.add_argument("--min-speck", type=COUNT, default=0, metavar="N", help="drop mask pieces under N pixels")
    p.add_argument("--keep-largest", action="store_true", help="keep only the largest mask piece")
    g = p.add_argument_group("segmentation models")
    g.add_argument("--sam-variant", help="vit_b, vit_l, vit_h (vit_tiny: demo)")
    g.add_argument("--sam-checkpoint", help="local SAM checkpoint file (default: official download)")
    g.add_argument("--sam3-model", help="SAM 3 HF id or local folder (default facebook/sam3)")
    g.add_argument("--cache-dir", type=Path, help="where downloaded SAM checkpoints are kept")
    add_common(p)
    p.set_defaults(func=_cmd_segment)


def _cmd_segment(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from ..workbench.masks import check_file_prompts, open_file_image

    check_file_prompts(args.point, args.box, args.text)  # before a model (or torch) is loaded
    if settings is None:
        extra = {
            "sam_variant": args.sam_variant,
            "sam_checkpoint": args.sam_checkpoint,
            "sam3_model": args.sam3_model,
            "cache_dir": args.cache_dir,
        }
        settings = settings_from_args(args).replace(**{k: v for k, v in extra.items() if v is not None})
    image = open_file_image(args.image, settings)  # a bad file is said before the profile is decided
    with open_workbench(settings, loads_models=True) as wb:
        made = wb.segmentation.segment_file(
            image,
            user=CLI_USER,
            points=args.point,
            box=args.box,
            text=args.text,
            multimask=not args.single_mask,
            threshold=args.threshold,
            min_fraction=args.min_fraction,
            fill_holes=args.fill_holes,
            min_speck=args.min_speck,
            keep_largest=args.keep_largest,
        )
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_bytes(made.png())
    except OSError as exc:
        raise InputError(f"cannot write the mask to {args.output}: {exc}") from None
    print(f"{args.output}\t{made.size[0]}x{made.size[1]}\tcovers {made.mask.mean():.1%}\t{made.summary}")
    if made.doubtful:
        print(f"doubtful: {made.doubtful}", file=sys.stderr)
        return 3
    return 0


def _numbers_arg(text: str, counts: tuple[int, ...], what: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in counts:
        raise argparse.ArgumentTypeError(f"{what} must be {' or '.join(_FORMS[c] for c in counts)}, got {text!r}")
    return values


_FORMS = {2: "X,Y", 3: "X,Y,L", 4: "X0,Y0,X1,Y1"}


def _point_arg(text: str) -> tuple:
    values = _numbers_arg(text, (2, 3), "a point")
    if len(values) == 3 and values[2] not in (0.0, 1.0):
        raise argparse.ArgumentTypeError(f"a point's label must be 1 (subject) or 0 (background), got {text!r}")
    return (values[0], values[1], int(values[2]) if len(values) == 3 else 1)


def _box_arg(text: str) -> tuple:
    return tuple(_numbers_arg(text, (4,), "a box"))
