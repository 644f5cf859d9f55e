"""`masc-ui` command line: parse, call the library, print. No business logic here."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from .errors import WorkbenchError
from .settings import PROFILES, STRIPPERS, Settings


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("settings (default: MASC_* environment variables, then built-in defaults)")
    g.add_argument("--profile", choices=PROFILES, help="model profile (default auto)")
    g.add_argument("--device", help="auto, cpu, cuda, cuda:N, mps")
    g.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"))
    g.add_argument("--data-dir", type=Path, help="database + blob store folder")
    g.add_argument("--db", dest="database_url", help="database URL (default: SQLite in the data dir)")
    g.add_argument("--demo-weights-dir", type=Path, help="folder of the tiny demo checkpoints")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from env vars, overridden by whichever settings flags the command has and were given."""
    names = ("profile", "device", "dtype", "data_dir", "database_url", "demo_weights_dir", "siglip_model",
             "naflex_max_patches", "fg_threshold", "stripper", "clip_model")
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


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_demo_weights,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="masc-ui", description="MaSC Workbench command line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
