"""Datasets in and out: `masc-ui import`, `masc-ui export`, `masc-ui push`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..settings import Settings
from .common import CLI_USER, COUNT, add_common, open_workbench, settings_from_args


def add_import(sub: argparse._SubParsersAction) -> None:
    from ..workbench.imports import import_formats

    known = import_formats()
    names = [name for name, _ in known]
    formats = "; ".join(f"{name}: {description}" for name, description in known)
    p = sub.add_parser(
        "import",
        help="import a benchmark (manifest, DreamBench++, DreamBooth, ImagenHub ratings, "
        "OpenS2V videos), pairwise judgments or gold pairs into the database",
        description=f"Import PATH into dataset NAME. Importing twice adds nothing. Formats: {formats}.",
    )
    p.add_argument(
        "format_name",
        nargs="?",
        metavar="FORMAT",
        choices=names,
        help="import format (or --format)",
    )
    p.add_argument("path", type=Path, help="manifest file or benchmark folder")
    p.add_argument(
        "--dataset", help="dataset name in the database (imagenhub: the prefix of <dataset>-<task>, default imagenhub)"
    )
    p.add_argument(
        "--format",
        choices=names,
        dest="fmt",
        help="import format (or give it before PATH: masc-ui import imagenhub PATH)",
    )
    p.add_argument(
        "--judge",
        help="dreambench: the published GPT-4o ratings are values of dbpp_cp, dbpp_pf (the DreamBench++ judge); "
        "a name NAME stores them as the external metrics NAME_cp, NAME_pf instead",
    )
    p.add_argument(
        "--outputs", type=Path, help="dreambooth: generated images, <method>/<subject>/<prompt_idx>_<seed>.png"
    )
    p.add_argument("--unique-token", help="dreambooth: the token in the prompts (default sks)")
    p.add_argument(
        "--videos",
        type=Path,
        help="opens2v: folder of the generated videos <key>.mp4 (default <manifest folder>/videos)",
    )
    p.add_argument(
        "--images",
        type=Path,
        help="opens2v: folder the manifest's img_paths are relative to (default the manifest's folder)",
    )
    p.add_argument("--method", help="opens2v: the model that generated the videos (default the videos folder's name)")
    p.add_argument("--max-problems", type=COUNT, default=50, help="skipped rows listed in the report (default 50)")
    p.add_argument(
        "--for-rating",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="mark the imported dataset(s) for rating: raters get their samples as tasks (default: a "
        "dataset the import creates is marked, an existing one keeps its mark; --no-for-rating "
        "leaves them unmarked)",
    )
    add_common(p)
    p.set_defaults(func=_cmd_import)


def _cmd_import(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from tqdm import tqdm

    from ..workbench.imports import sample_count

    fmt = _import_format(args)
    with open_workbench(settings or settings_from_args(args)) as wb:
        imports = wb.imports
        dataset, parsed = imports.read(
            fmt,
            args.path,
            dataset=args.dataset,
            judge=args.judge,
            outputs=args.outputs,
            unique_token=args.unique_token,
            videos=getattr(args, "videos", None),
            images=getattr(args, "images", None),
            method=getattr(args, "method", None),
        )
        total = sample_count(parsed)
        with tqdm(total=total, unit="sample", desc="import", disable=not total) as bar:
            summaries = imports.ingest(
                parsed, user=CLI_USER, dataset=dataset, fmt=fmt, progress=bar.update, for_rating=args.for_rating
            )
    for summary in summaries:
        print("\n".join(summary.lines(max_problems=args.max_problems)))
    return 0


def _import_format(args: argparse.Namespace) -> str:
    """The format given before PATH or as --format (one of them, the same if both)."""
    given = [f for f in (args.format_name, args.fmt) if f is not None]
    if not given:
        raise InputError("import: name the format, e.g. `masc-ui import imagenhub PATH` or `--format dreambench`")
    if len(set(given)) > 1:
        raise InputError(
            f"import: format given twice and differently ({given[0]!r} and --format {given[1]!r}); give it once"
        )
    return given[0]


def add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="one row per sample (latest metric values, every rater's ratings) as CSV, JSON "
        "lines, Parquet, or an image folder for Hugging Face datasets",
        description="imagefolder writes FOLDER with images/, masks/, metadata.parquet and a README "
        "dataset card, loadable with datasets.load_dataset('imagefolder', data_dir=FOLDER) "
        "and uploadable with `masc-ui push`.",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="file to write (- for standard output: csv, jsonl), or the folder for imagefolder",
    )
    p.add_argument("--dataset", help="only this dataset (default: all)")
    p.add_argument(
        "--format",
        choices=EXPORT_CHOICES,
        dest="fmt",
        help="default: from the suffix (.jsonl -> jsonl, .parquet -> parquet, else csv); imagefolder must be asked for",
    )
    p.add_argument(
        "--pairwise",
        action="store_true",
        help="export the pairwise judgments instead (one row per rater, pair and criterion)",
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="with --pairwise: every earlier revision of each judgment as a row too (columns current, replaced_at)",
    )
    p.add_argument(
        "--time-on-task",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --pairwise: the seconds each answer took (column seconds; default: included)",
    )
    add_common(p)
    p.set_defaults(func=_cmd_export)


EXPORT_CHOICES = ("csv", "jsonl", "parquet", "imagefolder")

_SUFFIX_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def _cmd_export(args: argparse.Namespace, settings: Settings | None = None) -> int:
    for flag, given in (("--history", args.history), ("--no-time-on-task", not args.time_on_task)):
        if given and not args.pairwise:
            raise InputError(f"{flag} is for the pairwise judgments export; add --pairwise, or leave {flag} out")
    fmt = args.fmt or _SUFFIX_FORMATS.get(Path(args.output).suffix, "csv")
    target = sys.stdout if args.output == "-" else Path(args.output)
    with open_workbench(settings or settings_from_args(args)) as wb:
        if args.pairwise:
            _, n = wb.samples.export_pairwise(
                fmt,
                user=CLI_USER,
                dataset=args.dataset,
                target=target,
                history=args.history,
                time_on_task=args.time_on_task,
            )
        else:
            _, n = wb.samples.export(fmt, user=CLI_USER, dataset=args.dataset, target=target)
    if target is not sys.stdout:
        print(f"{n} {'pairwise judgments' if args.pairwise else 'samples'} written to {args.output} ({fmt})")
    return 0


def add_push(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "push",
        help="upload an exported image folder to a Hugging Face Hub dataset repository",
        description="Upload FOLDER (written by `masc-ui export --format imagefolder`) to the Hub "
        "dataset repository OWNER/NAME in one commit, creating it if needed. Needs the "
        "network and a token with write access (`hf auth login` or HF_TOKEN). The folder, "
        "the repository id and the token are checked before anything is sent.",
    )
    p.add_argument("folder", type=Path, help="the exported image folder")
    p.add_argument("--repo", required=True, metavar="OWNER/NAME", help="Hub dataset repository id")
    p.add_argument(
        "--private", action="store_true", help="create the repository private (an existing one keeps its visibility)"
    )
    p.add_argument("--message", help="commit message (default: MaSC Workbench export: N samples)")
    p.add_argument(
        "--dry-run", action="store_true", help="check everything and say what would be uploaded; send nothing"
    )
    p.set_defaults(func=_cmd_push)


def _cmd_push(args: argparse.Namespace) -> int:
    from ..workbench.hub_push import plan_push, push

    plan = plan_push(args.folder, args.repo, private=args.private, commit_message=args.message)
    what = f"{plan.rows} samples ({plan.files} files) from {plan.folder} to the Hub dataset {plan.repo_id}"
    if args.dry_run:
        print(f"would upload {what}")
        return 0
    pushed = push(plan)
    print(f"uploaded {what}: {pushed.url}" + (f" ({pushed.commit_url})" if pushed.commit_url else ""))
    return 0
