"""`masc-ui` command line: parse, call a use case (`masc_ui.workbench`, `masc_ui.batch`), print. No business
logic and no storage here.

The acting user of every command is `CLI_USER` (None: the local operator, who runs it on their own machine)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from .errors import InputError, WorkbenchError
from .settings import MAX_NAFLEX_PATCHES, PROFILES, STRIPPERS, Settings

CLI_USER: str | None = None
"""The acting user the CLI passes to the use cases (a local process: no login)."""


def _bounded(kind: type, lo: float, hi: float) -> Callable[[str], float]:
    """argparse type: a `kind` (int or float) within [lo, hi], finite; a one-line error otherwise."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {'a whole number' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        if not (lo <= value <= hi):  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be within [{lo:g}, {hi:g}], got {text!r}")
        return value
    parse.__name__ = kind.__name__
    return parse


POSITIVE = _bounded(int, 1, 1_000_000)
COUNT = _bounded(int, 0, 1_000_000)
FRACTION = _bounded(float, 0.0, 1.0)
PATCHES = _bounded(int, 1, MAX_NAFLEX_PATCHES)
SEED = _bounded(int, 0, 2 ** 32 - 1)
PORT = _bounded(int, 1, 65_535)


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("settings (default: MASC_* environment variables, then built-in defaults)")
    g.add_argument("--profile", choices=PROFILES, help="model profile (default auto)")
    g.add_argument("--device", help="auto, cpu, cuda, cuda:N, mps")
    g.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"))
    g.add_argument("--data-dir", type=Path, help="database + blob store folder")
    g.add_argument("--db", dest="database_url", help="database URL (default: SQLite in the data dir)")
    g.add_argument("--demo-weights-dir", type=Path, help="folder of the tiny demo checkpoints")


CATALOGUE_FLAGS = (
    ("--vqa-model", "vqa_model", "ID|DIR", "VQAScore model: a CLIP-FlanT5 checkpoint or any chat VLM (MASC_VQA_MODEL)"),
    ("--itm-model", "itm_model", "ID|DIR", "ITMScore model, Blip2ForImageTextRetrieval (MASC_ITM_MODEL)"),
    ("--facescore-model", "facescore_model", "DIR|FILE|REPO",
     "FaceScore FS_model.pt + med_config.json (MASC_FACESCORE_MODEL)"),
    ("--face-detector-dir", "face_detector_dir", "DIR",
     "FaceSim's SCRFD: an insightface buffalo_l folder (MASC_FACE_DETECTOR_DIR)"),
    ("--face-recognizer", "face_recognizer", "FILE|DIR|REPO",
     "FaceSim's IR-101 CurricularFace weights (MASC_FACE_RECOGNIZER)"),
    ("--retinaface-weights", "retinaface_weights", "FILE|URL|REPO",
     "FaceScore's RetinaFace mobilenet0.25_Final.pth (MASC_RETINAFACE_WEIGHTS)"),
    ("--artscore-checkpoint", "artscore_checkpoint", "FILE|DIR|URL|REPO",
     "ArtScore's ResNet-50 state dict (MASC_ARTSCORE_CHECKPOINT)"),
)
"""The scorer catalogue's checkpoint settings: (flag, Settings field, metavar, help); default: the profile's."""


