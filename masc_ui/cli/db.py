"""`masc-ui db`: migrations, checks, dump and restore of the database."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..settings import Settings
from .common import CLI_USER, add_common, open_workbench, settings_from_args


def add_db(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "db",
        help="database upkeep: upgrade the schema, integrity check, full JSON dump/restore, datasets marked for rating",
    )
    p.add_argument(
        "action",
        choices=("upgrade", "check", "recount", "dump", "restore", "salvage", "datasets", "for-rating"),
        help="datasets: list them with their samples and rating mark; for-rating DATASET [--off]: mark "
        "(or unmark) a dataset for rating; recount: repair the per-sample counts of complete "
        "ratings that `check` reports wrong; salvage NEW_FILE: recover what is readable of a corrupt SQLite "
        "file into a new file (the sqlite3 tool's .recover when on PATH, else Python's copy table by table)",
    )
    p.add_argument(
        "file",
        nargs="?",
        help="dump: file to write; restore: file to read; salvage: the new SQLite file; for-rating: dataset name",
    )
    p.add_argument("--with-blobs", action="store_true", help="dump: embed image/mask bytes (self-contained file)")
    p.add_argument(
        "--off", action="store_true", help="for-rating: unmark the dataset (raters get no new tasks from it)"
    )
    p.add_argument("--deep", action="store_true", help="check: also hash every blob file (reads every byte)")
    add_common(p)
    p.set_defaults(func=_cmd_db)


def _cmd_db(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or settings_from_args(args)
    if args.action in ("dump", "restore", "salvage") and args.file is None:
        raise InputError(f"masc-ui db {args.action} needs a FILE argument")
    if args.action == "for-rating" and not args.file:
        raise InputError("masc-ui db for-rating needs a DATASET argument (see `masc-ui db datasets`)")
    if args.action in ("datasets", "for-rating"):
        return _db_datasets(args, settings)
    args.file = Path(args.file) if args.file is not None else None
    if args.action == "salvage":
        with open_workbench(settings) as wb:
            print("\n".join(wb.database.salvage(CLI_USER, args.file).lines()))
        return 0
    with open_workbench(settings) as wb:
        database = wb.database
        if args.action == "upgrade":
            print(f"schema at revision {database.upgrade(CLI_USER)}")
            return 0
        if args.action == "check":
            report = database.check(CLI_USER, deep=args.deep)
            print("\n".join(report.lines()))
            print(
                f"{report.blobs_checked} blob file(s) checked"
                + (" (sizes and SHA-256)" if args.deep else " (present, sizes)"),
                file=sys.stderr,
            )
            return 0 if report.ok else 1
        if args.action == "recount":
            fixed = database.recount(CLI_USER)
            print(
                f"{fixed} sample(s) had a wrong count of complete ratings; repaired"
                if fixed
                else "every count of complete ratings was right"
            )
            return 0
        if args.action == "dump":
            database.dump(CLI_USER, args.file, include_blobs=args.with_blobs)
            print(f"dump written to {args.file}")
            return 0
        database.restore(CLI_USER, args.file)
        print(f"restored {args.file}")
    return 0


def _db_datasets(args: argparse.Namespace, settings: Settings) -> int:
    with open_workbench(settings) as wb:
        samples = wb.samples
        if args.action == "for-rating":
            print(samples.set_for_rating(args.file, not args.off, user=CLI_USER))
            return 0
        for d in samples.datasets(user=CLI_USER):
            print(f"{d.name}\t{d.samples} samples\t{'for rating' if d.for_rating else 'not for rating'}")
    return 0
