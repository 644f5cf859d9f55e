"""`masc-ui serve`: the web app (what `python app.py` runs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..settings import Settings
from .common import PORT, add_common, settings_from_args


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="start the web app (same as `python app.py`)")
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=PORT, help="port (default 7860)")
    p.add_argument("--users-file", type=Path, help="logins, one name:password-hash:role per line (`masc-ui users add`)")
    add_common(p)
    p.set_defaults(func=_cmd_serve)


def _cmd_serve(args: argparse.Namespace, settings: Settings | None = None) -> int:
    from ..ui.launch import serve
    from ..workbench.factory import build_workbench

    settings = settings or settings_from_args(args).replace(
        **{
            k: v
            for k, v in (("host", args.host), ("port", args.port), ("users_file", args.users_file))
            if v is not None
        }
    )
    wb = build_workbench(settings)
    status = wb.status()
    print(status.startup_line(), flush=True)
    if status.storage_warning:
        print(f"warning: {status.storage_warning}", flush=True)
    serve(wb, block=True)
    return 0
