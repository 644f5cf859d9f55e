"""`masc-ui gold`: gold tasks (samples with an accepted answer, mixed into raters' queues) and gold pairs (pairs of
samples with an accepted answer, mixed into raters' pair queues) of a stored dataset."""

from __future__ import annotations

import argparse
import json

from ..errors import InputError
from ..settings import Settings
from ..workbench.gold import accepted_text, parse_accepted
from ..workbench.pair_gold import split_pair
from .common import CLI_USER, add_common, open_workbench, settings_from_args


def add_gold(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gold",
        help="gold tasks: mark samples (or pairs) with their accepted answer, list them",
        description="Gold tasks are samples whose accepted answer is known (a score 0-4, or a range such as 3-4, "
        "per criterion). They are mixed into every rater's queue at MASC_GOLD_RATE, shown exactly like "
        "other tasks, and measure each rater's accuracy (masc-ui raters); their ratings never count as "
        "ratings of a method. A sample is named by its external key (the manifest's `key`) or #ID. Gold pairs "
        "(`pair`, `pair-list`, `pair-unmark`, `pair-attention`) do the same for pairwise tasks: a pair of samples "
        "whose accepted answer is a (the first is better), b or tie.",
    )
    actions = p.add_subparsers(dest="gold_action", required=True, metavar="ACTION")
    mark = actions.add_parser("mark", help="make a sample a gold task (again: replace its accepted answer)")
    mark.add_argument("--dataset", required=True, help="dataset name in the database")
    mark.add_argument("--sample", required=True, help="the sample's external key, or #ID")
    mark.add_argument("--criterion", required=True, choices=("cp", "pf"), help="which criterion's answer")
    mark.add_argument("--accept", required=True, help="accepted answer: one score (3) or a range (3-4)")
    mark.add_argument("--note", help="why this is the answer (shown to admins only)")
    unmark = actions.add_parser("unmark", help="remove a sample's gold mark (the raters' answers stay)")
    unmark.add_argument("--dataset", required=True, help="dataset name in the database")
    unmark.add_argument("--sample", required=True, help="the sample's external key, or #ID")
    unmark.add_argument("--criterion", choices=("cp", "pf"), help="only this criterion's mark (default: both)")
    listing = actions.add_parser("list", help="the gold tasks of a dataset with their accepted answers")
    listing.add_argument("--dataset", required=True, help="dataset name in the database")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    attention = actions.add_parser(
        "attention",
        help="make the dataset's attention checks (per subject: its reference as the output, accepted cp 4; an "
        "output of another subject, accepted cp 0-1), stored as gold tasks of their own kind",
    )
    attention.add_argument("--dataset", required=True, help="dataset name in the database")
    pair = actions.add_parser(
        "pair", help="make a pair of samples a gold pair of pairwise tasks (again: replace its accepted answer)"
    )
    pair.add_argument("--dataset", required=True, help="dataset name in the database")
    pair.add_argument("--pair", required=True, metavar="A,B", help="the two samples: external keys or #IDs, comma")
    pair.add_argument("--criterion", required=True, choices=("cp", "pf"), help="which criterion's answer")
    pair.add_argument("--accept", required=True, help="accepted answer: a (A is better), b (B is better), or tie")
    pair.add_argument("--note", help="why this is the answer (shown to admins only)")
    pair_unmark = actions.add_parser("pair-unmark", help="remove a pair's gold mark (the raters' judgments stay)")
    pair_unmark.add_argument("--dataset", required=True, help="dataset name in the database")
    pair_unmark.add_argument("--pair", required=True, metavar="A,B", help="the two samples: external keys or #IDs")
    pair_unmark.add_argument("--criterion", choices=("cp", "pf"), help="only this criterion's mark (default: both)")
    pair_list = actions.add_parser("pair-list", help="the gold pairs of a dataset with their accepted answers")
    pair_list.add_argument("--dataset", required=True, help="dataset name in the database")
    pair_list.add_argument("--json", action="store_true", help="print JSON instead of a table")
    pair_attention = actions.add_parser(
        "pair-attention",
        help="make the dataset's pair attention checks (per subject: the same output on both sides, accepted tie), "
        "stored as gold pairs of their own kind",
    )
    pair_attention.add_argument("--dataset", required=True, help="dataset name in the database")
    for action in (mark, unmark, listing, attention, pair, pair_unmark, pair_list, pair_attention):
        add_common(action)
        action.set_defaults(func=_cmd_gold)