def _add_catalogue_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scorer catalogue checkpoints (default: MASC_* environment variables, then the profile's)")
    for flag, dest, metavar, text in CATALOGUE_FLAGS:
        g.add_argument(flag, dest=dest, metavar=metavar, help=text)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from env vars, overridden by whichever settings flags the command has and were given."""
    names = ("profile", "device", "dtype", "data_dir", "database_url", "demo_weights_dir", "siglip_model",
             "naflex_max_patches", "fg_threshold", "stripper", "clip_model",
             *(dest for _, dest, _, _ in CATALOGUE_FLAGS))
    return Settings.from_env(**{n: getattr(args, n, None) for n in names})


# --- demo-weights --------------------------------------------------------------------------------------------

def _add_demo_weights(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo-weights", help="write tiny random demo checkpoints (offline; numbers mean nothing)")
    p.add_argument("dir", type=Path, help="output folder")
    p.add_argument("--only", action="append", help="write only this checkpoint (repeatable)")
    p.add_argument("--force", action="store_true", help="rebuild even if present")
    p.set_defaults(func=_cmd_demo_weights)


def _cmd_demo_weights(args: argparse.Namespace) -> int:
    from .models.demo import write_demo_weights

    for name, path in write_demo_weights(args.dir, args.only, force=args.force).items():
        print(f"{name}\t{path}")
    return 0


# --- score ---------------------------------------------------------------------------------------------------

def _add_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score one output against its reference(s): MaSC CP and PF, or any metric with --metrics",
                       description="Print MaSC Concept Preservation (CP) and Prompt Following (PF) of OUT against the "
                                   "reference image(s), with the diagnostics (extras). Masks are image files "
                                   "(foreground = white, or opaque where the file has transparency). The precision "
                                   "in use (dtype, and why the precision policy chose it) is printed to stderr.")
    p.add_argument("--ref", action="append", required=True, type=Path, metavar="IMAGE",
                   help="reference image of the subject (repeatable: CP per reference and their mean)")
    p.add_argument("--ref-mask", action="append", type=Path, metavar="MASK",
                   help="mask of the subject in each --ref, same order (repeatable; needed by cp)")
    p.add_argument("--out", required=True, type=Path, metavar="IMAGE|VIDEO",
                   help="the generated output image, or video (MP4, WebM, ...: every image metric per sampled frame, "
                        "and the video metrics gmescore, nexusscore, naturalscore)")
    p.add_argument("--out-mask", type=Path, metavar="MASK", help="mask of the subject in --out (needed by pf, "
                                                                    "clip_i_seg); for a video: drawn on one frame "
                                                                    "and reused on every frame")
    p.add_argument("--out-mask-frame", type=int, default=0, metavar="K",
                   help="video: the frame --out-mask was drawn on (default 0)")
    p.add_argument("--label", action="append", metavar="NAME",
                   help="class label of each --ref, same order (nexusscore; default: --object for every reference)")
    p.add_argument("--prompt", help="the prompt the output was generated from (needed by pf, clip_t, clipscore, "
                                    "pickscore)")
    p.add_argument("--metrics", default="cp,pf", metavar="all|NAME,...",
                   help="metrics to print: all, or a comma-separated list of names from `masc-ui metrics` "
                        "(default cp,pf)")
    p.add_argument("--clip-model", metavar="ID|DIR", help="CLIP checkpoint of the CLIP family (default: the profile's)")
    p.add_argument("--object", dest="object_name", metavar="NAME",
                   help="the subject's name, stripped from the prompt for PF (default: keep the prompt)")
    p.add_argument("--model", dest="siglip_model", metavar="ID|DIR", help="SigLIP2 checkpoint (default: the profile's)")
    p.add_argument("--stripper", choices=STRIPPERS, help="PF subject stripper (default regex)")
    p.add_argument("--naflex-max-patches", type=PATCHES, help=f"NaFlex patch budget, 1..{MAX_NAFLEX_PATCHES} "
                                                              "(default 1024)")
    p.add_argument("--fg-threshold", type=FRACTION, help="mask threshold, 0..1 (default 0.5)")
    p.add_argument("--json", action="store_true", help="print one JSON object (NaN as null)")
    _add_catalogue_flags(p)
    _add_common(p)
    p.set_defaults(func=_cmd_score)


def _cmd_score(args: argparse.Namespace, settings: Settings | None = None) -> int:
    import json

    from .metrics.registry import parse_metric_names, resolve_metric_names
    from .models.loading import pick_device
    from .models.precision import precision_policy
    from .workbench.scoring import Scoring

    settings = settings or settings_from_args(args)
    asked = getattr(args, "metrics", None) or "cp,pf"
    masc_only = parse_metric_names(asked, media=None) == ["cp", "pf"]
    if masc_only:
        for flag, value in (("--ref-mask", args.ref_mask), ("--out-mask", args.out_mask), ("--prompt", args.prompt)):
            if not value:
                raise InputError(f"{flag} is required for MaSC CP and PF; give it, or choose other --metrics")
        if not args.prompt.strip():
            raise InputError("--prompt is empty: give the prompt the output image was generated from")
    scoring = Scoring(settings, _models(), settings.device)
    labels = getattr(args, "label", None) or ()
    if labels and len(labels) != len(args.ref):
        raise InputError(f"{len(args.ref)} --ref image(s) but {len(labels)} --label(s): give one label per reference, "
                         "in the same order")
    sample = scoring.sample_from_files(args.ref, args.out, ref_masks=args.ref_mask or (), out_mask=args.out_mask,
                                       prompt=args.prompt, subject=args.object_name,
                                       out_mask_frame=getattr(args, "out_mask_frame", 0) or 0, ref_labels=labels)
    names = resolve_metric_names(asked, [sample], settings)
    print(f"precision: {precision_policy(settings.dtype, pick_device(settings.device)).describe()}", file=sys.stderr)
    if sample.is_video:
        if not args.json:
            video = sample.out
            print(f"video\t{args.out}\t{video.frame_count} frames\t{video.fps:g} fps\t{video.size[0]}x{video.size[1]}"
                  f"\timage metrics: mean over {settings.video_frames} sampled frames")
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

    from .metrics.records import metric_record
    from .metrics.registry import get_spec

    if as_json:
        print(json.dumps({name: metric_record(v) for name, v in values.items()}, indent=2, allow_nan=False))
        return 0
    for name, v in values.items():
        spec = get_spec(name)
        shown = f"n/a ({v.reason})" if math.isnan(v.value) else f"{v.value:.6f}"
        direction = "higher is better" if spec.higher_is_better else "lower is better"
        print(f"{spec.display_name}\t{shown}\t[{spec.range[0]:g}, {spec.range[1]:g}]\t{direction}\t"
              f"{v.provenance.get('model_id')}\t{v.provenance.get('dtype')}")
    return 0


def _models():
    from .models.registry import ModelRegistry

    return ModelRegistry()


# --- metrics -------------------------------------------------------------------------------------------------

def _add_metrics(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="list every metric with its range, direction and convention")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=_cmd_metrics)


def _cmd_metrics(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from .metrics.registry import list_metrics

    specs = list_metrics()
    if args.json:
        print(json.dumps([dataclasses.asdict(s) for s in specs], indent=2))
        return 0
    for s in specs:
        direction = "higher is better" if s.higher_is_better else "lower is better"
        needs = [f"{s.needs_masks} mask" if s.needs_masks != "none" else "",
                 "prompt" if s.needs_prompt else "", "reference" if s.needs_reference else ""]
        print(f"{s.name}\t{s.display_name}\t[{s.range[0]:g}, {s.range[1]:g}]\t{direction}\t"
              f"needs: {', '.join(n for n in needs if n) or 'output only'}")
        print(f"\t{s.convention} ({s.paper})")
    return 0


# --- segment -------------------------------------------------------------------------------------------------

def _add_segment(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "segment", help="mask an image from clicks/a box (Segment Anything) or the subject's name (SAM 3)",
        description="Write a mask PNG (255 = subject) for IMAGE. Coordinates are pixels of IMAGE, x to the right, "
                    "y down. Exit status 3: a --text mask was written but is doubtful (nothing found, or too small).")
    p.add_argument("image", type=Path, help="image file")
    p.add_argument("--point", action="append", type=_point_arg, default=[], metavar="X,Y[,L]",
                   help="click at pixel X,Y; L=1 subject (default), L=0 background (repeatable)")
    p.add_argument("--box", type=_box_arg, metavar="X0,Y0,X1,Y1", help="box: left, top, right, bottom pixels")
    p.add_argument("--text", metavar="NAME", help="segment every instance of NAME with SAM 3 (instead of clicks)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="MASK.png", help="mask file to write")
    p.add_argument("--single-mask", action="store_true", help="SAM: one mask instead of the best of three")
    p.add_argument("--threshold", type=FRACTION, help="SAM 3: minimum instance score, 0..1 (default text_seg_threshold)")
    p.add_argument("--min-fraction", type=FRACTION, help="SAM 3: smaller masks are doubtful, 0..1 (default 0.05)")
    p.add_argument("--fill-holes", action="store_true", help="fill holes enclosed by the mask")
    p.add_argument("--min-speck", type=COUNT, default=0, metavar="N", help="drop mask pieces under N pixels")
    p.add_argument("--keep-largest", action="store_true", help="keep only the largest mask piece")
    g = p.add_argument_group("segmentation models")
    g.add_argument("--sam-variant", help="vit_b, vit_l, vit_h (vit_tiny: demo)")
    g.add_argument("--sam-checkpoint", help="local SAM checkpoint file (default: official download)")
    g.add_argument("--sam3-model", help="SAM 3 HF id or local folder (default facebook/sam3)")
    g.add_argument("--cache-dir", type=Path, help="where downloaded SAM checkpoints are kept")
    _add_common(p)
    p.set_defaults(func=_cmd_segment)


def _cmd_segment(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from .segmentation import mask_to_png
    from .workbench.masks import Segmentation

    if settings is None:
        extra = {"sam_variant": args.sam_variant, "sam_checkpoint": args.sam_checkpoint, "sam3_model": args.sam3_model,
                 "cache_dir": args.cache_dir}
        settings = settings_from_args(args).replace(**{k: v for k, v in extra.items() if v is not None})
    made = Segmentation(settings, _models()).segment_file(
        args.image, user=CLI_USER, points=args.point, box=args.box, text=args.text,
        multimask=not args.single_mask, threshold=args.threshold, min_fraction=args.min_fraction,
        fill_holes=args.fill_holes, min_speck=args.min_speck, keep_largest=args.keep_largest)
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_bytes(mask_to_png(made.mask))
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


# --- import / batch / agreement / export (datasets) ----------------------------------------------------------

def _database(settings: Settings):
    """The database of `settings` (database URL or SQLite in the data dir), opened on first use."""
    from .workbench.database import Database

    return Database(settings)


def _add_import(sub: argparse._SubParsersAction) -> None:
    from .datasets import list_importers

    formats = "; ".join(f"{i.name}: {i.description}" for i in list_importers())
    p = sub.add_parser("import", help="import a benchmark (manifest, DreamBench++, DreamBooth, ImagenHub ratings, "
                                      "OpenS2V videos) into the database",
                       description=f"Import PATH into dataset NAME. Importing twice adds nothing. Formats: {formats}.")
    p.add_argument("format_name", nargs="?", metavar="FORMAT", choices=[i.name for i in list_importers()],
                   help="import format (or --format)")
    p.add_argument("path", type=Path, help="manifest file or benchmark folder")
    p.add_argument("--dataset", help="dataset name in the database (imagenhub: the prefix of <dataset>-<task>, "
                                     "default imagenhub)")
    p.add_argument("--format", choices=[i.name for i in list_importers()], dest="fmt",
                   help="import format (or give it before PATH: masc-ui import imagenhub PATH)")
    p.add_argument("--judge", help="dreambench: metric name prefix of the GPT judge ratings (default gpt4o -> "
                                   "gpt4o_cp, gpt4o_pf)")
    p.add_argument("--outputs", type=Path, help="dreambooth: generated images, <method>/<subject>/<prompt_idx>_<seed>.png")
    p.add_argument("--unique-token", help="dreambooth: the token in the prompts (default sks)")
    p.add_argument("--videos", type=Path, help="opens2v: folder of the generated videos <key>.mp4 (default "
                                               "<manifest folder>/videos)")
    p.add_argument("--images", type=Path, help="opens2v: folder the manifest's img_paths are relative to (default "
                                               "the manifest's folder)")
    p.add_argument("--method", help="opens2v: the model that generated the videos (default the videos folder's name)")
    p.add_argument("--max-problems", type=COUNT, default=50, help="skipped rows listed in the report (default 50)")
    p.add_argument("--for-rating", action=argparse.BooleanOptionalAction, default=None,
                   help="mark the imported dataset(s) for rating: raters get their samples as tasks (default: a "
                        "dataset the import creates is marked, an existing one keeps its mark; --no-for-rating "
                        "leaves them unmarked)")
    _add_common(p)
    p.set_defaults(func=_cmd_import)


def _cmd_import(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from tqdm import tqdm

    from .workbench.imports import Imports, sample_count

    settings = settings or settings_from_args(args)
    fmt = _import_format(args)
    with _database(settings) as database:
        imports = Imports(database, settings)
        dataset, parsed = imports.read(fmt, args.path, dataset=args.dataset, judge=args.judge,
                                       outputs=args.outputs, unique_token=args.unique_token,
                                       videos=getattr(args, "videos", None), images=getattr(args, "images", None),
                                       method=getattr(args, "method", None))
        total = sample_count(parsed)
        with tqdm(total=total, unit="sample", desc="import", disable=not total) as bar:
            summaries = imports.ingest(parsed, user=CLI_USER, dataset=dataset, fmt=fmt, progress=bar.update,
                                       for_rating=args.for_rating)
    for summary in summaries:
        print("\n".join(summary.lines(max_problems=args.max_problems)))
    return 0


def _import_format(args: argparse.Namespace) -> str:
    """The format given before PATH or as --format (one of them, the same if both)."""
    given = [f for f in (args.format_name, args.fmt) if f is not None]
    if not given:
        raise InputError("import: name the format, e.g. `masc-ui import imagenhub PATH` or `--format dreambench`")
    if len(set(given)) > 1:
        raise InputError(f"import: format given twice and differently ({given[0]!r} and --format {given[1]!r}); "
                         "give it once")
    return given[0]


def _add_batch(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="score every sample of a dataset that lacks values (resumable, multi-process)",
                       description="Score the samples of DATASET that have no value yet for the current provenance "
                                   "(model, revision, parameters, dtype) and masks. Safe to interrupt and rerun. "
                                   "Several processes/GPUs: accelerate launch -m masc_ui.batch ...")
    p.add_argument("--dataset", required=True, help="dataset name in the database")
    p.add_argument("--metrics", default="cp,pf", help="comma-separated metric names, or 'all' (default cp,pf)")
    p.add_argument("--masks", choices=("stored", "text", "none"), default="stored",
                   help="stored: the samples' current masks; text: missing ones made from the subject's name "
                        "(SAM 3); none: no masks (only metrics that need none)")
    p.add_argument("--store-masks", action="store_true", help="with --masks text: save the masks made")
    p.add_argument("--batch-size", type=_bounded(int, 1, 4096), default=16,
                   help="samples scored and written together, 1..4096 (default 16)")
    p.add_argument("--limit", type=POSITIVE, help="score at most N samples in this run")
    p.add_argument("--retry-failed", action="store_true", help="score again samples whose scoring failed before")
    g = p.add_argument_group("metric parameters")
    g.add_argument("--siglip-model", help="SigLIP2 checkpoint (HF id or folder)")
    g.add_argument("--clip-model", help="CLIP checkpoint (HF id or folder)")
    g.add_argument("--naflex-max-patches", type=PATCHES, help=f"MaSC NaFlex patch budget, 1..{MAX_NAFLEX_PATCHES} "
                                                              "(default 1024)")
    g.add_argument("--fg-threshold", type=FRACTION, help="MaSC mask threshold, 0..1 (default 0.5)")
    g.add_argument("--stripper", choices=STRIPPERS, help="PF subject stripper (default regex)")
    _add_catalogue_flags(p)
    _add_common(p)
    p.set_defaults(func=_cmd_batch)


def _cmd_batch(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from tqdm import tqdm

    from .batch import BatchOptions, gather_summaries, process_context, run_batch

    context = process_context(settings or settings_from_args(args))
    options = BatchOptions(args.dataset, tuple(args.metrics.split(",")), masks=args.masks,
                           store_masks=args.store_masks, batch_size=args.batch_size, limit=args.limit,
                           retry_failed=args.retry_failed, process_index=context.index,
                           num_processes=context.count)
    label = "batch" if context.count == 1 else f"batch [process 1 of {context.count}]"
    bars: list[tqdm] = []

    def start(total: int) -> None:
        bars.append(tqdm(total=total, unit="sample", desc=label, disable=not context.is_main, dynamic_ncols=True))

    try:
        with _database(context.settings) as database:
            summary = run_batch(database.store, context.settings, options, on_start=start,
                                progress=lambda n: bars[0].update(n))
    finally:
        for bar in bars:
            bar.close()
    summaries = gather_summaries(context, summary)
    if context.is_main:
        for one in summaries:
            print("\n".join(one.lines()))
    return 1 if any(one.failures for one in summaries) else 0


def _add_agreement(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("agreement", help="agreement of each metric (and judge) with human ratings, with CIs",
                       description="Krippendorff's alpha, Spearman, Kendall tau-b and Pearson of each metric against "
                                   "the human ratings, and human vs human, with paired-bootstrap CIs (METRICS.md). "
                                   "With --pairwise: the pairwise judgments instead (Bradley-Terry with Davidson ties "
                                   "and bootstrap CIs, Elo, win rates, rater agreement on pairs, each metric's "
                                   "pairwise accuracy with human ties left out).")
    p.add_argument("--dataset", help="only this dataset (default: all)")
    p.add_argument("--criterion", choices=("cp", "pf", "sc", "pq"),
                   help="which human ratings (default cp; with --pairwise: cp or pf, default both); sc / pq: imported "
                        "ImagenHub ratings (with --human-level ordinal for ImagenHub's alphas)")
    p.add_argument("--pairwise", action="store_true",
                   help="analyse the pairwise judgments (which of two outputs is better) instead of the 0-4 ratings")
    p.add_argument("--by", choices=("method", "category"), help="also one row per method or category")
    p.add_argument("--metrics", help="comma-separated metric names (default: every metric with values)")
    p.add_argument("--n-boot", type=_bounded(int, 0, 1_000_000), default=2000,
                   help="bootstrap resamples, 0..1,000,000 (0 = no CIs; default 2000)")
    p.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--human-level", choices=("interval", "ordinal", "nominal", "ratio"), default="interval",
                   help="Krippendorff level of the human-vs-human alpha (default interval)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_common(p)
    p.set_defaults(func=_cmd_agreement)


def _cmd_agreement(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from .analysis import format_table, to_json
    from .workbench.agreement import agreement_report

    settings = settings or settings_from_args(args)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    if args.pairwise:
        return _print_pairwise(args, settings, metrics)
    with _database(settings) as database:
        table = agreement_report(database, user=CLI_USER, dataset=args.dataset, criterion=args.criterion or "cp",
                                 metrics=metrics, by=args.by, n_boot=args.n_boot, seed=args.seed,
                                 human_level=args.human_level)
    print(to_json(table) if args.json else format_table(table))
    return 0


def _add_leaderboard(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="the table of a paper: per method each metric's and the humans' mean with "
                                           "95%% CIs, ranks, and each metric's rank agreement with the humans",
                       description="Per method (or category) of DATASET: every metric's mean and each criterion's "
                                   "mean human rating with a stratified bootstrap 95% CI, n and the rank under each; "
                                   "then Kendall tau-b between each metric's ranking and the humans' (README "
                                   "'Leaderboard'). With pairwise judgments, columns 'human bt_cp' / 'human bt_pf' "
                                   "(Bradley-Terry theta per method) follow the criteria. md and latex print both tables; csv prints the leaderboard, a "
                                   "blank line, then the rank agreement (with -o: FILE and FILE's "
                                   "<stem>-rank-agreement.csv).")
    p.add_argument("--dataset", required=True, help="dataset name in the database")
    p.add_argument("--by", choices=("method", "category"), default="method", help="one row per (default method)")
    p.add_argument("--format", choices=("md", "csv", "latex"), default="md", dest="fmt", help="default md")
    p.add_argument("--metrics", help="comma-separated metric names (default: every metric with values)")
    p.add_argument("--criteria", help="comma-separated human criteria (default: every rated one; '' = none)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples per group (0 = no CIs; default 2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("-o", "--output", type=Path, help="write to this file instead of standard output")
    _add_common(p)
    p.set_defaults(func=_cmd_leaderboard)


def _cmd_leaderboard(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from .workbench.leaderboard import leaderboard_view

    settings = settings or settings_from_args(args)
    with _database(settings) as database:
        view = leaderboard_view(database, user=CLI_USER, dataset=args.dataset, by=args.by,
                                metrics=_names(args.metrics), criteria=_names(args.criteria), n_boot=args.n_boot,
                                seed=args.seed)
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
    print(f"leaderboard of {args.dataset} by {args.by} ({len(view.board.rows)} rows) written to {args.output}"
          + (f"; rank agreement to {second}" if agreement else ""))
    return 0


def _names(text: str | None) -> list[str] | None:
    """A comma-separated list of names; None when the flag was not given ('' = an empty list)."""
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]


def _print_pairwise(args: argparse.Namespace, settings: Settings, metrics: list[str] | None) -> int:
    """`agreement --pairwise`: the pairwise report as text or JSON."""
    from .workbench.pairwise_analysis import pairwise_report

    for flag, given in (("--by", args.by), ("--human-level", args.human_level != "interval")):
        if given:
            raise InputError(f"{flag} is for the 0-4 ratings; leave it out with --pairwise")
    if args.criterion not in (None, "cp", "pf"):
        raise InputError(f"--criterion {args.criterion} has no pairwise judgments; use cp or pf with --pairwise")
    with _database(settings) as database:
        report = pairwise_report(database, user=CLI_USER, dataset=args.dataset, criterion=args.criterion,
                                 metrics=metrics, n_boot=args.n_boot, seed=args.seed)
    print(report.to_json() if args.json else report.text())
    return 0


def _add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="one row per sample (latest metric values, every rater's ratings) as CSV, JSON "
                                      "lines, Parquet, or an image folder for Hugging Face datasets",
                       description="imagefolder writes FOLDER with images/, masks/, metadata.parquet and a README "
                                   "dataset card, loadable with datasets.load_dataset('imagefolder', data_dir=FOLDER) "
                                   "and uploadable with `masc-ui push`.")
    p.add_argument("-o", "--output", required=True,
                   help="file to write (- for standard output: csv, jsonl), or the folder for imagefolder")
    p.add_argument("--dataset", help="only this dataset (default: all)")
    p.add_argument("--format", choices=EXPORT_CHOICES, dest="fmt",
                   help="default: from the suffix (.jsonl -> jsonl, .parquet -> parquet, else csv); imagefolder "
                        "must be asked for")
    p.add_argument("--pairwise", action="store_true",
                   help="export the pairwise judgments instead (one row per rater, pair and criterion)")
    _add_common(p)
    p.set_defaults(func=_cmd_export)


EXPORT_CHOICES = ("csv", "jsonl", "parquet", "imagefolder")
_SUFFIX_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def _cmd_export(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from .workbench.browse import StoredSamples

    settings = settings or settings_from_args(args)
    fmt = args.fmt or _SUFFIX_FORMATS.get(Path(args.output).suffix, "csv")
    target = sys.stdout if args.output == "-" else Path(args.output)
    with _database(settings) as database:
        samples = StoredSamples(database, settings)
        write = samples.export_pairwise if args.pairwise else samples.export
        _, n = write(fmt, user=CLI_USER, dataset=args.dataset, target=target)
    if target is not sys.stdout:
        print(f"{n} {'pairwise judgments' if args.pairwise else 'samples'} written to {args.output} ({fmt})")
    return 0


def _add_push(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("push", help="upload an exported image folder to a Hugging Face Hub dataset repository",
                       description="Upload FOLDER (written by `masc-ui export --format imagefolder`) to the Hub "
                                   "dataset repository OWNER/NAME in one commit, creating it if needed. Needs the "
                                   "network and a token with write access (`hf auth login` or HF_TOKEN). The folder, "
                                   "the repository id and the token are checked before anything is sent.")
    p.add_argument("folder", type=Path, help="the exported image folder")
    p.add_argument("--repo", required=True, metavar="OWNER/NAME", help="Hub dataset repository id")
    p.add_argument("--private", action="store_true", help="create the repository private (an existing one keeps "
                                                          "its visibility)")
    p.add_argument("--message", help="commit message (default: MaSC Workbench export: N samples)")
    p.add_argument("--dry-run", action="store_true", help="check everything and say what would be uploaded; send "
                                                          "nothing")
    p.set_defaults(func=_cmd_push)


def _cmd_push(args: argparse.Namespace) -> int:
    from .workbench.hub_push import plan_push, push

    plan = plan_push(args.folder, args.repo, private=args.private, commit_message=args.message)
    what = f"{plan.rows} samples ({plan.files} files) from {plan.folder} to the Hub dataset {plan.repo_id}"
    if args.dry_run:
        print(f"would upload {what}")
        return 0
    pushed = push(plan)
    print(f"uploaded {what}: {pushed.url}" + (f" ({pushed.commit_url})" if pushed.commit_url else ""))
    return 0


# --- db: migrations, full dump and restore ---------------------------------------------------------------------

def _add_db(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="database upkeep: upgrade the schema, integrity check, full JSON dump/restore, "
                                  "datasets marked for rating")
    p.add_argument("action", choices=("upgrade", "check", "recount", "dump", "restore", "datasets", "for-rating"),
                   help="datasets: list them with their samples and rating mark; for-rating DATASET [--off]: mark "
                        "(or unmark) a dataset for rating; recount: repair the per-sample counts of complete "
                        "ratings that `check` reports wrong")
    p.add_argument("file", nargs="?", help="dump: file to write; restore: file to read; for-rating: dataset name")
    p.add_argument("--with-blobs", action="store_true", help="dump: embed image/mask bytes (self-contained file)")
    p.add_argument("--off", action="store_true", help="for-rating: unmark the dataset (raters get no new tasks from it)")
    p.add_argument("--deep", action="store_true", help="check: also hash every blob file (reads every byte)")
    _add_common(p)
    p.set_defaults(func=_cmd_db)


def _cmd_db(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or settings_from_args(args)
    if args.action in ("dump", "restore") and args.file is None:
        raise InputError(f"masc-ui db {args.action} needs a FILE argument")
    if args.action == "for-rating" and not args.file:
        raise InputError("masc-ui db for-rating needs a DATASET argument (see `masc-ui db datasets`)")
    if args.action in ("datasets", "for-rating"):
        return _db_datasets(args, settings)
    args.file = Path(args.file) if args.file is not None else None
    with _database(settings) as database:
        if args.action == "upgrade":
            print(f"schema at revision {database.upgrade(CLI_USER)}")
            return 0
        if args.action == "check":
            report = database.check(CLI_USER, deep=args.deep)
            print("\n".join(report.lines()))
            print(f"{report.blobs_checked} blob file(s) checked" + (" (sizes and SHA-256)" if args.deep
                                                                    else " (present, sizes)"), file=sys.stderr)
            return 0 if report.ok else 1
        if args.action == "recount":
            fixed = database.recount(CLI_USER)
            print(f"{fixed} sample(s) had a wrong count of complete ratings; repaired" if fixed
                  else "every count of complete ratings was right")
            return 0
        if args.action == "dump":
            database.dump(CLI_USER, args.file, include_blobs=args.with_blobs)
            print(f"dump written to {args.file}")
            return 0
        database.restore(CLI_USER, args.file)
        print(f"restored {args.file}")
    return 0


def _db_datasets(args: argparse.Namespace, settings: Settings) -> int:
    from .workbench.browse import StoredSamples

    with _database(settings) as database:
        samples = StoredSamples(database, settings)
        if args.action == "for-rating":
            print(samples.set_for_rating(args.file, not args.off, user=CLI_USER))
            return 0
        for d in samples.datasets(user=CLI_USER):
            print(f"{d.name}\t{d.samples} samples\t{'for rating' if d.for_rating else 'not for rating'}")
    return 0


# --- serve (web app) -------------------------------------------------------------------------------------------

def _add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="start the web app (same as `python app.py`)")
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=PORT, help="port (default 7860)")
    p.add_argument("--users-file", type=Path, help="logins, one name:password-hash:role per line "
                                                    "(`masc-ui users add`)")
    _add_common(p)
    p.set_defaults(func=_cmd_serve)


def _cmd_serve(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from .ui.launch import serve
    from .workbench import Workbench

    settings = settings or settings_from_args(args).replace(
        **{k: v for k, v in (("host", args.host), ("port", args.port), ("users_file", args.users_file)) if v is not None})
    wb = Workbench.open(settings)
    status = wb.status()
    print(status.startup_line(), flush=True)
    if status.storage_warning:
        print(f"warning: {status.storage_warning}", flush=True)
    serve(wb, block=True)
    return 0


# --- users: logins ------------------------------------------------------------------------------------------------

def _add_users(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("users", help="manage the logins of the web app (users file)",
                       description="Add or replace a login in the users file: `name:argon2-hash:role`. The password "
                                   "is read from the terminal (asked twice), or from the first line of standard "
                                   "input with --password-stdin; it never appears on the command line.")
    p.add_argument("action", choices=("add",))
    p.add_argument("name", help="login name (letters, digits, _ . @ -)")
    p.add_argument("--role", choices=("admin", "rater"), default="rater", help="admin: every tab; rater: only "
                                                                             "their own rating tasks (default)")
    p.add_argument("--users-file", type=Path, help="the users file (default MASC_USERS_FILE)")
    p.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    p.set_defaults(func=_cmd_users)


def _cmd_users(args: argparse.Namespace) -> int:
    from .workbench.users import add_user

    path = args.users_file or Settings.from_env().users_file
    if path is None:
        raise InputError("users add: give --users-file FILE (or set MASC_USERS_FILE)")
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        import getpass

        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            raise InputError("users add: the two passwords differ; nothing was written")
    new = add_user(Path(path), args.name, password, args.role)
    print(f"{'added' if new else 'replaced'} {args.name} ({args.role}) in {path}")
    return 0


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_demo_weights,
    _add_score,
    _add_metrics,
    _add_segment,
    _add_import,
    _add_batch,
    _add_agreement,
    _add_leaderboard,
    _add_export,
    _add_push,
    _add_db,
    _add_serve,
    _add_users,
]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2, like every other error of the command line)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {self.prog}: {_one_line(message)} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="masc-ui", description="MaSC Workbench command line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every error is one line on stderr and exit status 2 (argparse's usage errors too); an
    unexpected failure says so on that line."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"error: {_one_line(getattr(exc, 'detail', None) or str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except UnicodeError as exc:
        print(f"error: {_one_line(f'text that is not valid UTF-8 ({exc}); save the file or argument as UTF-8')}",
              file=sys.stderr)
        return 2
    except (OSError, MemoryError) as exc:
        print(f"error: {_one_line(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"error: unexpected {type(exc).__name__}: {_one_line(str(exc))} (this is a bug: please report it "
              "with the command that failed)", file=sys.stderr)
        return 2


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
