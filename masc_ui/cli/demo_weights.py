"""`masc-ui demo-weights`: write the tiny random demo checkpoints."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_demo_weights(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo-weights", help="write tiny random demo checkpoints (offline; numbers mean nothing)")
    p.add_argument("dir", type=Path, help="output folder")
    p.add_argument("--only", action="append", help="write only this checkpoint (repeatable)")
    p.add_argument("--force", action="store_true", help="rebuild even if present")
    p.set_defaults(func=_cmd_demo_weights)


def _cmd_demo_weights(args: argparse.Namespace) -> int:
    from ..workbench.profile import write_demo_checkpoints

    for name, path in write_demo_checkpoints(args.dir, args.only, force=args.force).items():
        print(f"{name}\t{path}")
    return 0
