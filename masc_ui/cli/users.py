"""`masc-ui users`: logins and roles in a users file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..settings import Settings


def add_users(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "users",
        help="manage the logins of the web app (users file)",
        description="Add or replace a login in the users file: `name:argon2-hash:role`. The password "
        "is read from the terminal (asked twice), or from the first line of standard "
        "input with --password-stdin; it never appears on the command line.",
    )
    p.add_argument("action", choices=("add",))
    p.add_argument("name", help="login name (letters, digits, _ . @ -)")
    p.add_argument(
        "--role",
        choices=("admin", "rater"),
        default="rater",
        help="admin: every tab; rater: only their own rating tasks (default)",
    )
    p.add_argument("--users-file", type=Path, help="the users file (default MASC_USERS_FILE)")
    p.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    p.set_defaults(func=_cmd_users)


def _cmd_users(args: argparse.Namespace) -> int:
    from ..workbench.users import add_user

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
