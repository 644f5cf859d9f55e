"""`masc-ui study`: crowd studies (participants of a crowd platform rate a dataset by a secret link, without a login)."""

from __future__ import annotations

import argparse
import json

from ..settings import Settings
from .common import CLI_USER, add_common, open_workbench, settings_from_args


def add_study(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "study",
        help="crowd studies: create one (its secret link is printed once), list them, close one",
        description="A crowd study sends participants of a crowd platform (Prolific or another) to rate tasks of "
        "one dataset without a login: each opens the study's secret link with their participant id (PROLIFIC_PID, "
        "or participant), rates the study's number of tasks (gold tasks mixed in at its gold rate), then gets the "
        "completion code or is sent to the redirect URL. The same participant id resumes and never gets a second "
        "round. Only a hash of the link's secret is stored: the link is printed once. The web app must run with "
        "logins (MASC_USERS or MASC_USERS_FILE) for study links to be served.",
    )
    actions = p.add_subparsers(dest="study_action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="open a study of a dataset marked for rating and print its link once")
    create.add_argument("--dataset", required=True, help="dataset name in the database (marked for rating)")
    create.add_argument("--name", required=True, help="the study's name (shown to admins only)")
    create.add_argument("--tasks", required=True, type=int, help="tasks per participant (1 or more)")
    create.add_argument("--gold-rate", type=float, default=0.0, help="share of gold tasks, 0..0.5 (default 0)")
    create.add_argument("--code", help="completion code shown to participants at the end")
    create.add_argument("--redirect", help="http(s) URL participants are sent to at the end")
    create.add_argument(
        "--base-url",
        default="",
        help="the app's public address (e.g. https://rating.example.org/): printed in front of the link's path",
    )
    listing = actions.add_parser("list", help="every study with its participants started and finished")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    close = actions.add_parser("close", help="close a study: its link takes no new participant")
    close.add_argument("--id", required=True, type=int, dest="study_id", help="the study's id (masc-ui study list)")
    for action in (create, listing, close):
        add_common(action)
        action.set_defaults(func=_cmd_study)


def _cmd_study(args: argparse.Namespace, settings: Settings | None = None) -> int:
    with open_workbench(settings or settings_from_args(args)) as wb:
        if args.study_action == "create":
            made = wb.studies.create(
                user=CLI_USER,
                dataset=args.dataset,
                name=args.name,
                tasks=args.tasks,
                gold_rate=args.gold_rate,
                completion_code=args.code,
                redirect_url=args.redirect,
            )
            print(f"study {made.study.id} is open; its link (printed this once, keep it safe):")
            print(made.url(args.base_url) if args.base_url else "/" + made.path)
        elif args.study_action == "close":
            closed = wb.studies.close(user=CLI_USER, study_id=args.study_id)
            print(f"study {closed.id} is closed: its link takes no new participant")
        else:
            headers, rows = wb.studies.table(user=CLI_USER)
            if args.json:
                print(json.dumps([dict(zip(headers, row, strict=True)) for row in rows], indent=2))
            elif not rows:
                print("no study yet (masc-ui study create ...)")
            else:
                print("\t".join(headers))
                print("\n".join("\t".join(str(c) for c in row) for row in rows))
    return 0