def _pair(text: str) -> tuple[str, str]:
    """The two sample names of `--pair A,B`."""
    try:
        return split_pair(text)
    except InputError as exc:
        raise InputError(f"--pair: {exc}") from None


def _cmd_pair_gold(args: argparse.Namespace, settings: Settings | None) -> int:
    first, second = _pair(args.pair) if args.gold_action in ("pair", "pair-unmark") else ("", "")
    if args.gold_action == "pair" and args.accept not in ("a", "b", "tie"):
        raise InputError(f"--accept: a pair's accepted answer is a, b or tie; got {args.accept!r}")
    with open_workbench(settings or settings_from_args(args)) as wb:
        if args.gold_action == "pair":
            record = wb.pair_gold.mark(
                user=CLI_USER,
                dataset=args.dataset,
                first=first,
                second=second,
                criterion=args.criterion,
                accepted=args.accept,
                note=args.note,
            )
            print(f"pair {first},{second} of {args.dataset!r} is a gold pair: {record.criterion} accepts {args.accept}")
        elif args.gold_action == "pair-attention":
            print(wb.pair_gold.make_attention_checks(user=CLI_USER, dataset=args.dataset).text())
        elif args.gold_action == "pair-unmark":
            n = wb.pair_gold.unmark(
                user=CLI_USER, dataset=args.dataset, first=first, second=second, criterion=args.criterion
            )
            print(f"removed {n} gold mark(s) of pair {first},{second}" if n else f"pair {first},{second} was not gold")
        else:
            headers, rows = wb.pair_gold.table(user=CLI_USER, dataset=args.dataset)
            if args.json:
                print(json.dumps([dict(zip(headers, row, strict=True)) for row in rows], indent=2))
            elif not rows:
                print(f"dataset {args.dataset!r} has no gold pairs yet (masc-ui gold pair ...)")
            else:
                print("\t".join(headers))
                print("\n".join("\t".join(str(c) for c in row) for row in rows))
    return 0


def _cmd_gold(args: argparse.Namespace, settings: Settings | None = None) -> int:
    if args.gold_action.startswith("pair"):
        return _cmd_pair_gold(args, settings)
    if args.gold_action == "mark":
        try:
            parse_accepted(args.accept)
        except InputError as exc:
            raise InputError(f"--accept: {exc}") from None
    with open_workbench(settings or settings_from_args(args)) as wb:
        if args.gold_action == "mark":
            record = wb.gold.mark(
                user=CLI_USER,
                dataset=args.dataset,
                sample=args.sample,
                criterion=args.criterion,
                accepted=args.accept,
                note=args.note,
            )
            print(
                f"sample {args.sample} of {args.dataset!r} is a gold task: {record.criterion} accepts "
                f"{accepted_text(record.low, record.high)}"
            )
        elif args.gold_action == "attention":
            print(wb.gold.make_attention_checks(user=CLI_USER, dataset=args.dataset).text())
        elif args.gold_action == "unmark":
            n = wb.gold.unmark(user=CLI_USER, dataset=args.dataset, sample=args.sample, criterion=args.criterion)
            print(f"removed {n} gold mark(s) of sample {args.sample}" if n else f"sample {args.sample} was not gold")
        else:
            headers, rows = wb.gold.table(user=CLI_USER, dataset=args.dataset)
            if args.json:
                print(json.dumps([dict(zip(headers, row, strict=True)) for row in rows], indent=2))
            elif not rows:
                print(f"dataset {args.dataset!r} has no gold tasks yet (masc-ui gold mark ...)")
            else:
                print("\t".join(headers))
                print("\n".join("\t".join(str(c) for c in row) for row in rows))
    return 0
