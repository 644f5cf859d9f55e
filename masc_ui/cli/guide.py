"""`masc-ui guide`: a dataset's rating guide (Markdown with example samples and their expected answers) and its
practice round, which raters see before their first task of the dataset."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError
from ..settings import Settings
from .common import CLI_USER, add_common, open_workbench, settings_from_args


def add_guide(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "guide",
        help="a dataset's rating guide and practice round: set it, show it",
        description="A rating guide is Markdown (no raw HTML, no images) with example samples and their expected "
        "answers, shown in the Rate tab before a rater's first task of the dataset (again after it changes) and on "
        "demand. Its practice round hands each rater a number of gold tasks first, with feedback after each answer "
        "from the gold task's accepted answer and note; practice answers never count as ratings. A sample is named "
        "by its external key (the manifest's `key`) or #ID.",
    )
    actions = p.add_subparsers(dest="guide_action", required=True, metavar="ACTION")
    put = actions.add_parser("set", help="set the guide (a new version; earlier versions are kept)")
    put.add_argument("--dataset", required=True, help="dataset name in the database")
    put.add_argument("file", metavar="FILE.md", type=Path, help="the guide's text, Markdown (UTF-8)")
    put.add_argument(
        "--example",
        action="append",
        metavar="SAMPLE:CP:PF:NOTE",
        help="an example shown in the guide: the sample, its expected concept-preservation and prompt-following "
        "scores 0-4 (- for none) and why; repeat for more (at most 6). Given: replaces the examples; not given: "
        "they stay",
    )
    put.add_argument(
        "--practice",
        type=int,
        metavar="N",
        help="practice tasks each rater answers before rating (0 = no practice round; default: unchanged)",
    )
    put.add_argument(
        "--practice-sample",
        action="append",
        metavar="SAMPLE",
        help="a gold task of the practice round; repeat for more. Given: replaces the practice list",
    )
    skip = put.add_mutually_exclusive_group()
    skip.add_argument(
        "--skippable", dest="skippable", action="store_true", default=None, help="raters may skip the practice round"
    )
    skip.add_argument(
        "--not-skippable", dest="skippable", action="store_false", help="raters must answer the practice round"
    )
    show = actions.add_parser("show", help="print the guide, its examples and its practice round")
    show.add_argument("--dataset", required=True, help="dataset name in the database")
    for action in (put, show):
        add_common(action)
        action.set_defaults(func=_cmd_guide)


def _cmd_guide(args: argparse.Namespace, settings: Settings | None = None) -> int:
    text = None
    if args.guide_action == "set":
        try:
            text = args.file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(
                f"guide file {str(args.file)!r} does not exist: give the path of a Markdown file"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"guide file {str(args.file)!r} cannot be read as UTF-8 text: {exc}") from None
    with open_workbench(settings or settings_from_args(args)) as wb:
        if text is not None:
            summary = wb.guides.set_guide(
                user=CLI_USER,
                dataset=args.dataset,
                text=text,
                examples=args.example,
                practice_tasks=args.practice,
                practice_samples=args.practice_sample,
                practice_skippable=args.skippable,
            )
            g = summary.guide
            assert g is not None
            print(
                f"rating guide of {args.dataset!r} is version {g.version}: {len(summary.examples)} example(s), "
                f"practice round of {g.practice_tasks} task(s) from {len(summary.practice)} practice sample(s)"
            )
        else:
            print(wb.guides.summary(user=CLI_USER, dataset=args.dataset).text())
    return 0
